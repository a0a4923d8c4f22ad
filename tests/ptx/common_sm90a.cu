// PTX legality for sm_90a: kernels that call every wrapper of the shared helpers and of
// common/hopper/, so ptxas assembles each inline-asm instruction for sm_90a (a wrapper nobody
// calls is never assembled). Compile-only: the kernels are never launched, but every result goes
// to global memory so nothing is optimised away.
//
// Covered: common/tma.cuh (all but the sm_100 cta_group::2 load: tests/ptx/tma_sm100a.cu),
// common/mbarrier.cuh, common/cluster.cuh, common/fence.cuh, common/warp.cuh,
// common/named_barrier.cuh, common/smem.cuh, common/hopper/wgmma.cuh (N = 128 and 256, fence,
// commit, wait), common/hopper/wgmma_desc.cuh, common/hopper/setmaxnreg.cuh,
// common/global_memory.cuh.
#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/cluster.cuh"
#include "common/fence.cuh"
#include "common/global_memory.cuh"
#include "common/hopper/setmaxnreg.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/mbarrier.cuh"
#include "common/named_barrier.cuh"
#include "common/pipeline.cuh"
#include "common/scheduler.cuh"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/tma.cuh"
#include "common/warp.cuh"

namespace gemm::ptx_check {

struct alignas(1024) TmaStorage {
  __half tile[128 * 64];        // one SW128 operand box, 16 KB
  __half tile3d[2 * 128 * 64];  // a 3D box: two 64-wide K atoms of 128 rows
  uint64_t full;
  uint64_t empty;
};

// TMA, mbarrier, cluster, fences, warp helpers and named barriers, as a 2-CTA cluster kernel of the
// shape the steps use: init + fence + cluster barrier, one elected thread issuing copies.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    tma_mbarrier_cluster_kernel(const __grid_constant__ CUtensorMap map, const __grid_constant__ CUtensorMap map3d,
                                uint32_t* out) {
  TmaStorage& s = dynamic_smem<TmaStorage>();
  const uint32_t rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1);
    mbarrier_init(&s.empty, 2);
    fence_mbarrier_init();
  }
  cluster_arrive_relaxed();
  cluster_wait();

  PipelineState<2> pipe;
  const TileScheduler sched(8, 8, 2, 8);
  const Tile t = sched.tile(cluster_id_x(), static_cast<int>(rank));
  if (warp_id() == 0 && elect_one_sync()) {
    tma_prefetch_descriptor(&map);
    tma_prefetch_descriptor(&map3d);
    mbarrier_wait(&s.empty, pipe.empty_parity(), WaitTag{"empty", "producer"});
    mbarrier_arrive_expect_tx(&s.full, sizeof(s.tile) * 3 + sizeof(s.tile3d));
    tma_load_2d(s.tile, &map, &s.full, 0, static_cast<int32_t>(t.m * 128));
    tma_load_3d(s.tile3d, &map3d, &s.full, 0, static_cast<int32_t>(t.m * 128), 0);
    tma_load_2d_multicast(s.tile, &map, &s.full, 64, static_cast<int32_t>(t.n * 128), uint16_t{0x3});
    tma_load_2d_multicast(s.tile, &map, &s.full, 64, static_cast<int32_t>(t.n * 128),
                          static_cast<uint16_t>(1u << rank));
  }
  mbarrier_wait(&s.full, pipe.full_parity(), WaitTag{"full", "consumer"});
  const bool passed = mbarrier_try_wait_parity(&s.full, pipe.full_parity());
  pipe.advance();

  // Release the stage locally and on the peer (mapa + remote arrive).
  if (lane_id() == 0 && warp_id() == 0) {
    mbarrier_arrive(&s.empty);
    mbarrier_arrive_cluster(&s.empty, rank ^ 1u);
  }

  // Epilogue: generic writes to smem, the async-proxy fence, a named barrier, one TMA store.
  s.tile[sw128_offset(threadIdx.x % 8, threadIdx.x / 8 % 8) / 2] = __float2half(static_cast<float>(threadIdx.x));
  fence_proxy_async_shared();
  named_barrier_sync(1, 128);
  if (threadIdx.x == 0) {
    tma_store_2d(&map, s.tile, 0, static_cast<int32_t>(t.m * 128));
    tma_store_commit_group();
    tma_store_wait_group_read<0>();
    tma_store_2d(&map, s.tile, 64, static_cast<int32_t>(t.m * 128));
    tma_store_commit_group();
    tma_store_wait_group_read<1>();
    tma_store_wait_group<0>();
  }

  const uint32_t peer_full = mapa_shared(smem_addr(&s.full), rank ^ 1u);
  const uint32_t bcast = shfl_broadcast(static_cast<uint32_t>(threadIdx.x) * 3u, 5);
  out[blockIdx.x * 128 + threadIdx.x] = peer_full + bcast + static_cast<uint32_t>(passed) + cluster_nctarank() +
                                        cluster_count_x() + static_cast<uint32_t>(warpgroup_id()) +
                                        static_cast<uint32_t>(pipe.stage) + (t.valid ? 1u : 0u);
  cluster_arrive();
  cluster_wait();
  cluster_sync();
}

