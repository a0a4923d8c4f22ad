// Ordering global memory between CTAs at GPU scope: what a CTA needs to hand a partial result to
// another CTA of the same grid through global memory (step 11's split of the last wave). The
// release side writes, fences, then bumps a counter; the acquire side reads the counter, fences,
// then reads with ordinary loads (the fence makes every write released before it visible to them).
// A flag protocol does the same with a release store (or add) and an acquire load.
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

// A flag's three sides at GPU scope, each ordering by itself what the fences above order around a
// relaxed atomic: the acquire load (later accesses of this thread stay after it), the release store
// and the release add (earlier accesses stay before it).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-ld
GEMM_DEVICE uint32_t ld_acquire_gpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-st
GEMM_DEVICE void st_release_gpu(uint32_t* p, uint32_t value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(value) : "memory");
}
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-red
GEMM_DEVICE void red_release_add_gpu(uint32_t* p, uint32_t value) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(value) : "memory");
}

#elif defined(GEMM_EMULATED)

// The emulator models what these order between CTAs (docs/emulator.md, "Global memory between
// CTAs"): a CTA sees another's writes to the scratch of common/scratch.h only through a release the
// writer performs and an acquire the reader performs, and a read that would see a stale value is
// reported.
void fence_acq_rel_gpu(SourceLoc loc = SourceLoc::current());
uint32_t atomic_add_gpu(uint32_t* counter, uint32_t value, SourceLoc loc = SourceLoc::current());
uint32_t ld_acquire_gpu(const uint32_t* p, SourceLoc loc = SourceLoc::current());
void st_release_gpu(uint32_t* p, uint32_t value, SourceLoc loc = SourceLoc::current());
void red_release_add_gpu(uint32_t* p, uint32_t value, SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
