// Broken blackwell kernels (see broken.h): one 128x128 tile per CTA as in steps 3-4, the tiles
// loaded by TMA (or, for the shared-memory layout bugs, copied by the threads as in step 3), one
// thread issuing tcgen05.mma into TMEM, tcgen05.ld in the epilogue.
#include "emu/prelude.h"

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/fence.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/warp.cuh"
#include "tests/emu/broken/broken.h"

namespace gemm::broken {
namespace bw {

using namespace gemm::blackwell;

constexpr int kTile = 128;
constexpr int kTileK = 64;
constexpr int kThreads = 128;
constexpr uint32_t kStageBytes = 2 * kTile * kTileK * sizeof(__half);

struct alignas(1024) SharedStorage {
  __half a[kTile * kTileK + 512];  // 16 KB + 1 KB: room to shift the A tile off its atom
  __half b[kTile * kTileK];
  uint64_t full;
  uint64_t mma_done;
  uint32_t tmem;
};

// Step 3's copy: the 128 x 64 tile at (row0, k0) into shared memory, SW128, zeros past the edges.
__device__ void copy_tile(__half* tile, const __half* src, int64_t rows, int64_t K, int64_t row0, int64_t k0) {
  for (int i = threadIdx.x; i < kTile * 8; i += blockDim.x) {
    const int row = i / 8, chunk = i % 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + row < rows && k0 + chunk * 8 < K)
      v = *reinterpret_cast<const uint4*>(src + (row0 + row) * K + k0 + chunk * 8);
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(tile) + sw128_offset(row, chunk)) = v;
  }
}

__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

template <Bug bug>
__global__ void __launch_bounds__(kThreads)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, const __half* A,
           const __half* B, __half* D, int64_t M, int64_t N, int64_t K) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();
  constexpr bool kCopy = bug == Bug::misaligned_tile || bug == Bug::missing_proxy_fence;
  __half* tile_a =
      bug == Bug::misaligned_tile ? reinterpret_cast<__half*>(reinterpret_cast<char*>(smem.a) + 128) : smem.a;
  const int64_t tiles_m = (M + kTile - 1) / kTile;
  const int64_t m0 = (blockIdx.x % tiles_m) * kTile;
  const int64_t n0 = (blockIdx.x / tiles_m) * kTile;

  if (warp_id() == 0) {
    if constexpr (bug == Bug::alloc_one_thread) {
      if (lane_id() == 0) tmem_alloc<1, 128>(&smem.tmem);
    } else if constexpr (bug == Bug::alloc_not_pow2) {
      tmem_alloc_n(1, &smem.tmem, 96);
    } else {
      tmem_alloc<1, 128>(&smem.tmem);
    }
    tmem_relinquish_alloc_permit<1>();
  }
  if (threadIdx.x == 0) {
    mbarrier_init(&smem.full, 1);
    mbarrier_init(&smem.mma_done, bug == Bug::wrong_arrival_count ? 2 : 1);
    if constexpr (bug != Bug::barrier_not_fenced) fence_mbarrier_init();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t acc = smem.tmem;

  // By hand, not make_idesc_f16 (which refuses an illegal shape): fp32 D, fp16 A and B, K-major.
  constexpr uint32_t kN = bug == Bug::wrong_n ? 64 : bug == Bug::illegal_n ? 120 : 128;
  constexpr uint32_t kIdesc = (1u << 4) | ((kN >> 3) << 17) | ((128u >> 4) << 24);

  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    const uint32_t slice = static_cast<uint32_t>(k0 / kTileK);
    if constexpr (kCopy) {
      copy_tile(tile_a, A, M, K, m0, k0);
      copy_tile(smem.b, B, N, K, n0, k0);
      if constexpr (bug != Bug::missing_proxy_fence) fence_proxy_async_shared();
      __syncthreads();
      tcgen05_fence_after_thread_sync();
    } else if (threadIdx.x == 0) {
      const uint32_t expect = bug == Bug::expect_tx_too_few    ? kStageBytes / 2
                              : bug == Bug::expect_tx_too_many ? kStageBytes + 1024
                                                               : kStageBytes;
      mbarrier_arrive_expect_tx(&smem.full, expect);
      if constexpr (bug == Bug::extra_arrival) mbarrier_arrive(&smem.full);
      tma_load_2d(tile_a, &map_a, &smem.full, static_cast<int32_t>(k0), static_cast<int32_t>(m0));
      tma_load_2d(smem.b, &map_b, &smem.full, static_cast<int32_t>(k0), static_cast<int32_t>(n0));
      const uint32_t parity = bug == Bug::wrong_initial_phase && slice == 0 ? 1 : slice & 1;
      mbarrier_wait(&smem.full, parity, WaitTag{"full", "mma"});
      tcgen05_fence_after_thread_sync();
    }
    if (threadIdx.x == 0) {
      for (int k = 0; k < kTileK / kMmaK; ++k) {
        uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(tile_a) + k * 32);
        const uint64_t b_desc = make_smem_desc_k_sw128(smem_addr(smem.b) + k * 32);
        if constexpr (bug == Bug::bit46_cleared) a_desc &= ~(uint64_t{1} << 46);
        const bool accumulate = bug == Bug::accumulate_first || k0 > 0 || k > 0;
        tcgen05_mma_f16<1>(acc, a_desc, b_desc, kIdesc, accumulate);
      }
      if constexpr (bug == Bug::mixed_cta_group) tcgen05_commit<2>(&smem.mma_done);
      else tcgen05_commit<1>(&smem.mma_done);
    }
    if constexpr (bug != Bug::missing_wait) mbarrier_wait(&smem.mma_done, slice & 1, WaitTag{"mma_done", "k_loop"});
    if constexpr (bug != Bug::missing_tcgen05_fence) tcgen05_fence_after_thread_sync();
    __syncthreads();
  }

  warp_sync();
  const int warp = warp_id();
  for (int c = 0; c < kTile; c += 32) {
    const uint32_t lane_base = bug == Bug::ld_outside_lanes ? 0 : tmem_lane_base(warp);
    uint32_t v[32];
    tmem_ld_32x32b_x32(tmem_addr(acc, lane_base, c), v);
    if (!(bug == Bug::dealloc_outstanding_ld && warp == 0)) tmem_wait_ld();
    const int64_t row = m0 + tmem_lane_base(warp) + lane_id();
    for (int j = 0; j < 32; j += 8) {
      const uint4 packed = make_uint4(pack_half2(v[j], v[j + 1]), pack_half2(v[j + 2], v[j + 3]),
                                      pack_half2(v[j + 4], v[j + 5]), pack_half2(v[j + 6], v[j + 7]));
      if (row < M && n0 + c + j < N) *reinterpret_cast<uint4*>(D + row * N + n0 + c + j) = packed;
    }
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if constexpr (bug != Bug::no_dealloc)
    if (warp_id() == 0) tmem_dealloc<1, 128>(acc);
}

