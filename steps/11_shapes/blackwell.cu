// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 11, beyond the ten: shapes.
//
//   1 single tile   2 K loop   3 tiling   4 TMA   5 pipelining   6 persistent
//   7 warp specialization   8 deep pipeline   9 2-CTA cluster   10 multi-consumer   11 shapes
//
// D[M,N] = A[M,K] * B[N,K]^T for any M >= 1 and N, K multiples of 8: a resident grid of 2-CTA
// clusters (CTA pairs; step 10's kernel: 512 x kTileN cluster tiles, two MMA warps and two epilogue
// warpgroups per CTA) that loop over work items: whole tiles, and in the last wave parts of tiles
// split along K. The tile's width, 64 to 256 columns, is chosen per problem.
//
// What this step adds (to step 10): the work fitted to the machine: the last wave split along K,
// and the tile's width chosen per problem.
//   1. With T tiles for C clusters, the last wave has only T % C tiles and leaves the other
//      clusters idle for a whole tile's time. SplitK (common/split_k.cuh) cuts each of those tiles
//      along K into S <= C / (T % C) parts of at least kMinSplitSlices K slices, at most kMaxSplits
//      parts: the last wave then keeps (nearly) every cluster busy. The clusters walk work
//      items, each a tile and a range of its K slices; the MMA warps start each item's accumulator
//      afresh at its first slice.
//   2. The parts of a split tile meet in global memory: each epilogue warpgroup stores its fp32
//      block, box by box as it reads TMEM, to its own slot (a part, a CTA, a consumer) in this
//      stream's scratch (common/scratch.h), with a ticket counter per tile, CTA and consumer.
//   3. Publishing a part: after the warpgroup's named barrier, thread 0 takes a ticket (atom.add,
//      relaxed, GPU scope) between two fence.acq_rel.gpu (common/global_memory.cuh): the first
//      releases the warpgroup's stores, the second acquires every earlier part's.
//   4. The part that takes the last ticket adds every part's slot up in part order, 0 .. S - 1, not
//      in the order they finished, so D is the same bit for bit from run to run; it stores each box
//      through the usual staging and zeroes the ticket for the next launch.
//   5. The launcher launches every cluster that has an item when the last wave is split
//      (SplitK::grid), and finds the scratch for the split tiles.
//   6. The kernel is a template on the tile's width kTileN, the pair MMA's N (64, 128, 192 or 256
//      columns; the pair tile is 256 x kTileN): what depends on it (the ring's depth, B's half, the
//      idesc, the TMEM columns, the boxes stored) is a variable template of kTileN.
//   7. choose_tile_n: run() picks the width whose busiest cluster has the least work, counted in
//      K slices of its tiles and parts, each slice weighted by its width's cost (kWidths; the rule
//      is common/tile_width.cuh's), from the problem's shape and the clusters the GPU holds. No
//      timing at run time.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include <cstring>  // std::memcpy

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"
#include "common/device.cuh"
#include "common/fence.cuh"
#include "common/global_memory.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/named_barrier.cuh"
#include "common/pipeline.cuh"
#include "common/problem.h"
#include "common/scheduler.cuh"
#include "common/scratch.h"
#include "common/smem.cuh"
#include "common/split_k.cuh"
#include "common/swizzle.cuh"
#include "common/tensor_map.h"
#include "common/tile_width.cuh"
#include "common/tma.cuh"
#include "common/trace.cuh"
#include "common/warp.cuh"

