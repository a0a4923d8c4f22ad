// mbarrier: the shared-memory barrier with an arrival count, a transaction (tx) byte count and a
// phase bit. A phase completes when all expected arrivals have come AND the tx-count is back to
// zero; the barrier then flips its phase parity and reloads the arrival count.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier
//
// Every wait carries a WaitTag naming the barrier and the waiting role, so that a watchdog or the
// emulator's deadlock report can say which wait hangs, and a traced build's timeline which barrier
// a role waited on (trace.cuh: the wait's begin and end, with the barrier's name and address).
#pragma once

#include "common/clock.cuh"
#include "common/cluster.cuh"
#include "common/defs.cuh"
#include "common/smem.cuh"
#include "common/trace.cuh"

#if defined(__CUDACC__) && defined(GEMM_WATCHDOG) && GEMM_WATCHDOG
#include <cstdio>  // the watchdog's report
#endif

namespace gemm {

struct WaitTag {
  const char* barrier;  // e.g. "full", "tma2mma"
  const char* role;     // e.g. "consumer", "mma", "epilogue"
  int stage = -1;       // the pipeline stage of the barrier, where the caller names it (-1: none)
};

// The hang watchdog (CMake option GEMM_WATCHDOG, off by default): with GEMM_WATCHDOG=1 every
// mbarrier_wait gives up after GEMM_WATCHDOG_NS nanoseconds of %globaltimer, prints one line
// naming the barrier, its role, stage, shared address, expected parity, CTA and thread, and traps.
// Device printf output reaches the host when it synchronises, after the trap too
// (tests/watchdog/broken_arrival.cu proves it on the GPU). Off, the wait is the plain spin below.
// On, the printf is a function call inside the kernel, and ptxas serialises wgmma across it
// (C7510, "wgmma pipeline crossing function boundary"): a watchdog build of a hopper step is
// correct but slower, so never time one.
#if !defined(GEMM_WATCHDOG_NS)
#define GEMM_WATCHDOG_NS 2000000000ull
#endif

#if defined(__CUDACC__)

// Initialises the barrier: `count` arrivals complete a phase; phase parity starts at 0.
// Follow with fence_mbarrier_init() and a CTA (or cluster) barrier before anyone signals it.
GEMM_DEVICE void mbarrier_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// One arrival; release: this thread's earlier memory accesses happen before the phase completes.
GEMM_DEVICE void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// One arrival plus `bytes` of expected transactions (the bytes TMA will deliver to this CTA for
// this phase); the phase cannot complete before they have landed.
GEMM_DEVICE void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

// One arrival on the barrier at the same offset in CTA `cta_rank` of the cluster (through mapa).
// Relaxed: it orders none of this thread's memory accesses. The steps send it only to say "done
// reading" (the reads were waited for first: wgmma.wait_group, tcgen05.wait::ld with its fence),
// never to publish data written before it. A .release.cluster arrive would publish, at the price of
// a GPU-wide memory barrier (MEMBAR.ALL.GPU in the SASS) before every arrive, on the consumer's
// critical path (steps/09_cluster/NOTES.md has the measurement).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier-arrive
GEMM_DEVICE void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank) {
  asm volatile(
      "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(mapa_shared(smem_addr(bar), cta_rank))
      : "memory");
}

// True once the phase with parity `parity` has completed; acquire on success. May time out
// (returns false) after a hardware-chosen interval.
GEMM_DEVICE bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
               : "=r"(done)
               : "r"(smem_addr(bar)), "r"(parity)
               : "memory");
  return done != 0;
}

#if defined(GEMM_WATCHDOG) && GEMM_WATCHDOG
// Spins until the phase with parity `parity` has completed, or reports the wait and traps.
GEMM_DEVICE void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag) {
  trace_record(TraceKind::wait_begin, bar, parity, tag.barrier);
  if (mbarrier_try_wait_parity(bar, parity)) {
    trace_record(TraceKind::wait_end, bar, parity, tag.barrier);
    return;
  }
  const uint64_t start = globaltimer_ns();
  while (!mbarrier_try_wait_parity(bar, parity)) {
    if (globaltimer_ns() - start > GEMM_WATCHDOG_NS) {
      printf(
          "gemm watchdog: mbarrier wait timed out after %llu ms: barrier %s, role %s, stage %d, smem 0x%x, "
          "expected parity %u, CTA (%u,%u,%u), thread (%u,%u,%u)\n",
          static_cast<unsigned long long>(GEMM_WATCHDOG_NS / 1000000), tag.barrier ? tag.barrier : "?",
          tag.role ? tag.role : "?", tag.stage, smem_addr(bar), parity, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x,
          threadIdx.y, threadIdx.z);
      __trap();
    }
  }
  trace_record(TraceKind::wait_end, bar, parity, tag.barrier);
}
#else
// Spins until the phase with parity `parity` has completed.
GEMM_DEVICE void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag) {
  trace_record(TraceKind::wait_begin, bar, parity, tag.barrier);
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
  trace_record(TraceKind::wait_end, bar, parity, tag.barrier);
}
#endif

#elif defined(GEMM_EMULATED)

// Each emulated wrapper takes the caller's source location (defaulted), which the emulator's
// messages name; the CUDA build's signatures above are unchanged.
void mbarrier_init(uint64_t* bar, uint32_t count, SourceLoc loc = SourceLoc::current());
void mbarrier_arrive(uint64_t* bar, SourceLoc loc = SourceLoc::current());
void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes, SourceLoc loc = SourceLoc::current());
void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank, SourceLoc loc = SourceLoc::current());
bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity, SourceLoc loc = SourceLoc::current());
void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag, SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
