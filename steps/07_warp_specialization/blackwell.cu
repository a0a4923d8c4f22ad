// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 7 of 12: warp specialization.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Six warps with one job each, and the kernel a short dispatch on the warp: one elected thread
//      of `kProducerWarp` runs `producer`, which streams every K slice of every tile of this CTA
//      into the ring, waiting only for a free stage, then runs the tail; one elected thread of
//      `kMmaWarp` runs `mma`, which calls `mma_tile` for each tile; warps 0-3 (`kEpilogueWarps`)
//      run `epilogue`, which calls `epilogue_tile`.
//   2. The MMA thread no longer refills stages, so it no longer waits for its own commits on
//      `mma2tma`: nothing holds its issue back but a slice that has not landed (`tma2mma`), and
//      the tensor core is not drained between slices.
//   3. The accumulator gets a barrier each way: `mma2ld` (the tile's MMAs have completed) and
//      `ld2mma` (the epilogue has read it, so the next tile's MMAs may overwrite it), in place of
//      step 6's CTA barrier at the end of each tile.
//   4. The epilogue reads its whole row from TMEM (`v`) and releases the accumulator before its
//      shared-memory and TMA stores, and stages the tile in a buffer of its own (`smem.d`): the
//      producer is filling the stages with the next tile's slices meanwhile. It syncs on a named
//      barrier of its own (`kEpilogueBarrier`, `named_barrier_sync`). The staging buffer leaves
//      room for two CTAs per SM, not three.
//   5. Teardown after a CTA barrier (`__syncthreads`) between tcgen05 fences
//      (`tcgen05_fence_before_thread_sync`): every role has finished its tcgen05 work before warp 0
//      frees the TMEM (`tmem_dealloc`).
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/device.cuh"
#include "common/fence.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/named_barrier.cuh"
#include "common/pipeline.cuh"
#include "common/problem.h"
#include "common/scheduler.cuh"
#include "common/smem.cuh"
#include "common/swizzle.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/trace.cuh"
#include "common/warp.cuh"

