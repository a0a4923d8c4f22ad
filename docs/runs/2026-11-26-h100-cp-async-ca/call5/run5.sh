#!/bin/bash
# Device call 5 (eleventh session): docs/results.* regenerated with step 8's line windows (tools/compare.sh --docs).
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
S=$(date +%s)
timeout 560 tools/compare.sh --preset hopper --docs > $L/compare.txt 2>&1; echo "rc=$? in $(( $(date +%s) - S )) s" | tee -a $L/compare.txt
tail -30 $L/compare.txt
cp docs/results.md docs/results.json docs/results.png docs/results.svg $L/ 2>/dev/null
cd $OUT && tar czf logs.tgz logs && rm -rf logs
