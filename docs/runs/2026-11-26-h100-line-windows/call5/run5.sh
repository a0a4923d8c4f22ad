#!/bin/bash
# Device call 5 (ninth session): P11. Step 8's window producer with the per-tile copy setup, at 5
# stages (the step) and 6 (GEMM_STEP08_STAGES=6), each with windows forced on and off; step 8's tests.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
T=$(ninja -C /tmp/b -t targets all | sed -n 's/^\(step08[a-z_]*\|gemm_bench\): .*/\1/p' | sort -u | tr '\n' ' ')
cmake --build /tmp/b -j16 --target $T > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
cmake --preset hopper -B /tmp/b6 -G Ninja -DGEMM_STEP08_STAGES=6 -DGEMM_BUILD_TESTS=OFF > $L/configure6.txt 2>&1
cmake --build /tmp/b6 -j16 --target gemm_bench > $L/build6.txt 2>&1 || echo BUILD6 FAILED | tee -a $L/build6.txt
echo "warnings: $(cat $L/build.txt $L/build6.txt | grep -ci warning)" | tee -a $L/build.txt
cuobjdump --dump-resource-usage /tmp/b/step08 2>&1 | grep -A1 "step086hopper6kernel" > $L/resources.txt; cat $L/resources.txt
for b in b b6; do for w in 1 0; do
  echo "## build $b (stages: $([ $b = b6 ] && echo 6 || echo 5)), GEMM_LINE_WINDOWS=$w"
  GEMM_LINE_WINDOWS=$w timeout 100 /tmp/$b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab-$b-$w.json > $L/ab-$b-$w-stdout.txt 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab-$b-$w.json | sed -n '4,5p;7,9p'
done; done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
timeout 150 ctest --test-dir /tmp/b -R '^step08\.' -j6 --timeout 100 > $L/ctest-step08.txt 2>&1; echo "rc=$?" >> $L/ctest-step08.txt
grep -E "tests passed|Failed|\*\*\*" $L/ctest-step08.txt | head
cd $OUT && tar czf logs.tgz logs && rm -rf logs
