#!/bin/bash
# Step 10 at 4096^3 under ncu (clocks not locked): SM cycles and clock of the committed build, the
# tail by column halves (one and two slices), and a diagnostic build with no epilogue (D unwritten).
set -u
R=$PWD
L=$OUT/logs; mkdir -p $L
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $L/gpu.txt
date -u >> $L/gpu.txt
t0=$(date +%s)
cp -r .snap/old /tmp/t && (cd /tmp/t && patch -p1 < $R/.snap/tail-halves.diff >> $L/gpu.txt)
cp -r .snap/old /tmp/n && sed -i 's/^    epilogue(smem, acc, map_d, m0, tile.n \* kTileN, N, c, t);$/    (void)map_d;  \/\/ diagnostic: no epilogue, D unwritten/' /tmp/n/steps/10_multi_consumer/hopper.cu
diff .snap/old/steps/10_multi_consumer/hopper.cu /tmp/n/steps/10_multi_consumer/hopper.cu > $L/no-epilogue.diff
b() { (cd $1 && cmake --preset hopper -B $2 -G Ninja $3 > $L/cfg-$(basename $2).txt 2>&1 && cmake --build $2 --target step10 -j4 > $L/build-$(basename $2).txt 2>&1); }
b .snap/old /tmp/b0 "" & b /tmp/t /tmp/b1 "" & b /tmp/t /tmp/b2 "-DCMAKE_CUDA_FLAGS=-DGEMM_STEP10_TAIL_SLICES=2" & b /tmp/n /tmp/b3 "" &
wait
echo "builds done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
ls -la /tmp/b?/step10 >> $L/gpu.txt 2>&1
grep -h "warning" $L/build-*.txt | head
M="gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.max,dram__bytes_read.sum,dram__bytes_write.sum"
for r in 1 2 3; do
  for b in b0 b1 b2 b3; do
    echo "== r$r $b" >> $L/ncu.txt
    ncu --clock-control none -k kernel --launch-skip 0 --launch-count 1 --metrics $M /tmp/$b/step10 --m 4096 --n 4096 --k 4096 --iters 2 >> $L/ncu.txt 2>&1
  done
  echo "round $r done at $(( $(date +%s) - t0 )) s" | tee -a $L/gpu.txt
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
