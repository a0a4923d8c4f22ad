#!/bin/bash
# Device call 1 (eleventh session): P22. cp.async.ca against cp.async.cg, same patterns.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
cmake --build /tmp/b -j16 --target tma_probe > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
V=sw128/128,cp.async,ca,cp.async/512,ca/512,cp.async/lines,ca/lines,lines/split,ca/split
timeout 200 /tmp/b/tma_probe --configs 6144:3072,6000:3000,4096:2048,4112:2056 --variants $V --patterns gemm --no-sweeps --reps 7 --csv $L/probe.csv > $L/probe.txt 2>&1; echo "rc=$?" >> $L/probe.txt
sed -n '/== pattern gemm/,$p' $L/probe.txt
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
timeout 200 ncu --clock-control none -k regex:load_ --metrics $M /tmp/b/tma_probe --ncu --configs 6144:3072,6000:3000 --variants $V --patterns gemm > $L/ncu-probe.txt 2>&1; echo "rc=$?" >> $L/ncu-probe.txt
grep -E "probe launch|__|rc=|ERR" $L/ncu-probe.txt | sed 's/; model for.*//'
# Best effort: what L1 saw (metric names may differ; the list is kept)
ncu --query-metrics --chip gh100 > $L/ncu-metrics.txt 2>&1
M1=$(grep -oE '^l1tex__t_(requests|sectors)_pipe_lsu_mem_global_op_ldgsts[a-z_]*' $L/ncu-metrics.txt | sort -u | sed 's/$/.sum/' | paste -sd, -)
echo "l1 metrics: $M1" | tee $L/ncu-l1.txt
[ -n "$M1" ] && timeout 120 ncu --clock-control none -k regex:load_ --metrics $M1 /tmp/b/tma_probe --ncu --configs 6000:3000 --variants cp.async,ca,lines/split,ca/split --patterns gemm >> $L/ncu-l1.txt 2>&1; echo "rc=$?" >> $L/ncu-l1.txt
grep -E "probe launch|__|rc=" $L/ncu-l1.txt | sed 's/; model for.*//' | head -60
cd $OUT && tar czf logs.tgz logs && rm -rf logs
