#!/bin/bash
# Device call 6 (eleventh session): P26. The final code: hopper build, step 8's tests, a two-stage build at a ragged K.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
cmake --preset hopper -B /tmp/b2 -G Ninja -DGEMM_STEP08_STAGES=2 -DGEMM_BUILD_TESTS=OFF > $L/configure2.txt 2>&1
cmake --build /tmp/b2 -j16 --target step08 > $L/build2.txt 2>&1 || echo BUILD2 FAILED | tee -a $L/build2.txt
echo "builds $(( $(date +%s) - S )) s, warnings: $(cat $L/build.txt $L/build2.txt | grep -ci warning)" | tee $L/build-summary.txt
timeout 200 ctest --test-dir /tmp/b -R '^step08\.' -j6 --timeout 150 > $L/ctest-step08.txt 2>&1; echo "rc=$?" >> $L/ctest-step08.txt
grep -E "tests passed|rc=" $L/ctest-step08.txt; grep -E "\(Failed|\(Timeout" $L/ctest-step08.txt | head
{ for s in "3000 3000 3000" "200 136 72"; do set -- $s; echo "## two stages, $1x$2x$3"; timeout 60 /tmp/b2/step08 --m $1 --n $2 --k $3; echo "rc=$?"; done
  echo "## two stages, GEMM_LINE_WINDOWS=1"; GEMM_LINE_WINDOWS=1 timeout 60 /tmp/b2/step08 --m 3000 --n 3000 --k 3000; echo "rc=$?"; } > $L/two-stages.txt 2>&1
grep -E "##|verdict|ratio|error|rc=" $L/two-stages.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
