#!/bin/bash
# Device call 13: the reference of steps 9-10 graded as a hand-in against the new H100 calibration.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
tar cf /tmp/ref.tar steps/09_cluster/hopper.cu steps/09_cluster/blackwell.cu steps/10_multi_consumer/hopper.cu steps/10_multi_consumer/blackwell.cu
timeout 500 tools/grade /tmp/ref.tar --steps 9,10 --seed 2026 --cuda-tracks hopper --json $L/grade-ref-9-10.json > $L/grade-ref-9-10.txt 2>&1; echo "rc=$?" >> $L/grade-ref-9-10.txt
tail -8 $L/grade-ref-9-10.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
