// PTX legality check for sm_100a: every wrapper in common/blackwell/ and the shared wrappers in
// common/{mbarrier,cluster,fence,warp,named_barrier}.cuh, instantiated in kernels so that ptxas
// assembles each instruction for sm_100a (an unused inline-asm wrapper is never assembled).
// Built as an object library (target ptx_check_sm100a); never launched.
//
// A kernel's tcgen05 instructions must all use one cta_group (CUDA 13 rejects a mix), so the
// cta_group::1 and ::2 wrappers are checked in two kernels. Every value a wrapper returns reaches
// the `out` store and every asm is volatile, so nothing is optimised away; runtime arguments keep
// the branches live.
#include <cuda_fp16.h>

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"
#include "common/fence.cuh"
#include "common/mbarrier.cuh"
#include "common/named_barrier.cuh"
#include "common/smem.cuh"
#include "common/warp.cuh"

namespace gemm::ptx_check {

using namespace gemm::blackwell;

struct alignas(1024) Storage {
  __half a[128 * 64];
  __half b[128 * 64];
  uint64_t bar[2];
  uint32_t tmem_slot;
};

// The shared (non-tcgen05) wrappers: mbarrier, cluster, fences, warp helpers, named barriers.
__device__ uint32_t check_shared_wrappers(Storage& s, uint32_t x) {
  uint32_t acc = 0;
  if (threadIdx.x == 0) {
    mbarrier_init(&s.bar[0], 1);
    mbarrier_init(&s.bar[1], 2);
    fence_mbarrier_init();
  }
  fence_proxy_async_shared();
  cluster_arrive_relaxed();
  cluster_wait();
  cluster_arrive();
  cluster_wait();
  cluster_sync();
  acc += cluster_ctarank() + 3 * cluster_nctarank() + 5 * cluster_id_x() + 7 * cluster_count_x();
  acc += mapa_shared(smem_addr(&s.bar[0]), x & 1);
  named_barrier_sync(1, 128);
  if (elect_one_sync()) {
    mbarrier_arrive(&s.bar[0]);
    mbarrier_arrive_expect_tx(&s.bar[1], x);
    mbarrier_arrive_cluster(&s.bar[1], x & 1);
  }
  acc += shfl_broadcast(x, lane_id()) + static_cast<uint32_t>(warp_id() + warpgroup_id());
  acc += mbarrier_try_wait_parity(&s.bar[1], x & 1) ? 1u : 0u;
  mbarrier_wait(&s.bar[0], 0, WaitTag{"bar0", "ptx_check"});
  return acc;
}

template <int CtaGroup, int M, int N>
__device__ void check_tcgen05(uint32_t* out, uint32_t x) {
  Storage& s = dynamic_smem<Storage>();
  uint32_t acc = check_shared_wrappers(s, x);

  constexpr uint32_t kColumns = 256;
  if (warp_id() == 0) {
    tmem_alloc<CtaGroup, kColumns>(&s.tmem_slot);
    tmem_relinquish_alloc_permit<CtaGroup>();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_base = s.tmem_slot;

  constexpr uint32_t kIdesc = make_idesc_f16(CtaGroup, M, N);
  constexpr uint32_t kIdescBf16 = make_idesc_f16(CtaGroup, M, N, MmaInput::bf16);
  if (threadIdx.x == 0) {
    for (int k = 0; k < 4; ++k) {
      const uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(s.a) + 32 * k);
      const uint64_t b_desc = make_smem_desc(smem_addr(s.b) + 32 * k, 16, 1024, SmemLayout::swizzle_128b);
      tcgen05_mma_f16<CtaGroup>(tmem_base, a_desc, b_desc, (x & 2) ? kIdescBf16 : kIdesc, k > 0);
    }
    tcgen05_commit<CtaGroup>(&s.bar[0]);
    tcgen05_commit_multicast<CtaGroup>(&s.bar[1], static_cast<uint16_t>(x & 3));
  }
  mbarrier_wait(&s.bar[0], 1, WaitTag{"bar0", "ptx_check"});
  tcgen05_fence_after_thread_sync();

  uint32_t v16[16];
  uint32_t v32[32];
  const uint32_t lane_base = tmem_lane_base(warp_id());
  tmem_ld_32x32b_x16(tmem_addr(tmem_base, lane_base, 0), v16);
  tmem_ld_32x32b_x32(tmem_addr(tmem_base, lane_base, 32), v32);
  tmem_wait_ld();
  tmem_fence_operands(v16);
  tmem_fence_operands(v32);
  float f = 0.0f;
#pragma unroll
  for (int i = 0; i < 16; ++i) f += tmem_f32(v16[i]);
#pragma unroll
  for (int i = 0; i < 32; ++i) acc += v32[i];
  acc += tmem_addr_lane(tmem_base) + tmem_addr_column(tmem_base);
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc + __half_as_ushort(__float2half_rn(f));

  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp_id() == 0) tmem_dealloc<CtaGroup, kColumns>(tmem_base);
}

__global__ void __launch_bounds__(128) cta_group1_kernel(uint32_t* out, uint32_t x) {
  check_tcgen05<1, 128, 256>(out, x);
}
__global__ void __launch_bounds__(128) cta_group2_kernel(uint32_t* out, uint32_t x) {
  check_tcgen05<2, 256, 256>(out, x);
}

}  // namespace gemm::ptx_check
