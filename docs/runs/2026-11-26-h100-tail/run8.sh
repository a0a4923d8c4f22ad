#!/bin/bash
# Device call 8: steps 8-10 in gemm_bench at the four large default sizes on another H100 (kernels of
# b9128f9), for the spread of the criterion's ratios between machines.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b8 -G Ninja > /dev/null 2>&1 && cmake --build /tmp/b8 --target gemm_bench -j16 > $L/build.txt 2>&1 || echo BUILD FAILED
for r in 1 2; do
  /tmp/b8/gemm_bench --sizes=4096,8192,8192x2048x4096,2048x8192x8192 --benchmark_filter='step(08|09|10)' --benchmark_repetitions=5 --benchmark_out=$L/bench-$r.json > /dev/null 2>&1
  echo "== run $r"; python3 bench/report.py table $L/bench-$r.json 2>&1 | tail -6
done | tee $L/bench-table.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
