// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 4 of 12: TMA.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Loads: the MMA thread issues two bulk tensor copies per K slice (`tma_load_2d`, A and B,
//      128x64 each). TMA writes the swizzled layout itself and fills zeros past the edges, so
//      `copy_tile_sw128` and its edge checks are gone.
//   2. The copies complete on the mbarrier `tma2mma` (TMA to MMA): the issuing thread's
//      `mbarrier_arrive_expect_tx` announces `kStageBytes`, and the phase completes once all of
//      them have landed; only the MMA thread needs the data, so only it waits (`mbarrier_wait`).
//   3. The tensor maps (shape, strides, box, swizzle; `make_tensor_map_2d`) are built on the host
//      and passed as `__grid_constant__` `CUtensorMap` parameters; thread 0 prefetches them
//      (`tma_prefetch_descriptor`).
//   4. Store: TMEM -> registers -> fp16 -> two 64-column SW128 boxes in shared memory (`smem.d`,
//      `kStoreBoxes`) -> `tma_store_2d`, which clips at M and N. The stores are fenced into the
//      async proxy first, and thread 0 waits for them to have read shared memory before the CTA
//      exits (`tma_store_commit_group`, `tma_store_wait_group_read`).
//   5. The staging buffer makes each CTA large enough that shared memory, not TMEM, limits the CTAs
//      per SM, so `tmem_limited_smem_bytes` is no longer needed.
//   6. A CTA barrier per slice (`__syncthreads`) where step 3's copies ended in one: it keeps every
//      thread within one phase of `mma_done`.
#include <cuda.h>  // CUtensorMap
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
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/trace.cuh"
#include "common/warp.cuh"

