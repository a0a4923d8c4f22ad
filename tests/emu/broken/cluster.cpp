// Broken (and one working) kernels around clusters and the output range (see broken.h).
#include "emu/prelude.h"

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"
#include "common/fence.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/smem.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/warp.cuh"
#include "tests/emu/broken/broken.h"

namespace gemm::broken {
namespace cl {

using namespace gemm::blackwell;

struct alignas(1024) Small {
  __half tile[128 * 64];
  uint64_t bar;
};

// CTA 1 arrives on CTA 0's barrier right away: no cluster barrier shows that CTA 0 initialised it.
__global__ void early_remote_arrive() {
  Small& s = dynamic_smem<Small>();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.bar, 1);
    fence_mbarrier_init();
  }
  if (cluster_ctarank() == 1 && threadIdx.x == 0) mbarrier_arrive_cluster(&s.bar, 0);
  cluster_sync();
  if (cluster_ctarank() == 0) mbarrier_wait(&s.bar, 0, WaitTag{"bar", "waiter"});
  cluster_sync();
}

// CTA 1 multicasts a box into both CTAs; CTA 0 neither expects nor waits for it and exits.
__global__ void multicast_into_exited(const __grid_constant__ CUtensorMap map) {
  Small& s = dynamic_smem<Small>();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.bar, 1);
    fence_mbarrier_init();
  }
  cluster_sync();
  if (cluster_ctarank() == 1) {
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(&s.bar, 128 * 64 * 2);
      tma_load_2d_multicast(s.tile, &map, &s.bar, 0, 0, 0b11);
    }
    mbarrier_wait(&s.bar, 0, WaitTag{"bar", "peer"});
  }
}

// A CTA pair (cta_group::2): D[256, N] = A[256, 64] * B[N, 64]^T, N = 256 or 128. Each CTA loads
// its 128 rows of A and its half of B, N/2 rows (TMA .cta_group::2: the bytes count on the leader's
// barrier); the leader issues M256 N MMAs and commits to both CTAs' barriers; each CTA reads its
// 128 rows of D (N columns) from its own TMEM. kClusterSyncBeforeDealloc false: the pair
// deallocates after a CTA barrier only.
template <int kN>
struct alignas(1024) PairStorage {
  __half a[128 * 64];
  __half b[kN / 2 * 64];  // this CTA's half of B
  uint64_t full;          // used in the leader: both CTAs' bytes
  uint64_t mma_done;      // in both: the leader's commit multicasts to it
  uint32_t tmem;
};

// kMapa false: the loads complete on the barrier at the CTA's own address, without the mapa to the
// leader that tma_load_2d_cta_pair computes (cta_pair_barrier): the odd CTA credits its own.
template <bool kClusterSyncBeforeDealloc, int kN, bool kMapa = true>
__global__ void pair_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                            __half* D) {
  PairStorage<kN>& s = dynamic_smem<PairStorage<kN>>();
  const uint32_t rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1);
    mbarrier_init(&s.mma_done, 1);
    fence_mbarrier_init();
  }
  if (warp_id() == 0) tmem_alloc<2, kN>(&s.tmem);
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t acc = s.tmem;

  if (threadIdx.x == 0) {
    if (rank == 0) mbarrier_arrive_expect_tx(&s.full, 2 * (128 + kN / 2) * 64 * 2);  // the pair's A and B
    if constexpr (kMapa) {
      tma_load_2d_cta_pair(s.a, &map_a, &s.full, 0, static_cast<int32_t>(128 * rank));
      tma_load_2d_cta_pair(s.b, &map_b, &s.full, 0, static_cast<int32_t>(kN / 2 * rank));
    } else {
      tma_load_2d_cta_pair_at(s.a, &map_a, smem_addr(&s.full), 0, static_cast<int32_t>(128 * rank),
                              SourceLoc::current());
      tma_load_2d_cta_pair_at(s.b, &map_b, smem_addr(&s.full), 0, static_cast<int32_t>(kN / 2 * rank),
                              SourceLoc::current());
    }
  }
  if (rank == 0 && threadIdx.x == 0) {
    mbarrier_wait(&s.full, 0, WaitTag{"full", "mma"});
    tcgen05_fence_after_thread_sync();
    constexpr uint32_t kIdesc = make_idesc_f16(2, 256, kN);
    for (int k = 0; k < 4; ++k)
      tcgen05_mma_f16<2>(acc, make_smem_desc_k_sw128(smem_addr(s.a) + 32 * k),
                         make_smem_desc_k_sw128(smem_addr(s.b) + 32 * k), kIdesc, k > 0);
    tcgen05_commit_multicast<2>(&s.mma_done, 0b11);
  }
  mbarrier_wait(&s.mma_done, 0, WaitTag{"mma_done", "epilogue"});
  tcgen05_fence_after_thread_sync();
  warp_sync();  // lane 0 of warp 0 ran the MMAs (and waited on `full`) apart from the others
  const int warp = warp_id();
  for (int c = 0; c < kN; c += 32) {
    uint32_t v[32];
    tmem_ld_32x32b_x32(tmem_addr(acc, tmem_lane_base(warp), c), v);
    tmem_wait_ld();
    const int row = static_cast<int>(128 * rank + tmem_lane_base(warp)) + lane_id();
    for (int j = 0; j < 32; ++j) D[row * kN + c + j] = __float2half_rn(tmem_f32(v[j]));
  }
  tcgen05_fence_before_thread_sync();
  if constexpr (kClusterSyncBeforeDealloc) cluster_sync();
  else __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp_id() == 0) tmem_dealloc<2, kN>(acc);
  if constexpr (!kClusterSyncBeforeDealloc) cluster_sync();  // no exit while the peer still runs
}

