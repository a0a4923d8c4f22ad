// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 3 of 12: tiling.
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
//      `rows`, `K`), and stores past M or N are skipped (`g_row < M`); the MMA and
//      `tmem_ld_32x32b_x32` still run on the whole tile (tcgen05.ld is warp-wide).
//   3. Offsets are 64-bit (`int64_t` `m0`, `n0`, `g_row`, `g_col`): row x K passes 2^31 for large
//      matrices.
//   4. Several CTAs share an SM's 512 TMEM columns: the launch asks for enough shared memory
//      (`tmem_limited_smem_bytes`) that no more CTAs fit an SM than their allocations do, so no
//      `tmem_alloc` waits for a neighbour.
//   5. Warp 0 reconverges (`warp_sync`) before `tmem_dealloc`, which is `.sync.aligned`: the
//      stores' edge checks may leave its lanes apart.
#include <cuda_fp16.h>

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/fence.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/problem.h"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/trace.cuh"
#include "common/warp.cuh"

namespace gemm::step03::blackwell {

using namespace gemm::blackwell;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;      // one 128-byte swizzle atom of fp16
constexpr int kThreads = 128;   // 4 warps: one per quarter of the TMEM lanes
constexpr int kLdColumns = 32;  // columns per tcgen05.ld.32x32b.x32
// The fp32 accumulator takes one TMEM column per output column; an allocation is a power of 2
// of at least 32 columns, and always spans all 128 lanes.
constexpr uint32_t kTmemColumns = kTileN;
static_assert(tmem_alloc_columns_ok(kTmemColumns), "tcgen05.alloc: a power of 2 in [32, 512] columns");
// One MMA covers the whole tile: M128 N128 (K16), fp16 x fp16 -> fp32, A and B K-major. A
// constant expression, so an illegal shape would not compile. 0x08200010.
constexpr uint32_t kIdesc = make_idesc_f16(/*cta_group=*/1, kTileM, kTileN);

// Both tiles are rows x 128 bytes in the SW128 layout; each starts on a 1024-byte boundary
// (the swizzle pattern repeats every 8 rows = 1024 bytes, and the descriptors' base offset is 0).
struct alignas(1024) SharedStorage {
  __half a[kTileM * kTileK];  // 16 KB
  __half b[kTileN * kTileK];  // 16 KB
  uint64_t mma_done;          // mbarrier: tcgen05.commit arrives once the MMAs have completed
  uint32_t tmem_base;         // tcgen05.alloc writes the accumulator's TMEM address here
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

// Two fp32 accumulator cells (raw TMEM bits) rounded to fp16 and packed as D stores them: the
// lower column in the low half.
__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
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

  // Setup. TMEM is allocated by one whole warp (tcgen05.alloc is .sync.aligned) and freed by the
  // same warp at the end; TMEM is not zeroed, the first MMA overwrites it.
  if (warp_id() == 0) {
    tmem_alloc<1, kTmemColumns>(&smem.tmem_base);
    tmem_relinquish_alloc_permit<1>();  // no more allocations here: a waiting CTA may allocate
  }
  if (threadIdx.x == 0) {
    mbarrier_init(&smem.mma_done, 1);  // one arrival completes a phase: the tcgen05.commit
    fence_mbarrier_init();             // the init is visible to the async proxy before any commit
  }
  // The barrier publishes the mbarrier init and the TMEM address (an ordinary shared-memory write
  // by tcgen05.alloc). The tcgen05 fences around it order warp 0's alloc before every thread's
  // later tcgen05 operations (the MMAs, the loads).
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc = smem.tmem_base;  // lane 0, first allocated column
  // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
  const TraceTile traced(TraceRole::cta, blockIdx.x);

  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    copy_tile_sw128(smem.a, A, M, K, m0, k0);
    copy_tile_sw128(smem.b, B, N, K, n0, k0);
    // tcgen05.mma reads shared memory through the async proxy; the copies above were generic-proxy
    // stores. Each writer fences its own stores, then the barrier waits for every writer, and
    // tcgen05.fence::after_thread_sync orders the MMAs below after the barrier.
    fence_proxy_async_shared();
    __syncthreads();
    tcgen05_fence_after_thread_sync();

