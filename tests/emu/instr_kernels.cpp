// Small kernels that exercise one modelled instruction each, for tests/emu/test_instructions.cpp.
// An emulated TU: the host prelude first, then common/ as a step file uses it.
#include "emu/prelude.h"

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"
#include "common/fence.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/named_barrier.cuh"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/warp.cuh"
#include "tests/emu/instr_kernels.h"

namespace gemm::emu_cases {
namespace {

// Element (row, k) of a K-major SW128 fp16 tile (rows x 64).
__device__ __half& at(__half* tile, int row, int k) {
  return *reinterpret_cast<__half*>(reinterpret_cast<char*>(tile) + sw128_offset(row, k / 8) + (k % 8) * 2);
}

// A[i][0] = i, A[i][1] = 1 and B[j][0] = 1000, B[j][1] = j, the rest 0: D[i][j] = 1000 i + j.
__device__ void fill_operands(__half* a, int a_rows, __half* b, int b_rows) {
  for (int i = threadIdx.x; i < a_rows * 64; i += blockDim.x) at(a, i / 64, i % 64) = __float2half(0.0f);
  for (int i = threadIdx.x; i < b_rows * 64; i += blockDim.x) at(b, i / 64, i % 64) = __float2half(0.0f);
  __syncthreads();
  for (int i = threadIdx.x; i < a_rows; i += blockDim.x) {
    at(a, i, 0) = __float2half(static_cast<float>(i));
    at(a, i, 1) = __float2half(1.0f);
  }
  for (int j = threadIdx.x; j < b_rows; j += blockDim.x) {
    at(b, j, 0) = __float2half(1000.0f);
    at(b, j, 1) = __float2half(static_cast<float>(j));
  }
  fence_proxy_async_shared();
  __syncthreads();
}

// --- tcgen05.mma + tcgen05.ld.32x32b.x16 ---------------------------------------------------------
struct alignas(1024) TmemStorage {
  __half a[128 * 64];
  __half b[32 * 64];
  uint64_t done;
  uint32_t tmem;
};

__global__ void tmem_ld_kernel(uint32_t* out) {
  using namespace gemm::blackwell;
  TmemStorage& s = dynamic_smem<TmemStorage>();
  if (warp_id() == 0) {
    tmem_alloc<1, 32>(&s.tmem);
    tcgen05_fence_before_thread_sync();  // the alloc, before the barrier in fill_operands
  }
  if (threadIdx.x == 0) {
    mbarrier_init(&s.done, 1);
    fence_mbarrier_init();
  }
  fill_operands(s.a, 128, s.b, 32);
  tcgen05_fence_after_thread_sync();
  if (threadIdx.x == 0) {
    tcgen05_mma_f16<1>(s.tmem, make_smem_desc_k_sw128(smem_addr(s.a)), make_smem_desc_k_sw128(smem_addr(s.b)),
                       make_idesc_f16(1, 128, 32), false);
    tcgen05_commit<1>(&s.done);
  }
  mbarrier_wait(&s.done, 0, WaitTag{"done", "ld"});
  tcgen05_fence_after_thread_sync();
  for (int c = 0; c < 32; c += 16) {
    uint32_t v[16];
    tmem_ld_32x32b_x16(tmem_addr(s.tmem, tmem_lane_base(warp_id()), c), v);
    tmem_wait_ld();
    for (int j = 0; j < 16; ++j) out[threadIdx.x * 32 + c + j] = v[j];
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp_id() == 0) tmem_dealloc<1, 32>(s.tmem);
}

// --- wgmma m64n128k16 ----------------------------------------------------------------------
struct alignas(1024) WgmmaStorage {
  __half a[64 * 64];
  __half b[128 * 64];
};

__global__ void wgmma_kernel(float* out) {
  using namespace gemm::hopper;
  WgmmaStorage& s = dynamic_smem<WgmmaStorage>();
  fill_operands(s.a, 64, s.b, 128);
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  wgmma_fence();
  wgmma_f32_f16_ss<128>(acc, make_wgmma_desc_k_sw128(smem_addr(s.a)), make_wgmma_desc_k_sw128(smem_addr(s.b)), false);
  wgmma_commit_group();
  wgmma_wait_group<0>();
  for (int i = 0; i < 64; ++i) out[threadIdx.x * 64 + i] = acc[i];
}

// --- TMA ------------------------------------------------------------------------------------
struct alignas(1024) BoxStorage {
  __half box[64 * 64];  // 8 KB: one SW128 box of 64 x 64
  uint64_t full;
  uint64_t done;
};

__global__ void tma_load_kernel(const __grid_constant__ CUtensorMap map, int32_t c0, int32_t c1, uint8_t* out) {
  BoxStorage& s = dynamic_smem<BoxStorage>();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&s.full, sizeof s.box);  // the full box, zero fill included
    tma_load_2d(s.box, &map, &s.full, c0, c1);
  }
  mbarrier_wait(&s.full, 0, WaitTag{"full", "reader"});
  for (uint32_t i = threadIdx.x; i < sizeof s.box; i += blockDim.x) out[i] = reinterpret_cast<uint8_t*>(s.box)[i];
}