namespace gemm::step11::blackwell {

using namespace gemm::blackwell;

// The CTA tile: kTileM x kTileN; kTileN, the width (columns of D per CTA, the pair's MMA N), is the
// kernel's template parameter, one of kWidths below (choose_tile_n picks it).
constexpr int kTileM = 256;     // rows of D per CTA: one 128-row block per consumer
constexpr int kTileK = 64;      // one 128-byte swizzle atom of fp16
constexpr int kLdColumns = 32;  // columns per tcgen05.ld.32x32b.x32
// The CTA pair: the two CTAs of a 2x1 cluster, along M. Each holds half of the B tile.
constexpr int kCtaGroup = 2;
constexpr int kClusterM = kCtaGroup;
template <int kTileN>
constexpr int kBRowsPerCta = kTileN / kCtaGroup;
// Two consumers: MMA warp i, accumulator i and epilogue warpgroup i. The cluster's tile is
// 512 x kTileN, and one cta_group::2 MMA covers at most 256 of its rows (128 of each CTA): consumer
// i's MMAs cover block i, rows 128 i .. 128 i + 127 of each CTA's tile, against the same B. So the
// two pair tiles of 256 x kTileN are stacked in M, each with its own kTileN TMEM columns: each CTA
// loads half of the kTileN-row B tile, and A gains a block. (At 256 columns, side by side in N, a
// 256x512 cluster tile, would move as many bytes per stage: one A block and two B halves.)
constexpr int kConsumers = 2;
constexpr int kBlockM = kTileM / kConsumers;
constexpr int kMmaM = kCtaGroup * kBlockM;  // the pair's MMA M: 128 rows of each CTA
// The pair's commits go to both CTAs: ranks 0 and 1, 0b11.
constexpr uint16_t kPairMask = cta_pair_mask(0);
// Eleven warps: the two epilogue warpgroups first (warps 0-7; warp w % 4 reaches TMEM lanes
// 32 (w % 4) .., so each warpgroup reads all 128 lanes of its accumulator), then the producer and
// the two MMA warps.
constexpr int kEpilogueWarps = 4;  // per warpgroup
constexpr int kProducerWarp = kConsumers * kEpilogueWarps;
constexpr int kFirstMmaWarp = kProducerWarp + 1;  // MMA warp i is warp kFirstMmaWarp + i
constexpr int kThreads = (kFirstMmaWarp + kConsumers) * kWarpSize;
constexpr int kEpilogueThreads = kEpilogueWarps * kWarpSize;
// Named barriers of the epilogue warpgroups: warpgroup i syncs on kEpilogueBarrier + i (id 0 is
// __syncthreads, which would wait for every warp).
constexpr uint32_t kEpilogueBarrier = 1;
// The fp32 accumulators take one TMEM column per output column; an allocation is a power of 2
// of at least 32 columns, and always spans all 128 lanes. Each CTA allocates its 128 rows of each
// consumer's pair accumulator, 2 x kTileN columns rounded up to a power of 2: 512, the whole of
// TMEM, at 256 columns and at 192 (384 is no power of 2: 128 columns go unused), 256 at 128, 128
// at 64.
constexpr uint32_t tmem_alloc_columns(int tile_n) {
  uint32_t columns = 32;
  while (columns < static_cast<uint32_t>(kConsumers * tile_n)) columns *= 2;
  return columns;
}
template <int kTileN>
constexpr uint32_t kTmemColumns = tmem_alloc_columns(kTileN);
// One MMA covers one consumer's pair tile: M256 x kTileN (K16), fp16 x fp16 -> fp32, A and B
// K-major. With cta_group::2 the idesc carries the PAIR's M and N; N must be a multiple of 16 in
// [16, 256], as every width of kWidths is. A constant expression, so an illegal shape would not
// compile. 0x10400010 at N256 (step 9's M256 N128 is 0x10200010).
template <int kTileN>
constexpr uint32_t kIdesc = make_idesc_f16(kCtaGroup, kMmaM, kTileN);
// The output tile is stored as boxes of 64 columns: a SW128 box row is at most 128 bytes.
constexpr int kStoreCols = 64;
template <int kTileN>
constexpr int kStoreBoxes = kTileN / kStoreCols;
// Bytes one K slice brings into ONE CTA's shared memory: A 256x64 (both blocks) and half of B,
// kTileN / 2 x 64. TMA always delivers the whole box, the zeros it fills past the edges included.
template <int kTileN>
constexpr uint32_t kStageBytes = (kTileM + kTileN / kCtaGroup) * kTileK * sizeof(__half);
static_assert(kStageBytes<256> == 49152, "A 256x64 + B 128x64 fp16");
// What the leader's tma2mma expects per phase: the bytes of the pair, both CTAs' loads complete on
// it. Never the whole cluster's (here the same), and never one CTA's: too many expected bytes never
// complete the phase, too few complete it before the data has landed.
template <int kTileN>
constexpr uint32_t kPairStageBytes = uint32_t{kCtaGroup} * kStageBytes<kTileN>;
// A stage is free once both MMA warps' MMAs reading it have completed: each commits to it.
constexpr uint32_t kReleaseArrivals = kConsumers;
// The leader's ld2mma[i]: every thread of epilogue warpgroup i of both CTAs, once it has read its
// TMEM.
constexpr uint32_t kLd2mmaArrivals = kCtaGroup * kEpilogueThreads;
// Tile rows per L2 group of the scheduler: step 9's group of 16 tiles of 128 rows is 8 tiles of
// 256 rows here, the same rows of A.
constexpr int kGroupM = 8;
// Splitting the last wave: each part gets at least kMinSplitSlices K slices, at most kMaxSplits
// parts. A split costs each part a 128 KB store per epilogue warpgroup, a GPU-wide fence and a
// ticket, and the last part the loads of every part's sum: a part must save more slices than that.
// The hopper track's value, measured on an H100 (its NOTES.md); not measured on a B200.
constexpr int kMinSplitSlices = 12;
#if defined(GEMM_STEP11_MAX_SPLITS)
constexpr int kMaxSplits = GEMM_STEP11_MAX_SPLITS;  // 1: no split
#else
constexpr int kMaxSplits = 16;
#endif
// An epilogue warpgroup's block of a split tile in fp32: its 128 threads' rows of kTileN columns,
// as float4s in the order [column / 4][thread] (a warp's 32 float4 accesses are 512 contiguous
// bytes). The epilogue stores and loads it box by box: box b, v[c][j], is column 64 b + 32 c + j.
template <int kTileN>
constexpr int kPartialFloat4s = kTileN / 4 * kEpilogueThreads;
// What one CTA may have on the GPUs of this track (B200, GB200: 227 KB of dynamic shared memory).
constexpr size_t kSmemLimit = 227 * 1024;
// The ring: as deep as fits beside the two 16 KB staging buffers and 1 KB for the barriers, at most
// 8 stages: 4 at 256, 192 and 128 columns, 5 at 64 (the static_asserts of fits<> check the fit).
template <int kTileN>
constexpr int ring_stages() {
  const size_t staging = kConsumers * kBlockM * kStoreCols * sizeof(__half);
  const int fit = static_cast<int>((kSmemLimit - 1024 - staging) / kStageBytes<kTileN>);
  return fit < 8 ? fit : 8;
}
template <int kTileN>
constexpr int kStages = ring_stages<kTileN>();

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it). The layout
// is the same in both CTAs: the leader's descriptors address its own stage and the tensor core
// reads the peer's operands at the same offsets.
template <int kTileN>
struct alignas(1024) SharedStorage {
  __half a[kStages<kTileN>][kTileM * kTileK];                // kStages x 32 KB: blocks 0 and 1 of A, written by TMA
  __half b[kStages<kTileN>][kBRowsPerCta<kTileN> * kTileK];  // kStages x kTileN / 2 rows: this CTA's half of B
  __half d[kConsumers][kBlockM * kStoreCols];                // 2 x 16 KB: one 64-column box per epilogue warpgroup
  uint64_t tma2mma[kStages<kTileN>];  // mbarrier (leader's): the pair's K slice has landed; unused in the odd CTA
  uint64_t mma2tma[kStages<kTileN>];  // mbarrier (each CTA's): both MMA warps' MMAs reading the stage completed
  uint64_t mma2ld[kConsumers];        // mbarrier (each CTA's): every MMA of consumer i's tile completed
  uint64_t ld2mma[kConsumers];        // mbarrier (leader's): both warpgroups i have read accumulator i
  uint32_t tmem_base;                 // tcgen05.alloc writes the accumulators' address here
  uint32_t ticket[kConsumers];        // each epilogue warpgroup's split ticket
};
template <int kTileN>
constexpr bool fits() {
  static_assert(sizeof(SharedStorage<kTileN>::a[0]) % 1024 == 0 && sizeof(SharedStorage<kTileN>::b[0]) % 1024 == 0 &&
                    sizeof(SharedStorage<kTileN>::d[0]) % 1024 == 0 && kBlockM * kTileK * sizeof(__half) % 1024 == 0,
                "every tile, and block 1 of A, must start on a 1024-byte boundary");
  static_assert(sizeof(SharedStorage<kTileN>) <= kSmemLimit,
                "the ring and the staging buffers must fit in shared memory");
  // One CTA per SM, as the pair's TMEM needs: a pair that shared its SMs with another would contend
  // with it for their TMEM, and two pairs waiting in tcgen05.alloc for each other's columns deadlock.
  static_assert(sizeof(SharedStorage<kTileN>) > kSmemLimit / 2,
                "one CTA per SM: no other CTA pair shares this pair's TMEM");
  static_assert(tmem_alloc_columns_ok(kTmemColumns<kTileN>), "tcgen05.alloc: a power of 2 in [32, 512] columns");
  return true;
}
static_assert(fits<256>() && fits<192>() && fits<128>() && fits<64>(), "every width run() chooses from");

