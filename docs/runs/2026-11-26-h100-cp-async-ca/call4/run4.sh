#!/bin/bash
# Device call 4 (eleventh session): P25. The kept version: whole hopper build, ctest -L gpu, step 8 sanitizers, step 8 A/B.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
for w in 0 ""; do
  echo "## GEMM_LINE_WINDOWS='$w'"
  GEMM_LINE_WINDOWS=$w timeout 100 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab-$w.json > $L/ab-$w-stdout.txt 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab-$w.json | sed -n '4,5p;7,9p'
done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
timeout 300 ctest --test-dir /tmp/b -L gpu -j8 --timeout 200 > $L/ctest-gpu.txt 2>&1; echo "rc=$?" >> $L/ctest-gpu.txt
grep -E "tests passed|rc=" $L/ctest-gpu.txt; grep -E "\(Failed|\(Timeout|Not Run" $L/ctest-gpu.txt | head
timeout 200 ctest --test-dir /tmp/b -L sanitize -R '^step08\.' -j4 --timeout 150 > $L/ctest-step08-sanitize.txt 2>&1; echo "rc=$?" >> $L/ctest-step08-sanitize.txt
grep -E "tests passed|rc=|Failed" $L/ctest-step08-sanitize.txt | head
cd $OUT && tar czf logs.tgz logs && rm -rf logs
