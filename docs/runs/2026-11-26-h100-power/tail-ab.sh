#!/bin/bash
# A/B of step 10 (hopper): committed (old) vs the tail split by column halves, 1 and 2 slices.
set -u
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $L/gpu.txt
date -u >> $L/gpu.txt
t0=$(date +%s)
( cd .snap/old && cmake --preset hopper -B /tmp/b0 -G Ninja > $L/cfg0.txt 2>&1 && cmake --build /tmp/b0 --target step10 -j6 > $L/build0.txt 2>&1 ) &
( cmake --preset hopper -B /tmp/b1 -G Ninja > $L/cfg1.txt 2>&1 && cmake --build /tmp/b1 --target step10 -j5 > $L/build1.txt 2>&1 ) &
( cmake --preset hopper -B /tmp/b2 -G Ninja -DCMAKE_CUDA_FLAGS=-DGEMM_STEP10_TAIL_SLICES=2 > $L/cfg2.txt 2>&1 && cmake --build /tmp/b2 --target step10 -j5 > $L/build2.txt 2>&1 ) &
wait
echo "builds done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
for b in 0 1 2; do ls -la /tmp/b$b/step10 >> $L/gpu.txt 2>&1 || { echo "build $b failed"; tail -30 $L/build$b.txt; }; done
grep -h "warning" $L/build*.txt | head
# D checks: float vs cuBLAS and exact mode, including ragged and split shapes
for b in 1 2; do
  for a in "--m 1000 --n 1000 --k 1000" "--m 300 --n 264 --k 1536" "--m 200 --n 256 --k 3072" "--exact --m 520 --n 392 --k 512" "--exact --m 520 --n 520 --k 136" "--m 3000 --n 3000 --k 3000" "--m 4001 --n 1000 --k 2056" "--m 256 --n 256 --k 128"; do
    echo "b$b $a: $(/tmp/b$b/step10 $a --iters 3 2>&1 | grep -E 'verdict|rror' | tr -s ' ' | tr '\n' ' ')" >> $L/check.txt
  done
done
echo "checks done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
for r in 1 2 3; do
  for s in "4096 4096 4096 50" "8192 8192 8192 20" "8192 2048 4096 50" "2048 8192 8192 50" "3072 3072 3072 50" "3000 3000 3000 50" "1024 1024 1024 100" "4001 1000 2056 100"; do
    set -- $s
    for b in 0 1 2; do
      echo "r$r b$b $1x$2x$3: $(/tmp/b$b/step10 --m $1 --n $2 --k $3 --iters $4 2>&1 | grep -E 'verdict|step time|cuBLAS time|ratio' | tr -s ' ' | tr '\n' ' ')" >> $L/ab.txt
    done
  done
  echo "round $r done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