// Where the parts of the split tiles meet (SplitK): for split unit u, part p, CTA rank r and
// epilogue warpgroup (consumer) c, a partial sum at partials + (((u x parts + p) x kClusterM + r) x
// kConsumers + c) x kPartialFloat4s, and a ticket counter at tickets[(u x kClusterM + r) x
// kConsumers + c]. The tickets are zero before a launch and are left zero after it.
struct SplitScratch {
  float4* partials = nullptr;
  uint32_t* tickets = nullptr;
};

// Part `part`'s partial sum of split item `item` for epilogue warpgroup `consumer` of CTA `rank`.
template <int kTileN>
__device__ __forceinline__ float4* split_slot(const SplitScratch& scratch, const WorkItem& item, int part,
                                              uint32_t rank, int consumer) {
  return scratch.partials +
         (((item.split * item.parts + part) * kClusterM + rank) * kConsumers + consumer) * kPartialFloat4s<kTileN>;
}

// Two fp32 accumulator cells (raw TMEM bits) rounded to fp16 and packed as D stores them: the
// lower column in the low half.
__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

// The bits of an fp32 value, as a TMEM cell holds them (tmem_f32 the other way round).
__device__ uint32_t f32_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// Loads K slice `k_slice` of this CTA's tile at (m0, n0) into the producer's next stage, once that
// stage is free, and moves the producer on: the A box of both blocks (256 rows) and this CTA's half
// of the B tile, rows n0 + kBRowsPerCta rank onwards. One thread.
template <int kTileN>
__device__ __forceinline__ void load_slice(SharedStorage<kTileN>& smem, PipelineState<kStages<kTileN>>& write,
                                           const CUtensorMap* map_a, const CUtensorMap* map_b, int64_t m0, int64_t n0,
                                           int64_t k_slice, uint32_t rank) {
  // BEGIN SOLUTION step05: wait on mma2tma[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step09: the leader (rank 0) announces the pair's bytes, kPairStageBytes, on its tma2mma[s] (arrive.expect_tx); then each CTA loads its A box at {k0, m0} and its half of B at {k0, n0 + kBRowsPerCta rank} into stage s = write.stage with tma_load_2d_cta_pair, whose bytes complete on the leader's barrier.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  if (rank == 0) mbarrier_arrive_expect_tx(&smem.tma2mma[s], kPairStageBytes<kTileN>);
  tma_load_2d_cta_pair(smem.a[s], map_a, &smem.tma2mma[s], k0, static_cast<int32_t>(m0));
  tma_load_2d_cta_pair(smem.b[s], map_b, &smem.tma2mma[s], k0, static_cast<int32_t>(n0 + rank * kBRowsPerCta<kTileN>));
  // END SOLUTION step09
  write.advance();
}

// The producer: one thread in each CTA. Walks this cluster's work items in the scheduler's order
// and loads the item's K slices of this CTA's tile of each into the ring; load_slice waits for a
// free stage. Both CTAs walk the same items, so their rings advance in step.
template <int kTileN>
__device__ __forceinline__ void producer(SharedStorage<kTileN>& smem, const CUtensorMap* map_a,
                                         const CUtensorMap* map_b, const TileScheduler& sched, const SplitK& split) {
  PipelineState<kStages<kTileN>> write;  // the stage the producer fills next, across tiles
  const uint32_t rank = cluster_ctarank();
  // BEGIN SOLUTION step11: for each of this cluster's work items (split.begin(cluster_id_x(), cluster_count_x())), load K slices item.k_begin .. item.k_end - 1, the i-th being k_slice_in_turn(turn, i, item.k_begin, item.k_end) with turn = cursor.turn(), worked out once per tile, of this CTA's tile of the item's unit, sched.tile(unit, rank) (origin tile.m * 256, tile.n * kTileN), with load_slice; a phantom tile past M is loaded too (the pair's MMA reads it, zeros, and the leader expects its bytes).
  for (WorkCursor cursor = split.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance()) {
    const WorkItem item = split.item(cursor.unit);
    const Tile tile = sched.tile(item.unit, static_cast<int>(rank));
    const int64_t turn = cursor.turn();  // once per tile: a 64-bit division
    const TraceTile traced(TraceRole::producer, cursor.unit);
    for (int64_t i = 0; i < item.k_end - item.k_begin; ++i)
      load_slice(smem, write, map_a, map_b, tile.m * kTileM, tile.n * kTileN,
                 k_slice_in_turn(turn, i, item.k_begin, item.k_end), rank);
  }
  // END SOLUTION step11
  // BEGIN SOLUTION step07: the tail: wait on mma2tma for the next kStages positions of the ring (the commits of the last slices, which no load waited for) before the CTA may tear down.
  // The commits of the last kStages slices were never waited on: no load followed them. Their
  // arrivals on mma2tma are asynchronous, and must land before the barriers' shared memory goes
  // away and TMEM is released. A position of the ring that was never filled passes at once (the
  // producer's parity of a fresh barrier).
  for (int s = 0; s < kStages<kTileN>; ++s) {
    mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer tail"});
    write.advance();
  }
  // END SOLUTION step07
}

