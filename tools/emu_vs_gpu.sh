#!/usr/bin/env bash
# The emulator against the GPU by hand: every built step, exact mode, a few shapes, one input seed:
# D from the GPU (the GPU's track) and D from the emulator (the same track's emulated build) must
# be the same bytes. Needs a GPU. Usage: tools/emu_vs_gpu.sh [build-dir] [seed]
# (The same check as a test: ctest --test-dir build -R EmuVsGpu, tests/gpu/emu_vs_gpu_test.cpp.)
set -uo pipefail
build=${1:-build}
seed=${2:-$RANDOM}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
shopt -s nullglob
status=0
for exe in "$build"/step[0-9][0-9]; do
  name=$(basename "$exe")
  case $name in
    step01) shapes=("128 128 64") ;;
    step02) shapes=("128 128 64" "128 128 512") ;;
    *) shapes=("128 128 64" "200 136 72" "257 264 200" "333 264 512") ;;
  esac
  for shape in "${shapes[@]}"; do
    read -r m n k <<<"$shape"
    gpu_out=$("$exe" --exact --m "$m" --n "$n" --k "$k" --seed "$seed" --iters 1 --dump-d "$dir/gpu.bin" 2>&1)
    rc=$?
    if [ $rc -eq 3 ]; then echo "$gpu_out" | tail -1 >&2; exit 3; fi
    track=$(grep -m1 -oE '(hopper|blackwell) track' <<<"$gpu_out" | awk '{print $1}')
    emu_out=$("$exe" --device emu --track "$track" --exact --m "$m" --n "$n" --k "$k" --seed "$seed" \
              --dump-d "$dir/emu.bin" 2>&1)
    rc_emu=$?
    if [ $rc -eq 0 ] && [ $rc_emu -eq 0 ] && cmp -s "$dir/gpu.bin" "$dir/emu.bin"; then
      verdict="same D"
    else
      verdict="DIFFERENT (gpu rc $rc, emu rc $rc_emu)"
      status=1
    fi
    printf '%-8s %-9s %-14s seed %-6s %s\n' "$name" "$track" "${m}x${n}x${k}" "$seed" "$verdict"
  done
done
exit $status
