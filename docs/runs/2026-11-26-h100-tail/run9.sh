#!/bin/bash
# Device call 9: why the end's cluster barrier cost more than its latency. 85bb0f5 (old), a copy of it
# whose idle producer warps 1-3 arrive on the end barrier at once and exit (v1), and HEAD (tail).
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; } > $L/gpu.txt 2>&1
rm -f tests/emu/variants.cmake
(cmake --preset hopper -B /tmp/bn -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bn --target gemm_bench step10 -j16 > $L/build-new.txt 2>&1) || echo NEW BUILD FAILED
(cd .snap/old && cmake --preset hopper -B /tmp/bo -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bo --target gemm_bench step10 -j16 > $L/build-old.txt 2>&1) || echo OLD BUILD FAILED
(cd .snap/v1 && cmake --preset hopper -B /tmp/bv -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bv --target gemm_bench step10 -j16 > $L/build-v1.txt 2>&1) || echo V1 BUILD FAILED
o=$(find /tmp/bo -name 'hopper.cu.o' -path '*step10_hopper*' | head -1)
cuobjdump -sass $o > /tmp/old10.sass 2>&1
{ echo "object: $o"; grep -n -i -E "CGABAR|UCGABAR|BAR\.|MEMBAR|EXIT|BRA|WARPSYNC" /tmp/old10.sass | tail -40; } > $L/sass-end-old.txt
{ for shape in "--m 4096 --n 4096 --k 4096" "--m 3000 --n 3000 --k 3000" "--exact --m 520 --n 392 --k 512"; do
  echo "v1 $shape: $(timeout 60 /tmp/bv/step10 $shape --check-only 2>&1 | grep verdict)"; done; } > $L/check-v1.txt
for r in 1 2 3; do for v in o v n; do
  echo "round $r $v step10 4096: $(timeout 60 /tmp/b$v/step10 --m 4096 --n 4096 --k 4096 --iters 50 2>&1 | grep -E 'step time' | tr '\n' ' ')"
done; done > $L/b2b.txt 2>&1
for r in 1 2; do for v in o v n; do
  timeout 120 /tmp/b$v/gemm_bench --sizes=4096 --benchmark_filter='step10' --benchmark_repetitions=5 --benchmark_out=$L/bench-$v$r.json > /dev/null 2>&1
  echo "== $v round $r: $(python3 bench/report.py table $L/bench-$v$r.json 2>&1 | grep '^step10' | tail -1)"
done; done > $L/bench-ab.txt
cat $L/sass-end-old.txt $L/check-v1.txt $L/b2b.txt $L/bench-ab.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
