#!/bin/bash
# Device call 6 (tenth session): P20. phase_gemm split: no loads, no wgmma, no stores; its SASS.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
P=docs/runs/2026-11-26-h100-phase-b8/phase_gemm.cu
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -Xptxas -v -o /tmp/phase_gemm $P -lcublas > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "warnings: $(grep -ci warning $L/build.txt)" | tee -a $L/build.txt
grep -E "registers|spill|C75" $L/build.txt
for v in "" --no-loads --no-mma --no-store; do
  echo "##### phase_gemm $v" >> $L/phase_gemm.txt
  timeout 100 /tmp/phase_gemm --only 0 $v >> $L/phase_gemm.txt 2>&1; echo "rc=$?" >> $L/phase_gemm.txt
  timeout 100 /tmp/phase_gemm --only 2 $v >> $L/phase_gemm.txt 2>&1; echo "rc=$?" >> $L/phase_gemm.txt
done
grep -E "#####|phase_gemm [0-9]|TFLOPS|rc=|checks" $L/phase_gemm.txt
cuobjdump -sass /tmp/phase_gemm > $L/sass.txt 2>&1  # kept: lines 3480-4240, sass-loop.txt
echo "SASS lines: $(wc -l < $L/sass.txt)"
for op in HGMMA LDSM WARPGROUP.ARRIVE WARPGROUP.DEPBAR SYNCS UTMALDG MOV STG; do echo "$op: $(grep -c "$op" $L/sass.txt)"; done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
