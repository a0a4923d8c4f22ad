#!/bin/bash
# Device call 1 (thirteenth session): the harness's timing tests under parallel load.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
# Three whole GPU runs at -j8, each listing every test.
for r in 1 2 3; do
  timeout 200 ctest --test-dir /tmp/b -L gpu -j8 --timeout 150 > $L/ctest-gpu-$r.txt 2>&1; echo "rc=$?" >> $L/ctest-gpu-$r.txt
  echo "run $r: $(grep -E 'tests passed' $L/ctest-gpu-$r.txt) $(grep -E '^rc=' $L/ctest-gpu-$r.txt)"
  grep -E "\(Failed|\(Timeout|Not Run" $L/ctest-gpu-$r.txt | head
done | tee $L/summary.txt
# The timing tests 20 times in each of 8 processes at once, beside a step's tests.
F='GpuTest.Time*:GpuTest.GpuDelay*'
( timeout 200 ctest --test-dir /tmp/b -L step08 -j4 --timeout 150 > $L/beside.txt 2>&1 ) &
for p in 1 2 3 4 5 6 7 8; do
  ( timeout 250 /tmp/b/tests/gpu/harness_gpu_tests --gtest_filter="$F" --gtest_repeat=20 > $L/stress-$p.txt 2>&1; echo "rc=$?" >> $L/stress-$p.txt ) &
done
wait
for p in 1 2 3 4 5 6 7 8; do echo "stress $p: $(grep -c '^\[       OK \]' $L/stress-$p.txt) ok, $(grep -c '^\[  FAILED  \] GpuTest' $L/stress-$p.txt) failed lines, $(tail -1 $L/stress-$p.txt)"; done | tee -a $L/summary.txt
grep -h "late\|spin took" $L/stress-*.txt | sort | uniq -c | head | tee -a $L/summary.txt
echo "beside: $(grep -E 'tests passed' $L/beside.txt)" | tee -a $L/summary.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
