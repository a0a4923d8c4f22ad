// Thread-block clusters: the CTA's rank, the cluster barrier, and mapping a shared address to a
// peer CTA's shared memory (distributed shared memory).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-barrier-cluster
#pragma once

#include "common/defs.cuh"

namespace gemm {

// The ctaMask (bit r: %cluster_ctarank r) of the CTA pair that CTA `cta_rank` belongs to: the even
// rank and the odd one after it (0b11 for ranks 0 and 1, 0b1100 for 2 and 3). A cta_group::2
// kernel multicasts its tcgen05.commit with it, so that the arrival reaches both CTAs of the pair.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-cta-pair
GEMM_HD constexpr uint16_t cta_pair_mask(uint32_t cta_rank) { return static_cast<uint16_t>(0b11u << (cta_rank & ~1u)); }

#if defined(__CUDACC__)

// This CTA's rank inside its cluster (PTX special register %cluster_ctarank).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#special-registers-cluster-ctarank
GEMM_DEVICE uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Number of CTAs in this cluster (%cluster_nctarank).
GEMM_DEVICE uint32_t cluster_nctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}

// This cluster's index along x in the grid (%clusterid.x).
GEMM_DEVICE uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}

// Number of clusters along x in the grid (%nclusterid.x).
GEMM_DEVICE uint32_t cluster_count_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}

// Arrives at the cluster barrier; release: this thread's earlier writes are visible to threads
// of the cluster that wait after it. Every thread of every CTA of the cluster must arrive. On
// sm_90a ptxas precedes it with MEMBAR.ALL.GPU (steps/09_cluster/NOTES.md measures the cost).
GEMM_DEVICE void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }

// Relaxed arrive: no memory ordering (used after fence.mbarrier_init, which orders the inits).
GEMM_DEVICE void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory"); }

// Waits for all threads of the cluster to arrive; acquire.
GEMM_DEVICE void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// The full cluster barrier.
GEMM_DEVICE void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// Maps this CTA's shared address `addr` to the same offset in CTA `cta_rank` of the cluster
// (a shared::cluster address). PTX `mapa`.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-mapa
GEMM_DEVICE uint32_t mapa_shared(uint32_t addr, uint32_t cta_rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta_rank));
  return r;
}

#elif defined(GEMM_EMULATED)

uint32_t cluster_ctarank();
uint32_t cluster_nctarank();
uint32_t cluster_id_x();
uint32_t cluster_count_x();
void cluster_arrive(SourceLoc loc = SourceLoc::current());
void cluster_arrive_relaxed(SourceLoc loc = SourceLoc::current());
void cluster_wait(SourceLoc loc = SourceLoc::current());
void cluster_sync(SourceLoc loc = SourceLoc::current());
uint32_t mapa_shared(uint32_t addr, uint32_t cta_rank);

#endif

}  // namespace gemm
