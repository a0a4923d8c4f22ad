#!/bin/bash
# Device call 5 (twelfth session): P31. docs/results.* regenerated (tools/compare.sh --docs), step 8's tests.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
S=$(date +%s)
timeout 480 tools/compare.sh --preset hopper --docs > $L/compare.txt 2>&1; echo "rc=$? in $(( $(date +%s) - S )) s" | tee -a $L/compare.txt
tail -22 $L/compare.txt
cp docs/results.md docs/results.json docs/results.png docs/results.svg $L/ 2>/dev/null
cmake --build build -j16 > $L/build-tests.txt 2>&1; echo "build: $(grep -ci warning $L/build-tests.txt) warnings" | tee -a $L/ctest-step08.txt
timeout 100 ctest --test-dir build -R '^step08\.' -j8 --timeout 90 >> $L/ctest-step08.txt 2>&1; echo "rc=$?" >> $L/ctest-step08.txt
grep -E "tests passed|rc=|Total Test|Failed" $L/ctest-step08.txt | head
cd $OUT && tar czf logs.tgz logs && rm -rf logs
