#!/usr/bin/env bash
# The GPU run behind the docs: configure, build, test, run every step executable, and read the
# SASS. Writes its logs to $1 (default: ./device-logs). Used on the lent H100/H200:
#   tools/diag/device_check.sh "$OUT"
# Each part runs even when an earlier one failed; the summary at the end says what passed.
set -uo pipefail
out=${1:-device-logs}
mkdir -p "$out"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "date: $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1
note "gpu: $(cat "$out/gpu.txt")"
note "nvcc: $(nvcc --version | tail -1)"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 &&
   cmake --build "$build" -j "$jobs" >"$out/build.log" 2>&1; then
  note "build: ok ($(grep -ci 'warning' "$out/build.log") lines mentioning 'warning')"
else
  note "build: FAILED (see build.log)"; tail -30 "$out/build.log"
fi

ctest --test-dir "$build" --output-on-failure -j 4 >"$out/ctest.log" 2>&1
note "ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
note "ctest skipped: $(grep -c 'Skipped' "$out/ctest.log")"

# Every step at its default shape (4096^3; steps 1-2 their own), float mode against cuBLAS, and
# in exact mode against the CPU reference; steps 3 and later also at 8192^3.
: >"$out/steps.log"
for exe in "$build"/step[0-9][0-9]; do
  [ -x "$exe" ] || continue
  name=$(basename "$exe")
  runs=("" "--exact --k 512")
  case "$name" in
    step01) runs=("" "--exact") ;;
    step02) runs=("" "--exact --k 512") ;;
    *) runs=("" "--m 8192 --n 8192 --k 8192 --iters 10" "--exact --k 512") ;;
  esac
  for args in "${runs[@]}"; do
    echo "=== $name $args" >>"$out/steps.log"
    "$exe" $args >>"$out/steps.log" 2>&1
    note "$name ${args:-(float, default shape)}: exit $?"
  done
done

# The emulator against this GPU, bit for bit in exact mode (the tests above do it too, with
# fresh seeds; this is the by-hand form with a fixed seed).
tools/emu_vs_gpu.sh "$build" 20261121 >"$out/emu_vs_gpu.log" 2>&1
note "emu_vs_gpu (seed 20261121): exit $? ($(grep -c 'same D' "$out/emu_vs_gpu.log") same, $(grep -ci 'differ' "$out/emu_vs_gpu.log") differ)"

# SASS: the instructions each track must contain.
: >"$out/sass.txt"
for obj in $(find "$build" -name '*.cu.o' | sort); do
  sass=$(cuobjdump --dump-sass "$obj" 2>/dev/null)
  line="$obj:"
  for op in HGMMA UTMALDG UTMASTG SYNCS UTCHMMA UTCBAR LDTM UTCATOMSWS ELECT USETMAXREG; do
    n=$(grep -c "$op" <<<"$sass")
    [ "$n" -gt 0 ] && line="$line $op=$n"
  done
  echo "$line" >>"$out/sass.txt"
done
cat "$out/sass.txt" >>"$summary"
