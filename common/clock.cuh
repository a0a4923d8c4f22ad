// The GPU's wall clock. %globaltimer counts nanoseconds whatever the SM clock does; clock64 counts
// the SM's cycles, so a wait measured in cycles lasts longer in time when the SM clock drops.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#special-registers-globaltimer
#pragma once

#include "common/defs.cuh"

namespace gemm {

#if defined(__CUDACC__)
// Nanoseconds of the GPU's global timer.
GEMM_DEVICE uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif

}  // namespace gemm