template <Bug bug>
Status run(const Problem& p) {
  CUtensorMap map_a, map_b;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTile, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kTile, kTileK, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(((p.m + kTile - 1) / kTile) * ((p.n + kTile - 1) / kTile)));
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  return launch(kernel<bug>, cfg, map_a, map_b, p.a, p.b, p.d, p.m, p.n, p.k);
}

}  // namespace bw

Status blackwell(Bug bug, const Problem& p) {
  switch (bug) {
#define GEMM_BUG(b) \
  case Bug::b: return bw::run<Bug::b>(p);
    GEMM_BUG(none)
    GEMM_BUG(missing_wait)
    GEMM_BUG(wrong_initial_phase)
    GEMM_BUG(misaligned_tile)
    GEMM_BUG(missing_proxy_fence)
    GEMM_BUG(expect_tx_too_few)
    GEMM_BUG(expect_tx_too_many)
    GEMM_BUG(extra_arrival)
    GEMM_BUG(barrier_not_fenced)
    GEMM_BUG(wrong_arrival_count)
    GEMM_BUG(wrong_n)
    GEMM_BUG(illegal_n)
    GEMM_BUG(bit46_cleared)
    GEMM_BUG(missing_tcgen05_fence)
    GEMM_BUG(ld_outside_lanes)
    GEMM_BUG(alloc_not_pow2)
    GEMM_BUG(alloc_one_thread)
    GEMM_BUG(mixed_cta_group)
    GEMM_BUG(dealloc_outstanding_ld)
    GEMM_BUG(no_dealloc)
    GEMM_BUG(accumulate_first)
#undef GEMM_BUG
    default: break;
  }
  return Status::failure("no blackwell variant of this bug");
}

}  // namespace gemm::broken
