#!/bin/bash
# Device call 2 (tenth session): P16. The consumer side alone: wgmma with A from shared memory or from ldmatrix.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
P=docs/runs/2026-11-26-h100-phase-b8/consumer_probe.cu
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -Xptxas -v -o /tmp/consumer_probe $P > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
grep -E "registers|spill" $L/build.txt
timeout 120 /tmp/consumer_probe > $L/consumer.txt 2>&1; echo "rc=$?" >> $L/consumer.txt
cat $L/consumer.txt
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_ldsm.sum
for m in 0 1 2; do echo "##### Mode$m" >> $L/ncu.txt
timeout 100 ncu --clock-control none --kernel-name-base mangled -k regex:Mode$m --launch-skip 2 --launch-count 1 --metrics $M /tmp/consumer_probe >> $L/ncu.txt 2>&1; echo "rc=$?" >> $L/ncu.txt; done
grep -E "#####|__|rc=" $L/ncu.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
