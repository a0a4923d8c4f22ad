// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 4 of 12: TMA.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Loads: one thread issues two bulk tensor copies per K slice (`tma_load_2d`, A and B, 128x64
//      each). TMA writes the swizzled layout itself and fills zeros past the edges, so
//      `copy_tile_sw128` and its edge checks are gone.
//   2. The copies complete on the mbarrier `full`: the issuing thread's `mbarrier_arrive_expect_tx`
//      announces `kStageBytes`, and the phase completes once all of them have landed; every thread
//      waits on it (`mbarrier_wait`).
//   3. The tensor maps (shape, strides, box, swizzle; `make_tensor_map_2d`) are built on the host
//      and passed as `__grid_constant__` `CUtensorMap` parameters; thread 0 prefetches them
//      (`tma_prefetch_descriptor`).
//   4. Store: registers -> fp16 -> two 64-column SW128 boxes in shared memory (`smem.d`,
//      `kStoreBoxes`) -> `tma_store_2d`, which clips at M and N. The stores are fenced into the
//      async proxy first, and thread 0 waits for them to have read shared memory before the CTA
//      exits (`tma_store_commit_group`, `tma_store_wait_group_read`).
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include "common/fence.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/problem.h"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/trace.cuh"

namespace gemm::step04::hopper {

using namespace gemm::hopper;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;     // one 128-byte swizzle atom of fp16
constexpr int kThreads = 128;  // one warpgroup
constexpr int kWgmmaM = 64;    // rows per wgmma: the 128-row tile takes two
constexpr int kWgmmaK = 16;
constexpr int kAccRegs = kWgmmaAccRegs<kTileN>;  // 64 f32 registers per thread per 64-row half
// The output tile is stored as boxes of 64 columns: a SW128 box row is at most 128 bytes.
constexpr int kStoreCols = 64;
constexpr int kStoreBoxes = kTileN / kStoreCols;
// Bytes one K slice brings into shared memory: what `full` expects per phase. TMA always delivers
// the whole box, the zeros it fills past the edges included.
constexpr uint32_t kStageBytes = (kTileM + kTileN) * kTileK * sizeof(__half);
static_assert(kStageBytes == 32768, "A 128x64 + B 128x64 fp16");

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
struct alignas(1024) SharedStorage {
  __half a[kTileM * kTileK];                   // 16 KB, written by TMA
  __half b[kTileN * kTileK];                   // 16 KB, written by TMA
  __half d[kStoreBoxes][kTileM * kStoreCols];  // 2 x 16 KB: the fp16 output tile, read by TMA
  uint64_t full;                               // mbarrier: the K slice has landed
};
static_assert(sizeof(SharedStorage::a) % 1024 == 0 && sizeof(SharedStorage::b) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");

__global__ void __launch_bounds__(kThreads)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_d, int64_t M, int64_t N, int64_t K) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();

  int64_t m0 = 0, n0 = 0;  // the tile's first row and column
  // BEGIN SOLUTION step03: tile index = blockIdx.x with M fastest; 64-bit row and column origins.
  const int64_t tiles_m = (M + kTileM - 1) / kTileM;
  m0 = (blockIdx.x % tiles_m) * kTileM;
  n0 = (blockIdx.x / tiles_m) * kTileN;
  // END SOLUTION step03

