#!/bin/bash
# Device call 10: 85bb0f5 (old), a copy whose end barrier arrives .relaxed (v2, diagnostic), HEAD.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; } > $L/gpu.txt 2>&1
rm -f tests/emu/variants.cmake
(cmake --preset hopper -B /tmp/bn -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bn --target gemm_bench step10 -j16 > /dev/null 2>&1) || echo NEW BUILD FAILED
(cd .snap/old && cmake --preset hopper -B /tmp/bo -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bo --target gemm_bench step10 -j16 > /dev/null 2>&1) || echo OLD BUILD FAILED
(cd .snap/v2 && cmake --preset hopper -B /tmp/bv2 -G Ninja > /dev/null 2>&1 && cmake --build /tmp/bv2 --target gemm_bench step10 -j16 > /dev/null 2>&1) || echo V2 BUILD FAILED
for v in bv2 bn; do o=$(find /tmp/$v -name 'hopper.cu.o' -path '*step10_hopper*' | head -1); echo "== $v: $(cuobjdump -sass $o | grep -c 'MEMBAR.ALL.GPU') MEMBAR.ALL.GPU; end: $(cuobjdump -sass $o | grep -E 'UCGABAR|MEMBAR' | tr -s ' ' | cut -c1-60 | tr '\n' '|')"; done > $L/sass-end.txt
{ for shape in "--m 4096 --n 4096 --k 4096" "--exact --m 520 --n 392 --k 512"; do
  echo "v2 $shape: $(timeout 60 /tmp/bv2/step10 $shape --check-only 2>&1 | grep verdict)"; done; } > $L/check-v2.txt
for r in 1 2 3; do for v in o v2 n; do
  echo "round $r $v step10 4096: $(timeout 60 /tmp/b$v/step10 --m 4096 --n 4096 --k 4096 --iters 50 2>&1 | grep -E 'step time' | tr '\n' ' ')"
done; done > $L/b2b.txt 2>&1
for r in 1 2; do for v in o v2 n; do
  timeout 120 /tmp/b$v/gemm_bench --sizes=4096 --benchmark_filter='step10' --benchmark_repetitions=5 --benchmark_out=$L/bench-$v$r.json > /dev/null 2>&1
  echo "== $v round $r: $(python3 bench/report.py table $L/bench-$v$r.json 2>&1 | grep '^step10' | tail -1)"
done; done > $L/bench-ab.txt
cat $L/sass-end.txt $L/check-v2.txt $L/b2b.txt $L/bench-ab.txt
cd $OUT && tar czf logs.tgz logs && rm -rf logs
