// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 5 of 12: pipelining.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Two stages (`kStages`): two buffers of A and B, each with a `full` barrier (its slice has
//      landed: the arrive.expect_tx and TMA's bytes) and an `empty` barrier (every warp has seen
//      its wgmmas on the stage complete: `kReleaseArrivals`). `PipelineState` (common/pipeline.cuh,
//      which arrives with this lesson) gives each side its stage and the parity it waits on.
//   2. Prefetch: thread 0 fills both stages (`load_slice`) before the first wgmma.
//   3. Release and refill: after slice ks's wgmmas, `wgmma_wait_group<0>`; lane 0 of each warp
//      arrives on the stage's `empty`, and thread 0 refills that stage with slice ks + 2 (`next`),
//      so two loads are in flight while slice ks + 1 is multiplied.
//   4. The epilogue stages the output tile in the A buffers (`smem.a`), free once the K loop is
//      over, instead of a buffer of its own: a third buffer would leave room for two CTAs per SM
//      instead of three.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include "common/fence.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/pipeline.cuh"
#include "common/problem.h"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/trace.cuh"
#include "common/warp.cuh"

namespace gemm::step05::hopper {

using namespace gemm::hopper;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;     // one 128-byte swizzle atom of fp16
constexpr int kThreads = 128;  // one warpgroup
constexpr int kWgmmaM = 64;    // rows per wgmma: the 128-row tile takes two
constexpr int kWgmmaK = 16;
constexpr int kAccRegs = kWgmmaAccRegs<kTileN>;  // 64 f32 registers per thread per 64-row half
constexpr int kStages = 2;                       // two K slice buffers, each refilled as soon as its MMAs complete
// The output tile is stored as boxes of 64 columns: a SW128 box row is at most 128 bytes.
constexpr int kStoreCols = 64;
constexpr int kStoreBoxes = kTileN / kStoreCols;
// Bytes one K slice brings into shared memory: what `full` expects per phase. TMA always delivers
// the whole box, the zeros it fills past the edges included.
constexpr uint32_t kStageBytes = (kTileM + kTileN) * kTileK * sizeof(__half);
static_assert(kStageBytes == 32768, "A 128x64 + B 128x64 fp16");
// A stage is free once every warp of the warpgroup has seen its wgmmas complete: lane 0 of each
// warp arrives, after that warp's wgmma.wait_group.
constexpr uint32_t kReleaseArrivals = kThreads / kWarpSize;

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
struct alignas(1024) SharedStorage {
  __half a[kStages][kTileM * kTileK];  // 2 x 16 KB, written by TMA
  __half b[kStages][kTileN * kTileK];  // 2 x 16 KB, written by TMA
  uint64_t full[kStages];              // mbarrier: the stage's K slice has landed
  uint64_t empty[kStages];             // mbarrier: the stage's consumers are done with it
};
static_assert(sizeof(SharedStorage::a[0]) % 1024 == 0 && sizeof(SharedStorage::b[0]) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");
// No staging buffer of its own for the epilogue: once the K loop is over, both stages are free, and
// the output tile goes into the two A buffers (exactly its two 64-column boxes). A third buffer
// would leave room for two CTAs per SM instead of three: fewer loads in flight per SM, which
// measured slower than the second stage gains (NOTES.md).
static_assert(sizeof(SharedStorage::a) == kStoreBoxes * kTileM * kStoreCols * sizeof(__half),
              "the output tile fills the A buffers exactly");

// Loads K slice `k_slice` of the tile at (m0, n0) into the producer's next stage, once that stage is
// free, and moves the producer on. One thread.
__device__ __forceinline__ void load_slice(SharedStorage& smem, PipelineState<kStages>& write, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, int64_t m0, int64_t n0, int64_t k_slice) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on empty[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step04: announce kStageBytes on full[s] (mbarrier_arrive_expect_tx), then load the boxes at {k0, m0} of A and {k0, n0} of B (k0 = k_slice * 64) into stage s = write.stage with tma_load_2d.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes);
  tma_load_2d(smem.a[s], map_a, &smem.full[s], k0, static_cast<int32_t>(m0));
  tma_load_2d(smem.b[s], map_b, &smem.full[s], k0, static_cast<int32_t>(n0));
  // END SOLUTION step04
  write.advance();
}

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
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&smem.full[s], 1);                  // the issuing thread's arrive.expect_tx
      mbarrier_init(&smem.empty[s], kReleaseArrivals);  // lane 0 of each warp
    }
    fence_mbarrier_init();  // the inits are visible to the async proxy (TMA's complete_tx)
  }
  __syncthreads();  // nobody uses a barrier before it is initialised
  // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
  const TraceTile traced(TraceRole::cta, blockIdx.x);

  float acc[2][kAccRegs];  // rows 0-63 and 64-127 of the tile
  // Zeroed, though the tile's first wgmma runs with scale-d = 0 and ignores them: left unset, they
  // made ptxas schedule steps 5 and 6 worse, and those ran slower (steps/05_pipeline/NOTES.md).
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int i = 0; i < kAccRegs; ++i) acc[h][i] = 0.0f;

  // Producer and consumers each keep their own place in the ring (thread 0 is both).
  PipelineState<kStages> write;  // the stage the producer fills next
  PipelineState<kStages> read;   // the stage the consumers multiply next
  const int64_t k_slices = (K + kTileK - 1) / kTileK;

  // Prefetch: fill every stage before the first wgmma.
  if (threadIdx.x == 0)
    for (int64_t ks = 0; ks < kStages && ks < k_slices; ++ks) load_slice(smem, write, &map_a, &map_b, m0, n0, ks);

  for (int64_t ks = 0; ks < k_slices; ++ks) {
    // BEGIN SOLUTION step05: wait (mbarrier_wait) on full[read.stage] with the consumers' parity, read.full_parity().
    mbarrier_wait(&smem.full[read.stage], read.full_parity(), WaitTag{"full", "consumer"});
    // END SOLUTION step05

    // BEGIN SOLUTION step02: wgmma_fence_operands on both accumulator halves, then wgmma_fence; the slice's wgmmas, wgmma_f32_f16_ss (kTileN wide) per M half and k16 step on make_wgmma_desc_k_sw128 descriptors of stage read.stage, scale-d 0 only for the tile's very first wgmma (first K slice, first k16 step); then wgmma_commit_group.
    wgmma_fence_operands(acc[0]);
    wgmma_fence_operands(acc[1]);
    wgmma_fence();  // orders the accumulators' earlier accesses before the wgmmas below
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int k = 0; k < kTileK / kWgmmaK; ++k) {
        const uint32_t k_bytes = k * kWgmmaK * sizeof(__half);  // 32 B per k16 slice
        const uint64_t a_desc = make_wgmma_desc_k_sw128(smem_addr(smem.a[read.stage]) + h * kWgmmaM * 128 + k_bytes);
        const uint64_t b_desc = make_wgmma_desc_k_sw128(smem_addr(smem.b[read.stage]) + k_bytes);
        wgmma_f32_f16_ss<kTileN>(acc[h], a_desc, b_desc, /*accumulate=*/ks > 0 || k > 0);
      }
    }
    wgmma_commit_group();
    // END SOLUTION step02

    // BEGIN SOLUTION step05: wait_group 0 completes this slice's group (wgmma_wait_group<0>, then wgmma_fence_operands on both accumulator halves); lane 0 of each warp arrives on empty[read.stage] (mbarrier_arrive), and thread 0 refills that stage with slice ks + kStages if it exists (load_slice).
    wgmma_wait_group<0>();  // this warp's share of slice ks's wgmmas has finished reading the stage
    wgmma_fence_operands(acc[0]);
    wgmma_fence_operands(acc[1]);
    if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);
    const int64_t next = ks + kStages;  // the slice that goes into this stage next
    if (threadIdx.x == 0 && next < k_slices) load_slice(smem, write, &map_a, &map_b, m0, n0, next);
    // END SOLUTION step05
    read.advance();
  }
  // Every warp has passed its wait_group 0: no wgmma reads the stages any more, and the epilogue may
  // write the output tile into the A buffers.
  __syncthreads();

  const TraceEpilogue traced_epilogue;
  // Epilogue: registers -> fp16 -> shared memory (SW128 boxes, in the A buffers) -> TMA store.
  // Registers i and i+1 are adjacent columns of one row: one 4-byte store. In the SW128 layout the
  // 8 rows a warp writes per instruction fall in 8 different 16-byte chunk positions: no bank
  // conflicts.
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
      // BEGIN SOLUTION step04: column col is in box col / 64, staged in A buffer col / 64; inside it, 16-byte chunk (col % 64) / 8 of row `row` sits at sw128_offset(row, chunk), and the column 2 * (col % 8) bytes further.
      box = reinterpret_cast<char*>(smem.a[col / kStoreCols]);
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
        tma_store_2d(&map_d, smem.a[b], static_cast<int32_t>(n0 + b * kStoreCols), static_cast<int32_t>(m0));
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

}  // namespace gemm::step05::hopper
