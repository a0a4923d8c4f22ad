#!/bin/bash
# Device call 1 (twelfth session): P27. Step 8 with windows for one operand.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
for w in 1 a b 0; do
  echo "## GEMM_LINE_WINDOWS='$w'"
  GEMM_LINE_WINDOWS=$w timeout 100 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step0[89]' --benchmark_repetitions=5 --benchmark_out=$L/ab-$w.json > $L/ab-$w-stdout.txt 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab-$w.json | sed -n '4,5p;7,10p'
done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
M=lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for w in a 1; do for n in 3000 3072; do
  echo "######## GEMM_LINE_WINDOWS=$w size $n" >> $L/ncu.txt
  GEMM_LINE_WINDOWS=$w timeout 100 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 --metrics $M /tmp/b/step08 --m $n --n $n --k $n --iters 3 >> $L/ncu.txt 2>&1; echo "rc=$?" >> $L/ncu.txt
done; done
grep -E "####|requests|l1tex__|lts__throughput|duration|hmma" $L/ncu.txt
for w in a b; do
  GEMM_LINE_WINDOWS=$w timeout 200 ctest --test-dir /tmp/b -R '^step08\.' -j6 --timeout 150 > $L/ctest-step08-$w.txt 2>&1; echo "rc=$?" >> $L/ctest-step08-$w.txt
  echo "== $w"; grep -E "tests passed|rc=|Failed|Timeout" $L/ctest-step08-$w.txt | head
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
