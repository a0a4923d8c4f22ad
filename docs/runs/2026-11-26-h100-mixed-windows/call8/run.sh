#!/bin/bash
# Device call 8 (twelfth session): GpuTest.TimeAloneRetriesLateCalls alone (10 repeats), then ctest -L gpu -j8 again with output on failure.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
timeout 100 /tmp/b/tests/gpu/harness_gpu_tests --gtest_filter=GpuTest.TimeAloneRetriesLateCalls --gtest_repeat=10 > $L/late-alone.txt 2>&1; echo "rc=$?" >> $L/late-alone.txt
grep -cE "^\[       OK \]" $L/late-alone.txt; grep -E "FAILED|rc=" $L/late-alone.txt | head -5
timeout 300 ctest --test-dir /tmp/b -L gpu -j8 --timeout 200 --output-on-failure > $L/ctest-gpu.txt 2>&1; echo "rc=$?" >> $L/ctest-gpu.txt
grep -E "tests passed|rc=|Total Test" $L/ctest-gpu.txt; grep -E "\(Failed|\(Timeout|Not Run" $L/ctest-gpu.txt | head
grep -B2 -A12 "Failure" $L/ctest-gpu.txt | head -40
cd $OUT && tar czf logs.tgz logs && rm -rf logs