  if (threadIdx.x == 0) {
    // The maps live in kernel-parameter memory; fetching them into the TMA unit's descriptor
    // cache now hides that latency behind the barrier below.
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_d);
    mbarrier_init(&smem.full, 1);  // one arrival per phase: the issuing thread's arrive.expect_tx
    fence_mbarrier_init();         // the init is visible to the async proxy (TMA's complete_tx)
  }
  __syncthreads();  // nobody waits on `full` before it is initialised
  // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
  const TraceTile traced(TraceRole::cta, blockIdx.x);

  float acc[2][kAccRegs];  // rows 0-63 and 64-127 of the tile
  // Zeroed, though the tile's first wgmma runs with scale-d = 0 and ignores them: left unset, they
  // made ptxas schedule steps 5 and 6 worse, and those ran slower (steps/05_pipeline/NOTES.md).
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int i = 0; i < kAccRegs; ++i) acc[h][i] = 0.0f;

  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    // BEGIN SOLUTION step04: thread 0 announces kStageBytes on `full` (mbarrier_arrive_expect_tx), then loads the boxes at {k0, m0} of A and {k0, n0} of B (tma_load_2d); everyone waits on `full` (mbarrier_wait), whose phase flips once per slice (parity = slice index & 1).
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(&smem.full, kStageBytes);
      tma_load_2d(smem.a, &map_a, &smem.full, static_cast<int32_t>(k0), static_cast<int32_t>(m0));
      tma_load_2d(smem.b, &map_b, &smem.full, static_cast<int32_t>(k0), static_cast<int32_t>(n0));
    }
    // The phase completes once the arrival and all 32768 bytes are in: the tiles are in shared
    // memory, written by the async proxy, so no proxy fence is needed before wgmma reads them.
    mbarrier_wait(&smem.full, static_cast<uint32_t>(k0 / kTileK) & 1, WaitTag{"full", "consumer"});
    // END SOLUTION step04

    // BEGIN SOLUTION step02: wgmma_fence_operands on both accumulator halves, then wgmma_fence; the slice's wgmmas, wgmma_f32_f16_ss (kTileN wide) per M half and k16 step on make_wgmma_desc_k_sw128 descriptors, scale-d 0 only for the tile's very first wgmma (first K slice, first k16 step); then wgmma_commit_group, wgmma_wait_group<0>, wgmma_fence_operands on both halves, and __syncthreads before the next slice overwrites shared memory.
    wgmma_fence_operands(acc[0]);
    wgmma_fence_operands(acc[1]);
    wgmma_fence();  // orders the accumulators' earlier accesses before the wgmmas below
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int k = 0; k < kTileK / kWgmmaK; ++k) {
        const uint32_t k_bytes = k * kWgmmaK * sizeof(__half);  // 32 B per k16 slice
        const uint64_t a_desc = make_wgmma_desc_k_sw128(smem_addr(smem.a) + h * kWgmmaM * 128 + k_bytes);
        const uint64_t b_desc = make_wgmma_desc_k_sw128(smem_addr(smem.b) + k_bytes);
        wgmma_f32_f16_ss<kTileN>(acc[h], a_desc, b_desc, /*accumulate=*/k0 > 0 || k > 0);
      }
    }
    wgmma_commit_group();
    wgmma_wait_group<0>();  // this warp's share of the wgmmas has finished reading shared memory
    wgmma_fence_operands(acc[0]);
    wgmma_fence_operands(acc[1]);
    // Every warp has passed its wait: the next slice may overwrite shared memory.
    __syncthreads();
    // END SOLUTION step02
  }

  const TraceEpilogue traced_epilogue;
  // Epilogue: registers -> fp16 -> shared memory (SW128 boxes) -> TMA store. Registers i and i+1
  // are adjacent columns of one row: one 4-byte store. In the SW128 layout the 8 rows a warp
  // writes per instruction fall in 8 different 16-byte chunk positions: no bank conflicts.
  const int t = threadIdx.x;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int i = 0; i < kAccRegs; i += 2) {
      int row = 0, col = 0;
      // BEGIN SOLUTION step01: thread t's register i sits at row wgmma_acc_row(t, i), column wgmma_acc_col(t, i) of its 64-row half.
      row = h * kWgmmaM + wgmma_acc_row(t, i);
      col = wgmma_acc_col(t, i);
      // END SOLUTION step01
      char* box = nullptr;  // the 64-column box holding column col
      uint32_t offset = 0;  // byte offset of (row, col) inside it
      // BEGIN SOLUTION step04: column col is in box col / 64; inside it, 16-byte chunk (col % 64) / 8 of row `row` sits at sw128_offset(row, chunk), and the column 2 * (col % 8) bytes further.
      box = reinterpret_cast<char*>(smem.d[col / kStoreCols]);
      offset = sw128_offset(row, (col % kStoreCols) / 8) + (col % 8) * sizeof(__half);
      // END SOLUTION step04
      *reinterpret_cast<__half2*>(box + offset) = __floats2half2_rn(acc[h][i], acc[h][i + 1]);
    }
  }
  // TMA reads shared memory through the async proxy; the stores above were generic-proxy stores.
  // Each writer fences its own stores, then the barrier waits for every writer.
  fence_proxy_async_shared();
  __syncthreads();

  // BEGIN SOLUTION step04: thread 0 stores box b at {n0 + 64 b, m0} with tma_store_2d (skip a box wholly past N; TMA clips the rest), commits the bulk group (tma_store_commit_group) and waits until it has read shared memory (tma_store_wait_group_read<0>).
  if (threadIdx.x == 0) {
#pragma unroll
    for (int b = 0; b < kStoreBoxes; ++b)
      if (n0 + b * kStoreCols < N)
        tma_store_2d(&map_d, smem.d[b], static_cast<int32_t>(n0 + b * kStoreCols), static_cast<int32_t>(m0));
    tma_store_commit_group();
    // The CTA's shared memory is released when it exits: the stores must have read it by then.
    // (Their writes to D may still be in flight; the kernel's completion covers them.)
    tma_store_wait_group_read<0>();
  }
  // END SOLUTION step04
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const int64_t tiles = ((p.m + kTileM - 1) / kTileM) * ((p.n + kTileN - 1) / kTileN);
  if (tiles > kMaxDim)
    return Status::failure("shape: " + std::to_string(tiles) + " tiles exceed the grid's x limit of 2^31 - 1");
  // The tensor maps: A (M x K) and B (N x K) in boxes of one K slice of a tile, D (M x N) in boxes
  // of 64 columns of a tile; all in the 128-byte swizzle that the wgmma descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kTileN, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kTileM, kStoreCols, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(tiles));
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  cfg.stream = stream;
  return launch(kernel, cfg, map_a, map_b, map_d, p.m, p.n, p.k);
}

}  // namespace gemm::step04::hopper
