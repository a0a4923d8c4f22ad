#!/bin/bash
# Device call 2 (eleventh session): P23. Step 8 with TMA (0), line windows .cg (1), line windows .ca (2),
# per-row .ca (3); its tests under 2 and 3; ncu at 3000^3.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
T=$(ninja -C /tmp/b -t targets all | sed -n 's/^\(step08[a-z_]*\|gemm_bench\): .*/\1/p' | sort -u | tr '\n' ' ')
cmake --build /tmp/b -j16 --target $T > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
cuobjdump --dump-resource-usage /tmp/b/step08 2>&1 | grep -A1 "step086hopper6kernel" > $L/resources.txt
for w in 0 1 2 3; do
  echo "## GEMM_LINE_WINDOWS=$w"
  GEMM_LINE_WINDOWS=$w timeout 100 /tmp/b/gemm_bench --sizes=3000,3072,4001x1000x2056,4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=5 --benchmark_out=$L/ab-$w.json > $L/ab-$w-stdout.txt 2>&1; echo "rc=$?"
  python3 bench/report.py table $L/ab-$w.json | sed -n '4,5p;7,9p'
done > $L/ab-table.txt 2>&1
cat $L/ab-table.txt
for w in 2 3; do
  GEMM_LINE_WINDOWS=$w timeout 120 ctest --test-dir /tmp/b -R '^step08\.' -j6 --timeout 100 > $L/ctest-step08-$w.txt 2>&1; echo "rc=$?" >> $L/ctest-step08-$w.txt
  echo "mode $w: $(grep -E 'tests passed' $L/ctest-step08-$w.txt)"; grep -E "Failed|\*\*\*" $L/ctest-step08-$w.txt | head -5
done
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed
for w in 0 2 3; do
  echo "## GEMM_LINE_WINDOWS=$w" >> $L/ncu.txt
  GEMM_LINE_WINDOWS=$w timeout 100 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 --metrics $M /tmp/b/step08 --m 3000 --n 3000 --k 3000 --iters 3 >> $L/ncu.txt 2>&1; echo "rc=$?" >> $L/ncu.txt
done
grep -E "##|__|rc=" $L/ncu.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
