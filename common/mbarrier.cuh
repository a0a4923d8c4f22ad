// mbarrier: the shared-memory barrier with an arrival count, a transaction (tx) byte count and a
// phase bit. A phase completes when all expected arrivals have come AND the tx-count is back to
// zero; the barrier then flips its phase parity and reloads the arrival count.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier
//
// Every wait carries a WaitTag naming the barrier and the waiting role, so that a watchdog or the
// emulator's deadlock report can say which wait hangs.
#pragma once

#include "common/cluster.cuh"
#include "common/defs.cuh"
#include "common/smem.cuh"

namespace gemm {

struct WaitTag {
  const char* barrier;  // e.g. "full", "tma2mma"
  const char* role;     // e.g. "consumer", "mma", "epilogue"
};

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
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// One arrival on the barrier at the same offset in CTA `cta_rank` of the cluster (through mapa).
GEMM_DEVICE void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                   mapa_shared(smem_addr(bar), cta_rank))
               : "memory");
}

// True once the phase with parity `parity` has completed; acquire on success. May time out
// (returns false) after a hardware-chosen interval.
GEMM_DEVICE bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// Spins until the phase with parity `parity` has completed.
GEMM_DEVICE void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

#elif defined(GEMM_EMULATED)

void mbarrier_init(uint64_t* bar, uint32_t count);
void mbarrier_arrive(uint64_t* bar);
void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes);
void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank);
bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity);
void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag);

#endif

}  // namespace gemm