namespace gemm::step07::blackwell {

using namespace gemm::blackwell;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;      // one 128-byte swizzle atom of fp16
constexpr int kLdColumns = 32;  // columns per tcgen05.ld.32x32b.x32
constexpr int kStages = 2;      // two K slice buffers (step 8 deepens the ring)
// Six warps: the epilogue warpgroup first (warps 0-3: warp w % 4 reaches TMEM lanes 32 (w % 4)..),
// then the producer and the MMA warp.
constexpr int kEpilogueWarps = 4;
constexpr int kProducerWarp = 4;
constexpr int kMmaWarp = 5;
constexpr int kThreads = 6 * kWarpSize;
constexpr int kEpilogueThreads = kEpilogueWarps * kWarpSize;
// Named barrier of the epilogue warpgroup (id 0 is __syncthreads, which would wait for the producer
// and MMA warps too).
constexpr uint32_t kEpilogueBarrier = 1;
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
// Tile rows per L2 group of the scheduler: the hopper track's measured value (step 6's README.md).
constexpr int kGroupM = 16;

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
struct alignas(1024) SharedStorage {
  __half a[kStages][kTileM * kTileK];          // 2 x 16 KB, written by TMA
  __half b[kStages][kTileN * kTileK];          // 2 x 16 KB, written by TMA
  __half d[kStoreBoxes][kTileM * kStoreCols];  // 2 x 16 KB: the epilogue's output tile, read by TMA
  uint64_t tma2mma[kStages];                   // mbarrier: the stage's K slice has landed
  uint64_t mma2tma[kStages];                   // mbarrier: the MMAs reading the stage completed
  uint64_t mma2ld;                             // mbarrier: every MMA of the tile completed
  uint64_t ld2mma;                             // mbarrier: the epilogue has read the accumulator
  uint32_t tmem_base;                          // tcgen05.alloc writes the accumulator's address here
};
static_assert(sizeof(SharedStorage::a[0]) % 1024 == 0 && sizeof(SharedStorage::b[0]) % 1024 == 0 &&
                  sizeof(SharedStorage::d[0]) % 1024 == 0,
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

// The producer: one thread. Walks this CTA's tiles in the scheduler's order and loads every K
// slice of each into the ring; load_slice waits for a free stage, nothing else holds it back.
__device__ __forceinline__ void producer(SharedStorage& smem, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                         const TileScheduler& sched, int64_t k_slices) {
  PipelineState<kStages> write;  // the stage the producer fills next, across tiles
  // BEGIN SOLUTION step07: for each of this CTA's work units (sched.begin(blockIdx.x, gridDim.x)), load its tile's K slices (origin tile.m * 128, tile.n * 128) with load_slice, the i-th being k_slice_in_turn(turn, i, 0, k_slices) with turn = cursor.turn(), worked out once per tile; a TraceTile (TraceRole::producer, the unit) spans each tile for the timeline.
  for (WorkCursor cursor = sched.begin(blockIdx.x, gridDim.x); cursor.valid(); cursor.advance()) {
    const Tile tile = sched.tile(cursor.unit, 0);
    const int64_t turn = cursor.turn();  // once per tile: a 64-bit division
    const TraceTile traced(TraceRole::producer, cursor.unit);
    for (int64_t i = 0; i < k_slices; ++i)
      load_slice(smem, write, map_a, map_b, tile.m * kTileM, tile.n * kTileN, k_slice_in_turn(turn, i, 0, k_slices));
  }
  // END SOLUTION step07
  // BEGIN SOLUTION step07: the tail: for the next kStages positions of the ring, wait (mbarrier_wait) on mma2tma[write.stage] with write.empty_parity() and advance write (the commits of the last slices, which no load waited for) before the CTA may tear down.
  // The commits of the last kStages slices were never waited on: no load followed them. Their
  // arrivals on mma2tma are asynchronous, and must land before the barriers' shared memory goes
  // away and TMEM is released. A position of the ring that was never filled passes at once (the
  // producer's parity of a fresh barrier).
  for (int s = 0; s < kStages; ++s) {
    mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer tail"});
    write.advance();
  }
  // END SOLUTION step07
}

// The MMAs of one tile: every K slice from the ring into the accumulator, each stage released by a
// commit once its MMAs complete; then one commit tells the epilogue that the accumulator is final.
// One thread.
__device__ __forceinline__ void mma_tile(SharedStorage& smem, PipelineState<kStages>& read, int64_t k_slices,
                                         uint32_t tmem_acc) {
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

    // BEGIN SOLUTION step05: tcgen05_commit<1> to mma2tma[read.stage] releases the stage once these MMAs complete.
    tcgen05_commit<1>(&smem.mma2tma[read.stage]);
    // END SOLUTION step05
    read.advance();
  }
  // BEGIN SOLUTION step05: one more commit, tcgen05_commit<1> to mma2ld: it arrives once every MMA of the tile has completed.
  tcgen05_commit<1>(&smem.mma2ld);
  // END SOLUTION step05
}

// The epilogue of one tile, at (m0, n0): read the accumulator (TMEM -> registers), release it, then
// fp16 -> the staging buffer (SW128 boxes) -> TMA store. The epilogue warpgroup; thread t owns row t.
__device__ __forceinline__ void epilogue_tile(SharedStorage& smem, const CUtensorMap* map_d, int64_t m0, int64_t n0,
                                              int64_t N, uint32_t tmem_acc) {
  const TraceEpilogue traced_epilogue;
  const int t = static_cast<int>(threadIdx.x);  // 0 .. 127: the epilogue warps come first
  const int warp = warp_id();
  // TMEM -> registers, the whole row: 4 x 32 columns.
  uint32_t v[kTileN / kLdColumns][kLdColumns];  // columns 32 c .. 32 c + 31 of this thread's row, fp32 bits
#pragma unroll
  for (int c = 0; c < kTileN / kLdColumns; ++c) {
    uint32_t taddr = 0;
    // BEGIN SOLUTION step01: warp w may read only TMEM lanes 32*(w%4)..+31 (tmem_lane_base(warp)): chunk c of its rows is at tmem_addr(tmem_acc, that lane base, column c * kLdColumns), and thread t of the warp gets lane base + t, i.e. tile row base + t.
    taddr = tmem_addr(tmem_acc, tmem_lane_base(warp), c * kLdColumns);
    // END SOLUTION step01
    tmem_ld_32x32b_x32(taddr, v[c]);
  }
  tmem_wait_ld();  // the loaded registers are valid only after the wait
#pragma unroll
  for (int c = 0; c < kTileN / kLdColumns; ++c) tmem_fence_operands(v[c]);  // ... and not read before it

  // BEGIN SOLUTION step07: release the accumulator: tcgen05_fence_before_thread_sync (orders the completed tcgen05.ld before the arrive), then every epilogue thread arrives on ld2mma (mbarrier_arrive).
  tcgen05_fence_before_thread_sync();
  mbarrier_arrive(&smem.ld2mma);
  // END SOLUTION step07

  // BEGIN SOLUTION step07: the previous tile's TMA store may still be reading the staging buffer: thread 0 waits for it (tma_store_wait_group_read<0>), then the epilogue warpgroup syncs on its named barrier (named_barrier_sync) before anyone writes.
  if (t == 0) tma_store_wait_group_read<0>();
  named_barrier_sync(kEpilogueBarrier, kEpilogueThreads);
  // END SOLUTION step07

  // Registers -> fp16 -> the staging buffer. Each thread writes 16-byte chunks of its own row; the
  // 8 rows of 8 consecutive lanes land in 8 different chunk positions of the swizzle: no bank
  // conflicts.
  const int row = t;
#pragma unroll
  for (int c = 0; c < kTileN / kLdColumns; ++c) {
#pragma unroll
    for (int j = 0; j < kLdColumns; j += 8) {  // 8 fp16 = one 16-byte chunk
      const uint32_t* w = &v[c][j];
      const uint4 packed =
          make_uint4(pack_half2(w[0], w[1]), pack_half2(w[2], w[3]), pack_half2(w[4], w[5]), pack_half2(w[6], w[7]));
      const int col = c * kLdColumns + j;
      char* box = nullptr;  // the 64-column box holding column col
      uint32_t offset = 0;  // byte offset of (row, col) inside it
      // BEGIN SOLUTION step04: column col (a multiple of 8) is in box col / 64 of the staging buffer; inside it, it starts 16-byte chunk (col % 64) / 8 of row `row`, at sw128_offset(row, chunk).
      box = reinterpret_cast<char*>(smem.d[col / kStoreCols]);
      offset = sw128_offset(row, (col % kStoreCols) / 8);
      // END SOLUTION step04
      *reinterpret_cast<uint4*>(box + offset) = packed;
    }
  }
  // TMA reads shared memory through the async proxy; the stores above were generic-proxy stores.
  // Each writer fences its own stores, then the barrier waits for every writer.
  fence_proxy_async_shared();
  named_barrier_sync(kEpilogueBarrier, kEpilogueThreads);

  // BEGIN SOLUTION step04: thread 0 stores box b at {n0 + 64 b, m0} with tma_store_2d (skip a box wholly past N; TMA clips the rest) and commits the bulk group (tma_store_commit_group); the next tile's epilogue waits for it to have read the buffer.
  if (t == 0) {
#pragma unroll
    for (int b = 0; b < kStoreBoxes; ++b)
      if (n0 + b * kStoreCols < N)
        tma_store_2d(map_d, smem.d[b], static_cast<int32_t>(n0 + b * kStoreCols), static_cast<int32_t>(m0));
    tma_store_commit_group();
  }
  // END SOLUTION step04
}

// The MMA issuer: one thread. For each of this CTA's tiles: wait until the epilogue has read the
// accumulator of the previous one, then the tile's MMAs.
__device__ __forceinline__ void mma(SharedStorage& smem, const TileScheduler& sched, int64_t k_slices,
                                    uint32_t tmem_acc) {
  PipelineState<kStages> read;  // the stage the MMAs read next, across tiles
  int64_t local = 0;            // this CTA's tile count
  for (WorkCursor cursor = sched.begin(blockIdx.x, gridDim.x); cursor.valid(); cursor.advance(), ++local) {
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::mma, cursor.unit);
    // BEGIN SOLUTION step07: wait (mbarrier_wait) on ld2mma with parity (local & 1) ^ 1 (the first tile passes at once), then tcgen05_fence_after_thread_sync: the epilogue's reads of the accumulator come before these MMAs overwrite it.
    mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});
    tcgen05_fence_after_thread_sync();
    // END SOLUTION step07
    mma_tile(smem, read, k_slices, tmem_acc);
  }
}

