#!/bin/bash
# Device call 1 (ninth session): P7, cp.async/lines against the other loaders at the ragged and
# aligned pitches, and ncu's L2 read requests for cp.async and cp.async/lines.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
(cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1 && cmake --build /tmp/b --target tma_probe -j16 > $L/build.txt 2>&1) || echo BUILD FAILED | tee -a $L/build.txt
grep -ci "warning" $L/build.txt
timeout 150 /tmp/b/tma_probe --configs 6144:3072,6000:3000,4096:2048,4112:2056 --variants sw128/256,cp.async,cp.async/lines --patterns gemm --no-sweeps --reps 7 --csv $L/probe.csv > $L/probe.txt 2>&1; echo "rc=$?" >> $L/probe.txt
cat $L/probe.txt
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed
timeout 150 ncu --clock-control none -k regex:load_ --metrics $M /tmp/b/tma_probe --ncu --configs 6144:3072,6000:3000 --variants cp.async,cp.async/lines --patterns gemm > $L/ncu-probe.txt 2>&1; echo "rc=$?" >> $L/ncu-probe.txt
grep -E "probe launch|__|Duration|rc=" $L/ncu-probe.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
