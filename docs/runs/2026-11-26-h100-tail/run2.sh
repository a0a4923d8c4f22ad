#!/bin/bash
# Device call 2: steps 9 and 10 with a producer tail in place of the end-of-kernel cluster barrier
# (the working tree, "new") against HEAD (.snap/old): D checked, sanitizers, timed alone and back to back.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; } > $L/gpu.txt 2>&1
rm -f tests/emu/variants.cmake
(cmake --preset hopper -B /tmp/bn -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bn --target gemm_bench step09 step10 -j16 > $L/build-new.txt 2>&1) || echo NEW BUILD FAILED | tee -a $L/build-new.txt
(cd .snap/old && cmake --preset hopper -B /tmp/bo -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bo --target gemm_bench step09 step10 -j16 > $L/build-old.txt 2>&1) || echo OLD BUILD FAILED | tee -a $L/build-old.txt
grep -i "warning" $L/build-new.txt | head -5
{
for s in 09 10; do
  for shape in "--m 4096 --n 4096 --k 4096" "--m 3000 --n 3000 --k 3000" "--m 1000 --n 1000 --k 1000" "--m 200 --n 256 --k 3072" "--m 8192 --n 2048 --k 4096" "--exact --m 520 --n 392 --k 512" "--exact --m 1000 --n 392 --k 512" "--exact --m 130 --n 264 --k 64"; do
    echo "new step$s $shape: $(/tmp/bn/step$s $shape --check-only 2>&1 | grep -E 'verdict' | tr '\n' ' ')"
  done
done
} > $L/check.txt 2>&1
{
for s in 09 10; do for tool in racecheck synccheck memcheck; do
  echo "== step$s $tool"; compute-sanitizer --tool $tool --error-exitcode 9 /tmp/bn/step$s --exact --m 520 --n 392 --k 512 --check-only 2>&1 | tail -3; echo "rc=$?"
done; done
} > $L/sanitize.txt 2>&1
for r in 1 2 3; do for v in o n; do for s in 09 10; do for n in 4096 8192; do
  it=50; [ $n = 8192 ] && it=20
  echo "round $r $v step$s $n: $(/tmp/b$v/step$s --m $n --n $n --k $n --iters $it 2>&1 | grep -E 'step time' | tr '\n' ' ')"
done; done; done; done > $L/b2b.txt 2>&1
for r in 1 2; do for v in o n; do
  /tmp/b$v/gemm_bench --sizes=4096 --benchmark_filter='step(09|10)' --benchmark_repetitions=5 --benchmark_out=$L/bench-$v$r.json > /dev/null 2>&1
  echo "== $v round $r"; python3 bench/report.py table $L/bench-$v$r.json 2>&1 | tail -6
done; done > $L/bench-ab.txt
cat $L/check.txt $L/sanitize.txt $L/b2b.txt $L/bench-ab.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