namespace gemm::step04::blackwell {

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
// The output tile is stored as boxes of 64 columns: a SW128 box row is at most 128 bytes.
constexpr int kStoreCols = 64;
constexpr int kStoreBoxes = kTileN / kStoreCols;
// Bytes one K slice brings into shared memory: what tma2mma expects per phase. TMA always
// delivers the whole box, the zeros it fills past the edges included.
constexpr uint32_t kStageBytes = (kTileM + kTileN) * kTileK * sizeof(__half);
static_assert(kStageBytes == 32768, "A 128x64 + B 128x64 fp16");

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
struct alignas(1024) SharedStorage {
  __half a[kTileM * kTileK];                   // 16 KB, written by TMA
  __half b[kTileN * kTileK];                   // 16 KB, written by TMA
  __half d[kStoreBoxes][kTileM * kStoreCols];  // 2 x 16 KB: the fp16 output tile, read by TMA
  uint64_t tma2mma;                            // mbarrier: the K slice has landed
  uint64_t mma_done;                           // mbarrier: tcgen05.commit, once the MMAs completed
  uint32_t tmem_base;                          // tcgen05.alloc writes the accumulator's address here
};
static_assert(sizeof(SharedStorage::a) % 1024 == 0 && sizeof(SharedStorage::b) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");
// Shared memory alone keeps the CTAs on an SM within the accumulators TMEM holds, so no
// tcgen05.alloc waits for a neighbour's columns (step 3 padded its request to make sure).
static_assert(tmem_limited_smem_bytes(smem_bytes<SharedStorage>(), kTmemColumns) == smem_bytes<SharedStorage>(),
              "TMEM must not hold fewer accumulators than shared memory holds CTAs");

// Two fp32 accumulator cells (raw TMEM bits) rounded to fp16 and packed as D stores them: the
// lower column in the low half.
__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
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

  // Setup. TMEM is allocated by one whole warp (tcgen05.alloc is .sync.aligned) and freed by the
  // same warp at the end; TMEM is not zeroed, the first MMA overwrites it.
  if (warp_id() == 0) {
    tmem_alloc<1, kTmemColumns>(&smem.tmem_base);
    tmem_relinquish_alloc_permit<1>();  // no more allocations here: a waiting CTA may allocate
  }
  if (threadIdx.x == 0) {
    // The maps live in kernel-parameter memory; fetching them into the TMA unit's descriptor
    // cache now hides that latency behind the barrier below.
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_d);
    mbarrier_init(&smem.tma2mma, 1);   // one arrival per phase: the issuing thread's arrive.expect_tx
    mbarrier_init(&smem.mma_done, 1);  // one arrival completes a phase: the tcgen05.commit
    fence_mbarrier_init();             // the inits are visible to the async proxy (TMA, commit)
  }
  // The barrier publishes the mbarrier inits and the TMEM address (an ordinary shared-memory write
  // by tcgen05.alloc). The tcgen05 fences around it order warp 0's alloc before every thread's
  // later tcgen05 operations (the MMAs, the loads).
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc = smem.tmem_base;  // lane 0, first allocated column
  // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
  const TraceTile traced(TraceRole::cta, blockIdx.x);

  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
    // BEGIN SOLUTION step04: thread 0 announces kStageBytes on `tma2mma` (mbarrier_arrive_expect_tx), loads the boxes at {k0, m0} of A and {k0, n0} of B (tma_load_2d), and waits on `tma2mma` (mbarrier_wait, parity = slice index & 1) before it issues the MMAs; tcgen05_fence_after_thread_sync after the wait.
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_tx(&smem.tma2mma, kStageBytes);
      tma_load_2d(smem.a, &map_a, &smem.tma2mma, static_cast<int32_t>(k0), static_cast<int32_t>(m0));
      tma_load_2d(smem.b, &map_b, &smem.tma2mma, static_cast<int32_t>(k0), static_cast<int32_t>(n0));
      // The phase completes once the arrival and all 32768 bytes are in. The tiles were written
      // by the async proxy, so no proxy fence is needed before the MMAs read them.
      mbarrier_wait(&smem.tma2mma, static_cast<uint32_t>(k0 / kTileK) & 1, WaitTag{"tma2mma", "mma"});
      tcgen05_fence_after_thread_sync();  // orders the MMAs below after the wait
    }
    // END SOLUTION step04

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
    // Step 3's copies ended in a CTA barrier; the TMA loads do not. It still has to be there: it
    // keeps every thread within one phase of mma_done. A thread two phases behind would wait on a
    // parity whose phase has come round again, and hang.
    __syncthreads();
  }

  // tcgen05.ld is .sync.aligned: the whole warp must execute it together. The mbarrier spin loops
  // above may leave the lanes diverged (each lane retries on its own), so reconverge explicitly.
  warp_sync();

  const TraceEpilogue traced_epilogue;
  // Epilogue: TMEM -> registers -> fp16 -> shared memory (SW128 boxes) -> TMA store, 32 columns
  // per tcgen05.ld. Each thread writes 16-byte chunks of its own row; the 8 rows of 8 consecutive
  // lanes land in 8 different chunk positions of the swizzle: no bank conflicts.
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
    for (int j = 0; j < kLdColumns; j += 8) {  // 8 fp16 = one 16-byte chunk
      const uint4 packed = make_uint4(pack_half2(v[j], v[j + 1]), pack_half2(v[j + 2], v[j + 3]),
                                      pack_half2(v[j + 4], v[j + 5]), pack_half2(v[j + 6], v[j + 7]));
      const int col = c + j;
      char* box = nullptr;  // the 64-column box holding column col
      uint32_t offset = 0;  // byte offset of (row, col) inside it
      // BEGIN SOLUTION step04: column col (a multiple of 8) is in box col / 64; inside it, it starts 16-byte chunk (col % 64) / 8 of row `row`, at sw128_offset(row, chunk).
      box = reinterpret_cast<char*>(smem.d[col / kStoreCols]);
      offset = sw128_offset(row, (col % kStoreCols) / 8);
      // END SOLUTION step04
      *reinterpret_cast<uint4*>(box + offset) = packed;
    }
  }
  // TMA reads shared memory through the async proxy; the stores above were generic-proxy stores.
  // Each writer fences its own stores, then the barrier waits for every writer. The same barrier
  // orders every thread's tcgen05.ld (completed: wait::ld above) before warp 0's dealloc.
  fence_proxy_async_shared();
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();

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

  // Teardown: no thread reads the accumulator any more (the barrier above). tcgen05.dealloc is
  // .sync.aligned: lane 0 of warp 0 alone ran the store above, so the warp reconverges first.
  if (warp_id() == 0) {
    warp_sync();
    tmem_dealloc<1, kTmemColumns>(tmem_acc);
  }
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const int64_t tiles = ((p.m + kTileM - 1) / kTileM) * ((p.n + kTileN - 1) / kTileN);
  if (tiles > kMaxDim)
    return Status::failure("shape: " + std::to_string(tiles) + " tiles exceed the grid's x limit of 2^31 - 1");
  // The tensor maps: A (M x K) and B (N x K) in boxes of one K slice of a tile, D (M x N) in boxes
  // of 64 columns of a tile; all in the 128-byte swizzle that the MMA descriptors describe.
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

}  // namespace gemm::step04::blackwell
