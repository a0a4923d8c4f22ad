#!/bin/bash
# Device call 1 (eighth session): the L2's load ceiling at the ragged and aligned pitches (tma_probe),
# gemm_bench's steps 4-10 at the four sizes of issue 17 in the same call, and ncu's L2 request counts
# for step 8 at 3000^3 and 3072^3.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
(cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1 && cmake --build /tmp/b --target tma_probe gemm_bench step08 -j16 > $L/build.txt 2>&1) || echo BUILD FAILED | tee -a $L/build.txt
grep -ci "warning" $L/build.txt
timeout 150 /tmp/b/tma_probe --configs 6144:3072,6000:3000,4096:2048,4112:2056 --variants sw128/256,sw128/128,cp.async,cp.async/512 --patterns gemm --no-sweeps --reps 7 --csv $L/probe.csv > $L/probe.txt 2>&1; echo "rc=$?" >> $L/probe.txt
cat $L/probe.txt
timeout 300 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step(0[4-9]|10)' --benchmark_repetitions=5 --benchmark_out=$L/bench.json > $L/bench-stdout.txt 2>&1; echo "rc=$?" >> $L/bench-stdout.txt
python3 bench/report.py table $L/bench.json > $L/bench-table.txt 2>&1; cat $L/bench-table.txt
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests.sum,lts__t_sectors.sum,dram__bytes_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second
for n in 3072 3000; do
  echo "##### step08 ${n}^3" >> $L/ncu.txt
  timeout 90 ncu --clock-control none -k regex:kernel --launch-skip 1 --launch-count 1 --metrics $M /tmp/b/step08 --m $n --n $n --k $n --iters 3 >> $L/ncu.txt 2>&1
done
grep -E "#####|__|Duration" $L/ncu.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