// The MMA issuer of consumer `consumer`: one thread of MMA warp `consumer`, in the leader CTA only.
// For each work item: wait until both CTAs' epilogue warpgroups `consumer` have read accumulator
// `consumer` of the previous one, then the item's K slices of block `consumer` from the ring into
// it (the accumulator starts afresh at the item's first slice: a part of a split tile sums only its
// own slices), then one commit to both CTAs' mma2ld[consumer] for those warpgroups. Both MMA warps
// walk the same stages: each waits for every slice to land and commits every slice's release.
template <int kTileN>
__device__ __forceinline__ void mma(SharedStorage<kTileN>& smem, const SplitK& split, uint32_t tmem_acc, int consumer) {
  PipelineState<kStages<kTileN>> read;  // the stage the MMAs read next, across tiles
  int64_t local = 0;                    // this cluster's item count
  uint32_t acc = 0;                     // this consumer's accumulator (a TMEM address)
  uint32_t a_block = 0;                 // the byte offset of its block of A in a stage
  // BEGIN SOLUTION step10: consumer `consumer` accumulates at TMEM column kTileN consumer (tmem_acc + consumer * kTileN) and reads block `consumer` of A, kBlockM rows (consumer * kBlockM * kTileK * 2 bytes) into each stage.
  acc = tmem_acc + static_cast<uint32_t>(consumer) * kTileN;
  a_block = static_cast<uint32_t>(consumer) * kBlockM * kTileK * sizeof(__half);
  // END SOLUTION step10
  for (WorkCursor cursor = split.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance(), ++local) {
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::mma, cursor.unit);
    const WorkItem item = split.item(cursor.unit);
    // BEGIN SOLUTION step10: wait on ld2mma[consumer] with parity (local & 1) ^ 1 (the first tile passes at once), then tcgen05.fence::after_thread_sync: the epilogue's reads of this accumulator come before these MMAs overwrite it.
    mbarrier_wait(&smem.ld2mma[consumer], static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});
    tcgen05_fence_after_thread_sync();
    // END SOLUTION step10
    for (int64_t ks = item.k_begin; ks < item.k_end; ++ks) {
      // BEGIN SOLUTION step05: wait on tma2mma[read.stage] with the consumer's parity, read.full_parity(); then tcgen05.fence::after_thread_sync.
      mbarrier_wait(&smem.tma2mma[read.stage], read.full_parity(), WaitTag{"tma2mma", "mma"});
      // Orders the MMAs below after the wait.
      tcgen05_fence_after_thread_sync();
      // END SOLUTION step05

      // BEGIN SOLUTION step02: enable_input_d is false only for the item's very first MMA (its first K slice, item.k_begin, first k16 step); the MMA is the pair's, tcgen05_mma_f16<kCtaGroup> with kIdesc, on this consumer's block of A (a_block bytes into the stage) into its accumulator acc.
      // tcgen05.mma is issued by one thread and runs asynchronously, in issue order on the same
      // accumulator: the MMAs of consecutive slices queue up behind each other.
#pragma unroll
      for (int k = 0; k < kTileK / kMmaK; ++k) {
        const uint32_t k_bytes = k * kMmaK * sizeof(__half);  // 32 B per k16 slice
        const uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(smem.a[read.stage]) + a_block + k_bytes);
        const uint64_t b_desc = make_smem_desc_k_sw128(smem_addr(smem.b[read.stage]) + k_bytes);
        tcgen05_mma_f16<kCtaGroup>(acc, a_desc, b_desc, kIdesc<kTileN>, /*enable_input_d=*/ks > item.k_begin || k > 0);
      }
      // END SOLUTION step02

      // BEGIN SOLUTION step09: tcgen05.commit multicast to mma2tma[read.stage] of both CTAs (kPairMask): the stage is free in both once these MMAs, which read both CTAs' shared memory, complete.
      tcgen05_commit_multicast<kCtaGroup>(&smem.mma2tma[read.stage], kPairMask);
      // END SOLUTION step09
      read.advance();
    }
    // BEGIN SOLUTION step10: one more tcgen05.commit, multicast to mma2ld[consumer] of both CTAs (kPairMask): it arrives once every MMA of this consumer's tile has completed, in both CTAs' TMEM.
    tcgen05_commit_multicast<kCtaGroup>(&smem.mma2ld[consumer], kPairMask);
    // END SOLUTION step10
  }
  // The drain: wait, as a next tile would, until warpgroup `consumer` of both CTAs have read the last
  // accumulator. The odd CTA's arrives on this barrier are remote; waiting for them here, before the
  // teardown's cluster barrier, leaves none in flight when the CTAs free TMEM and exit.
  mbarrier_wait(&smem.ld2mma[consumer], static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma drain"});
}

