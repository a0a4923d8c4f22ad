// cp.async: 16-byte copies from global to shared memory through the load/store unit, one per
// thread, each with its own addresses (unlike TMA's boxes), completing asynchronously; and the
// mbarrier arrival that tracks them. The copies are generic-proxy writes: an async-proxy reader
// (wgmma, tcgen05.mma, a TMA store) needs a fence.proxy.async by the reading thread after the
// mbarrier wait that observed them.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async
#pragma once

#include "common/defs.cuh"
#include "common/smem.cuh"

namespace gemm {

#if defined(__CUDACC__)

// Copies 16 bytes from global `src` to shared `dst` (both 16-byte aligned) through L1 (.ca: the
// cache-all form, looked up and allocated in L1; .cg would bypass it). Only the first `src_bytes`
// (0 or 16) are read; the rest of the 16 are written as zeros, so src_bytes = 0 zero-fills `dst`
// without touching `src`. `dst` is a shared-window address (smem_addr): a loop of copies converts
// its base once.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async
GEMM_DEVICE void cp_async_ca_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(src)),
               "r"(src_bytes)
               : "memory");
}

// Arrives on `bar` once every cp.async this thread issued before it has completed. `.noinc`: the
// arrival counts against the barrier's expected count, so mbarrier_init must include one per
// thread that arrives this way in each phase.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-cp-async-mbarrier-arrive
GEMM_DEVICE void cp_async_mbarrier_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

#elif defined(GEMM_EMULATED)

void cp_async_ca_16(uint32_t dst, const void* src, uint32_t src_bytes, SourceLoc loc = SourceLoc::current());
void cp_async_mbarrier_arrive_noinc(uint64_t* bar, SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
