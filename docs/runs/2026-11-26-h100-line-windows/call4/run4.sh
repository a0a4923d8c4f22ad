#!/bin/bash
# Device call 4 (ninth session): P10. Step 8's window producer with one shared-address conversion
# per line: gemm_bench A/B (windows and TMA, same call), step 8's tests.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
T=$(ninja -C /tmp/b -t targets all | sed -n 's/^\(step08[a-z_]*\|gemm_bench\): .*/\1/p' | sort -u | tr '\n' ' ')
cmake --build /tmp/b -j16 --target $T > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
for w in 1 0; do
  echo "## GEMM_LINE_WINDOWS=$w"
  GEMM_LINE_WINDOWS=$w timeout 100 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab$w.json > $L/ab$w-stdout.txt 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab$w.json
done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
timeout 120 ctest --test-dir /tmp/b -R '^step08\.' -j6 --timeout 100 > $L/ctest-step08.txt 2>&1; echo "rc=$?" >> $L/ctest-step08.txt
tail -6 $L/ctest-step08.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