// One 64-column box of an epilogue warpgroup's block, b = 0 .. kStoreBoxes - 1: this thread's
// columns 64 b .. 64 b + 63 of row t as fp32 bits (v[c][j] = column 64 b + 32 c + j, as tcgen05.ld
// returns them), converted to fp16, staged in the warpgroup's buffer d[consumer] and stored to D
// at (m0, n0 + 64 b) by TMA, unless the block writes nothing. Every thread of the warpgroup calls it.
template <int kTileN>
__device__ __forceinline__ void store_box(SharedStorage<kTileN>& smem, const CUtensorMap* map_d,
                                          const uint32_t (&v)[kStoreCols / kLdColumns][kLdColumns], int64_t m0,
                                          int64_t n0, int64_t N, bool writes, int b, int consumer, int t,
                                          uint32_t barrier) {
  // BEGIN SOLUTION step10: the previous box's TMA store may still be reading this warpgroup's buffer d[consumer]: thread 0 waits for it (wait_group.read 0), then the warpgroup syncs on its own named barrier before anyone writes.
  if (t == 0) tma_store_wait_group_read<0>();
  named_barrier_sync(barrier, kEpilogueThreads);
  // END SOLUTION step10

  // Registers -> fp16 -> the staging buffer. Each thread writes 16-byte chunks of its own row;
  // the 8 rows of 8 consecutive lanes land in 8 different chunk positions of the swizzle: no
  // bank conflicts.
  const int row = t;
#pragma unroll
  for (int c = 0; c < kStoreCols / kLdColumns; ++c) {
#pragma unroll
    for (int j = 0; j < kLdColumns; j += 8) {  // 8 fp16 = one 16-byte chunk
      const uint32_t* w = &v[c][j];
      const uint4 packed =
          make_uint4(pack_half2(w[0], w[1]), pack_half2(w[2], w[3]), pack_half2(w[4], w[5]), pack_half2(w[6], w[7]));
      const int col = c * kLdColumns + j;  // in the box, a multiple of 8
      uint32_t offset = 0;                 // byte offset of (row, col) inside the box
      // BEGIN SOLUTION step04: column col of the box (a multiple of 8) starts 16-byte chunk col / 8 of row `row`, at sw128_offset(row, chunk).
      offset = sw128_offset(row, col / 8);
      // END SOLUTION step04
      *reinterpret_cast<uint4*>(reinterpret_cast<char*>(smem.d[consumer]) + offset) = packed;
    }
  }
  // TMA reads shared memory through the async proxy; the stores above were generic-proxy
  // stores. Each writer fences its own stores, then the barrier waits for every writer.
  fence_proxy_async_shared();
  named_barrier_sync(barrier, kEpilogueThreads);

  // BEGIN SOLUTION step04: thread 0 stores the box at {n0 + 64 b, m0} (skip it when the block writes nothing or the box is wholly past N; TMA clips the rest) and commits the bulk group; the next box waits for it to have read the buffer.
  if (t == 0) {
    if (writes && n0 + b * kStoreCols < N)
      tma_store_2d(map_d, smem.d[consumer], static_cast<int32_t>(n0 + b * kStoreCols), static_cast<int32_t>(m0));
    tma_store_commit_group();
  }
  // END SOLUTION step04
}

// A part of a split tile (SplitK): stores box b of this thread's row (v as in store_box) to the
// part's own slot in global memory (the layout of kPartialFloat4s).
__device__ __forceinline__ void store_partial(float4* slot, const uint32_t (&v)[kStoreCols / kLdColumns][kLdColumns],
                                              int b, int t) {
  // BEGIN SOLUTION step11: store v[c][j .. j + 3] (column 64 b + 32 c + j of the row, j a multiple of 4) as a float4 (tmem_f32 of each) at slot[(64 b + 32 c + j) / 4 * kEpilogueThreads + t].
#pragma unroll
  for (int c = 0; c < kStoreCols / kLdColumns; ++c) {
#pragma unroll
    for (int j = 0; j < kLdColumns; j += 4) {
      const uint32_t* w = &v[c][j];
      slot[(b * kStoreCols + c * kLdColumns + j) / 4 * kEpilogueThreads + t] =
          make_float4(tmem_f32(w[0]), tmem_f32(w[1]), tmem_f32(w[2]), tmem_f32(w[3]));
    }
  }
  // END SOLUTION step11
}

// The last part of a split tile: box b of this thread's row summed over every part's slot, in part
// order (so D does not depend on which part finished last), into v (as fp32 bits, as store_box takes
// them).
template <int kTileN>
__device__ __forceinline__ void sum_partials(const SplitScratch& scratch, const WorkItem& item, uint32_t rank,
                                             int consumer, uint32_t (&v)[kStoreCols / kLdColumns][kLdColumns], int b,
                                             int t) {
  constexpr int kBoxFloat4s = kStoreCols / 4;
  float4 sum[kBoxFloat4s];  // columns 64 b + 4 q .. + 3 of the row
  // BEGIN SOLUTION step11: sum[q] = the float4 at [(64 b + 4 q) / 4 * kEpilogueThreads + t] of split_slot(part 0), plus those of parts 1 .. parts - 1 in order; then v[c][j] = f32_bits of column 32 c + j of the box.
  const float4* first = split_slot<kTileN>(scratch, item, 0, rank, consumer);
#pragma unroll
  for (int q = 0; q < kBoxFloat4s; ++q) sum[q] = first[(b * kBoxFloat4s + q) * kEpilogueThreads + t];
  for (int part = 1; part < item.parts; ++part) {
    const float4* slot = split_slot<kTileN>(scratch, item, part, rank, consumer);
#pragma unroll
    for (int q = 0; q < kBoxFloat4s; ++q) {
      const float4 x = slot[(b * kBoxFloat4s + q) * kEpilogueThreads + t];
      sum[q] = make_float4(sum[q].x + x.x, sum[q].y + x.y, sum[q].z + x.z, sum[q].w + x.w);
    }
  }
#pragma unroll
  for (int q = 0; q < kBoxFloat4s; ++q) {
    uint32_t* w = &v[4 * q / kLdColumns][4 * q % kLdColumns];
    w[0] = f32_bits(sum[q].x);
    w[1] = f32_bits(sum[q].y);
    w[2] = f32_bits(sum[q].z);
    w[3] = f32_bits(sum[q].w);
  }
  // END SOLUTION step11
}

// One epilogue warpgroup's part of a split tile (SplitK), once every thread has stored its row to
// the part's slot (store_partial): takes a ticket. The part that takes the last ticket (parts - 1)
// returns true: it adds every part's slot up (sum_partials) and stores the block. The others return
// false. `t` is the thread's index in its warpgroup.
template <int kTileN>
__device__ __forceinline__ bool reduce_split(SharedStorage<kTileN>& smem, uint32_t* ticket, const WorkItem& item,
                                             int consumer, int t, uint32_t barrier) {
  bool last = false;  // this part took the last ticket
  // BEGIN SOLUTION step11: sync the warpgroup; thread 0 fences (release), takes a ticket (atomic_add_gpu) into smem.ticket[consumer], fences (acquire); sync again; the part whose ticket is parts - 1 is the last: its thread 0 resets the ticket to 0.
  // The named barrier orders every thread's stores before thread 0's release fence, which makes
  // them visible GPU-wide before its ticket (fences are cumulative); thread 0's acquire fence after
  // its ticket orders every part's stores, released before their tickets, before the second
  // barrier and so before any thread's loads (sum_partials) in the last part.
  named_barrier_sync(barrier, kEpilogueThreads);
  if (t == 0) {
    fence_acq_rel_gpu();
    smem.ticket[consumer] = atomic_add_gpu(ticket, 1);
    fence_acq_rel_gpu();
  }
  named_barrier_sync(barrier, kEpilogueThreads);
  last = smem.ticket[consumer] == static_cast<uint32_t>(item.parts - 1);
  if (last && t == 0) *ticket = 0;  // every part has taken its ticket: zero again for the next launch
  // END SOLUTION step11
  return last;
}

