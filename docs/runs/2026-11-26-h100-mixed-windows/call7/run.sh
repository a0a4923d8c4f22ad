#!/bin/bash
# Device call 7 (twelfth session): the final code: whole build, ctest -L gpu, sanitizers of steps 8-9.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
timeout 300 ctest --test-dir /tmp/b -L gpu -j8 --timeout 200 > $L/ctest-gpu.txt 2>&1; echo "rc=$?" >> $L/ctest-gpu.txt
grep -E "tests passed|rc=|Total Test" $L/ctest-gpu.txt; grep -E "\(Failed|\(Timeout|Not Run" $L/ctest-gpu.txt | head
timeout 200 ctest --test-dir /tmp/b -L sanitize -R '^step0[89]\.' -j4 --timeout 150 > $L/ctest-sanitize.txt 2>&1; echo "rc=$?" >> $L/ctest-sanitize.txt
grep -E "tests passed|rc=|Failed" $L/ctest-sanitize.txt | head
cd $OUT && tar czf logs.tgz logs && rm -rf logs