struct alignas(1024) WgmmaStorage {
  __half a[64 * 64];   // 64 x 64, SW128, K-major
  __half b[256 * 64];  // 256 x 64, SW128, K-major
};

template <int N>
__device__ void consumer(const WgmmaStorage& s, float* out) {
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.0f;
  hopper::wgmma_fence_operands(acc);
  hopper::wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint64_t a_desc = hopper::make_wgmma_desc_k_sw128(smem_addr(s.a) + 32 * k);
    const uint64_t b_desc = hopper::make_wgmma_desc_k_sw128(smem_addr(s.b) + 32 * k);
    hopper::wgmma_f32_f16_ss<N>(acc, a_desc, b_desc, k > 0);
  }
  hopper::wgmma_commit_group();
  hopper::wgmma_wait_group<1>();
  hopper::wgmma_wait_group<0>();
  hopper::wgmma_fence_operands(acc);
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupSize;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) out[hopper::wgmma_acc_row(t, i) * N + hopper::wgmma_acc_col(t, i)] = acc[i];
}

// Both wrapped wgmma shapes and setmaxnreg in a 3-warpgroup kernel, the register split of
// docs/hopper.md, "setmaxnreg": 40 (producer) + 2 x 232 (consumers) = 3 x 168. The minBlocks of 1 in
// __launch_bounds__ gives ptxas the register cap at entry without which setmaxnreg is ignored.
__global__ void __launch_bounds__(384, 1) wgmma_setmaxnreg_kernel(float* out128, float* out256) {
  WgmmaStorage& s = dynamic_smem<WgmmaStorage>();
  for (int i = static_cast<int>(threadIdx.x); i < 64 * 64; i += 384) s.a[i] = __float2half(1.0f);
  for (int i = static_cast<int>(threadIdx.x); i < 256 * 64; i += 384) s.b[i] = __float2half(1.0f);
  fence_proxy_async_shared();
  __syncthreads();
  if (warpgroup_id() == 0) {
    hopper::setmaxnreg_dec<40>();
  } else if (warpgroup_id() == 1) {
    hopper::setmaxnreg_inc<232>();
    consumer<128>(s, out128);
  } else {
    hopper::setmaxnreg_inc<232>();
    consumer<256>(s, out256);
  }
}

// Global memory between CTAs: a ticket between two fences, and a flag's release and acquire sides.
__global__ void __launch_bounds__(128) global_memory_kernel(uint32_t* counter, uint32_t* flag, uint32_t* out) {
  fence_acq_rel_gpu();
  out[threadIdx.x] = atomic_add_gpu(counter, 1);
  fence_acq_rel_gpu();
  red_release_add_gpu(counter, 1);
  if (threadIdx.x == 0) st_release_gpu(flag, 1);
  out[threadIdx.x + 128] = ld_acquire_gpu(flag);
}

}  // namespace gemm::ptx_check