// The epilogue: the epilogue warpgroup. For each of this CTA's tiles, in the producer's order: wait
// for the accumulator, then the tile's epilogue.
__device__ __forceinline__ void epilogue(SharedStorage& smem, const CUtensorMap* map_d, const TileScheduler& sched,
                                         int64_t N, uint32_t tmem_acc) {
  int64_t local = 0;  // this CTA's tile count
  for (WorkCursor cursor = sched.begin(blockIdx.x, gridDim.x); cursor.valid(); cursor.advance(), ++local) {
    int64_t m0 = 0, n0 = 0;  // the tile's first row and column
    // BEGIN SOLUTION step06: this unit's tile is sched.tile(cursor.unit, 0) (cluster_m = 1: every CTA is rank 0 of its own cluster); its origin is (tile.m * 128, tile.n * 128), 64-bit.
    const Tile tile = sched.tile(cursor.unit, 0);
    m0 = tile.m * kTileM;
    n0 = tile.n * kTileN;
    // END SOLUTION step06
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::epilogue, cursor.unit);
    // BEGIN SOLUTION step07: wait (mbarrier_wait) on mma2ld with parity local & 1; it completes once per tile.
    // Only the mbarrier tells that the MMAs have completed (a CTA barrier would prove only that
    // they were issued).
    mbarrier_wait(&smem.mma2ld, static_cast<uint32_t>(local & 1), WaitTag{"mma2ld", "epilogue"});
    // END SOLUTION step07
    tcgen05_fence_after_thread_sync();  // orders the tcgen05.ld below after the wait
    // tcgen05.ld is .sync.aligned: the whole warp must execute it together, and the lanes left the
    // wait's spin loop one by one.
    warp_sync();
    epilogue_tile(smem, map_d, m0, n0, N, tmem_acc);
  }
  // The CTA's shared memory is released when it exits: the last store must have read it first.
  // (Its writes to D may still be in flight; the kernel's completion covers them.)
  if (threadIdx.x == 0) tma_store_wait_group_read<0>();
}

