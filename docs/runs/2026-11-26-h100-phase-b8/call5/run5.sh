#!/bin/bash
# Device call 5 (tenth session): P19. phase_gemm with one ring per operand; ncu.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
P=docs/runs/2026-11-26-h100-phase-b8/phase_gemm.cu
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -Xptxas -v -o /tmp/phase_gemm $P -lcublas > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
grep -E "registers|spill" $L/build.txt
timeout 150 /tmp/phase_gemm > $L/phase_gemm.txt 2>&1; echo "rc=$?" >> $L/phase_gemm.txt
cat $L/phase_gemm.txt
timeout 150 /tmp/phase_gemm --no-store > $L/phase_gemm-nostore.txt 2>&1; echo "rc=$?" >> $L/phase_gemm-nostore.txt
grep -E "x[0-9]+:|phase_gemm|rc=|checks" $L/phase_gemm-nostore.txt
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_requests_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_ldsm.sum
for i in 0; do echo "##### --only $i" >> $L/ncu.txt
timeout 120 ncu --clock-control none -k regex:phase_gemm --launch-skip 4 --launch-count 1 --metrics $M --section WarpStateStats /tmp/phase_gemm --only $i >> $L/ncu.txt 2>&1; echo "rc=$?" >> $L/ncu.txt; done
grep -E "#####|__|Stall|stall|rc=" $L/ncu.txt | head -80
cd $OUT && tar czf logs.tgz logs && rm -rf logs
