#!/usr/bin/env bash
# The reliability run (README, "Reliability") on a lent H100/H200, in one call of about 8 minutes:
#   tools/diag/reliability_check.sh "$OUT"
# configures a hopper-only build without the benchmarks (BUILD_DIR, default build-rel), builds it,
# runs ctest on the labels bad_input, watchdog, sanitize, sweep and large (one log each), builds
# steps 4-6 a second time with -DGEMM_WATCHDOG=ON (build-wd) and checks that the watchdog build
# still matches (no false report), and prints a summary: counts per label, every sanitizer report
# line, every sweep seed. Logs go to $1 (default ./reliability-logs), written as it goes, so a run
# cut short still leaves what it did. Each part runs even when an earlier one failed.
# SKIP_BUILD=1 reuses BUILD_DIR as it is; WATCHDOG_BUILD=0 leaves out the watchdog build.
set -uo pipefail
out=${1:-reliability-logs}
mkdir -p "$out"
build=${BUILD_DIR:-build-rel}
jobs=${JOBS:-$(nproc)}
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "date: $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$out/gpu.txt" 2>&1
note "gpu: $(cat "$out/gpu.txt")"
note "nvcc: $(nvcc --version | tail -1)"
note "g++: $(g++ --version | head -1)"
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
note "compute-sanitizer: ${sanitizer:-NOT FOUND} $([ -n "$sanitizer" ] && "$sanitizer" --version | tail -1)"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
t0=$(date +%s)
if [ "${SKIP_BUILD:-0}" = 1 ]; then
  note "build: skipped (SKIP_BUILD=1, using $build as it is)"
elif cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DGEMM_TRACKS=hopper -DGEMM_BUILD_BENCH=OFF \
     >"$out/configure.log" 2>&1 && cmake --build "$build" -j "$jobs" >"$out/build.log" 2>&1; then
  note "build: ok in $(( $(date +%s) - t0 )) s ($(grep -ci 'warning' "$out/build.log") lines mentioning 'warning')"
else
  note "build: FAILED (see build.log)"; tail -30 "$out/build.log"
fi

# label, ctest -j
run_label() {
  local label=$1 par=$2 t=$(date +%s)
  ctest --test-dir "$build" -L "^$label\$" --output-on-failure -V -j "$par" >"$out/$label.log" 2>&1
  note "$label: $(grep -E 'tests passed|tests failed' "$out/$label.log" | tail -1)," \
       "$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$out/$label.log") skipped, $(( $(date +%s) - t )) s"
  grep -E '\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception' "$out/$label.log" | sed 's/^/  /' | tee -a "$summary"
}
run_label bad_input 8
run_label watchdog 1
note "watchdog report: $(grep -m1 'gemm watchdog:' "$out/watchdog.log")"
note "watchdog host: $(grep -m1 '^[0-9]*: launch:' "$out/watchdog.log")"
run_label sanitize 4
# Every report line of the tools ("========= Invalid __global__ read", "Race reported", ...).
grep -E '^[0-9]*: ========= ' "$out/sanitize.log" | grep -vE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards|COMPUTE-SANITIZER$' \
  >"$out/sanitize_reports.txt"
note "sanitize report lines: $(wc -l <"$out/sanitize_reports.txt") (sanitize_reports.txt)"
head -20 "$out/sanitize_reports.txt" | sed 's/^/  /' | tee -a "$summary"
note "sanitize summaries: $(grep -cE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$out/sanitize.log") zero-error summaries"
run_label sweep 4
note "sweep seeds: $(grep -oE 'GEMM_SWEEP_SEED=[0-9]+' "$out/sweep.log" | sort -u | wc -l) distinct (sweep.log)"
grep -E '^[0-9]*: step [0-9]+, shape ' "$out/sweep.log" | sed 's/^[0-9]*: //' | sort -u >"$out/sweep_shapes.txt"
note "sweep shapes run: $(wc -l <"$out/sweep_shapes.txt") (sweep_shapes.txt)"
run_label large 1

# The watchdog build of the pipelined steps: it must still match (the watchdog never fires on a
# healthy kernel) and cost nothing that matters.
if [ "${WATCHDOG_BUILD:-1}" = 1 ]; then
  wd=${build}-wd
  t=$(date +%s)
  if cmake -S . -B "$wd" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DGEMM_TRACKS=hopper -DGEMM_BUILD_BENCH=OFF \
       -DGEMM_BUILD_TESTS=OFF -DGEMM_WATCHDOG=ON >"$out/configure_wd.log" 2>&1 &&
     cmake --build "$wd" -j "$jobs" --target step04 step05 step06 >"$out/build_wd.log" 2>&1; then
    for s in 04 05 06; do
      "$wd/step$s" --m 4096 --n 4096 --k 4096 --iters 10 >"$out/watchdog_step$s.log" 2>&1
      note "watchdog build step$s 4096^3: exit $?, $(grep -E '^ratio' "$out/watchdog_step$s.log")" \
           "(default build: $("$build/step$s" --iters 10 2>&1 | grep -E '^ratio'))"
    done
  else
    note "watchdog build: FAILED (see build_wd.log)"
  fi
  note "watchdog build: $(( $(date +%s) - t )) s"
fi
note "total: $(( $(date +%s) - t0 )) s"