// The epilogue of consumer `consumer`: epilogue warpgroup `consumer` of each CTA, 128 threads,
// thread t owns row t of the CTA's block `consumer`. For each work item: wait for accumulator
// `consumer`, then one 64-column box at a time: read it (TMEM -> registers), then stage it as fp16
// in this warpgroup's buffer and store it (TMA, store_box); after the last box's read, release the
// accumulator on the leader's ld2mma[consumer]. A part of a split tile stores each box to its own
// slot in global memory instead (store_partial), and releases the accumulator the same way; then it
// takes a ticket (reduce_split), and only the last part to finish adds the parts' slots up box by
// box (sum_partials) and stores each box through store_box.
template <int kTileN>
__device__ __forceinline__ void epilogue(SharedStorage<kTileN>& smem, const CUtensorMap* map_d,
                                         const TileScheduler& sched, const SplitK& split, const SplitScratch& scratch,
                                         int64_t M, int64_t N, uint32_t tmem_acc, int consumer) {
  const int t = static_cast<int>(threadIdx.x) % kEpilogueThreads;  // 0 .. 127: the row in the block
  const int warp = warp_id();
  const uint32_t rank = cluster_ctarank();
  uint32_t acc = 0;      // this consumer's accumulator (a TMEM address)
  uint32_t barrier = 0;  // this warpgroup's named barrier
  // BEGIN SOLUTION step10: warpgroup `consumer` reads the accumulator at TMEM column kTileN consumer (tmem_acc + consumer * kTileN) and syncs on a named barrier of its own, kEpilogueBarrier + consumer.
  acc = tmem_acc + static_cast<uint32_t>(consumer) * kTileN;
  barrier = kEpilogueBarrier + static_cast<uint32_t>(consumer);
  // END SOLUTION step10
  int64_t local = 0;  // this cluster's item count
  for (WorkCursor cursor = split.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance(), ++local) {
    const WorkItem item = split.item(cursor.unit);
    int64_t m0 = 0, n0 = 0;  // the block's first row and column
    // False for a block that starts past M (a phantom tile's, or block 1 of a tile that ends in
    // block 0): it computes, but writes nothing. It runs the epilogue like any other block (its
    // warpgroup still releases the accumulator after reading it) and only skips the TMA stores,
    // and, in a split tile, the split reduction.
    bool writes = false;
    // True for a part of a split tile whose block writes: it stores its accumulator to its slot.
    // Every part of the tile agrees (M, the unit and the rank decide): all take a ticket, or none.
    bool partial = false;
    // BEGIN SOLUTION step10: this CTA's tile is sched.tile(item.unit, rank), its origin (tile.m * 256, tile.n * kTileN); this warpgroup's block starts kBlockM * consumer rows further (64-bit); it writes D only if the block starts before M.
    const Tile tile = sched.tile(item.unit, static_cast<int>(rank));
    m0 = tile.m * kTileM + consumer * kBlockM;
    n0 = tile.n * kTileN;
    writes = m0 < M;
    // END SOLUTION step10
    // BEGIN SOLUTION step11: the block is a partial sum for a split item (item.parts > 1) of a block that writes.
    partial = item.parts > 1 && writes;
    // END SOLUTION step11
    // This part's slot for the block and the block's ticket (SplitScratch), for a partial sum only.
    float4* const slot = partial ? split_slot<kTileN>(scratch, item, item.part, rank, consumer) : nullptr;
    uint32_t* const ticket =
        partial ? scratch.tickets + (item.split * kClusterM + rank) * kConsumers + consumer : nullptr;
    const TraceTile traced(TraceRole::epilogue, cursor.unit);

    // BEGIN SOLUTION step07: wait on mma2ld[consumer] with parity local & 1; it completes once per tile.
    // Only the mbarrier tells that the MMAs have completed (a thread barrier would prove only that
    // they were issued).
    mbarrier_wait(&smem.mma2ld[consumer], static_cast<uint32_t>(local & 1), WaitTag{"mma2ld", "epilogue"});
    // END SOLUTION step07
    const TraceEpilogue traced_epilogue;
    tcgen05_fence_after_thread_sync();  // orders the tcgen05.ld below after the wait
    // tcgen05.ld is .sync.aligned: the whole warp must execute it together, and the lanes left the
    // wait's spin loop one by one.
    warp_sync();

    // TMEM -> registers -> fp16 -> this warpgroup's staging buffer -> D, one 64-column box at a time.
    // Step 9 read the whole row (256 columns, 128 registers as fp16) before releasing the
    // accumulator; with eleven warps a thread has too few registers for that (it spills), so each box
    // is read just before it is staged, and the accumulator is released after the last box's loads.
    // A partial sum goes TMEM -> registers -> its slot in global memory instead, box by box alike.
#pragma unroll
    for (int b = 0; b < kStoreBoxes<kTileN>; ++b) {
      uint32_t v[kStoreCols / kLdColumns][kLdColumns];  // columns 64 b + 32 c .. +31 of this thread's row, fp32 bits
#pragma unroll
      for (int c = 0; c < kStoreCols / kLdColumns; ++c) {
        uint32_t taddr = 0;
        // BEGIN SOLUTION step01: warp w may read only TMEM lanes 32*(w%4)..+31 (tmem_lane_base); thread t of the warp gets lane base + t, i.e. tile row base + t.
        taddr = tmem_addr(acc, tmem_lane_base(warp), b * kStoreCols + c * kLdColumns);
        // END SOLUTION step01
        tmem_ld_32x32b_x32(taddr, v[c]);
      }
      tmem_wait_ld();  // the loaded registers are valid only after the wait
#pragma unroll
      for (int c = 0; c < kStoreCols / kLdColumns; ++c) tmem_fence_operands(v[c]);  // ... and not read before it
      // Every box's completed tcgen05.ld are ordered before the thread synchronisations that follow
      // (the PTX pattern for tcgen05 work on either side of one): the named barriers of store_box
      // (when the box is stored now) hand them on to the warpgroup's next tcgen05.ld, the arrive
      // after the last box to the MMA warp.
      tcgen05_fence_before_thread_sync();
      if (b == kStoreBoxes<kTileN> - 1) {
        // BEGIN SOLUTION step10: after the row's last tcgen05.ld (completed, and fenced just above), release accumulator `consumer` on the LEADER's ld2mma[consumer]: every thread of this warpgroup, in both CTAs, arrives there (mbarrier_arrive_cluster to rank 0).
        mbarrier_arrive_cluster(&smem.ld2mma[consumer], 0);
        // END SOLUTION step10
      }
      // BEGIN SOLUTION step11: a partial sum stores the box to its slot (store_partial); any other block stages and stores it (store_box).
      if (partial) {
        store_partial(slot, v, b, t);
      } else {
        store_box(smem, map_d, v, m0, n0, N, writes, b, consumer, t, barrier);
      }
      // END SOLUTION step11
    }

    // BEGIN SOLUTION step11: a partial sum takes its ticket (reduce_split); all but the last part are done with the item; the last adds the parts up box by box (sum_partials) and stores each box (store_box).
    if (!partial || !reduce_split(smem, ticket, item, consumer, t, barrier)) continue;
#pragma unroll 1  // once per split tile: unrolled, it would only make the kernel longer
    for (int b = 0; b < kStoreBoxes<kTileN>; ++b) {
      uint32_t v[kStoreCols / kLdColumns][kLdColumns];
      sum_partials<kTileN>(scratch, item, rank, consumer, v, b, t);
      store_box(smem, map_d, v, m0, n0, N, writes, b, consumer, t, barrier);
    }
    // END SOLUTION step11
  }
  // The CTA's shared memory is released when it exits: the last store must have read it first.
  // (Its writes to D may still be in flight; the kernel's completion covers them.)
  if (t == 0) tma_store_wait_group_read<0>();
}

