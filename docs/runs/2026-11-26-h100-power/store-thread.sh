#!/bin/bash
# Step 10 (hopper): the TMA stores of D issued by a store thread per consumer (store-thread.diff),
# in turns with the committed step; sanitizers on that build.
set -u
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $L/gpu.txt
date -u >> $L/gpu.txt
cp .snap/prediction.txt $L/
rm -f tests/emu/variants.cmake  # the emulator's single-bug variants patch the committed step text
t0=$(date +%s)
b() { (cd $1 && cmake --preset hopper -B $2 -G Ninja > $L/cfg-$(basename $2).txt 2>&1 && cmake --build $2 --target step10 -j8 > $L/build-$(basename $2).txt 2>&1); }
b .snap/old /tmp/b0 & b . /tmp/b1 &
wait
echo "builds done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
ls -la /tmp/b?/step10 >> $L/gpu.txt 2>&1
grep -h "warning" $L/build-*.txt | head
for a in "--m 1000 --n 1000 --k 1000" "--m 300 --n 264 --k 1536" "--exact --m 520 --n 392 --k 512" "--exact --m 520 --n 520 --k 136" "--m 3000 --n 3000 --k 3000" "--m 4001 --n 1000 --k 2056" "--m 256 --n 256 --k 64" "--m 4096 --n 4096 --k 4096"; do
  echo "b1 $a: $(timeout 60 /tmp/b1/step10 $a --iters 3 2>&1 | grep -E 'verdict|rror' | tr -s ' ' | tr '\n' ' ')" >> $L/check.txt
done
for tool in racecheck synccheck memcheck; do
  echo "$tool: $(timeout 120 compute-sanitizer --tool $tool /tmp/b1/step10 --exact --m 520 --n 392 --k 512 --check-only 2>&1 | grep -E 'ERROR SUMMARY|verdict|RACECHECK SUMMARY' | tr '\n' ' ')" >> $L/check.txt
done
echo "checks done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
for r in 1 2 3; do
  for s in "4096 4096 4096 50" "8192 8192 8192 20" "8192 2048 4096 50" "2048 8192 8192 50" "3072 3072 3072 50" "3000 3000 3000 50" "4001 1000 2056 100" "2048 2048 2048 100"; do
    set -- $s
    for b in b0 b1; do
      echo "r$r $b $1x$2x$3: $(timeout 60 /tmp/$b/step10 --m $1 --n $2 --k $3 --iters $4 2>&1 | grep -E 'verdict|step time|cuBLAS time|ratio' | tr -s ' ' | tr '\n' ' ')" >> $L/ab.txt
    done
  done
  echo "round $r done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
