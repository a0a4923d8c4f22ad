#!/bin/bash
# Device call 3 (twelfth session): P29. raster_ab.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cp docs/runs/2026-11-26-h100-mixed-windows/raster_ab.cpp tools/raster_ab.cpp
sed -i 's|foreach(tool persistent_sweep split_sweep pad_sweep diag/ladder_diag)|foreach(tool persistent_sweep split_sweep pad_sweep diag/ladder_diag raster_ab)|' tools/CMakeLists.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
S=$(date +%s); cmake --build /tmp/b -j16 --target raster_ab > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
echo "build $(( $(date +%s) - S )) s, warnings: $(grep -ci warning $L/build.txt)" | tee $L/build-summary.txt
timeout 300 /tmp/b/raster_ab > $L/raster_ab.txt 2>&1; echo "rc=$?" >> $L/raster_ab.txt
cat $L/raster_ab.txt
git checkout -q tools/CMakeLists.txt; rm -f tools/raster_ab.cpp
cd $OUT && tar czf logs.tgz logs && rm -rf logs
