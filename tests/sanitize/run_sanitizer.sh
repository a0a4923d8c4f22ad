#!/usr/bin/env bash
# One compute-sanitizer run of a step executable, for ctest (tests/sanitize/CMakeLists.txt):
#   run_sanitizer.sh SANITIZER TOOL KERNEL_FILTER STEP_EXE ARGS...
# SANITIZER is the compute-sanitizer path ("" or *-NOTFOUND: none was found); KERNEL_FILTER is a
# --kernel-name value (kns=step03: only kernels whose name contains step03) or "all".
# Exits 77 (ctest: skipped), with the reason, where there is no compute-sanitizer, no GPU or no
# track for the GPU; 0 when the step matched and the tool reported nothing; non-zero otherwise
# (99: the tool reported an error; 1: nvidia-smi failed for another reason than a missing GPU).
set -u
sanitizer=$1 tool=$2 filter=$3
shift 3
if [[ -z "$sanitizer" || "$sanitizer" == *NOTFOUND || ! -x "$sanitizer" ]]; then
  echo "SKIP: compute-sanitizer not found (install the CUDA Toolkit's compute-sanitizer, or put it on PATH)"
  exit 77
fi
# No GPU: no nvidia-smi (it comes with the NVIDIA driver), or one that finds no device or no loaded
# driver, the cases the harness calls "no GPU" too (cudaErrorNoDevice, cudaErrorInsufficientDriver).
# Any other failure of nvidia-smi is a driver that is there but broken: the test fails, with
# nvidia-smi's own words, rather than skip as if the machine had no GPU.
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "SKIP: no GPU (no nvidia-smi on PATH: the NVIDIA driver is not installed)"
  exit 77
fi
if ! smi=$(nvidia-smi -L 2>&1); then
  if grep -qiE "no devices were found|no supported gpus were found|couldn't communicate with the nvidia driver" \
       <<<"$smi"; then
    echo "SKIP: no GPU (nvidia-smi -L: ${smi//$'\n'/ })"
    exit 77
  fi
  echo "FAIL: nvidia-smi -L failed on a machine with the NVIDIA driver installed: ${smi//$'\n'/ }"
  exit 1
fi
args=(--tool "$tool" --error-exitcode 99 --print-limit 20)
[[ "$tool" == racecheck ]] && args+=(--racecheck-report all)
[[ "$filter" != all ]] && args+=(--kernel-name "$filter")
echo "+ $sanitizer ${args[*]} $*"
"$sanitizer" "${args[@]}" "$@"
rc=$?
if [[ $rc == 3 ]]; then  # the step driver: no GPU, or no track for it; nothing ran
  echo "SKIP: the step has nothing to run here (exit 3: no GPU or no track of this step for it)"
  exit 77
fi
exit $rc
