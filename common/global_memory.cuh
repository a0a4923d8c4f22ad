// Ordering global memory between CTAs at GPU scope: what a CTA needs to hand a partial result to
// another CTA of the same grid through global memory (step 11's split of the last wave). The
// release side writes, fences, then bumps a counter; the acquire side reads the counter, fences,
// then reads with ordinary loads (the fence makes every write released before it visible to them).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#memory-consistency-model
#pragma once

#include "common/defs.cuh"

namespace gemm {

#if defined(__CUDACC__)

// Orders this thread's global-memory accesses before the fence against those after it, for every
// thread of the GPU (a release and an acquire fence at once).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-membar
GEMM_DEVICE void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Adds `value` to *counter atomically at GPU scope and returns the old value (relaxed: the fences
// around it carry the ordering).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-atom
GEMM_DEVICE uint32_t atomic_add_gpu(uint32_t* counter, uint32_t value) {
  uint32_t old;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(value) : "memory");
  return old;
}

#elif defined(GEMM_EMULATED)

// The emulator runs one fiber at a time and its memory is sequentially consistent: the fence
// orders nothing further and the atomic is a plain read-modify-write (docs/emulator.md).
void fence_acq_rel_gpu(SourceLoc loc = SourceLoc::current());
uint32_t atomic_add_gpu(uint32_t* counter, uint32_t value, SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
