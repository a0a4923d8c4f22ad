#!/bin/bash
# Device call 2 (ninth session): P8. Step 8 with line windows: build, gemm_bench at issue 17's four
# sizes (steps 4-10, cuBLAS in the same run), the forced A/Bs, step 8's resources, and all of
# step 8's tests (gpu, sweep, large, bad_input, sanitize, emu).
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm,power.limit --format=csv; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
T=$(ninja -C /tmp/b -t targets all | sed -n 's/^\(step08[a-z_]*\|gemm_bench\|cpu_tests\): .*/\1/p' | sort -u | tr '\n' ' ')
echo "targets: $T" > $L/build.txt
SECONDS=0
cmake --build /tmp/b -j16 --target $T >> $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build took ${SECONDS}s; warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
cuobjdump --dump-resource-usage /tmp/b/step08 2>&1 | grep -B1 -A1 "step086hopper6kernel" > $L/resources.txt; cat $L/resources.txt
timeout 240 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step(0[4-9]|10)' --benchmark_repetitions=5 --benchmark_out=$L/bench.json > $L/bench-stdout.txt 2>&1; echo "rc=$?" >> $L/bench-stdout.txt
python3 bench/report.py table $L/bench.json > $L/bench-table.txt 2>&1; cat $L/bench-table.txt
{ echo "## GEMM_LINE_WINDOWS=1 (windows at the aligned sizes too)"; GEMM_LINE_WINDOWS=1 timeout 60 /tmp/b/gemm_bench --sizes=3072,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab1.json; echo "rc=$?";
  echo "## GEMM_LINE_WINDOWS=0 (TMA at the ragged sizes, as before)"; GEMM_LINE_WINDOWS=0 timeout 60 /tmp/b/gemm_bench --sizes=3000,4001x1000x2056 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab0.json; echo "rc=$?"; } > $L/ab-stdout.txt 2>&1
{ python3 bench/report.py table $L/ab1.json; python3 bench/report.py table $L/ab0.json; } > $L/ab-table.txt 2>&1; cat $L/ab-table.txt
timeout 200 ctest --test-dir /tmp/b -R '^step08\.' -j6 --timeout 150 > $L/ctest-step08.txt 2>&1; echo "rc=$?" >> $L/ctest-step08.txt
tail -15 $L/ctest-step08.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
