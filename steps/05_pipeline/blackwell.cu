// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 5 of 12: pipelining.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Two stages (`kStages`): two buffers of A and B, each with a `tma2mma` barrier (its slice has
//      landed: the arrive.expect_tx and TMA's bytes) and an `mma2tma` barrier (the `tcgen05_commit`
//      after the MMAs that read the stage: the stage is free). `PipelineState`
//      (common/pipeline.cuh, which arrives with this lesson) gives each side its stage and the
//      parity it waits on.
//   2. Thread 0 runs the whole K loop as producer and MMA issuer: it fills both stages
//      (`load_slice`), then per slice waits on `tma2mma`, issues the MMAs, commits them to the
//      stage's `mma2tma`, and refills that stage with slice k + 2 (`next`). Two loads are in
//      flight, but the refill waits for slice k's MMAs, so the thread issues slice k + 1's only
//      once the tensor core has drained slice k.
//   3. `mma2ld` (MMA to the epilogue's tcgen05.ld, in place of `mma_done`): after the last slice
//      one more `tcgen05_commit` tells the epilogue that the accumulator is final. The other
//      threads wait on it alone; step 4's per-slice `__syncthreads` is gone.
//   4. The producer's tail: before the CTA may exit, thread 0 waits on `mma2tma` for the last
//      slices' commits, which no refill waited for: they arrive asynchronously, on barriers that
//      must still exist.
//   5. The epilogue stages the output tile in the A buffers (`smem.a`), free once every MMA has
//      completed, instead of a buffer of its own: a third buffer would leave room for two CTAs per
//      SM instead of three.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/fence.cuh"
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

