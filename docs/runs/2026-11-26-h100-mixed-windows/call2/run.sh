#!/bin/bash
# Device call 2 (twelfth session): P28. Split window copies vs unsplit; four stages.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
# b2: the unsplit producer (the commit before); b3: split, four stages.
R=$(pwd); rm -rf /tmp/src2 && mkdir /tmp/src2 && git archive HEAD | tar x -C /tmp/src2 && (cd /tmp/src2 && git apply -R $R/.snap/split.patch) && echo "unsplit tree ready"
cmake -S /tmp/src2 --preset hopper -B /tmp/b2 -G Ninja > $L/configure2.txt 2>&1; cmake --build /tmp/b2 -j16 --target gemm_bench step08 > $L/build2.txt 2>&1 || echo BUILD2 FAILED
cmake --preset hopper -B /tmp/b3 -G Ninja -DGEMM_STEP08_STAGES=4 > $L/configure3.txt 2>&1; cmake --build /tmp/b3 -j16 --target gemm_bench > $L/build3.txt 2>&1 || echo BUILD3 FAILED
echo "warnings b2/b3: $(grep -ci warning $L/build2.txt) $(grep -ci warning $L/build3.txt)" | tee -a $L/build-summary.txt
for run in "b 1" "b2 1" "b3 1" "b b" "b2 b" "b3 b" "b a"; do
  set -- $run
  echo "## build $1, GEMM_LINE_WINDOWS=$2"
  GEMM_LINE_WINDOWS=$2 timeout 100 /tmp/$1/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab-$1-$2.json > /dev/null 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab-$1-$2.json | sed -n '4,5p;7,8p'
done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
M=lts__t_requests_srcunit_tex_op_read.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__t_sector_hit_rate.pct
for run in "b 1" "b2 1" "b b"; do
  set -- $run
  echo "######## build $1 GEMM_LINE_WINDOWS=$2 3000^3" >> $L/ncu.txt
  GEMM_LINE_WINDOWS=$2 timeout 100 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 --metrics $M /tmp/$1/step08 --m 3000 --n 3000 --k 3000 --iters 3 >> $L/ncu.txt 2>&1; echo "rc=$?" >> $L/ncu.txt
done
grep -E "####|requests|l1tex__|lts__throughput|duration|hmma" $L/ncu.txt
for w in "" b; do
  GEMM_LINE_WINDOWS=$w timeout 200 ctest --test-dir /tmp/b -R '^step08\.' -j6 --timeout 150 > $L/ctest-step08-$w.txt 2>&1; echo "rc=$?" >> $L/ctest-step08-$w.txt
  echo "== '$w'"; grep -E "tests passed|rc=|Failed|Timeout" $L/ctest-step08-$w.txt | head
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
