// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 9 of 12: 2-CTA cluster.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. The pair's tiles and grid: 2x1 clusters (`kCtaGroup`, `resident_clusters`); the scheduler
//      gives a cluster the tiles (2i, n) and (2i+1, n), which need the same B tile. A phantom tile
//      past M is loaded and computed like any other, and not stored (`writes`).
//   2. The pair's MMA: the even CTA (the leader) issues `tcgen05_mma_f16<kCtaGroup>` at M256 N128
//      (`kIdesc`, `kMmaM`). It reads 128 rows of A from each CTA's shared memory and half of B from
//      each (`kBRowsPerCta`), and writes each CTA's 128x128 accumulator into that CTA's TMEM. Each
//      CTA loads only its half of B.
//   3. The odd CTA's TMA loads (`tma_load_2d_cta_pair`) land in its own shared memory but complete
//      on the leader's `tma2mma`; the leader announces both CTAs' bytes (`kPairStageBytes`), and
//      only its MMA warp waits on that barrier.
//   4. The leader's commits multicast to both CTAs (`tcgen05_commit_multicast`, `kPairMask`): each
//      CTA's producer waits on its own `mma2tma`, each CTA's epilogue on its own `mma2ld`.
//   5. `ld2mma` lives in the leader and counts the epilogue threads of both CTAs
//      (`kLd2mmaArrivals`); the odd CTA's arrive remotely (`mbarrier_arrive_cluster`). The MMA
//      thread waits for the last tile's arrivals before the teardown (its drain).
//   6. alloc, dealloc, relinquish, mma and commit are all cta_group::2: both CTAs allocate the
//      pair's TMEM after a cluster barrier and free it after another (`cluster_sync` in place of
//      set-up's and teardown's `__syncthreads`); one CTA per SM, so that no other pair contends for
//      the pair's TMEM (a static_assert).
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"
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