namespace gemm::step05::blackwell {

using namespace gemm::blackwell;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;      // one 128-byte swizzle atom of fp16
constexpr int kThreads = 128;   // 4 warps: one per quarter of the TMEM lanes
constexpr int kLdColumns = 32;  // columns per tcgen05.ld.32x32b.x32
constexpr int kStages = 2;      // two K slice buffers, each refilled as soon as its MMAs complete
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
  __half a[kStages][kTileM * kTileK];  // 2 x 16 KB, written by TMA
  __half b[kStages][kTileN * kTileK];  // 2 x 16 KB, written by TMA
  uint64_t tma2mma[kStages];           // mbarrier: the stage's K slice has landed
  uint64_t mma2tma[kStages];           // mbarrier: the MMAs reading the stage completed
  uint64_t mma2ld;                     // mbarrier: every MMA of the tile completed
  uint32_t tmem_base;                  // tcgen05.alloc writes the accumulator's address here
};
static_assert(sizeof(SharedStorage::a[0]) % 1024 == 0 && sizeof(SharedStorage::b[0]) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");
// Shared memory alone keeps the CTAs on an SM within the accumulators TMEM holds, so no
// tcgen05.alloc waits for a neighbour's columns (step 3 padded its request to make sure).
static_assert(tmem_limited_smem_bytes(smem_bytes<SharedStorage>(), kTmemColumns) == smem_bytes<SharedStorage>(),
              "TMEM must not hold fewer accumulators than shared memory holds CTAs");
// No staging buffer of its own for the epilogue: once the K loop is over, both stages are free, and
// the output tile goes into the two A buffers (exactly its two 64-column boxes). A third buffer
// would leave room for two CTAs per SM instead of three: fewer loads in flight per SM, which on
// the hopper track measured slower than the second stage gains (NOTES.md).
static_assert(sizeof(SharedStorage::a) == kStoreBoxes * kTileM * kStoreCols * sizeof(__half),
              "the output tile fills the A buffers exactly");

// Two fp32 accumulator cells (raw TMEM bits) rounded to fp16 and packed as D stores them: the
// lower column in the low half.
__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

// Loads K slice `k_slice` of the tile at (m0, n0) into the producer's next stage, once that stage is
// free, and moves the producer on. One thread.
__device__ __forceinline__ void load_slice(SharedStorage& smem, PipelineState<kStages>& write, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, int64_t m0, int64_t n0, int64_t k_slice) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on mma2tma[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step04: announce kStageBytes on tma2mma[s] (mbarrier_arrive_expect_tx), then load the boxes at {k0, m0} of A and {k0, n0} of B (k0 = k_slice * 64) into stage s = write.stage with tma_load_2d.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  mbarrier_arrive_expect_tx(&smem.tma2mma[s], kStageBytes);
  tma_load_2d(smem.a[s], map_a, &smem.tma2mma[s], k0, static_cast<int32_t>(m0));
  tma_load_2d(smem.b[s], map_b, &smem.tma2mma[s], k0, static_cast<int32_t>(n0));
  // END SOLUTION step04
  write.advance();
}

// The K loop of the tile, in one thread: producer and MMA issuer at once, with a place in the ring
// for each role. Every slice is loaded, multiplied into the accumulator and released; then one
// commit tells the epilogue that the accumulator is final.
__device__ __forceinline__ void mma_tile(SharedStorage& smem, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                         int64_t m0, int64_t n0, int64_t k_slices, uint32_t tmem_acc) {
  PipelineState<kStages> write;  // the stage the producer fills next
  PipelineState<kStages> read;   // the stage the MMAs read next

  // Prefetch: fill every stage before the first MMA.
  for (int64_t ks = 0; ks < kStages && ks < k_slices; ++ks) load_slice(smem, write, map_a, map_b, m0, n0, ks);

  for (int64_t ks = 0; ks < k_slices; ++ks) {
    // BEGIN SOLUTION step05: wait (mbarrier_wait) on tma2mma[read.stage] with the consumer's parity, read.full_parity(); then tcgen05_fence_after_thread_sync.
    mbarrier_wait(&smem.tma2mma[read.stage], read.full_parity(), WaitTag{"tma2mma", "mma"});
    // Orders the MMAs below after the wait.
    tcgen05_fence_after_thread_sync();
    // END SOLUTION step05

    // BEGIN SOLUTION step02: the slice's MMAs, one tcgen05_mma_f16<1> per k16 step on make_smem_desc_k_sw128 descriptors of stage read.stage; enable_input_d is false only for the tile's very first MMA (first K slice, first k16 step).
    // tcgen05.mma is issued by one thread and runs asynchronously, in issue order on the same
    // accumulator: the MMAs of consecutive slices queue up behind each other.
#pragma unroll
    for (int k = 0; k < kTileK / kMmaK; ++k) {
      const uint32_t k_bytes = k * kMmaK * sizeof(__half);  // 32 B per k16 slice
      const uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(smem.a[read.stage]) + k_bytes);
      const uint64_t b_desc = make_smem_desc_k_sw128(smem_addr(smem.b[read.stage]) + k_bytes);
      tcgen05_mma_f16<1>(tmem_acc, a_desc, b_desc, kIdesc, /*enable_input_d=*/ks > 0 || k > 0);
    }
    // END SOLUTION step02

    // BEGIN SOLUTION step05: tcgen05_commit<1> to mma2tma[read.stage] releases the stage once these MMAs complete; then refill this same stage with slice ks + kStages if it exists (load_slice, which waits for that release).
    tcgen05_commit<1>(&smem.mma2tma[read.stage]);
    const int64_t next = ks + kStages;  // the slice that goes into this stage next
    if (next < k_slices) load_slice(smem, write, map_a, map_b, m0, n0, next);
    // END SOLUTION step05
    read.advance();
  }
  // BEGIN SOLUTION step05: one more commit, tcgen05_commit<1> to mma2ld: it arrives once every MMA of the tile has completed.
  tcgen05_commit<1>(&smem.mma2ld);
  // END SOLUTION step05
  // The tail: the commits to mma2tma of the last slices were never waited on (no load followed
  // them). Their arrivals are asynchronous and must land before the CTA's barriers and TMEM go
  // away: wait for the ring's next kStages positions (one that was never filled passes at once).
  for (int s = 0; s < kStages; ++s) {
    mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer tail"});
    write.advance();
  }
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
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&smem.tma2mma[s], 1);  // the issuing thread's arrive.expect_tx
      mbarrier_init(&smem.mma2tma[s], 1);  // the tcgen05.commit after the stage's MMAs
    }
    mbarrier_init(&smem.mma2ld, 1);  // the tcgen05.commit after the tile's last MMAs
    fence_mbarrier_init();           // the inits are visible to the async proxy (TMA, commit)
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

  const int64_t k_slices = (K + kTileK - 1) / kTileK;
  // Thread 0 runs the K loop; every thread then waits for the accumulator.
  if (threadIdx.x == 0) mma_tile(smem, &map_a, &map_b, m0, n0, k_slices, tmem_acc);
  // BEGIN SOLUTION step05: every thread waits on mma2ld (mbarrier_wait); it completes once per tile, so this is its phase 0 (parity 0).
  // Only the mbarrier tells that the MMAs have completed (a CTA barrier would prove only that
  // they were issued).
  mbarrier_wait(&smem.mma2ld, 0, WaitTag{"mma2ld", "epilogue"});
  // END SOLUTION step05
  tcgen05_fence_after_thread_sync();  // orders the tcgen05.ld below after the wait

  // tcgen05.ld is .sync.aligned: the whole warp must execute it together. Lane 0 of warp 0 ran
  // the K loop while the other lanes spun on mma2ld, so reconverge explicitly.
  warp_sync();

  const TraceEpilogue traced_epilogue;
  // Epilogue: TMEM -> registers -> fp16 -> shared memory (SW128 boxes, in the A buffers: every MMA
  // has completed, so none reads them any more) -> TMA store, 32 columns per tcgen05.ld. Each
  // thread writes 16-byte chunks of its own row; the 8 rows of 8 consecutive lanes land in 8
  // different chunk positions of the swizzle: no bank conflicts.
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
      // BEGIN SOLUTION step04: column col (a multiple of 8) is in box col / 64, staged in A buffer col / 64; inside it, it starts 16-byte chunk (col % 64) / 8 of row `row`, at sw128_offset(row, chunk).
      box = reinterpret_cast<char*>(smem.a[col / kStoreCols]);
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
        tma_store_2d(&map_d, smem.a[b], static_cast<int32_t>(n0 + b * kStoreCols), static_cast<int32_t>(m0));
    tma_store_commit_group();
    // The CTA's shared memory is released when it exits: the stores must have read it by then.
    // (Their writes to D may still be in flight; the kernel's completion covers them.)
    tma_store_wait_group_read<0>();
  }
  // END SOLUTION step04

  // Teardown: no thread reads the accumulator any more (the barrier above), and every commit has
  // arrived (the tail). tcgen05.dealloc is .sync.aligned: lane 0 of warp 0 alone ran the store
  // above, so the warp reconverges first.
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

}  // namespace gemm::step05::blackwell