template <int kTileN>
__global__ void __launch_bounds__(kThreads)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_d, int64_t M, int64_t N, int group_m, SplitK split,
           SplitScratch scratch) {
  SharedStorage<kTileN>& smem = dynamic_smem<SharedStorage<kTileN>>();
  const int warp = warp_id();
  const uint32_t rank = cluster_ctarank();

  // Setup, once per CTA. Both CTAs initialise the same barriers (the layout is the same in both),
  // each CTA uses the ones its role needs.
  if (threadIdx.x == 0) {
    // The maps live in kernel-parameter memory; fetching them into the TMA unit's descriptor
    // cache now hides that latency behind the barriers below.
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_d);
#pragma unroll
    for (int s = 0; s < kStages<kTileN>; ++s) {
      mbarrier_init(&smem.tma2mma[s], 1);                 // the leader's arrive.expect_tx (both CTAs' bytes)
      mbarrier_init(&smem.mma2tma[s], kReleaseArrivals);  // each MMA warp's tcgen05.commit after its MMAs
    }
#pragma unroll
    for (int i = 0; i < kConsumers; ++i) {
      mbarrier_init(&smem.mma2ld[i], 1);                // MMA warp i's tcgen05.commit after its tile's last MMAs
      mbarrier_init(&smem.ld2mma[i], kLd2mmaArrivals);  // warpgroup i of both CTAs, once it has read TMEM
    }
    fence_mbarrier_init();  // the inits are visible to the async proxy (TMA, commit) and to the peer CTA
  }
  // BEGIN SOLUTION step09: a cluster barrier (every thread of both CTAs): the peer is running and its barriers are initialised; then warp 0 allocates the pair's TMEM, tcgen05.alloc.cta_group::2 (kTmemColumns), and relinquishes the permit (cta_group::2), in both CTAs.
  // The peer's TMA, commits and remote arrives may reach this CTA's barriers as soon as it passes
  // this barrier, and the pair's allocation is made by both CTAs once both run.
  cluster_sync();
  if (warp == 0) {
    tmem_alloc<kCtaGroup, kTmemColumns<kTileN>>(&smem.tmem_base);
    tmem_relinquish_alloc_permit<kCtaGroup>();  // no more allocations here: a waiting CTA may allocate
  }
  // END SOLUTION step09
  // The cluster barrier publishes the TMEM address (an ordinary shared-memory write by
  // tcgen05.alloc) and orders both CTAs' allocations before the leader's first MMA, which writes
  // both CTAs' TMEM. The tcgen05 fences around it order warp 0's alloc before every thread's later
  // tcgen05 operations (the MMAs, the loads).
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc = smem.tmem_base;  // lane 0, first allocated column

  const TileScheduler sched((M + kTileM - 1) / kTileM, (N + kTileN - 1) / kTileN, kClusterM, group_m);

  // BEGIN SOLUTION step10: warp kProducerWarp: one elected thread runs producer(); warp kFirstMmaWarp + i: in the leader CTA only (cluster rank 0), one elected thread runs mma() for consumer i; warpgroup i (warps 4 i .. 4 i + 3) runs epilogue() for consumer i. Every thread then falls through to the teardown.
  if (warp == kProducerWarp) {
    if (elect_one_sync()) producer(smem, &map_a, &map_b, sched, split);
  } else if (warp >= kFirstMmaWarp) {
    if (rank == 0 && elect_one_sync()) mma(smem, split, tmem_acc, warp - kFirstMmaWarp);
  } else {
    epilogue(smem, &map_d, sched, split, scratch, M, N, tmem_acc, warpgroup_id());
  }
  // END SOLUTION step10

  // Teardown. By now every MMA has completed (each CTA's epilogues waited for the last mma2ld),
  // every tcgen05.ld has completed (wait::ld) and every commit has arrived in this CTA (the
  // producer's tail). The fences order those tcgen05 operations, in every role, before warp 0's
  // dealloc.
  // BEGIN SOLUTION step09: reconverge each warp (the producer and the MMA issuers ran on one thread), then a cluster barrier between the fences: no CTA frees the pair's TMEM while the other may still use it, and none exits while its peer may still arrive on its barriers (the odd CTA's last ld2mma arrives).
  warp_sync();
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  // END SOLUTION step09
  if (warp == 0) {
    warp_sync();  // tcgen05.dealloc is .sync.aligned, and lane 0 alone ran the last store's wait
    tmem_dealloc<kCtaGroup, kTmemColumns<kTileN>>(tmem_acc);
  }
}

