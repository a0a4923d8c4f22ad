#!/bin/bash
# Device call 8 (tenth session, the final re-read): the whole hopper build at HEAD and its GPU tests,
# and steps 9-10's sanitizer tests (their hopper.cu changed in comments since f9b1e20).
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/bf -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/bf -j16 > $L/build.txt 2>&1; echo "build rc=$? in $(( $(date +%s) - S )) s, warnings: $(grep -ci 'warning' $L/build.txt)" | tee $L/build-summary.txt
timeout 200 ctest --test-dir /tmp/bf -L gpu --output-on-failure -j4 > $L/ctest-gpu.txt 2>&1
timeout 150 ctest --test-dir /tmp/bf -R "step(09|10)" -L sanitize --output-on-failure -j4 > $L/ctest-9-10-sanitize.txt 2>&1
grep -hE "tests passed|tests failed|Total Test time" $L/ctest-*.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
