// Deliberately broken kernels for the emulator's rule checks (tests/emu/broken_test.cpp). Each is
// a small kernel written like a step file (common/ helpers only, launched through gemm::launch),
// built only as an emulated TU (the .cpp files here include the host prelude first), and broken in
// exactly one way. Bug::none is the working kernel the others differ from.
#pragma once

#include <cuda_runtime.h>

#include "common/problem.h"

namespace gemm::broken {

// D[M,N] = A[M,K] * B[N,K]^T, one 128x128 tile per CTA, 128 threads, K in 64-wide slices.
enum class Bug {
  none,
  // both tracks
  missing_wait,         // blackwell: no wait on the MMAs' commit barrier; hopper: no wgmma.wait_group
  wrong_initial_phase,  // the first wait on the TMA barrier waits for parity 1 (passes at once)
  misaligned_tile,      // the A tile starts 128 bytes past a 1024-byte boundary
  missing_proxy_fence,  // threads write the tiles with ordinary stores and skip fence.proxy.async
  expect_tx_too_few,    // expect_tx announces half the bytes the loads deliver
  expect_tx_too_many,   // expect_tx announces more bytes than the loads deliver
  extra_arrival,        // a second thread also arrives (expect_tx) on the count-1 TMA barrier
  barrier_not_fenced,   // no fence.mbarrier_init after mbarrier.init
  // blackwell only
  wrong_arrival_count,     // the MMA barrier is initialised with count 2; only the commit arrives
  wrong_n,                 // N = 64 in the instruction descriptor: half the accumulator is never written
  illegal_n,               // N = 120 in the instruction descriptor: no such shape for M = 128
  bit46_cleared,           // the sm100 shared-memory descriptor without its fixed bit 46
  missing_tcgen05_fence,   // no tcgen05.fence::after_thread_sync between the MMA wait and tcgen05.ld
  ld_outside_lanes,        // every warp reads TMEM lanes 0-31
  alloc_not_pow2,          // tcgen05.alloc of 96 columns
  alloc_one_thread,        // tcgen05.alloc by one thread instead of a whole warp
  mixed_cta_group,         // tcgen05.commit with cta_group::2 in a cta_group::1 kernel
  dealloc_outstanding_ld,  // tcgen05.dealloc before tcgen05.wait::ld
  no_dealloc,              // the CTA exits with its TMEM allocated
  accumulate_first,        // enable_input_d is true for the first MMA: accumulates into unwritten TMEM
  // hopper only
  missing_wgmma_fence,  // no wgmma.fence before the first wgmma
  acc_touched,          // the accumulators are zeroed while the wgmmas on them are in flight
  store_no_wait,        // the CTA exits without waiting for its TMA stores to read shared memory
  store_overwritten,    // the staging buffer is rewritten before the TMA store has read it
  divergent_wgmma,      // only 3 of the 4 warps issue the wgmma
  setmaxnreg_partial,   // only 3 of the 4 warps of the warpgroup execute setmaxnreg
  setmaxnreg_mismatch,  // warp 3 asks setmaxnreg for another register count
};

Status blackwell(Bug bug, const Problem& p);
Status hopper(Bug bug, const Problem& p);

// Cluster and output-range bugs, each its own small kernel.
Status remote_arrive_before_cluster_sync(const Problem& p);  // a peer arrives before any cluster barrier
Status exit_with_peer_traffic(const Problem& p);             // a peer multicasts into a CTA that has exited
Status pair_dealloc_without_cluster_sync(const Problem& p);  // tcgen05.dealloc.cta_group::2, no cluster barrier
Status d_written_twice(const Problem& p);                    // two CTAs write the same tile
Status write_outside_d(const Problem& p);                    // a store one row past D
Status cta_pair_ok(const Problem& p);                        // the working cta_group::2 kernel (control)
Status cta_pair_n128_ok(const Problem& p);                   // the same at M256 N128: 64 rows of B per CTA
Status pair_load_own_barrier(const Problem& p);  // the pair's TMA loads credit each CTA's own barrier (no mapa)
Status pair_alloc_other_warp(
    const Problem& p);  // tcgen05.alloc.cta_group::2 from warp 0 in one CTA, warp 1 in the other
Status pair_alloc_leader_only(const Problem& p);    // the odd CTA never executes the pair's tcgen05.alloc
Status pair_tmem_fits(const Problem& p);            // two co-resident pairs of 256 TMEM columns each (control)
Status pair_tmem_contention(const Problem& p);      // two co-resident pairs of 512 columns each: per SM, too many
Status cluster_sync_diverged(const Problem& p);     // lane 0 waits alone, then the warp's cluster_sync, no warp_sync
Status cluster_sync_reconverged(const Problem& p);  // the same with the warp_sync (control)
Status staged_relaxed_arrive(const Problem& p);     // stores published by a relaxed arrive before a TMA store
Status staged_release_arrive(const Problem& p);     // the same with a release arrive (control)
// Global memory between CTAs: CTA 0 of a 2-CTA cluster writes data and raises a flag in scratch
// (common/scratch.h), CTA 1 waits for it and reads the data.
enum class FlagProtocol {
  release_store,           // st.release / ld.acquire (works)
  fence_atomic,            // fence.acq_rel + atomic / atomic + fence.acq_rel (works)
  plain_store,             // the flag raised with a plain store: no release
  atomic_without_release,  // the writer's atomic with no fence before it
  atomic_without_acquire,  // the reader's atomic with no fence after it
  never_written,           // the flag raised, the data never written
};
Status flag_protocol(FlagProtocol protocol, const Problem& p);
Status counter_left_nonzero(const Problem& p);  // a scratch counter incremented and never reset
Status setmaxnreg_pool(const Problem& p);       // a producer lowers its registers, a consumer raises its (control)
Status setmaxnreg_no_dec(const Problem& p);     // the consumer's setmaxnreg.inc with no .dec to feed the pool

}  // namespace gemm::broken
