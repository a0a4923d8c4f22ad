#!/bin/bash
# Device call 14: the tools and harness changed since 8e280f1, run on the GPU at HEAD: ladder_diag
# (its checks and timing), gemm_bench's flag tests and a smoke run, the harness's GPU tests.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/bf -G Ninja > /dev/null 2>&1
cmake --build /tmp/bf -j16 > $L/build.txt 2>&1; echo "build rc=$? warnings: $(grep -ci warning $L/build.txt)"
ctest --test-dir /tmp/bf -L bench --output-on-failure > $L/ctest-bench.txt 2>&1; grep -E "tests passed|tests failed" $L/ctest-bench.txt
ctest --test-dir /tmp/bf -R "harness|timer" -L gpu --output-on-failure > $L/ctest-harness.txt 2>&1; grep -E "tests passed|tests failed" $L/ctest-harness.txt
mkdir -p /tmp/traces
timeout 420 /tmp/bf/ladder_diag /tmp/traces > $L/ladder_diag.txt 2>&1; echo "ladder_diag rc=$?" | tee -a $L/ladder_diag.txt
tail -25 $L/ladder_diag.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