// Lane 0 of warp 0 loads a box and waits for it, alone; the other lanes go straight on. Without a
// warp_sync the lanes reach the cluster barrier (.aligned) apart.
template <bool kWarpSync>
__global__ void lane0_then_cluster_sync(const __grid_constant__ CUtensorMap map) {
  Small& s = dynamic_smem<Small>();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.bar, 1);
    fence_mbarrier_init();
  }
  cluster_sync();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&s.bar, 128 * 64 * 2);
    tma_load_2d(s.tile, &map, &s.bar, 0, 0);
    mbarrier_wait(&s.bar, 0, WaitTag{"bar", "loader"});
  }
  if constexpr (kWarpSync) warp_sync();
  cluster_sync();
}

// Warp 1 writes a box into shared memory and tells warp 0 so through an mbarrier; warp 0's lane 0
// then stores the box (TMA). A release arrive (mbarrier.arrive) orders the writes before the TMA
// store; a relaxed one (mbarrier_arrive_cluster, to this CTA's own barrier) orders execution only.
template <bool kRelaxed>
__global__ void staged_then_stored(const __grid_constant__ CUtensorMap map_d) {
  Small& s = dynamic_smem<Small>();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.bar, 32);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (warp_id() == 1) {
    for (int i = lane_id(); i < 128 * 64; i += 32) s.tile[i] = __float2half(0.0f);
    fence_proxy_async_shared();
    if constexpr (kRelaxed) mbarrier_arrive_cluster(&s.bar, cluster_ctarank());
    else mbarrier_arrive(&s.bar);
  } else if (lane_id() == 0) {
    mbarrier_wait(&s.bar, 0, WaitTag{"bar", "storer"});
    tma_store_2d(&map_d, s.tile, 0, 0);
    tma_store_commit_group();
    tma_store_wait_group_read<0>();
  }
}

// The pair's TMEM allocation alone: warp `alloc_warp` of each CTA (or none in the odd CTA:
// alloc_warp < 0 there) allocates kColumns with cta_group::2 between cluster barriers, then frees them.
template <uint32_t kColumns>
__global__ void pair_alloc_kernel(int odd_alloc_warp) {
  uint32_t& slot = dynamic_smem<uint32_t>();
  const int alloc_warp = cluster_ctarank() % 2 == 0 ? 0 : odd_alloc_warp;
  cluster_sync();
  if (warp_id() == alloc_warp) {
    tmem_alloc<2, kColumns>(&slot);
    tmem_relinquish_alloc_permit<2>();
  }
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem = slot;
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  if (warp_id() == alloc_warp) tmem_dealloc<2, kColumns>(tmem);
}

__global__ void write_tile0(__half* D) {
  if (threadIdx.x == 0) D[0] = __float2half(1.0f);
}

__global__ void write_before(__half* D) {
  if (threadIdx.x == 0) D[-1] = __float2half(1.0f);
}

}  // namespace cl

