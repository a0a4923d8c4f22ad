#!/bin/bash
# Device call 1 (tenth session): P15. B's tile of consecutive rows as eight line-aligned phase boxes.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
cmake --build /tmp/b -j16 --target tma_probe > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
V=sw128/256,sw128/128,3d:phase,3d:phase/b8
timeout 150 /tmp/b/tma_probe --configs 6144:3072,6000:3000,4096:2048,4112:2056 --variants $V --patterns gemm --no-sweeps --reps 7 --csv $L/probe.csv > $L/probe.txt 2>&1; echo "rc=$?" >> $L/probe.txt
sed -n '/== pattern gemm/,$p' $L/probe.txt
M=gpu__time_duration.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
timeout 150 ncu --clock-control none -k regex:load_ --metrics $M /tmp/b/tma_probe --ncu --configs 6144:3072,6000:3000,4112:2056 --variants sw128/256,3d:phase,3d:phase/b8 --patterns gemm > $L/ncu-probe.txt 2>&1; echo "rc=$?" >> $L/ncu-probe.txt
grep -E "probe launch|__" $L/ncu-probe.txt | sed 's/; model for.*//'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
