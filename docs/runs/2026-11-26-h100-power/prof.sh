#!/bin/bash
# Step 10 (hopper) with clock64 counters in its consumers (prof.diff): where a tile's cycles go.
set -u
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $L/gpu.txt
date -u >> $L/gpu.txt
t0=$(date +%s)
b() { (cd $1 && cmake --preset hopper -B $2 -G Ninja > $L/cfg-$(basename $2).txt 2>&1 && cmake --build $2 --target step10 -j8 > $L/build-$(basename $2).txt 2>&1); }
b .snap/old /tmp/b0 & b . /tmp/bp &
wait
echo "builds done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
ls -la /tmp/b0/step10 /tmp/bp/step10 >> $L/gpu.txt 2>&1
for s in "4096 4096 4096 8" "8192 8192 8192 4" "2048 2048 2048 8"; do
  set -- $s
  GEMM_PROF=1 /tmp/bp/step10 --m $1 --n $2 --k $3 --iters $4 >> $L/prof.txt 2>&1
done
for r in 1; do
  for s in "4096 4096 4096 50" "8192 8192 8192 20"; do
    set -- $s
    for b in b0 bp; do
      echo "r$r $b $1x$2x$3: $(/tmp/$b/step10 --m $1 --n $2 --k $3 --iters $4 2>&1 | grep -E 'verdict|step time|cuBLAS time|ratio' | tr -s ' ' | tr '\n' ' ')" >> $L/ab.txt
    done
  done
done
echo "done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
