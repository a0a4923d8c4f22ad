#!/bin/bash
# Device call 3 (eleventh session): P24. What caps step 8's .ca line windows (mode 2): ncu sections; 6 stages.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja -DGEMM_BUILD_TESTS=OFF > $L/configure.txt 2>&1
cmake --build /tmp/b -j16 --target step08 gemm_bench > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
cmake --preset hopper -B /tmp/b6 -G Ninja -DGEMM_STEP08_STAGES=6 -DGEMM_BUILD_TESTS=OFF > $L/configure6.txt 2>&1
cmake --build /tmp/b6 -j16 --target gemm_bench > $L/build6.txt 2>&1 || echo BUILD6 FAILED | tee -a $L/build6.txt
echo "warnings: $(cat $L/build.txt $L/build6.txt | grep -ci warning)" | tee -a $L/build.txt
for b in b b6; do for w in 0 2; do
  echo "## build $b, GEMM_LINE_WINDOWS=$w"
  GEMM_LINE_WINDOWS=$w timeout 100 /tmp/$b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab-$b-$w.json > $L/ab-$b-$w-stdout.txt 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab-$b-$w.json | sed -n '4,5p;7,9p'
done; done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
for w in 0 2; do for n in 3000 3072; do
  echo "######## GEMM_LINE_WINDOWS=$w size $n" >> $L/ncu.txt
  GEMM_LINE_WINDOWS=$w timeout 120 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats /tmp/b/step08 --m $n --n $n --k $n --iters 3 >> $L/ncu.txt 2>&1; echo "rc=$?" >> $L/ncu.txt
done; done
grep -E "########|Duration|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Memory Throughput|Shared|Stall|Issued Warp|No Eligible|rc=" $L/ncu.txt | head -120
cd $OUT && tar czf logs.tgz logs && rm -rf logs
