// Broken hopper kernels (see broken.h): one 128x128 tile per CTA as in step 4, the tiles loaded by
// TMA (or copied by the threads for the shared-memory layout bugs), one warpgroup issuing wgmma,
// the epilogue through shared memory and a TMA store.
#include "emu/prelude.h"

#include "common/fence.cuh"
#include "common/hopper/setmaxnreg.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/warp.cuh"
#include "tests/emu/broken/broken.h"

namespace gemm::broken {
namespace hp {

using namespace gemm::hopper;

constexpr int kTile = 128;
constexpr int kTileK = 64;
constexpr int kThreads = 128;
constexpr int kAccRegs = kWgmmaAccRegs<kTile>;
constexpr uint32_t kStageBytes = 2 * kTile * kTileK * sizeof(__half);

struct alignas(1024) SharedStorage {
  __half a[kTile * kTileK + 512];  // 16 KB + 1 KB: room to shift the A tile off its atom
  __half b[kTile * kTileK];
  __half d[2][kTile * 64];  // the output tile as two SW128 boxes of 64 columns
  uint64_t full;
};

__device__ void copy_tile(__half* tile, const __half* src, int64_t rows, int64_t K, int64_t row0, int64_t k0) {
  for (int i = threadIdx.x; i < kTile * 8; i += blockDim.x) {
    const int row = i / 8, chunk = i % 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + row < rows && k0 + chunk * 8 < K)
      v = *reinterpret_cast<const uint4*>(src + (row0 + row) * K + k0 + chunk * 8);
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(tile) + sw128_offset(row, chunk)) = v;
  }
}

template <Bug bug>
__global__ void __launch_bounds__(kThreads)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_d, const __half* A, const __half* B, int64_t M, int64_t N,
           int64_t K) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();
  constexpr bool kCopy = bug == Bug::misaligned_tile || bug == Bug::missing_proxy_fence;
  __half* tile_a =
      bug == Bug::misaligned_tile ? reinterpret_cast<__half*>(reinterpret_cast<char*>(smem.a) + 128) : smem.a;
  const int64_t tiles_m = (M + kTile - 1) / kTile;
  const int64_t m0 = (blockIdx.x % tiles_m) * kTile;
  const int64_t n0 = (blockIdx.x / tiles_m) * kTile;

  if (threadIdx.x == 0) {
    mbarrier_init(&smem.full, 1);
    if constexpr (bug != Bug::barrier_not_fenced) fence_mbarrier_init();
  }
  __syncthreads();
  // A lone warpgroup can only give registers back to the CTA's pool (setmaxnreg.dec): an .inc would
  // wait for ever. The whole warpgroup executes it, with one count (.sync.aligned).
  if constexpr (bug == Bug::setmaxnreg_partial) {
    if (warp_id() != 3) setmaxnreg_dec<80>();
  } else if constexpr (bug == Bug::setmaxnreg_mismatch) {
    if (warp_id() != 3) setmaxnreg_dec<80>();
    else setmaxnreg_dec<72>();
  } else {
    setmaxnreg_dec<80>();
  }

  float acc[2][kAccRegs];
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < kAccRegs; ++i) acc[h][i] = 0.0f;

  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    const uint32_t slice = static_cast<uint32_t>(k0 / kTileK);
    if constexpr (kCopy) {
      copy_tile(tile_a, A, M, K, m0, k0);
      copy_tile(smem.b, B, N, K, n0, k0);
      if constexpr (bug != Bug::missing_proxy_fence) fence_proxy_async_shared();
      __syncthreads();
    } else {
      if (threadIdx.x == 0) {
        const uint32_t expect = bug == Bug::expect_tx_too_few    ? kStageBytes / 2
                                : bug == Bug::expect_tx_too_many ? kStageBytes + 1024
                                                                 : kStageBytes;
        mbarrier_arrive_expect_tx(&smem.full, expect);
        if constexpr (bug == Bug::extra_arrival) mbarrier_arrive(&smem.full);
        tma_load_2d(tile_a, &map_a, &smem.full, static_cast<int32_t>(k0), static_cast<int32_t>(m0));
        tma_load_2d(smem.b, &map_b, &smem.full, static_cast<int32_t>(k0), static_cast<int32_t>(n0));
      }
      const uint32_t parity = bug == Bug::wrong_initial_phase && slice == 0 ? 1 : slice & 1;
      mbarrier_wait(&smem.full, parity, WaitTag{"full", "consumer"});
    }

    if constexpr (bug != Bug::missing_wgmma_fence) wgmma_fence();
    if (!(bug == Bug::divergent_wgmma && warp_id() == 3)) {
      for (int h = 0; h < 2; ++h)
        for (int k = 0; k < kTileK / 16; ++k) {
          const uint64_t a_desc = make_wgmma_desc_k_sw128(smem_addr(tile_a) + h * 64 * 128 + k * 32);
          const uint64_t b_desc = make_wgmma_desc_k_sw128(smem_addr(smem.b) + k * 32);
          wgmma_f32_f16_ss<kTile>(acc[h], a_desc, b_desc, k0 > 0 || k > 0);
        }
    }
    wgmma_commit_group();
    if constexpr (bug == Bug::acc_touched) acc[0][0] = 0.0f;
    if constexpr (bug != Bug::missing_wait) wgmma_wait_group<0>();
    __syncthreads();
  }

  const int t = threadIdx.x;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < kAccRegs; i += 2) {
      const int row = h * 64 + wgmma_acc_row(t, i), col = wgmma_acc_col(t, i);
      char* box = reinterpret_cast<char*>(smem.d[col / 64]);
      *reinterpret_cast<__half2*>(box + sw128_offset(row, (col % 64) / 8) + (col % 8) * 2) =
          __floats2half2_rn(acc[h][i], acc[h][i + 1]);
    }
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int b = 0; b < 2; ++b)
      if (n0 + b * 64 < N) tma_store_2d(&map_d, smem.d[b], static_cast<int32_t>(n0 + b * 64), static_cast<int32_t>(m0));
    tma_store_commit_group();
    if constexpr (bug == Bug::store_overwritten) smem.d[0][0] = __float2half(1.0f);
    if constexpr (bug != Bug::store_no_wait) tma_store_wait_group_read<0>();
  }
}