Status remote_arrive_before_cluster_sync(const Problem&) {
  LaunchConfig cfg;
  cfg.grid = dim3(2);
  cfg.cluster = dim3(2);
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<cl::Small>();
  return launch(cl::early_remote_arrive, cfg);
}

namespace {
template <bool kWarpSync>
Status lane0_then_cluster_sync(const Problem& p) {
  CUtensorMap map;
  if (Status s = make_tensor_map_2d(&map, p.a, p.m, p.k, 128, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(2);
  cfg.cluster = dim3(2);
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<cl::Small>();
  return launch(cl::lane0_then_cluster_sync<kWarpSync>, cfg, map);
}

template <bool kRelaxed>
Status staged_then_stored(const Problem& p) {
  CUtensorMap map;
  if (Status s = make_tensor_map_2d(&map, p.d, p.m, p.n, 128, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<cl::Small>();
  return launch(cl::staged_then_stored<kRelaxed>, cfg, map);
}
}  // namespace

Status staged_relaxed_arrive(const Problem& p) { return staged_then_stored<true>(p); }
Status staged_release_arrive(const Problem& p) { return staged_then_stored<false>(p); }

Status cluster_sync_diverged(const Problem& p) { return lane0_then_cluster_sync<false>(p); }
Status cluster_sync_reconverged(const Problem& p) { return lane0_then_cluster_sync<true>(p); }

Status exit_with_peer_traffic(const Problem& p) {
  CUtensorMap map;
  if (Status s = make_tensor_map_2d(&map, p.a, p.m, p.k, 128, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(2);
  cfg.cluster = dim3(2);
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<cl::Small>();
  return launch(cl::multicast_into_exited, cfg, map);
}

namespace {
template <bool kOk, int kN, bool kMapa = true>
Status pair(const Problem& p) {
  if (p.m != 256 || p.n != kN || p.k != 64)
    return Status::failure(kN == 256 ? "shape: this pair kernel computes 256x256x64"
                                     : "shape: this pair kernel computes 256x128x64");
  CUtensorMap map_a, map_b;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, 128, 64, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kN / 2, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(2);
  cfg.cluster = dim3(2);
  cfg.block = dim3(128);
  cfg.smem_bytes = smem_bytes<cl::PairStorage<kN>>();
  return launch(cl::pair_kernel<kOk, kN, kMapa>, cfg, map_a, map_b, p.d);
}
}  // namespace

Status pair_dealloc_without_cluster_sync(const Problem& p) { return pair<false, 256>(p); }
Status cta_pair_ok(const Problem& p) { return pair<true, 256>(p); }
Status cta_pair_n128_ok(const Problem& p) { return pair<true, 128>(p); }
Status pair_load_own_barrier(const Problem& p) { return pair<true, 256, false>(p); }

namespace {
// `ctas` CTAs in clusters of two, 64 threads each, `smem` bytes of shared memory each.
template <uint32_t kColumns>
Status pair_alloc(int ctas, int odd_alloc_warp, size_t smem) {
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(ctas));
  cfg.cluster = dim3(2);
  cfg.block = dim3(64);
  cfg.smem_bytes = smem;
  return launch(cl::pair_alloc_kernel<kColumns>, cfg, odd_alloc_warp);
}
}  // namespace

Status pair_alloc_other_warp(const Problem&) { return pair_alloc<256>(2, 1, 1024); }
Status pair_alloc_leader_only(const Problem&) { return pair_alloc<256>(2, -1, 1024); }
// Two pairs on the tests' 2 emulated SMs, shared memory for two CTAs per SM: each pair's CTAs share
// their SMs with the other pair's.
Status pair_tmem_fits(const Problem&) { return pair_alloc<256>(4, 0, 100 * 1024); }
Status pair_tmem_contention(const Problem&) { return pair_alloc<512>(4, 0, 100 * 1024); }

Status d_written_twice(const Problem& p) {
  LaunchConfig cfg;
  cfg.grid = dim3(2);
  cfg.block = dim3(32);
  return launch(cl::write_tile0, cfg, p.d);
}

Status write_outside_d(const Problem& p) {
  LaunchConfig cfg;
  cfg.block = dim3(32);
  return launch(cl::write_before, cfg, p.d);
}

}  // namespace gemm::broken
