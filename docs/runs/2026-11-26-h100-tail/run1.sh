#!/bin/bash
# Device call 1 (2026-11-26, seventh session): the cluster launch's per-call cost, and steps 8/9 timed alone and back to back.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log -1 --oneline 2>/dev/null; } > $L/gpu.txt 2>&1
nvcc -std=c++17 -O2 -gencode arch=compute_90a,code=sm_90a .snap/launch_probe.cu -o /tmp/launch_probe > $L/probe-build.txt 2>&1
/tmp/launch_probe > $L/launch-probe.txt 2>&1
rm -f tests/emu/variants.cmake
(cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1 && cmake --build /tmp/b --target gemm_bench step08 step09 -j16 > $L/build.txt 2>&1) || echo BUILD FAILED >> $L/build.txt
tail -3 $L/build.txt
/tmp/b/gemm_bench --sizes=4096,8192 --benchmark_filter='step0(8|9)' --benchmark_repetitions=5 --benchmark_out=$L/bench.json > $L/bench.txt 2>&1
python3 bench/report.py table $L/bench.json > $L/bench-table.txt 2>&1
for r in 1 2 3; do for s in 08 09; do for n in 4096 8192; do
  it=50; [ $n = 8192 ] && it=20
  echo "round $r step$s $n: $(/tmp/b/step$s --m $n --n $n --k $n --iters $it 2>&1 | grep -E 'verdict|step time|ratio' | tr '\n' ' ')"
done; done; done > $L/b2b.txt 2>&1
cat $L/launch-probe.txt $L/bench-table.txt $L/b2b.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
