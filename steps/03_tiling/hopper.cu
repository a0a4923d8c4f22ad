// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 3 of 12: tiling.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. A grid of one CTA per 128x128 output tile, on grid x (`blockIdx.x`, M fastest): CTAs
//      launched together share a B tile, which they read from L2; `run` checks the tile count
//      against the grid's limit (`kMaxDim`) and takes the general contract (`Contract::general`).
//   2. Edges: rows past M or N and columns past K are loaded as zeros (`copy_tile_sw128` with
//      `rows`, `K`), and stores past M or N are skipped (`g_row < M && g_col < N`). N and K are
//      multiples of 8, so a 16-byte chunk is wholly inside or wholly outside.
//   3. Offsets are 64-bit (`int64_t` `m0`, `n0`, `g_row`, `g_col`): row x K passes 2^31 for large
//      matrices.
#include <cuda_fp16.h>

#include "common/fence.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/launch.cuh"
#include "common/problem.h"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/trace.cuh"

namespace gemm::step03::hopper {

using namespace gemm::hopper;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;     // one 128-byte swizzle atom of fp16
constexpr int kThreads = 128;  // one warpgroup
constexpr int kWgmmaM = 64;    // rows per wgmma: the 128-row tile takes two
constexpr int kWgmmaK = 16;
constexpr int kAccRegs = kWgmmaAccRegs<kTileN>;  // 64 f32 registers per thread per 64-row half

// Both tiles are rows x 128 bytes in the SW128 layout; each starts on a 1024-byte boundary
// (the swizzle pattern repeats every 8 rows = 1024 bytes, and the descriptors' base offset is 0).
struct alignas(1024) SharedStorage {
  __half a[kTileM * kTileK];  // 16 KB
  __half b[kTileN * kTileK];  // 16 KB
};
static_assert(sizeof(SharedStorage::a) % 1024 == 0, "B must start on a 1024-byte boundary");
static_assert(kTileM == kTileN, "copy_tile_sw128 copies kTileM rows of A and of B");

// Copies the 128 x 64 tile at (row0, k0) of a rows x K row-major matrix into shared memory,
// SW128; rows >= rows and columns >= K become zeros.
__device__ void copy_tile_sw128(__half* tile, const __half* src, int64_t rows, int64_t K, int64_t row0, int64_t k0) {
  for (int i = threadIdx.x; i < kTileM * 8; i += blockDim.x) {
    const int row = i / 8;
    const int chunk = i % 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    // BEGIN SOLUTION step03: load the chunk only when its row is inside the matrix and its first column < K; zeros otherwise.
    const int64_t g_row = row0 + row;
    const int64_t g_col = k0 + chunk * 8;
    if (g_row < rows && g_col < K) v = *reinterpret_cast<const uint4*>(src + g_row * K + g_col);
    // END SOLUTION step03
    // BEGIN SOLUTION step01: 16-byte chunk c (0..7) of row r goes to byte sw128_offset(r, c) of the tile.
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(tile) + sw128_offset(row, chunk)) = v;
    // END SOLUTION step01
  }
}

__global__ void __launch_bounds__(kThreads)
    kernel(const __half* A, const __half* B, __half* D, int64_t M, int64_t N, int64_t K) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();

  int64_t m0 = 0, n0 = 0;  // the tile's first row and column
  // BEGIN SOLUTION step03: tile index = blockIdx.x with M fastest; 64-bit row and column origins.
  const int64_t tiles_m = (M + kTileM - 1) / kTileM;
  m0 = (blockIdx.x % tiles_m) * kTileM;
  n0 = (blockIdx.x / tiles_m) * kTileN;
  // END SOLUTION step03

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
    copy_tile_sw128(smem.a, A, M, K, m0, k0);
    copy_tile_sw128(smem.b, B, N, K, n0, k0);
    // wgmma reads shared memory through the async proxy; the copies above were generic-proxy
    // stores. Each writer fences its own stores, then the barrier waits for every writer.
    fence_proxy_async_shared();
    __syncthreads();

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
  // Epilogue: registers -> fp16 -> global. Registers i and i+1 are adjacent columns of one row.
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
      const int64_t g_row = m0 + row;
      const int64_t g_col = n0 + col;
      // BEGIN SOLUTION step03: store only inside D (g_col is even and N a multiple of 8: the pair is wholly in or out).
      if (g_row < M && g_col < N)
        *reinterpret_cast<__half2*>(D + g_row * N + g_col) = __floats2half2_rn(acc[h][i], acc[h][i + 1]);
      // END SOLUTION step03
    }
  }
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const int64_t tiles = ((p.m + kTileM - 1) / kTileM) * ((p.n + kTileN - 1) / kTileN);
  if (tiles > kMaxDim)
    return Status::failure("shape: " + std::to_string(tiles) + " tiles exceed the grid's x limit of 2^31 - 1");
  LaunchConfig cfg;
  cfg.grid = dim3(static_cast<unsigned>(tiles));
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  cfg.stream = stream;
  return launch(kernel, cfg, p.a, p.b, p.d, p.m, p.n, p.k);
}

}  // namespace gemm::step03::hopper