namespace gemm::step09::blackwell {

using namespace gemm::blackwell;

constexpr int kTileM = 128;     // rows of D per CTA: the pair's MMA covers 2 x 128
constexpr int kTileN = 128;     // columns of D per CTA, the pair's MMA N
constexpr int kTileK = 64;      // one 128-byte swizzle atom of fp16
constexpr int kLdColumns = 32;  // columns per tcgen05.ld.32x32b.x32
// The CTA pair: the two CTAs of a 2x1 cluster, along M. Each holds half of the B tile.
constexpr int kCtaGroup = 2;
constexpr int kClusterM = kCtaGroup;
constexpr int kBRowsPerCta = kTileN / kCtaGroup;
constexpr int kMmaM = kCtaGroup * kTileM;  // the pair's MMA M: 128 rows of each CTA
// The pair's commits go to both CTAs: ranks 0 and 1, 0b11.
constexpr uint16_t kPairMask = cta_pair_mask(0);
// The ring's depth: step 8's. With half of B a slice is 24 KB per CTA, so more would fit; how deep
// to go is step 8's lesson, and this step changes only the pair (NOTES.md).
constexpr int kStages = 5;
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
// of at least 32 columns, and always spans all 128 lanes. Each CTA of the pair allocates its own
// 128 columns: its 128 rows of the pair's accumulator.
constexpr uint32_t kTmemColumns = kTileN;
static_assert(tmem_alloc_columns_ok(kTmemColumns), "tcgen05.alloc: a power of 2 in [32, 512] columns");
// One MMA covers the pair's two tiles: M256 N128 (K16), fp16 x fp16 -> fp32, A and B K-major. With
// cta_group::2 the idesc carries the PAIR's M and N. A constant expression, so an illegal shape
// would not compile. 0x10200010.
constexpr uint32_t kIdesc = make_idesc_f16(kCtaGroup, kMmaM, kTileN);
// The output tile is stored as boxes of 64 columns: a SW128 box row is at most 128 bytes.
constexpr int kStoreCols = 64;
constexpr int kStoreBoxes = kTileN / kStoreCols;
// Bytes one K slice brings into ONE CTA's shared memory: A 128x64 and half of B, 64x64. TMA always
// delivers the whole box, the zeros it fills past the edges included.
constexpr uint32_t kStageBytes = (kTileM + kBRowsPerCta) * kTileK * sizeof(__half);
static_assert(kStageBytes == 24576, "A 128x64 + B 64x64 fp16");
// What the leader's tma2mma expects per phase: the bytes of the pair, both CTAs' loads complete on
// it. Never the whole cluster's (here the same), and never one CTA's: too many expected bytes never
// complete the phase, too few complete it before the data has landed.
constexpr uint32_t kPairStageBytes = kCtaGroup * kStageBytes;
// The leader's ld2mma: every epilogue thread of both CTAs, once it has read its TMEM.
constexpr uint32_t kLd2mmaArrivals = kCtaGroup * kEpilogueThreads;
// Tile rows per L2 group of the scheduler: the hopper track's measured value (step 6's README.md),
// rounded up by the scheduler to a multiple of the cluster.
constexpr int kGroupM = 16;
// What one CTA may have on the GPUs of this track (B200, GB200: 227 KB of dynamic shared memory).
constexpr size_t kSmemLimit = 227 * 1024;

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it). The layout
// is the same in both CTAs: the leader's descriptors address its own stage and the tensor core
// reads the peer's operands at the same offsets.
struct alignas(1024) SharedStorage {
  __half a[kStages][kTileM * kTileK];          // kStages x 16 KB, written by TMA
  __half b[kStages][kBRowsPerCta * kTileK];    // kStages x 8 KB: this CTA's half of B, written by TMA
  __half d[kStoreBoxes][kTileM * kStoreCols];  // 2 x 16 KB: the epilogue's output tile, read by TMA
  uint64_t tma2mma[kStages];  // mbarrier (leader's): the pair's K slice has landed; unused in the odd CTA
  uint64_t mma2tma[kStages];  // mbarrier (each CTA's): the MMAs reading the stage completed
  uint64_t mma2ld;            // mbarrier (each CTA's): every MMA of the tile completed
  uint64_t ld2mma;            // mbarrier (leader's): both epilogues have read the accumulator
  uint32_t tmem_base;         // tcgen05.alloc writes the accumulator's address here
};
static_assert(sizeof(SharedStorage::a[0]) % 1024 == 0 && sizeof(SharedStorage::b[0]) % 1024 == 0 &&
                  sizeof(SharedStorage::d[0]) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");
static_assert(sizeof(SharedStorage) <= kSmemLimit, "the ring and the staging buffer must fit in shared memory");
// Shared memory alone keeps the CTAs on an SM within the accumulators TMEM holds, so no
// tcgen05.alloc waits for a neighbour's columns (step 3 padded its request to make sure).
static_assert(tmem_limited_smem_bytes(smem_bytes<SharedStorage>(), kTmemColumns) == smem_bytes<SharedStorage>(),
              "TMEM must not hold fewer accumulators than shared memory holds CTAs");
// One CTA per SM, as the pair's TMEM needs: a pair that shared its SMs with another would contend
// with it for their TMEM, and two pairs waiting in tcgen05.alloc for each other's columns deadlock.
static_assert(sizeof(SharedStorage) > kSmemLimit / 2, "one CTA per SM: no other CTA pair shares this pair's TMEM");

// Two fp32 accumulator cells (raw TMEM bits) rounded to fp16 and packed as D stores them: the
// lower column in the low half.
__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

// Loads K slice `k_slice` of this CTA's tile at (m0, n0) into the producer's next stage, once that
// stage is free, and moves the producer on: the A box and this CTA's half of the B tile, rows
// n0 + 64 rank .. +63. One thread.
__device__ __forceinline__ void load_slice(SharedStorage& smem, PipelineState<kStages>& write, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, int64_t m0, int64_t n0, int64_t k_slice,
                                           uint32_t rank) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on mma2tma[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step09: the leader (rank 0) announces the pair's bytes, kPairStageBytes, on its tma2mma[s] (mbarrier_arrive_expect_tx); then each CTA loads its A box at {k0, m0} and its half of B at {k0, n0 + 64 rank} into stage s = write.stage with tma_load_2d_cta_pair, whose bytes complete on the leader's barrier.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  if (rank == 0) mbarrier_arrive_expect_tx(&smem.tma2mma[s], kPairStageBytes);
  tma_load_2d_cta_pair(smem.a[s], map_a, &smem.tma2mma[s], k0, static_cast<int32_t>(m0));
  tma_load_2d_cta_pair(smem.b[s], map_b, &smem.tma2mma[s], k0, static_cast<int32_t>(n0 + rank * kBRowsPerCta));
  // END SOLUTION step09
  write.advance();
}

// The producer: one thread in each CTA. Walks this cluster's work units in the scheduler's order
// and loads every K slice of this CTA's tile of each into the ring; load_slice waits for a free
// stage. Both CTAs walk the same units, so their rings advance in step.
__device__ __forceinline__ void producer(SharedStorage& smem, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                         const TileScheduler& sched, int64_t k_slices) {
  PipelineState<kStages> write;  // the stage the producer fills next, across tiles
  const uint32_t rank = cluster_ctarank();
  // BEGIN SOLUTION step09: for each of this cluster's work units (sched.begin(cluster_id_x(), cluster_count_x())), load this CTA's tile, sched.tile(unit, rank) (origin tile.m * 128, tile.n * 128), with load_slice, the i-th K slice being k_slice_in_turn(turn, i, 0, k_slices) with turn = cursor.turn(), worked out once per tile; a TraceTile (TraceRole::producer, the unit) spans each tile for the timeline; a phantom tile past M is loaded too (the pair's MMA reads it, zeros, and the leader expects its bytes).
  for (WorkCursor cursor = sched.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance()) {
    const Tile tile = sched.tile(cursor.unit, static_cast<int>(rank));
    const int64_t turn = cursor.turn();  // once per tile: a 64-bit division
    const TraceTile traced(TraceRole::producer, cursor.unit);
    for (int64_t i = 0; i < k_slices; ++i)
      load_slice(smem, write, map_a, map_b, tile.m * kTileM, tile.n * kTileN, k_slice_in_turn(turn, i, 0, k_slices),
                 rank);
  }
  // END SOLUTION step09
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

// The MMAs of one tile pair: every K slice from the ring into the pair's accumulator, each stage
// released in both CTAs by a commit once its MMAs complete; then one commit tells both CTAs'
// epilogues that the accumulator is final. One thread, in the leader CTA only.
__device__ __forceinline__ void mma_tile(SharedStorage& smem, PipelineState<kStages>& read, int64_t k_slices,
                                         uint32_t tmem_acc) {
  for (int64_t ks = 0; ks < k_slices; ++ks) {
    // BEGIN SOLUTION step05: wait (mbarrier_wait) on tma2mma[read.stage] with the consumer's parity, read.full_parity(); then tcgen05_fence_after_thread_sync.
    mbarrier_wait(&smem.tma2mma[read.stage], read.full_parity(), WaitTag{"tma2mma", "mma"});
    // Orders the MMAs below after the wait.
    tcgen05_fence_after_thread_sync();
    // END SOLUTION step05

    // BEGIN SOLUTION step02: the slice's MMAs, one per k16 step on make_smem_desc_k_sw128 descriptors of stage read.stage; enable_input_d is false only for the tile's very first MMA (first K slice, first k16 step); the MMA is the pair's, tcgen05_mma_f16<kCtaGroup> with kIdesc.
    // tcgen05.mma is issued by one thread and runs asynchronously, in issue order on the same
    // accumulator: the MMAs of consecutive slices queue up behind each other.
#pragma unroll
    for (int k = 0; k < kTileK / kMmaK; ++k) {
      const uint32_t k_bytes = k * kMmaK * sizeof(__half);  // 32 B per k16 slice
      const uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(smem.a[read.stage]) + k_bytes);
      const uint64_t b_desc = make_smem_desc_k_sw128(smem_addr(smem.b[read.stage]) + k_bytes);
      tcgen05_mma_f16<kCtaGroup>(tmem_acc, a_desc, b_desc, kIdesc, /*enable_input_d=*/ks > 0 || k > 0);
    }
    // END SOLUTION step02

    // BEGIN SOLUTION step09: tcgen05_commit_multicast<kCtaGroup> to mma2tma[read.stage] of both CTAs (kPairMask): the stage is free in both once these MMAs, which read both CTAs' shared memory, complete.
    tcgen05_commit_multicast<kCtaGroup>(&smem.mma2tma[read.stage], kPairMask);
    // END SOLUTION step09
    read.advance();
  }
  // BEGIN SOLUTION step09: one more commit, tcgen05_commit_multicast<kCtaGroup> to mma2ld of both CTAs (kPairMask): it arrives once every MMA of the tile has completed, in both CTAs' TMEM.
  tcgen05_commit_multicast<kCtaGroup>(&smem.mma2ld, kPairMask);
  // END SOLUTION step09
}

// The epilogue of this CTA's tile, at (m0, n0): read the accumulator (TMEM -> registers), release
// it on the leader's ld2mma, then fp16 -> the staging buffer (SW128 boxes) -> TMA store, unless the
// tile `writes` nothing (a phantom past M). The epilogue warpgroup; thread t owns row t.
__device__ __forceinline__ void epilogue_tile(SharedStorage& smem, const CUtensorMap* map_d, int64_t m0, int64_t n0,
                                              int64_t N, bool writes, uint32_t tmem_acc) {
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

  // BEGIN SOLUTION step09: release the accumulator on the LEADER's ld2mma: tcgen05_fence_before_thread_sync (orders the completed tcgen05.ld before the arrive), then every epilogue thread of both CTAs arrives there (mbarrier_arrive_cluster to rank 0).
  tcgen05_fence_before_thread_sync();
  mbarrier_arrive_cluster(&smem.ld2mma, 0);
  // END SOLUTION step09

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

  // BEGIN SOLUTION step04: thread 0 stores box b at {n0 + 64 b, m0} with tma_store_2d (skip a box wholly past N, and every box of a tile that writes nothing; TMA clips the rest) and commits the bulk group (tma_store_commit_group); the next tile's epilogue waits for it to have read the buffer.
  if (t == 0) {
#pragma unroll
    for (int b = 0; b < kStoreBoxes; ++b)
      if (writes && n0 + b * kStoreCols < N)
        tma_store_2d(map_d, smem.d[b], static_cast<int32_t>(n0 + b * kStoreCols), static_cast<int32_t>(m0));
    tma_store_commit_group();
  }
  // END SOLUTION step04
}

// The MMA issuer: one thread, in the leader CTA only. For each pair of tiles: wait until both CTAs'
// epilogues have read the accumulators of the previous pair, then the pair's MMAs.
__device__ __forceinline__ void mma(SharedStorage& smem, const TileScheduler& sched, int64_t k_slices,
                                    uint32_t tmem_acc) {
  PipelineState<kStages> read;  // the stage the MMAs read next, across tiles
  int64_t local = 0;            // this cluster's tile count
  for (WorkCursor cursor = sched.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance(), ++local) {
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::mma, cursor.unit);
    // BEGIN SOLUTION step07: wait (mbarrier_wait) on ld2mma with parity (local & 1) ^ 1 (the first tile passes at once), then tcgen05_fence_after_thread_sync: the epilogue's reads of the accumulator come before these MMAs overwrite it.
    mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});
    tcgen05_fence_after_thread_sync();
    // END SOLUTION step07
    mma_tile(smem, read, k_slices, tmem_acc);
  }
  // The drain: wait, as a next tile would, until both CTAs' epilogues have read the last
  // accumulator. The odd CTA's arrives on this barrier are remote; waiting for them here, before the
  // teardown's cluster barrier, leaves none in flight when the CTAs free TMEM and exit.
  mbarrier_wait(&smem.ld2mma, static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma drain"});
}

