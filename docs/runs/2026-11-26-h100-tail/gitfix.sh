# The device's .git still points at 85bb0f5 while its tree is HEAD's: fetch HEAD's commits from a
# bundle and move HEAD there (the tree is already that commit's), so the runs name the right commit.
git fetch -q .snap/head.bundle f9b1e20a994274713b205bcc5a92d95e67d512a3 2>&1 | tail -2
git reset -q --mixed f9b1e20a994274713b205bcc5a92d95e67d512a3
git update-index -q --refresh >/dev/null 2>&1
echo "device HEAD: $(git describe --always --dirty --abbrev=12); status: $(git status --porcelain --untracked-files=no | wc -l) changed tracked files"
