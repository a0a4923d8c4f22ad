#!/usr/bin/env bash
# The sweep of step 8's ring depth behind its README: builds gemm_bench once per depth (the CMake
# cache variable GEMM_STEP08_STAGES; only step 8 recompiles between depths) and times step 8 (and
# whatever else --filter names) with cuBLAS interleaved, 5 repetitions, median aggregates.
#
#   tools/diag/stage_sweep.sh [--build-dir DIR] [--out DIR] [--stages "2 3 4 5 6"] [--filter RE] [gemm_bench flags...]
#
#   --build-dir DIR  where to build (default: build-stages; a hopper-only build)
#   --out DIR        where each depth's JSON and table go (default: results/stages)
#   --stages LIST    the depths (default: 2 3 4 5 6; 6 is the most that fits beside the staging buffer)
#   --filter RE      the benchmarks (default: ^step08/)
#   anything else goes to gemm_bench (default: --sizes=4096,8192)
#
# Exit status: 0 done; 1 a build or a run failed; 3 no GPU to run on (after building).
set -uo pipefail
cd "$(dirname "$0")/../.."

build_dir=build-stages
out=results/stages
stages="2 3 4 5 6"
filter="^step08/"
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --stages) stages=${2:?--stages needs a value}; shift 2 ;;
    --filter) filter=${2:?--filter needs a value}; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) bench_args+=("$1"); shift ;;
  esac
done
[ ${#bench_args[@]} -eq 0 ] && bench_args=(--sizes=4096,8192)
mkdir -p "$out"

for n in $stages; do
  echo "== step 8 with $n stages"
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DGEMM_TRACKS=hopper -DGEMM_BUILD_TESTS=OFF \
    -DGEMM_STEP08_STAGES="$n" >/dev/null || exit 1
  cmake --build "$build_dir" --target gemm_bench -j ${JOBS:-} >/dev/null || exit 1
  "$build_dir/gemm_bench" --benchmark_filter="$filter" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true --benchmark_out="$out/stages$n.json" \
    --benchmark_out_format=json "${bench_args[@]}" >/dev/null
  rc=$?
  [ $rc -eq 3 ] && exit 3
  [ $rc -ne 0 ] && { echo "error: gemm_bench exited $rc" >&2; exit 1; }
  python3 bench/report.py table "$out/stages$n.json" | tee "$out/stages$n.txt"
done
