#!/bin/bash
# Device call 4 (twelfth session): P30. The new defaults: whole build, A/B, ctest -L gpu, sanitizers of steps 8-9.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
for w in "" 0; do
  echo "## GEMM_LINE_WINDOWS='$w'"
  GEMM_LINE_WINDOWS=$w timeout 120 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step0[89]' --benchmark_repetitions=5 --benchmark_out=$L/ab-$w.json > /dev/null 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab-$w.json | sed -n '4,6p;8,11p'
done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
{ echo "## step 9, GEMM_LINE_WINDOWS=b (refused)"; GEMM_LINE_WINDOWS=b timeout 60 /tmp/b/step09 --m 3000 --n 3000 --k 3000; echo "rc=$?"; } > $L/refuse.txt 2>&1; cat $L/refuse.txt
timeout 300 ctest --test-dir /tmp/b -L gpu -j8 --timeout 200 > $L/ctest-gpu.txt 2>&1; echo "rc=$?" >> $L/ctest-gpu.txt
grep -E "tests passed|rc=|Total Test" $L/ctest-gpu.txt; grep -E "\(Failed|\(Timeout|Not Run" $L/ctest-gpu.txt | head
timeout 200 ctest --test-dir /tmp/b -L sanitize -R '^step0[89]\.' -j4 --timeout 150 > $L/ctest-sanitize.txt 2>&1; echo "rc=$?" >> $L/ctest-sanitize.txt
grep -E "tests passed|rc=|Failed" $L/ctest-sanitize.txt | head
cd $OUT && tar czf logs.tgz logs && rm -rf logs
