# The device's .git still points at 85bb0f5 while its tree is HEAD's: fetch HEAD's commits from a
# bundle and move HEAD there (the tree is already that commit's), so the runs name the right commit.
git fetch -q .snap/head.bundle b9128f914032ca6472b9bf7b0286c06047623b04 2>&1 | tail -2
git reset -q --mixed b9128f914032ca6472b9bf7b0286c06047623b04
git update-index -q --refresh >/dev/null 2>&1
echo "device HEAD: $(git describe --always --dirty --abbrev=12); status: $(git status --porcelain --untracked-files=no | wc -l) changed tracked files"
