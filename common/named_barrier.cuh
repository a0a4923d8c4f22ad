// Named barriers: a CTA barrier over a subset of its warps (PTX `bar.sync id, nthreads`).
// Id 0 is __syncthreads; the steps use ids from 1 for per-warpgroup syncs.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-bar
#pragma once

#include "common/defs.cuh"

namespace gemm {

#if defined(__CUDACC__)

// Blocks until `num_threads` threads (a multiple of 32) have arrived at barrier `id`.
GEMM_DEVICE void named_barrier_sync(uint32_t id, uint32_t num_threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(num_threads) : "memory");
}

#elif defined(GEMM_EMULATED)

void named_barrier_sync(uint32_t id, uint32_t num_threads, SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
