#!/bin/bash
# Device call 5: the published run at b9128f9 (docs/results.*).
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; git log -1 --oneline; git describe --always --dirty --abbrev=12; } > $L/gpu.txt 2>&1
tools/compare.sh --preset hopper --docs > $L/compare-docs.log 2>&1; echo "rc=$?" >> $L/compare-docs.log
cp docs/results.json docs/results.md docs/results.png docs/results.svg $L/ 2>/dev/null
tail -40 $L/compare-docs.log
cd $OUT && tar czf logs.tgz logs && rm -rf logs
