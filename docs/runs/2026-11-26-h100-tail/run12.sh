#!/bin/bash
# Device call 12: the H200 course calibration of steps 9-10, if this machine is an H200.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
if nvidia-smi -L | grep -q H200; then
  timeout 400 tools/grade --calibrate --steps 9-10 > $L/calibrate_h200.log 2>&1; echo "rc=$?" >> $L/calibrate_h200.log
  cp tools/course/calibration/nvidia-h200.json $L/
  tail -25 $L/calibrate_h200.log
else
  echo "not an H200: nothing run"
fi
cd $OUT && tar czf logs.tgz logs && rm -rf logs
