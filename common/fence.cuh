// Memory fences between the generic proxy (ordinary loads and stores) and the async proxy (TMA,
// wgmma, tcgen05), and after mbarrier initialisation.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-membar
#pragma once

#include "common/defs.cuh"

namespace gemm {

#if defined(__CUDACC__)

// Makes this thread's earlier generic-proxy writes to shared memory visible to the async proxy:
// needed before TMA stores, wgmma or tcgen05.mma read what threads wrote with st.shared.
GEMM_DEVICE void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Makes mbarrier.init visible to other threads of the cluster and to the async proxy
// (TMA complete_tx, tcgen05.commit) before they signal the barrier.
GEMM_DEVICE void fence_mbarrier_init() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }

#elif defined(GEMM_EMULATED)

void fence_proxy_async_shared(SourceLoc loc = SourceLoc::current());
void fence_mbarrier_init(SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
