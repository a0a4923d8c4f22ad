#!/usr/bin/env bash
# The main job (until the benchmark suite lands): runs every built step executable at its default
# shape against cuBLAS and prints one line per step. Usage: tools/compare_steps.sh [build-dir]
set -uo pipefail
build=${1:-build}
shopt -s nullglob
steps=("$build"/step[0-9][0-9])
if [ ${#steps[@]} -eq 0 ]; then
  echo "error: no step executables in $build: build first (cmake --build --preset default)" >&2
  exit 2
fi
status=0
printf '%-8s %-10s %-16s %12s %14s %8s\n' step verdict shape "step TFLOPS" "cuBLAS TFLOPS" ratio
for exe in "${steps[@]}"; do
  out=$("$exe" 2>&1)
  rc=$?
  name=$(basename "$exe")
  if [ $rc -eq 3 ]; then  # no GPU, or no track for this GPU: say it once and stop
    echo "$out" | tail -1 >&2
    exit 3
  fi
  [ $rc -ne 0 ] && status=1
  verdict=$(grep -m1 -oE '^verdict: *[A-Za-z]+' <<<"$out" | awk '{print $2}')
  shape=$(grep -m1 -oE '^shape: *[0-9x]+' <<<"$out" | awk '{print $2}')
  step_tf=$(grep -m1 -E '^step:' <<<"$out" | grep -oE '[0-9.]+ TFLOPS' | awk '{print $1}')
  cublas_tf=$(grep -m1 -E '^cuBLAS:' <<<"$out" | grep -oE '[0-9.]+ TFLOPS' | awk '{print $1}')
  ratio=$(grep -m1 -E '^ratio:' <<<"$out" | awk '{print $2}')
  printf '%-8s %-10s %-16s %12s %14s %8s\n' "$name" "${verdict:-error}" "${shape:--}" "${step_tf:--}" \
    "${cublas_tf:--}" "${ratio:--}"
  [ $rc -ne 0 ] && [ -z "$verdict" ] && echo "    $(tail -1 <<<"$out")"
done
exit $status
