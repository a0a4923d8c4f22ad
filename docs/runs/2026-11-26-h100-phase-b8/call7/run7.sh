#!/bin/bash
# Device call 7 (tenth session): P21. phase_gemm with two consumer warpgroups; step 8 beside it.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
P=docs/runs/2026-11-26-h100-phase-b8/phase_gemm.cu
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -Xptxas -v -o /tmp/phase_gemm $P -lcublas > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
grep -E "registers|spill|C75" $L/build.txt
timeout 150 /tmp/phase_gemm > $L/phase_gemm.txt 2>&1; echo "rc=$?" >> $L/phase_gemm.txt
cat $L/phase_gemm.txt
for v in --no-loads --no-mma --no-store; do
  echo "##### phase_gemm $v" >> $L/variants.txt
  timeout 100 /tmp/phase_gemm --only 0 $v >> $L/variants.txt 2>&1; echo "rc=$?" >> $L/variants.txt
  timeout 100 /tmp/phase_gemm --only 2 $v >> $L/variants.txt 2>&1; echo "rc=$?" >> $L/variants.txt
done
grep -E "#####|TFLOPS|rc=" $L/variants.txt
cmake --preset hopper -B /tmp/b -G Ninja > /dev/null 2>&1
cmake --build /tmp/b -j16 --target gemm_bench > $L/build-bench.txt 2>&1 || echo BENCH BUILD FAILED | tee -a $L/build-bench.txt
echo "bench warnings: $(grep -ci warning $L/build-bench.txt)"
timeout 150 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/bench.json > $L/bench-stdout.txt 2>&1; echo "rc=$?" >> $L/bench-stdout.txt
python3 bench/report.py table $L/bench.json > $L/bench-table.txt 2>&1; cat $L/bench-table.txt
timeout 150 /tmp/phase_gemm > $L/phase_gemm-2.txt 2>&1; echo "rc=$?" >> $L/phase_gemm-2.txt
grep -E "x[0-9]+:|TFLOPS|ratio|checks" $L/phase_gemm-2.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