__global__ void tma_store_kernel(const __grid_constant__ CUtensorMap map, int32_t c0, int32_t c1) {
  BoxStorage& s = dynamic_smem<BoxStorage>();
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x)
    at(s.box, i / 64, i % 64) = __float2half(static_cast<float>(i));
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_2d(&map, s.box, c0, c1);
    tma_store_commit_group();
    tma_store_wait_group_read<0>();
  }
}

// Rank 0 multicasts one box to both CTAs; then rank 1 arrives remotely on rank 0's `done`.
__global__ void multicast_kernel(const __grid_constant__ CUtensorMap map, uint8_t* out) {
  BoxStorage& s = dynamic_smem<BoxStorage>();
  const uint32_t rank = cluster_ctarank();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1);
    mbarrier_init(&s.done, 1);
    fence_mbarrier_init();
  }
  cluster_sync();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&s.full, sizeof s.box);  // each CTA receives the box once
    if (rank == 0) tma_load_2d_multicast(s.box, &map, &s.full, 0, 0, 0b11);
  }
  mbarrier_wait(&s.full, 0, WaitTag{"full", "reader"});
  for (uint32_t i = threadIdx.x; i < sizeof s.box; i += blockDim.x)
    out[rank * sizeof s.box + i] = reinterpret_cast<uint8_t*>(s.box)[i];
  if (rank == 1 && threadIdx.x == 0) mbarrier_arrive_cluster(&s.done, 0);
  if (rank == 0) mbarrier_wait(&s.done, 0, WaitTag{"done", "rank0"});
  cluster_sync();
}

// --- mbarrier phases: a one-slot producer/consumer ring over 4 rounds -------------------------
struct alignas(16) RingStorage {
  uint64_t full, empty;
  int value;
};

__global__ void ring_kernel(int* log) {
  RingStorage& s = dynamic_smem<RingStorage>();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.full, 1);
    mbarrier_init(&s.empty, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  for (int it = 0; it < 4; ++it) {
    const uint32_t phase = static_cast<uint32_t>(it) & 1;
    if (threadIdx.x == 0) {  // producer: waits on empty with phase ^ 1 (passes at once the first time)
      mbarrier_wait(&s.empty, phase ^ 1, WaitTag{"empty", "producer"});
      s.value = 10 + it;
      mbarrier_arrive(&s.full);
    } else if (threadIdx.x == 32) {  // consumer
      mbarrier_wait(&s.full, phase, WaitTag{"full", "consumer"});
      log[it] = s.value;
      mbarrier_arrive(&s.empty);
    }
  }
}

// --- warp specialisation: a producer far ahead, consumers in other warps ------------------------
// One elected lane of warp 0 streams kItems TMA boxes through a ring of kSlots stages (up to kSlots
// loads in flight); the other lanes of warp 0 have nothing to do and exit at once. Warps 1 and 2
// consume each box together (a named barrier of 64 threads), and lane 0 of each releases the stage
// (empty: count 2). Warp 1's lane 0 logs the box's first element.
constexpr int kSlots = 8, kItems = 24;

struct alignas(1024) SpecStorage {
  __half box[kSlots][64 * 64];  // 8 x 8 KB
  uint64_t full[kSlots];
  uint64_t empty[kSlots];
};

__global__ void specialized_kernel(const __grid_constant__ CUtensorMap map, float* log) {
  SpecStorage& s = dynamic_smem<SpecStorage>();
  if (threadIdx.x == 0) {
    for (int i = 0; i < kSlots; ++i) {
      mbarrier_init(&s.full[i], 1);
      mbarrier_init(&s.empty[i], 2);
    }
    fence_mbarrier_init();
  }
  __syncthreads();
  if (warp_id() == 0) {
    if (!elect_one_sync()) return;  // role divergence: 31 lanes leave
    for (int it = 0; it < kItems; ++it) {
      const int slot = it % kSlots;
      const uint32_t lap = static_cast<uint32_t>(it / kSlots);
      mbarrier_wait(&s.empty[slot], (lap & 1) ^ 1, WaitTag{"empty", "producer"});
      mbarrier_arrive_expect_tx(&s.full[slot], 64 * 64 * 2);
      tma_load_2d(s.box[slot], &map, &s.full[slot], 0, 64 * it);
    }
    return;
  }
  for (int it = 0; it < kItems; ++it) {
    const int slot = it % kSlots;
    const uint32_t lap = static_cast<uint32_t>(it / kSlots);
    mbarrier_wait(&s.full[slot], lap & 1, WaitTag{"full", "consumer"});
    if (warp_id() == 1 && lane_id() == 0) log[it] = __half2float(s.box[slot][0]);
    named_barrier_sync(1, 64);
    if (lane_id() == 0) mbarrier_arrive(&s.empty[slot]);
  }
}

