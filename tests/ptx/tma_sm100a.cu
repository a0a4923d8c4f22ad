// PTX legality of common/tma.cuh for the blackwell targets (sm_100a, and sm_103a when built):
// every TMA wrapper, the cta_group::2 pair load included, in a kernel ptxas must assemble.
// Compile-only: never launched; results go to global memory so nothing is optimised away.
#include <cuda.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/cluster.cuh"
#include "common/fence.cuh"
#include "common/mbarrier.cuh"
#include "common/smem.cuh"
#include "common/tma.cuh"

namespace gemm::ptx_check {

struct alignas(1024) PairStorage {
  __half a[128 * 64];  // this CTA's 128 rows of A
  __half b[128 * 64];  // this CTA's half of B
  __half a3d[2 * 128 * 64];
  uint64_t full;  // used on the leader only: both CTAs' bytes complete here
};

// The cta_group::2 load pattern of blackwell step 9: each CTA of the pair loads its own A rows and
// its half of B into its own shared memory, completing on the leader's barrier; only the leader
// expects the pair's bytes (way (c) of docs/blackwell.md, "CTA pairs") and waits.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    tma_pair_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_3d, uint32_t* out) {
  PairStorage& s = dynamic_smem<PairStorage>();
  const uint32_t rank = cluster_ctarank();
  const bool leader = rank % 2 == 0;
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1);
    fence_mbarrier_init();
  }
  cluster_sync();
  if (threadIdx.x == 0) {
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    if (leader) mbarrier_arrive_expect_tx(&s.full, 2 * static_cast<uint32_t>(sizeof(s.a) + sizeof(s.b)));
    const int32_t row = static_cast<int32_t>(cluster_id_x() * 256 + rank * 128);
    tma_load_2d_cta_pair(s.a, &map_a, &s.full, 0, row);
    tma_load_2d_cta_pair(s.b, &map_b, &s.full, 0, static_cast<int32_t>(rank * 128));
  }
  if (leader) mbarrier_wait(&s.full, 0, WaitTag{"full", "mma"});
  cluster_sync();

  // The cta_group::1 forms must assemble for the blackwell targets too.
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&s.full, static_cast<uint32_t>(2 * sizeof(s.a) + sizeof(s.a3d) + sizeof(s.b)));
    tma_load_2d(s.a, &map_a, &s.full, 64, 0);
    tma_load_3d(s.a3d, &map_3d, &s.full, 0, 0, 1);
    tma_load_2d_multicast(s.b, &map_b, &s.full, 64, static_cast<int32_t>(rank * 64), uint16_t{0x3});
  }
  mbarrier_wait(&s.full, 1, WaitTag{"full", "consumer"});

  s.a[threadIdx.x] = __float2half(static_cast<float>(threadIdx.x));
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_2d(&map_a, s.a, 0, static_cast<int32_t>(rank * 128));
    tma_store_commit_group();
    tma_store_wait_group_read<0>();
    tma_store_wait_group<0>();
  }
  out[blockIdx.x * 128 + threadIdx.x] = mapa_shared(smem_addr(&s.full), rank & ~1u);
  cluster_sync();
}

}  // namespace gemm::ptx_check
