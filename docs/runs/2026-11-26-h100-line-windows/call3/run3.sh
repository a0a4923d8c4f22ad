#!/bin/bash
# Device call 3 (ninth session): why step 8's line-window producer is slow (P8 refuted): ncu's warp
# states and per-instruction stall samples of step 8 at 3072^3 with GEMM_LINE_WINDOWS=1 and 0.
set -u
L=$OUT/logs; mkdir -p $L
{ date -u; nvidia-smi -L; bash .snap/gitfix.sh; } > $L/gpu.txt 2>&1
cat $L/gpu.txt
cmake --preset hopper -B /tmp/b -G Ninja > $L/configure.txt 2>&1
cmake --build /tmp/b -j16 --target step08 > $L/build.txt 2>&1 || echo BUILD FAILED | tee -a $L/build.txt
for w in 1 0; do
  GEMM_LINE_WINDOWS=$w timeout 150 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 \
    --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section MemoryWorkloadAnalysis \
    /tmp/b/step08 --m 3072 --n 3072 --k 3072 --iters 1 > $L/ncu-w$w.txt 2>&1
  GEMM_LINE_WINDOWS=$w timeout 150 ncu --clock-control none -k kernel --launch-skip 1 --launch-count 1 \
    --section SourceCounters --page source --print-source sass --csv \
    /tmp/b/step08 --m 3072 --n 3072 --k 3072 --iters 1 > $L/src-w$w.csv 2>$L/src-w$w.err
  python3 - $L/src-w$w.csv > $L/stalls-w$w.txt <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = None
for i, r in enumerate(rows):
    if any("Warp Stall Sampling (All Samples)" in c for c in r):
        hdr = i; break
if hdr is None:
    print("no header"); print("\n".join(",".join(r) for r in rows[:20])); sys.exit()
h = rows[hdr]; body = rows[hdr + 1:]
ci = h.index("Warp Stall Sampling (All Samples)")
src = [j for j, c in enumerate(h) if c in ("Source", "# Address", "Address")]
tot = sum(float(r[ci] or 0) for r in body if len(r) > ci and r[ci].replace('.', '').isdigit())
top = sorted((r for r in body if len(r) > ci and r[ci].replace('.', '').isdigit()), key=lambda r: -float(r[ci]))[:30]
print("total samples", tot)
sc = [j for j, c in enumerate(h) if c.startswith("stall_") or "Stall" in c]
for r in top:
    print("%6.1f%%  %s" % (100 * float(r[ci]) / tot, "  ".join(r[j] for j in src)))
PY
  cat $L/stalls-w$w.txt | head -32
  grep -E "Duration|Throughput|Warp Cycles Per Issued|No Eligible|Issued Warp|Stall" $L/ncu-w$w.txt | head -20
done
gzip -f $L/src-w*.csv
cd $OUT && tar czf logs.tgz logs && rm -rf logs
