#!/bin/bash
# Device call 3 (eighth session): the course calibration of steps 1-10 on an H200, if this machine
# is one (the committed H200 calibration has steps 1-8 only, and predates three changes); then the
# reference of steps 9-10 graded as a hand-in against it.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu3.txt 2>&1
cat $L/gpu3.txt
if nvidia-smi -L | grep -q H200; then
  timeout 300 tools/grade --calibrate --steps 1-10 > $L/calibrate_h200.log 2>&1; echo "rc=$?" >> $L/calibrate_h200.log
  cp tools/course/calibration/nvidia-h200.json $L/
  tail -12 $L/calibrate_h200.log
  tar cf /tmp/ref.tar steps/09_cluster/hopper.cu steps/09_cluster/blackwell.cu steps/10_multi_consumer/hopper.cu steps/10_multi_consumer/blackwell.cu
  timeout 240 tools/grade /tmp/ref.tar --steps 9,10 --seed 2026 --cuda-tracks hopper --json $L/grade-ref-9-10-h200.json > $L/grade-ref-9-10-h200.txt 2>&1; echo "rc=$?" >> $L/grade-ref-9-10-h200.txt
  tail -8 $L/grade-ref-9-10-h200.txt
else
  echo "not an H200: nothing run"
fi
cd $OUT && tar czf logs3.tgz logs && rm -rf logs