template <Bug bug>
Status run(const Problem& p) {
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTile, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kTile, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kTile, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(((p.m + kTile - 1) / kTile) * ((p.n + kTile - 1) / kTile)));
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  return launch(kernel<bug>, cfg, map_a, map_b, map_d, p.a, p.b, p.m, p.n, p.k);
}

// setmaxnreg's register pool: two warpgroups, the first lowers its count to 24 and the second
// raises its to 232, as step 7's producer and consumer do. Two CTAs fit on an SM (shared memory),
// so each thread starts with 65536 / (2 x 256) = 128 registers: the .dec returns 128 x 104, the .inc
// takes as many. With kDec false the first warpgroup never lowers its count, and the .inc waits for
// ever.
template <bool kDec>
__global__ void __launch_bounds__(256, 2) registers_kernel() {
  if (threadIdx.x / 128 == 0) {
    if constexpr (kDec) setmaxnreg_dec<24>();
  } else {
    setmaxnreg_inc<232>();
  }
  __syncthreads();
}

template <bool kDec>
Status registers(const Problem&) {
  LaunchConfig cfg;
  cfg.block = dim3(256);
  cfg.smem_bytes = 100 * 1024;  // two CTAs per SM
  return launch(registers_kernel<kDec>, cfg);
}

}  // namespace hp

Status setmaxnreg_pool(const Problem& p) { return hp::registers<true>(p); }
Status setmaxnreg_no_dec(const Problem& p) { return hp::registers<false>(p); }

Status hopper(Bug bug, const Problem& p) {
  switch (bug) {
#define GEMM_BUG(b) \
  case Bug::b: return hp::run<Bug::b>(p);
    GEMM_BUG(none)
    GEMM_BUG(missing_wait)
    GEMM_BUG(wrong_initial_phase)
    GEMM_BUG(misaligned_tile)
    GEMM_BUG(missing_proxy_fence)
    GEMM_BUG(expect_tx_too_few)
    GEMM_BUG(expect_tx_too_many)
    GEMM_BUG(extra_arrival)
    GEMM_BUG(barrier_not_fenced)
    GEMM_BUG(missing_wgmma_fence)
    GEMM_BUG(acc_touched)
    GEMM_BUG(store_no_wait)
    GEMM_BUG(store_overwritten)
    GEMM_BUG(divergent_wgmma)
    GEMM_BUG(setmaxnreg_partial)
    GEMM_BUG(setmaxnreg_mismatch)
#undef GEMM_BUG
    default: break;
  }
  return Status::failure("no hopper variant of this bug");
}

}  // namespace gemm::broken