// The launcher of one width, with its knobs exposed: `group_m`, the L2 group size, `clusters`, the
// grid in clusters (<= 0: every cluster that fits on the GPU at once, the persistent grid), and the
// split of the last wave: at least `min_split_slices` K slices per part, at most `max_splits` parts
// (1: no split). run() uses kGroupM, the persistent grid, kMinSplitSlices and kMaxSplits. Every grid
// and split computes a correct D; its float rounding depends on both (the K order of a tile follows
// its worker's turn, and a split tile adds its parts in part order).
template <int kTileN>
Status run_width(const Problem& p, cudaStream_t stream, int group_m, int clusters, int min_split_slices,
                 int max_splits) {
  const TileScheduler sched((p.m + kTileM - 1) / kTileM, (p.n + kTileN - 1) / kTileN, kClusterM, group_m);
  const int64_t k_slices = (p.k + kTileK - 1) / kTileK;
  // The tensor maps: A (M x K) in boxes of one K slice of a tile (both blocks, 256 rows), B (N x K)
  // in boxes of one K slice of half a tile (each CTA of the pair loads one half), D (M x N) in boxes
  // of 64 columns of a block; all in the 128-byte swizzle that the MMA descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kBRowsPerCta<kTileN>, kTileK, Swizzle::b128); !s.ok())
    return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kBlockM, kStoreCols, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(kThreads);
  cfg.cluster = dim3(kClusterM);
  cfg.smem_bytes = smem_bytes<SharedStorage<kTileN>>();
  cfg.stream = stream;
  // The persistent grid: the clusters resident at once (one CTA per SM, both CTAs of a cluster in
  // one GPC), and the work split for that many; SplitK::grid then says how many to launch (every
  // cluster with an item when the last wave is split, else the grid of whole waves). An explicit
  // `clusters` is taken as it is: with more clusters than items, some find no work and just exit
  // (both CTAs alike).
  const bool persistent = clusters <= 0;
  if (persistent)
    if (Status s = resident_clusters(kernel<kTileN>, kThreads, cfg.smem_bytes, kClusterM, &clusters); !s.ok()) return s;
  const SplitK split(sched.num_work(), clusters, k_slices, min_split_slices, max_splits);
  if (persistent) clusters = static_cast<int>(split.grid());
  cfg.grid = dim3(static_cast<unsigned>(clusters * kClusterM));
  // The split tiles' tickets and partial sums, in this stream's scratch (zero tickets, left zero).
  SplitScratch scratch;
  if (split.parts() > 1) {
    const size_t consumers = static_cast<size_t>(split.split_units()) * kClusterM * kConsumers;
    Scratch buffers;
    if (Status s = stream_scratch(stream, consumers,
                                  consumers * split.parts() * kPartialFloat4s<kTileN> * sizeof(float4), &buffers);
        !s.ok())
      return s;
    scratch.partials = static_cast<float4*>(buffers.data);
    scratch.tickets = buffers.counters;
  }
  return launch(kernel<kTileN>, cfg, map_a, map_b, map_d, p.m, p.n, group_m, split, scratch);
}

// The widths run() chooses from, each with what one K slice of its CTA tile costs, scaled so that
// 256 columns cost 256: the hopper track's values, measured there on an H200 (its NOTES.md, the
// width sweep); not measured on a B200. Narrow tiles cost more per column: the same A box and
// barrier round trips serve fewer.
constexpr TileWidth kWidths[] = {{256, 256}, {192, 190}, {128, 136}, {64, 100}};
// The rule (common/tile_width.cuh): the split as run_width makes it; a split part's round trip
// through global memory costs about 14 slices and a narrower width must promise at least 5 % less
// work to be taken: the hopper track's values too, not measured on a B200.
constexpr WidthRule kWidthRule = {kMinSplitSlices, kMaxSplits, /*split_cost_slices=*/14, /*narrower_gain_percent=*/5};

// The width run() uses: the one whose busiest cluster has the least work, counted in K slices of
// its tiles and parts and weighted by each width's slice cost (choose_width), for the clusters this
// GPU holds at once.
Status choose_tile_n(const Problem& p, int* tile_n) {
  int clusters = 0;  // every width holds one CTA per SM (fits<>), so as many fit at each
  if (Status s = resident_clusters(kernel<256>, kThreads, smem_bytes<SharedStorage<256>>(), kClusterM, &clusters);
      !s.ok())
    return s;
  *tile_n = choose_width(p.m, p.n, p.k, kTileM, kTileK, kClusterM, clusters, kWidths, 4, kWidthRule);
  return {};
}

// The launcher of any width: `tile_n` the columns of one of kWidths, or 0 for choose_tile_n's; the
// other knobs as run_width's.
Status run_with(const Problem& p, cudaStream_t stream, int tile_n, int group_m, int clusters, int min_split_slices,
                int max_splits) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  if (tile_n == 0)
    if (Status s = choose_tile_n(p, &tile_n); !s.ok()) return s;
  switch (tile_n) {
    case 256: return run_width<256>(p, stream, group_m, clusters, min_split_slices, max_splits);
    case 192: return run_width<192>(p, stream, group_m, clusters, min_split_slices, max_splits);
    case 128: return run_width<128>(p, stream, group_m, clusters, min_split_slices, max_splits);
    case 64: return run_width<64>(p, stream, group_m, clusters, min_split_slices, max_splits);
    default:
      return Status::failure("step 11: tile width " + std::to_string(tile_n) + " is not one of 256, 192, 128, 64");
  }
}

Status run(const Problem& p, cudaStream_t stream) {
  return run_with(p, stream, /*tile_n=*/0, kGroupM, /*clusters=*/0, kMinSplitSlices, kMaxSplits);
}

}  // namespace gemm::step11::blackwell
