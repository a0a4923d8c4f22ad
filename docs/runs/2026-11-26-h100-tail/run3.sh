#!/bin/bash
# Device call 3: the start's cluster barrier split into arrive (after the inits) and wait (after
# setmaxnreg) (.snap/split) against the working tree (producer tail, "new"); steps 8-10 in gemm_bench.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; } > $L/gpu.txt 2>&1
rm -f tests/emu/variants.cmake
(cmake --preset hopper -B /tmp/bn -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bn --target gemm_bench step08 step09 step10 -j16 > $L/build-new.txt 2>&1) || echo NEW BUILD FAILED | tee -a $L/build-new.txt
(cd .snap/split && cmake --preset hopper -B /tmp/bs -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bs --target gemm_bench step09 step10 -j16 > $L/build-split.txt 2>&1) || echo SPLIT BUILD FAILED | tee -a $L/build-split.txt
{
for s in 09 10; do
  for shape in "--m 4096 --n 4096 --k 4096" "--m 3000 --n 3000 --k 3000" "--m 200 --n 256 --k 3072" "--exact --m 520 --n 392 --k 512" "--exact --m 130 --n 264 --k 64"; do
    echo "split step$s $shape: $(/tmp/bs/step$s $shape --check-only 2>&1 | grep -E 'verdict' | tr '\n' ' ')"
  done
  for tool in racecheck synccheck; do echo "== split step$s $tool: $(compute-sanitizer --tool $tool --error-exitcode 9 /tmp/bs/step$s --exact --m 520 --n 392 --k 512 --check-only 2>&1 | tail -1) rc=$?"; done
done
} > $L/check-split.txt 2>&1
for r in 1 2 3; do for v in n s; do for s in 09 10; do
  echo "round $r $v step$s 4096: $(/tmp/b$v/step$s --m 4096 --n 4096 --k 4096 --iters 50 2>&1 | grep -E 'step time' | tr '\n' ' ')"
done; done; done > $L/b2b.txt 2>&1
for r in 1 2; do
  /tmp/bn/gemm_bench --sizes=4096 --benchmark_filter='step(08|09|10)' --benchmark_repetitions=5 --benchmark_out=$L/bench-n$r.json > /dev/null 2>&1
  echo "== new (tail) round $r"; python3 bench/report.py table $L/bench-n$r.json 2>&1 | tail -5
  /tmp/bs/gemm_bench --sizes=4096 --benchmark_filter='step(09|10)' --benchmark_repetitions=5 --benchmark_out=$L/bench-s$r.json > /dev/null 2>&1
  echo "== split start round $r"; python3 bench/report.py table $L/bench-s$r.json 2>&1 | tail -4
done > $L/bench-ab.txt
cat $L/check-split.txt $L/b2b.txt $L/bench-ab.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