    // BEGIN SOLUTION step02: thread 0 issues the slice's MMAs, one tcgen05_mma_f16<1> per k16 step on make_smem_desc_k_sw128 descriptors, enable_input_d false only for the tile's very first MMA (first K slice, first k16 step), then tcgen05_commit<1> to mma_done; every thread waits on mma_done (mbarrier_wait), which completes once per slice, so slice s waits on parity s & 1.
    // One thread issues the MMAs (tcgen05.mma is not a warp-wide instruction). They run
    // asynchronously and in issue order on the same accumulator.
    if (threadIdx.x == 0) {
#pragma unroll
      for (int k = 0; k < kTileK / kMmaK; ++k) {
        const uint32_t k_bytes = k * kMmaK * sizeof(__half);  // 32 B per k16 slice
        const uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(smem.a) + k_bytes);
        const uint64_t b_desc = make_smem_desc_k_sw128(smem_addr(smem.b) + k_bytes);
        tcgen05_mma_f16<1>(tmem_acc, a_desc, b_desc, kIdesc, /*enable_input_d=*/k0 > 0 || k > 0);
      }
      tcgen05_commit<1>(&smem.mma_done);  // one arrive once every MMA issued so far has completed
    }
    // Only the mbarrier tells that the MMAs have completed (a CTA barrier would prove only that
    // they were issued): after this wait they no longer read shared memory, so the next slice may
    // overwrite it, and after the last slice the accumulator is final.
    const uint32_t phase = static_cast<uint32_t>(k0 / kTileK) & 1;
    mbarrier_wait(&smem.mma_done, phase, WaitTag{"mma_done", "k_loop"});
    // END SOLUTION step02
    tcgen05_fence_after_thread_sync();  // orders later tcgen05 operations (MMA, ld) after the wait
  }

  // tcgen05.ld is .sync.aligned: the whole warp must execute it together. The mbarrier spin loop
  // above may leave the lanes diverged (each lane retries on its own), so reconverge explicitly.
  warp_sync();

  const TraceEpilogue traced_epilogue;
  // Epilogue: TMEM -> registers -> fp16 -> global, 32 columns per tcgen05.ld.
  const int warp = warp_id();
#pragma unroll
  for (int c = 0; c < kTileN; c += kLdColumns) {
    int row = 0;
    uint32_t taddr = 0;
    // BEGIN SOLUTION step01: warp w may read only TMEM lanes 32*(w%4)..+31 (tmem_lane_base(warp)); thread t of the warp gets lane base + t (lane_id), i.e. tile row base + t; the warp's address at column c is tmem_addr(tmem_acc, lane base, c).
    row = static_cast<int>(tmem_lane_base(warp)) + lane_id();
    taddr = tmem_addr(tmem_acc, tmem_lane_base(warp), c);
    // END SOLUTION step01
    uint32_t v[kLdColumns];  // columns c .. c+31 of this thread's row, fp32 bits
    tmem_ld_32x32b_x32(taddr, v);
    tmem_wait_ld();          // the loaded registers are valid only after the wait
    tmem_fence_operands(v);  // ... and the compiler must not read them before it
#pragma unroll
    for (int j = 0; j < kLdColumns; j += 8) {  // 8 fp16 = one 16-byte store
      const uint4 packed = make_uint4(pack_half2(v[j], v[j + 1]), pack_half2(v[j + 2], v[j + 3]),
                                      pack_half2(v[j + 4], v[j + 5]), pack_half2(v[j + 6], v[j + 7]));
      const int64_t g_row = m0 + row;
      const int64_t g_col = n0 + c + j;
      // BEGIN SOLUTION step03: store only inside D (g_col is a multiple of 8 and N a multiple of 8: the 16-byte chunk is wholly in or out).
      if (g_row < M && g_col < N) *reinterpret_cast<uint4*>(D + g_row * N + g_col) = packed;
      // END SOLUTION step03
    }
  }

  // Teardown. Every thread's tcgen05.ld has completed (wait::ld above); the fences and the barrier
  // order them all before warp 0's dealloc, so no warp still reads the columns being freed.
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp_id() == 0) {
    // tcgen05.dealloc is .sync.aligned, and the epilogue's edge checks may have left the lanes apart.
    warp_sync();
    tmem_dealloc<1, kTmemColumns>(tmem_acc);
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
  // This CTA needs ~33 KB of shared memory, so six would fit on an SM, but TMEM holds only four
  // accumulators of kTmemColumns: a fifth CTA would spin in tcgen05.alloc until one of the four
  // freed its columns. Asking for more shared memory keeps the SM at four.
  cfg.smem_bytes = tmem_limited_smem_bytes(smem_bytes<SharedStorage>(), kTmemColumns);
  cfg.stream = stream;
  return launch(kernel, cfg, p.a, p.b, p.d, p.m, p.n, p.k);
}

}  // namespace gemm::step03::blackwell