__global__ void __launch_bounds__(kThreads)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_d, int64_t M, int64_t N, int64_t K) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();
  const int warp = warp_id();

  // Setup, once per CTA. TMEM is allocated by one whole warp (tcgen05.alloc is .sync.aligned) and
  // freed by the same warp at the end; TMEM is not zeroed, each tile's first MMA overwrites it.
  if (warp == 0) {
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
      mbarrier_init(&smem.tma2mma[s], 1);  // the producer's arrive.expect_tx
      mbarrier_init(&smem.mma2tma[s], 1);  // the tcgen05.commit after the stage's MMAs
    }
    mbarrier_init(&smem.mma2ld, 1);                 // the tcgen05.commit after the tile's last MMAs
    mbarrier_init(&smem.ld2mma, kEpilogueThreads);  // every epilogue thread, once it has read TMEM
    fence_mbarrier_init();                          // the inits are visible to the async proxy (TMA, commit)
  }
  // The barrier publishes the mbarrier inits and the TMEM address (an ordinary shared-memory write
  // by tcgen05.alloc). The tcgen05 fences around it order warp 0's alloc before every thread's
  // later tcgen05 operations (the MMAs, the loads).
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc = smem.tmem_base;  // lane 0, first allocated column

  const int64_t k_slices = (K + kTileK - 1) / kTileK;
  const TileScheduler sched((M + kTileM - 1) / kTileM, (N + kTileN - 1) / kTileN, /*cluster_m=*/1, kGroupM);

  // BEGIN SOLUTION step07: warp kProducerWarp: one elected thread (elect_one_sync) runs producer(); warp kMmaWarp: one elected thread runs mma(); warps 0-3 run epilogue(). Every thread then falls through to the teardown.
  if (warp == kProducerWarp) {
    if (elect_one_sync()) producer(smem, &map_a, &map_b, sched, k_slices);
  } else if (warp == kMmaWarp) {
    if (elect_one_sync()) mma(smem, sched, k_slices, tmem_acc);
  } else {
    epilogue(smem, &map_d, sched, N, tmem_acc);
  }
  // END SOLUTION step07

  // Teardown. By now every MMA has completed (the epilogue waited for the last mma2ld), every
  // tcgen05.ld has completed (wait::ld) and every commit has arrived (the producer's tail). The
  // fences order those tcgen05 operations, in every role, before warp 0's dealloc.
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp == 0) {
    warp_sync();  // tcgen05.dealloc is .sync.aligned, and lane 0 alone ran the last store's wait
    tmem_dealloc<1, kTmemColumns>(tmem_acc);
  }
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const int64_t tiles = ((p.m + kTileM - 1) / kTileM) * ((p.n + kTileN - 1) / kTileN);
  // The tensor maps: A (M x K) and B (N x K) in boxes of one K slice of a tile, D (M x N) in boxes
  // of 64 columns of a tile; all in the 128-byte swizzle that the MMA descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kTileN, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kTileM, kStoreCols, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  cfg.stream = stream;
  // The persistent grid: the CTAs resident at once (two per SM: shared memory), and no more CTAs
  // than tiles. Any grid computes a correct D; its float rounding depends on the grid, which sets
  // the turn, and so the K order, of each tile (k_slice_in_turn).
  int ctas = 0;
  if (Status s = resident_ctas(kernel, kThreads, cfg.smem_bytes, &ctas); !s.ok()) return s;
  if (ctas > tiles) ctas = static_cast<int>(tiles);
  cfg.grid = dim3(static_cast<unsigned>(ctas));
  return launch(kernel, cfg, map_a, map_b, map_d, p.m, p.n, p.k);
}

}  // namespace gemm::step07::blackwell
