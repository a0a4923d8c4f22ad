#!/bin/bash
# Device call 6 (twelfth session): P32. compare.sh --docs again; step 8 at 4096x1024x2048, every repetition.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
S=$(date +%s)
timeout 450 tools/compare.sh --preset hopper --docs > $L/compare.txt 2>&1; echo "rc=$? in $(( $(date +%s) - S )) s" | tee -a $L/compare.txt
tail -12 $L/compare.txt
cp docs/results.md docs/results.json docs/results.png docs/results.svg $L/ 2>/dev/null
timeout 60 build/gemm_bench --sizes=4096x1024x2048 --benchmark_filter='step08' --benchmark_repetitions=10 > $L/step08-4096x1024x2048.txt 2>&1; echo "rc=$?" >> $L/step08-4096x1024x2048.txt
grep -E "ERROR|rc=|late" $L/step08-4096x1024x2048.txt | cut -c1-220 | tail -14
cd $OUT && tar czf logs.tgz logs && rm -rf logs
