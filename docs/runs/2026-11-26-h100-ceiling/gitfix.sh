#!/bin/bash
# The device's .git may lag its working tree (or be missing): fetch HEAD's commit from a full bundle
# and move HEAD there (the tree already is that commit's), so that the runs name the right commit.
[ -d .git ] || git init -q
git fetch -q .snap/head.bundle HEAD 2>&1 | tail -2
git reset -q --mixed 5fdb4f1bb82dba93e6a1d501edfdc398ffbea47f
git update-index -q --refresh >/dev/null 2>&1
echo "device HEAD: $(git describe --always --dirty --abbrev=12); status: $(git status --porcelain --untracked-files=no | wc -l) changed tracked files"
