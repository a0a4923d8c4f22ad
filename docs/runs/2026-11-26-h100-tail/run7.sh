#!/bin/bash
# Device call 7: the published run at b9128f9 (docs/results.*), and the course calibration of steps
# 9-10, with the device's git moved to b9128f9 (its tree already was).
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; git status --porcelain --untracked-files=no; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
timeout 120 tools/grade --calibrate --steps 9-10 > $L/calibrate_h100.log 2>&1; echo "rc=$?" >> $L/calibrate_h100.log
cp tools/course/calibration/nvidia-h100-80gb-hbm3.json $L/
git checkout -q tools/course/calibration/nvidia-h100-80gb-hbm3.json
tools/compare.sh --preset hopper --docs > $L/compare-docs.log 2>&1; echo "rc=$?" >> $L/compare-docs.log
cp docs/results.json docs/results.md docs/results.png docs/results.svg $L/ 2>/dev/null
grep -A14 "^% of cuBLAS" $L/compare-docs.log; grep "commit" $L/compare-docs.log | head -2; grep '"source"' $L/nvidia-h100-80gb-hbm3.json
cd $OUT && tar czf logs.tgz logs && rm -rf logs
