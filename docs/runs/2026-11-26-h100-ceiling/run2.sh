#!/bin/bash
# Device call 2 (eighth session): ncu's L2 counts for steps 8-10 at 3000^3 and 3072^3, and for the
# probe's loaders (sw128/128, cp.async, cp.async/512) at 6144:3072 and 6000:3000.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu2.txt 2>&1
cat $L/gpu2.txt
(cmake --preset hopper -B /tmp/b -G Ninja > /dev/null 2>&1 && cmake --build /tmp/b --target tma_probe step08 step09 step10 -j16 > $L/build2.txt 2>&1) || echo BUILD FAILED | tee -a $L/build2.txt
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_requests.sum,lts__t_sectors.sum,dram__bytes_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second
for s in 08 09 10; do for n in 3072 3000; do
  echo "##### step$s ${n}^3" >> $L/ncu-steps.txt
  timeout 100 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 --metrics $M /tmp/b/step$s --m $n --n $n --k $n --iters 3 >> $L/ncu-steps.txt 2>&1
done; done
grep -E "#####|__|ERR" $L/ncu-steps.txt
timeout 150 ncu --clock-control none -k regex:load_ --metrics $M /tmp/b/tma_probe --ncu --configs 6144:3072,6000:3000 --variants sw128/128,cp.async,cp.async/512 --patterns gemm > $L/ncu-probe.txt 2>&1
grep -E "probe launch|__|ERR" $L/ncu-probe.txt | cut -c1-160
cd $OUT && tar czf logs2.tgz logs && rm -rf logs