// --- an arrival beyond the count in a later phase ---------------------------------------------
struct alignas(16) CountStorage {
  uint64_t bar;
};

__global__ void extra_arrival_kernel() {
  CountStorage& s = dynamic_smem<CountStorage>();
  if (threadIdx.x == 0) {
    mbarrier_init(&s.bar, 1);
    fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) mbarrier_arrive(&s.bar);  // phase 0: its one arrival
  mbarrier_wait(&s.bar, 0, WaitTag{"bar", "all"});
  __syncthreads();
  if (threadIdx.x == 0 || threadIdx.x == 32) mbarrier_arrive(&s.bar);  // phase 1: two, unordered
  mbarrier_wait(&s.bar, 1, WaitTag{"bar", "all"});
}

// --- warp collectives, named barriers, cluster registers, mapa ------------------------------
struct alignas(16) CollStorage {
  uint32_t x[256];
};

__global__ void collectives_kernel(uint32_t* out) {
  CollStorage& s = dynamic_smem<CollStorage>();
  const int t = threadIdx.x;
  uint32_t* o = out + (blockIdx.x * 256 + t) * 8;
  o[0] = elect_one_sync() ? 1 : 0;
  o[1] = shfl_broadcast(static_cast<uint32_t>(lane_id() * 10 + warp_id()), 3);
  o[2] = cluster_ctarank();
  o[3] = cluster_nctarank();
  o[4] = cluster_id_x();
  o[5] = cluster_count_x();
  s.x[t] = static_cast<uint32_t>(1000 * blockIdx.x + t);
  named_barrier_sync(1 + warpgroup_id(), 128);  // each warpgroup on its own barrier
  o[6] = s.x[t ^ 1];
  o[7] = mapa_shared(smem_addr(&s.x[t]), cluster_ctarank() ^ 1) >> 24;
  cluster_sync();
}

}  // namespace

Status tmem_ld_case(uint32_t* out) {
  LaunchConfig cfg;
  cfg.block = dim3(128);
  cfg.smem_bytes = smem_bytes<TmemStorage>();
  return launch(tmem_ld_kernel, cfg, out);
}

Status wgmma_case(float* out) {
  LaunchConfig cfg;
  cfg.block = dim3(128);
  cfg.smem_bytes = smem_bytes<WgmmaStorage>();
  return launch(wgmma_kernel, cfg, out);
}

Status tma_load_case(const __half* src, uint64_t rows, uint64_t cols, int32_t c0, int32_t c1, uint8_t* out) {
  CUtensorMap map;
  if (Status s = make_tensor_map_2d(&map, src, rows, cols, 64, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<BoxStorage>();
  return launch(tma_load_kernel, cfg, map, c0, c1, out);
}

Status tma_store_case(__half* dst, uint64_t rows, uint64_t cols, int32_t c0, int32_t c1) {
  CUtensorMap map;
  if (Status s = make_tensor_map_2d(&map, dst, rows, cols, 64, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<BoxStorage>();
  return launch(tma_store_kernel, cfg, map, c0, c1);
}

Status multicast_case(const __half* src, uint64_t rows, uint64_t cols, uint8_t* out) {
  CUtensorMap map;
  if (Status s = make_tensor_map_2d(&map, src, rows, cols, 64, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(2);
  cfg.cluster = dim3(2);
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<BoxStorage>();
  return launch(multicast_kernel, cfg, map, out);
}

Status ring_case(int* log) {
  LaunchConfig cfg;
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<RingStorage>();
  return launch(ring_kernel, cfg, log);
}

Status specialized_case(const __half* src, float* log) {
  CUtensorMap map;
  if (Status s = make_tensor_map_2d(&map, src, 64 * kItems, 64, 64, 64, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(96);
  cfg.smem_bytes = smem_bytes<SpecStorage>();
  return launch(specialized_kernel, cfg, map, log);
}

Status extra_arrival_case() {
  LaunchConfig cfg;
  cfg.block = dim3(64);
  cfg.smem_bytes = smem_bytes<CountStorage>();
  return launch(extra_arrival_kernel, cfg);
}

Status collectives_case(uint32_t* out) {
  LaunchConfig cfg;
  cfg.grid = dim3(4);
  cfg.cluster = dim3(2);
  cfg.block = dim3(256);
  cfg.smem_bytes = smem_bytes<CollStorage>();
  return launch(collectives_kernel, cfg, out);
}

}  // namespace gemm::emu_cases
