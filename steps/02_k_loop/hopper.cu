// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 2 of 12: the K loop.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. A loop over K in slices of 64 (`kTileK`): shared memory holds one slice of A and B at a
//      time; `run` takes any K that is a multiple of 64 (`Contract::k_loop`).
//   2. The tile's first wgmma runs with scale-d = 0 and every later one accumulates
//      (`wgmma_f32_f16_ss`'s last argument, `k0 > 0 || k > 0`).
//   3. A CTA barrier (`__syncthreads`) after each slice's `wgmma_wait_group`: no thread overwrites
//      shared memory before every warp's wgmmas are done with it.
#include <cuda_fp16.h>

#include "common/fence.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/launch.cuh"
#include "common/problem.h"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/trace.cuh"

namespace gemm::step02::hopper {

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

// Copies a rows x 64 fp16 tile (row-major, leading dimension ld) into shared memory, SW128.
__device__ void copy_tile_sw128(__half* tile, const __half* src, int rows, int64_t ld) {
  for (int i = threadIdx.x; i < rows * 8; i += blockDim.x) {
    const int row = i / 8;
    const int chunk = i % 8;
    const uint4 v = *reinterpret_cast<const uint4*>(src + row * ld + chunk * 8);
    // BEGIN SOLUTION step01: 16-byte chunk c (0..7) of row r goes to byte sw128_offset(r, c) of the tile.
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(tile) + sw128_offset(row, chunk)) = v;
    // END SOLUTION step01
  }
}

__global__ void __launch_bounds__(kThreads) kernel(const __half* A, const __half* B, __half* D, int64_t K) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();

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
    copy_tile_sw128(smem.a, A + k0, kTileM, K);
    copy_tile_sw128(smem.b, B + k0, kTileN, K);
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
      *reinterpret_cast<__half2*>(D + row * kTileN + col) = __floats2half2_rn(acc[h][i], acc[h][i + 1]);
    }
  }
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::k_loop, p); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(1);
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  cfg.stream = stream;
  return launch(kernel, cfg, p.a, p.b, p.d, p.k);
}

}  // namespace gemm::step02::hopper
