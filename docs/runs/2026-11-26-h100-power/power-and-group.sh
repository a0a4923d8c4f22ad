#!/bin/bash
# Power and SM clock while steps 8-10 and cuBLAS run back to back at 4096^3 (nvidia-smi, 50 ms).
set -u
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $L/gpu.txt
date -u >> $L/gpu.txt
t0=$(date +%s)
( cd .snap/old && cmake --preset hopper -B /tmp/b0 -G Ninja > $L/cfg0.txt 2>&1 && cmake --build /tmp/b0 --target step08 step09 step10 -j10 > $L/build0.txt 2>&1 ) &
( cmake --preset hopper -B /tmp/b1 -G Ninja > $L/cfg1.txt 2>&1 && cmake --build /tmp/b1 --target step10 -j6 > $L/build1.txt 2>&1 ) &
for g in 8 32; do
  ( cp -r .snap/old /tmp/g$g && sed -i "s/^constexpr int kGroupM = 16;/constexpr int kGroupM = $g;/" /tmp/g$g/steps/09_cluster/hopper.cu && grep -n "^constexpr int kGroupM" /tmp/g$g/steps/09_cluster/hopper.cu >> $L/gpu.txt && cd /tmp/g$g && cmake --preset hopper -B /tmp/bg$g -G Ninja > $L/cfgg$g.txt 2>&1 && cmake --build /tmp/bg$g --target step09 -j4 > $L/buildg$g.txt 2>&1 ) &
done
wait
echo "builds done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
R=clocks_event_reasons.active
nvidia-smi --query-gpu=$R --format=csv >> $L/gpu.txt 2>&1 || R=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm,clocks.mem,temperature.gpu,$R --format=csv -lms 50 > $L/trace.csv 2>&1 &
smi=$!
sleep 2
for run in "b0 step08 4096 10000" "b0 step09 4096 10000" "b0 step10 4096 10000" "b1 step10 4096 10000" "b0 step10 8192 1500" "b0 step08 8192 1500" "b0 step09 8192 1500"; do
  set -- $run
  echo "start $1 $2 $3 $(date +%s.%N)" >> $L/marks.txt
  /tmp/$1/$2 --m $3 --n $3 --k $3 --iters $4 > $L/out-$1-$2-$3.txt 2>&1
  echo "end $1 $2 $3 $(date +%s.%N)" >> $L/marks.txt
  sleep 2
done
kill $smi
echo "power done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
for a in "--m 1000 --n 1000 --k 1000" "--exact --m 520 --n 392 --k 512" "--m 3000 --n 3000 --k 3000"; do
  for b in bg8 bg32; do echo "$b $a: $(/tmp/$b/step09 $a --iters 3 2>&1 | grep -E 'verdict|rror' | tr -s ' ' | tr '\n' ' ')" >> $L/check.txt; done
done
for r in 1 2 3; do
  for s in "4096 4096 4096 50" "8192 8192 8192 20" "8192 2048 4096 50" "2048 8192 8192 50"; do
    set -- $s
    for b in b0/step08 b0/step09 bg8/step09 bg32/step09; do
      echo "r$r $b $1x$2x$3: $(/tmp/$b --m $1 --n $2 --k $3 --iters $4 2>&1 | grep -E 'verdict|step time|cuBLAS time|ratio' | tr -s ' ' | tr '\n' ' ')" >> $L/ab.txt
    done
  done
  echo "round $r done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
