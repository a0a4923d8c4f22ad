#!/bin/bash
# Device call 4: the whole hopper build at b9128f9 and its GPU tests; steps 9-10's sweep, large,
# bad-input and sanitizer tests.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; git log -1 --oneline; } > $L/gpu.txt 2>&1
cmake --preset hopper -B /tmp/bf -G Ninja > $L/configure.txt 2>&1
cmake --build /tmp/bf -j16 > $L/build.txt 2>&1; echo "build rc=$? warnings: $(grep -ci 'warning' $L/build.txt)" | tee $L/build-summary.txt
ctest --test-dir /tmp/bf -L gpu --output-on-failure -j4 > $L/ctest-gpu.txt 2>&1
ctest --test-dir /tmp/bf -R "step(09|10)" -L "sweep|large|bad_input|sanitize" --output-on-failure -j4 > $L/ctest-9-10-more.txt 2>&1
grep -hE "tests passed|tests failed|Total Test time" $L/ctest-*.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
