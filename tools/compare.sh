#!/usr/bin/env bash
# The main job: build the benchmark suite, run every step of this GPU's track and cuBLAS at the
# default sizes, print the table (step, TFLOPS and % of cuBLAS per size), write the JSON and the
# plot.
#
#   tools/compare.sh [--preset P] [--build-dir DIR] [--out DIR] [--docs] [gemm_bench flags...]
#
#   --preset P       CMake preset to configure and build with (default: default, both tracks;
#                    hopper or blackwell builds one)
#   --build-dir DIR  build there instead of the preset's build/
#   --out DIR        where the results go (default: results/): bench.json (Google Benchmark's
#                    JSON), bench.log (gemm_bench's console output), table.txt, bench.png and bench.svg
#   --docs           also publish the run as docs/results.{json,log,md,png,svg} and write the
#                    measured tables of README.md and steps/*/README.md from it
#                    (python3 bench/report.py publish; none of these is ever edited by hand)
#   anything else goes to gemm_bench: --sizes=1024,4096x2048x1024 --benchmark_filter=step03 ...
#
# Exit status: 0 done; 1 a step was wrong or failed (the table says which) or the build failed;
# 2 bad flags; 3 no GPU to run on (after building).
set -uo pipefail
cd "$(dirname "$0")/.."

preset=default
build_dir=
out=results
docs=0
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --preset) preset=${2:?--preset needs a value}; shift 2 ;;
    --preset=*) preset=${1#*=}; shift ;;
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift 2 ;;
    --build-dir=*) build_dir=${1#*=}; shift ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --docs) docs=1; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_args+=("$1"); shift ;;
  esac
done

# Build: configure with the preset, build only gemm_bench (and what it links: the harness, the steps).
configure=(cmake --preset "$preset")
build=(cmake --build --preset "$preset" --target gemm_bench -j ${JOBS:-})
bin=build/gemm_bench  # every preset builds in build/ (CMakePresets.json)
if [ -n "$build_dir" ]; then
  configure+=(-B "$build_dir")
  build=(cmake --build "$build_dir" --target gemm_bench -j ${JOBS:-})
  bin=$build_dir/gemm_bench
fi
if ! "${configure[@]}" || ! "${build[@]}"; then
  echo "error: building gemm_bench failed (see above)" >&2
  exit 1
fi

# Run: 5 repetitions, median aggregates, JSON out, the console output kept beside it. The commit
# and the command go into its context.
mkdir -p "$out"
json=$out/bench.json
log=$out/bench.log
rm -f "$json" "$log"
commit=${GEMM_GIT_COMMIT:-$(git describe --always --dirty --abbrev=12 2>/dev/null)}
echo "== gemm_bench: ${bench_args[*]:-default sizes}"
command="tools/compare.sh --preset $preset"
[ $docs = 1 ] && command+=" --docs"
# Each flag as a shell would need it typed: quoted where it holds more than plain characters.
for arg in "${bench_args[@]}"; do
  case $arg in
    *[!A-Za-z0-9_./=,:+^-]*) command+=" '${arg//\'/\'\\\'\'}'" ;;
    *) command+=" $arg" ;;
  esac
done
GEMM_GIT_COMMIT=$commit GEMM_BENCH_COMMAND="$command" \
  "$bin" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$json" --benchmark_out_format=json "${bench_args[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ $rc -eq 3 ]; then
  exit 3  # gemm_bench said "no GPU: ..." (or that no track of this build runs on it)
fi
if [ ! -s "$json" ]; then
  echo "error: gemm_bench exited $rc and wrote no results" >&2
  exit $(( rc == 0 ? 1 : rc ))
fi

# Report: the table (plain Python 3), then the plot (matplotlib) with whichever python3 has it.
py=
for candidate in python3 /usr/bin/python3; do
  command -v "$candidate" >/dev/null 2>&1 || continue
  [ -z "$py" ] && py=$candidate
  if "$candidate" -c 'import matplotlib' >/dev/null 2>&1; then py=$candidate; break; fi
done
if [ -z "$py" ]; then
  echo "no python3: the results are in $json (the table and the plot need python3)"
  exit $(( rc == 0 ? 0 : 1 ))
fi
echo
echo "== results ($json)"
"$py" bench/report.py table "$json" | tee "$out/table.txt"
echo
"$py" bench/plot.py "$json" "$out/bench"
if [ $docs = 1 ]; then
  "$py" bench/report.py publish "$json" --log "$log" || rc=1
fi
exit $(( rc == 0 ? 0 : 1 ))