// The epilogue: the epilogue warpgroup of each CTA. For each tile, in the producer's order: wait for
// the accumulator, then this CTA's tile's epilogue.
__device__ __forceinline__ void epilogue(SharedStorage& smem, const CUtensorMap* map_d, const TileScheduler& sched,
                                         int64_t N, uint32_t tmem_acc) {
  const uint32_t rank = cluster_ctarank();
  int64_t local = 0;  // this cluster's tile count
  for (WorkCursor cursor = sched.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance(), ++local) {
    int64_t m0 = 0, n0 = 0;  // the tile's first row and column
    bool writes = false;     // false for a phantom tile past M: computed, never stored
    // BEGIN SOLUTION step09: this CTA's tile is sched.tile(cursor.unit, rank); its origin is (tile.m * 128, tile.n * 128), 64-bit; it writes D only if tile.valid.
    const Tile tile = sched.tile(cursor.unit, static_cast<int>(rank));
    m0 = tile.m * kTileM;
    n0 = tile.n * kTileN;
    writes = tile.valid;
    // END SOLUTION step09
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
    epilogue_tile(smem, map_d, m0, n0, N, writes, tmem_acc);
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
  const uint32_t rank = cluster_ctarank();

  // Setup, once per CTA. TMEM is allocated by one whole warp (tcgen05.alloc is .sync.aligned) and
  // freed by the same warp at the end; TMEM is not zeroed, each tile's first MMA overwrites it.
  // BEGIN SOLUTION step09: a cluster barrier first (cluster_sync, every thread of both CTAs: the peer is running); then warp 0 allocates the pair's TMEM, kTmemColumns (tmem_alloc<kCtaGroup, ...>: tcgen05.alloc.cta_group::2), and relinquishes the permit (tmem_relinquish_alloc_permit<kCtaGroup>), in both CTAs.
  cluster_sync();  // the pair's allocation is made by both CTAs, once both run
  if (warp == 0) {
    tmem_alloc<kCtaGroup, kTmemColumns>(&smem.tmem_base);
    tmem_relinquish_alloc_permit<kCtaGroup>();  // no more allocations here: a waiting CTA may allocate
  }
  // END SOLUTION step09
  if (threadIdx.x == 0) {
    // The maps live in kernel-parameter memory; fetching them into the TMA unit's descriptor
    // cache now hides that latency behind the barrier below.
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_d);
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&smem.tma2mma[s], 1);  // the leader's arrive.expect_tx (both CTAs' bytes)
      mbarrier_init(&smem.mma2tma[s], 1);  // the tcgen05.commit after the stage's MMAs
    }
    mbarrier_init(&smem.mma2ld, 1);                // the tcgen05.commit after the tile's last MMAs
    mbarrier_init(&smem.ld2mma, kLd2mmaArrivals);  // every epilogue thread of both CTAs, once it has read TMEM
    fence_mbarrier_init();  // the inits are visible to the async proxy (TMA, commit) and to the peer CTA
  }
  // The cluster barrier publishes the mbarrier inits, to the peer too (its TMA, commits and remote
  // arrives reach this CTA's barriers once it passes), and the TMEM address (an ordinary
  // shared-memory write by tcgen05.alloc). The tcgen05 fences around it order warp 0's alloc before
  // every thread's later tcgen05 operations (the MMAs, the loads), the leader's MMAs into both CTAs'
  // TMEM among them.
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc = smem.tmem_base;  // lane 0, first allocated column

  const int64_t k_slices = (K + kTileK - 1) / kTileK;
  const TileScheduler sched((M + kTileM - 1) / kTileM, (N + kTileN - 1) / kTileN, kClusterM, kGroupM);

  // BEGIN SOLUTION step07: warp kProducerWarp: one elected thread (elect_one_sync) runs producer(); warp kMmaWarp: in the leader CTA only (cluster rank 0), one elected thread runs mma(); warps 0-3 run epilogue(). Every thread then falls through to the teardown.
  if (warp == kProducerWarp) {
    if (elect_one_sync()) producer(smem, &map_a, &map_b, sched, k_slices);
  } else if (warp == kMmaWarp) {
    if (rank == 0 && elect_one_sync()) mma(smem, sched, k_slices, tmem_acc);
  } else {
    epilogue(smem, &map_d, sched, N, tmem_acc);
  }
  // END SOLUTION step07

  // Teardown. By now every MMA has completed (the epilogue waited for the last mma2ld), every
  // tcgen05.ld has completed (wait::ld) and every commit has arrived (the producer's tail). The
  // fences order those tcgen05 operations, in every role, before warp 0's dealloc.
  // BEGIN SOLUTION step09: reconverge each warp (warp_sync: the producer and the MMA issuer ran on one thread), then a cluster barrier (cluster_sync) between tcgen05_fence_before_thread_sync and tcgen05_fence_after_thread_sync: no CTA frees the pair's TMEM while the other may still use it, and none exits while its peer may still arrive on its barriers (the odd CTA's last ld2mma arrives).
  warp_sync();
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  // END SOLUTION step09
  if (warp == 0) {
    warp_sync();  // tcgen05.dealloc is .sync.aligned, and lane 0 alone ran the last store's wait
    tmem_dealloc<kCtaGroup, kTmemColumns>(tmem_acc);
  }
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const TileScheduler sched((p.m + kTileM - 1) / kTileM, (p.n + kTileN - 1) / kTileN, kClusterM, kGroupM);
  // The tensor maps: A (M x K) in boxes of one K slice of a tile, B (N x K) in boxes of one K slice
  // of half a tile (each CTA of the pair loads one half), D (M x N) in boxes of 64 columns of a
  // tile; all in the 128-byte swizzle that the MMA descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kBRowsPerCta, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kTileM, kStoreCols, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(kThreads);
  cfg.cluster = dim3(kClusterM);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  cfg.stream = stream;
  // The persistent grid: the clusters resident at once (one CTA per SM, both CTAs of a cluster in
  // one GPC), trimmed to whole waves: balanced_grid keeps the fewest clusters that run the work
  // units in as many waves, never more than units.
  int clusters = 0;
  if (Status s = resident_clusters(kernel, kThreads, cfg.smem_bytes, kClusterM, &clusters); !s.ok()) return s;
  clusters = static_cast<int>(balanced_grid(sched.num_work(), clusters));
  cfg.grid = dim3(static_cast<unsigned>(clusters * kClusterM));
  return launch(kernel, cfg, map_a, map_b, map_d, p.m, p.n, p.k);
}

}  // namespace gemm::step09::blackwell
