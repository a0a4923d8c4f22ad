#!/bin/bash
# Device call 6 (ninth session): P12. ncu of step 8: line windows at 3000^3 and 3072^3, TMA at 3000^3.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
cmake --build /tmp/b -j16 --target step08 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_writes.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_reads.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__m_xbar2l1tex_read_bytes.sum,sm__cycles_elapsed.avg.per_second
for c in "1 3000" "1 3072" "0 3000"; do set -- $c
  echo "##### GEMM_LINE_WINDOWS=$1 ${2}^3" >> $L/ncu.txt
  GEMM_LINE_WINDOWS=$1 timeout 100 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 --metrics $M --section WarpStateStats /tmp/b/step08 --m $2 --n $2 --k $2 --iters 1 >> $L/ncu.txt 2>&1
done
grep -E "#####|__|Stall|stall" $L/ncu.txt | grep -v "^ *$" | head -90
cd $OUT && tar czf logs.tgz logs && rm -rf logs
