#!/bin/bash
# Device call 6: the course calibration of steps 9-10 on this H100 (their reference changed in b9128f9).
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
timeout 500 tools/grade --calibrate --steps 9-10 > $L/calibrate_h100.log 2>&1; echo "rc=$?" >> $L/calibrate_h100.log
cp tools/course/calibration/nvidia-h100-80gb-hbm3.json $L/
tail -30 $L/calibrate_h100.log
cd $OUT && tar czf logs.tgz logs && rm -rf logs
