// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 12 of 12: the tile per problem.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. The kernel is a template on its tiling, `TileConfig`: the CTA tile's rows (`kTileM`: 256, two
//      consumers, or 128, one), its width (`kTileN`, the MMA's N: 64 or 128 columns) and the CTAs of
//      a pair (`kClusterM`: 2, cta_group::2, or 1, cta_group::1 with the CTA's own loads); so is
//      everything that depends on them: the warps, the idesc (`kIdesc`), the TMEM columns
//      (`kTmemColumns`), the ring's depth (`ring_stages`), the B rows each CTA loads
//      (`kBRowsPerCta`), the barrier counts, the boxes stored, the partial sums (`kPartialFloat4s`);
//      `fits` checks each tiling's shared memory and TMEM, and `run_tiling` launches one.
//   2. `choose_tiling`: `run` picks the tiling whose busiest worker has the least work, counted in
//      K slices of its tiles and parts and weighted by each tiling's slice cost (`kTilings`,
//      `kTileRule`; the rule is `choose_tile` of common/tile_config.cuh, which arrives with this
//      lesson), from the problem's shape and the CTAs the GPU holds. No timing at run time: a
//      problem gets the same tiling, and the same D, every run.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

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
#include "common/tile_config.cuh"
#include "common/tma.cuh"
#include "common/trace.cuh"
#include "common/warp.cuh"

namespace gemm::step12::blackwell {

using namespace gemm::blackwell;

constexpr int kTileK = 64;      // one 128-byte swizzle atom of fp16
constexpr int kLdColumns = 32;  // columns per tcgen05.ld.32x32b.x32
// Each consumer (MMA warp i, accumulator i and epilogue warpgroup i) owns a block of kBlockM rows
// of the CTA's tile: the 128 TMEM lanes.
constexpr int kBlockM = 128;
// A tiling: the CTA tile, kTileM x kTileN (256 rows: two consumers, whose blocks are stacked in M,
// each MMA covering block i against the same B, into its own kTileN TMEM columns; 128: one), and
// the CTAs of a pair along M, kClusterM (2: cta_group::2, the pair's MMA reads both CTAs' shared
// memory and each CTA holds half of the B tile; 1: cta_group::1, a cluster of one CTA that loads
// all of B, where "the pair" and "both CTAs" below mean this CTA alone). The kernel and everything
// below that depends on the tile is a template on it; kTilings lists the ones run() chooses from
// (choose_tiling).
template <int kRows, int kColumns, int kCtas>
struct TileConfig {
  static constexpr int kTileM = kRows;
  static constexpr int kTileN = kColumns;
  static constexpr int kClusterM = kCtas;
  static constexpr int kConsumers = kRows / kBlockM;
};
template <class Tiling>
constexpr int kCtaGroup = Tiling::kClusterM;
template <class Tiling>
constexpr int kBRowsPerCta = Tiling::kTileN / kCtaGroup<Tiling>;
template <class Tiling>
constexpr int kMmaM = kCtaGroup<Tiling>* kBlockM;  // the MMA's M: 128 rows of each CTA
// The MMA's commits go to every CTA of the pair: ranks 0 and 1, 0b11 (0b1 alone).
template <class Tiling>
constexpr uint16_t kPairMask = static_cast<uint16_t>((1u << kCtaGroup<Tiling>)-1);
// The warps: the epilogue warpgroups first (warps 0-7 at two consumers; warp w % 4 reaches TMEM
// lanes 32 (w % 4) .., so each warpgroup reads all 128 lanes of its accumulator), then the producer
// and the MMA warps.
constexpr int kEpilogueWarps = 4;  // per warpgroup
template <class Tiling>
constexpr int kProducerWarp = Tiling::kConsumers* kEpilogueWarps;
template <class Tiling>
constexpr int kFirstMmaWarp = kProducerWarp<Tiling> + 1;  // MMA warp i is warp kFirstMmaWarp + i
template <class Tiling>
constexpr int kThreads = (kFirstMmaWarp<Tiling> + Tiling::kConsumers) * kWarpSize;
constexpr int kEpilogueThreads = kEpilogueWarps * kWarpSize;
// Named barriers of the epilogue warpgroups: warpgroup i syncs on kEpilogueBarrier + i (id 0 is
// __syncthreads, which would wait for every warp; one id for both could complete with threads of
// both).
constexpr uint32_t kEpilogueBarrier = 1;
// The fp32 accumulators take one TMEM column per output column; an allocation is a power of 2
// of at least 32 columns, and always spans all 128 lanes. Each CTA allocates kTileN columns per
// consumer: its 128 rows of each consumer's accumulator.
template <class Tiling>
constexpr uint32_t kTmemColumns = static_cast<uint32_t>(Tiling::kTileN) * Tiling::kConsumers;
// One MMA covers one consumer's block: M kMmaM N kTileN (K16), fp16 x fp16 -> fp32, A and B
// K-major. With cta_group::2 the idesc carries the PAIR's M and N. A constant expression, so an
// illegal shape would not compile. 0x10200010 and 0x10100010 for the pair at 128 and 64 columns,
// 0x08200010 and 0x08100010 for one CTA.
template <class Tiling>
constexpr uint32_t kIdesc = make_idesc_f16(kCtaGroup<Tiling>, kMmaM<Tiling>, Tiling::kTileN);
// The output tile is stored as boxes of 64 columns: a SW128 box row is at most 128 bytes.
constexpr int kStoreCols = 64;
template <class Tiling>
constexpr int kStoreBoxes = Tiling::kTileN / kStoreCols;
// Bytes one K slice brings into ONE CTA's shared memory: A kTileM x 64 (every block) and its part
// of B, kBRowsPerCta x 64. TMA always delivers the whole box, the zeros it fills past the edges
// included.
template <class Tiling>
constexpr uint32_t kStageBytes = kTileK * sizeof(__half) * (Tiling::kTileM + kBRowsPerCta<Tiling>);
// What the leader's tma2mma expects per phase: the bytes of the pair, both CTAs' loads complete on
// it. Never the whole cluster's (here the same), and never one CTA's: too many expected bytes never
// complete the phase, too few complete it before the data has landed.
template <class Tiling>
constexpr uint32_t kPairStageBytes = static_cast<uint32_t>(kCtaGroup<Tiling>) * kStageBytes<Tiling>;
// A stage is free once every MMA warp's MMAs reading it have completed: each commits to it.
template <class Tiling>
constexpr uint32_t kReleaseArrivals = Tiling::kConsumers;
// The leader's ld2mma[i]: every thread of epilogue warpgroup i of both CTAs, once it has read its
// TMEM.
template <class Tiling>
constexpr uint32_t kLd2mmaArrivals = kCtaGroup<Tiling>* kEpilogueThreads;
// Tile rows per L2 group of the scheduler: the hopper track's measured value (step 6's README.md),
// rounded up by the scheduler to a multiple of the cluster.
constexpr int kGroupM = 16;
// Splitting the last wave: each part gets at least kMinSplitSlices K slices, at most kMaxSplits
// parts. A split costs each part a store of its fp32 sums, a GPU-wide fence and a ticket, and the
// last part the loads of every part's sum: a part must save more slices than that (the hopper
// track's measurement, NOTES.md).
constexpr int kMinSplitSlices = 12;
constexpr int kMaxSplits = 16;
// An epilogue warpgroup's block of a split tile in fp32: its 128 threads' rows, as float4s in the
// order [column / 4][thread] (a warp's 32 float4 accesses are 512 contiguous bytes).
template <class Tiling>
constexpr int kPartialFloat4s = Tiling::kTileN / 4 * kEpilogueThreads;
// What one CTA may have on the GPUs of this track (B200, GB200: 227 KB of dynamic shared memory).
constexpr size_t kSmemLimit = 227 * 1024;
// The ring: as deep as fits beside the staging buffers and 1 KB for the barriers, at most 8 stages
// (the pair at 256 rows: 4 at 128 columns, 5 at 64; the static_asserts on SharedStorage check the
// fit).
template <class Tiling>
constexpr int ring_stages() {
  const size_t staging = Tiling::kConsumers * Tiling::kTileN * kBlockM * sizeof(__half);
  const int fit = static_cast<int>((kSmemLimit - 1024 - staging) / kStageBytes<Tiling>);
  return fit < 8 ? fit : 8;
}
template <class Tiling>
constexpr int kStages = ring_stages<Tiling>();

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it). The layout
// is the same in both CTAs: the leader's descriptors address its own stage and the tensor core
// reads the peer's operands at the same offsets.
template <class Tiling>
struct alignas(1024) SharedStorage {
  __half a[kStages<Tiling>][Tiling::kTileM * kTileK];        // every block of A, written by TMA
  __half b[kStages<Tiling>][kBRowsPerCta<Tiling> * kTileK];  // this CTA's part of B (TMA)
  __half d[Tiling::kConsumers][kStoreBoxes<Tiling>]
          [kBlockM * kStoreCols];       // each warpgroup's output block, read by TMA
  uint64_t tma2mma[kStages<Tiling>];    // mbarrier (leader's): the pair's K slice has landed; unused in the odd CTA
  uint64_t mma2tma[kStages<Tiling>];    // mbarrier (each CTA's): every MMA warp's MMAs reading the stage completed
  uint64_t mma2ld[Tiling::kConsumers];  // mbarrier (each CTA's): every MMA of consumer i's tile completed
  uint64_t ld2mma[Tiling::kConsumers];  // mbarrier (leader's): both warpgroups i have read accumulator i
  uint32_t tmem_base;                   // tcgen05.alloc writes the accumulators' address here
  uint32_t ticket[Tiling::kConsumers];  // each epilogue warpgroup's split ticket
};
template <class Tiling>
constexpr bool fits() {
  static_assert(sizeof(SharedStorage<Tiling>::a[0]) % 1024 == 0 && sizeof(SharedStorage<Tiling>::b[0]) % 1024 == 0 &&
                    sizeof(SharedStorage<Tiling>::d[0][0]) % 1024 == 0 && kBlockM * kTileK * sizeof(__half) % 1024 == 0,
                "every tile, and every block of A, must start on a 1024-byte boundary");
  static_assert(smem_bytes<SharedStorage<Tiling>>() <= kSmemLimit,
                "the ring and the staging buffers must fit in shared memory");
  // Shared memory alone keeps the CTAs on an SM within the accumulators TMEM holds, so no
  // tcgen05.alloc waits for a neighbour's columns (step 3 padded its request to make sure).
  static_assert(tmem_limited_smem_bytes(smem_bytes<SharedStorage<Tiling>>(), kTmemColumns<Tiling>) ==
                    smem_bytes<SharedStorage<Tiling>>(),
                "TMEM must not hold fewer accumulators than shared memory holds CTAs");
  // One CTA per SM, as the pair's TMEM needs: a pair that shared its SMs with another would contend
  // with it for their TMEM, and two pairs waiting in tcgen05.alloc for each other's columns deadlock.
  static_assert(sizeof(SharedStorage<Tiling>) > kSmemLimit / 2,
                "one CTA per SM: no other CTA pair shares this pair's TMEM");
  return true;
}

// Where the parts of the split tiles meet (SplitK): for split unit u, part p, CTA rank r and
// consumer c, a partial sum at partials + (((u x parts + p) x kClusterM + r) x kConsumers + c) x
// kPartialFloat4s, and a ticket counter at tickets[(u x kClusterM + r) x kConsumers + c]. The
// tickets are zero before a launch and are left zero after it.
struct SplitScratch {
  float4* partials = nullptr;
  uint32_t* tickets = nullptr;
};

// Two fp32 accumulator cells (raw TMEM bits) rounded to fp16 and packed as D stores them: the
// lower column in the low half.
__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

// Loads K slice `k_slice` of this CTA's tile at (m0, n0) into the producer's next stage, once that
// stage is free, and moves the producer on: the A box of every block and this CTA's part of the B
// tile, rows n0 + kBRowsPerCta rank onwards (without a pair, all of it). One thread.
template <class Tiling>
__device__ __forceinline__ void load_slice(SharedStorage<Tiling>& smem, PipelineState<kStages<Tiling>>& write,
                                           const CUtensorMap* map_a, const CUtensorMap* map_b, int64_t m0, int64_t n0,
                                           int64_t k_slice, uint32_t rank) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on mma2tma[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step09: the leader (rank 0) announces the pair's bytes, kPairStageBytes, on its tma2mma[s] (mbarrier_arrive_expect_tx); then each CTA loads its A box at {k0, m0} and its part of B at {k0, n0 + kBRowsPerCta rank} into stage s = write.stage with tma_load_2d_cta_pair, whose bytes complete on the leader's barrier; a tiling without a pair (kCtaGroup 1) loads both with tma_load_2d on its own barrier.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  if (rank == 0) mbarrier_arrive_expect_tx(&smem.tma2mma[s], kPairStageBytes<Tiling>);
  if constexpr (kCtaGroup<Tiling> == 2) {
    tma_load_2d_cta_pair(smem.a[s], map_a, &smem.tma2mma[s], k0, static_cast<int32_t>(m0));
    tma_load_2d_cta_pair(smem.b[s], map_b, &smem.tma2mma[s], k0,
                         static_cast<int32_t>(n0 + rank * kBRowsPerCta<Tiling>));
  } else {  // no pair: this CTA's own barrier, the whole B
    tma_load_2d(smem.a[s], map_a, &smem.tma2mma[s], k0, static_cast<int32_t>(m0));
    tma_load_2d(smem.b[s], map_b, &smem.tma2mma[s], k0, static_cast<int32_t>(n0));
  }
  // END SOLUTION step09
  write.advance();
}

// The producer: one thread in each CTA. Walks this cluster's work units in the scheduler's order
// and loads every K slice of this CTA's tile of each into the ring; load_slice waits for a free
// stage. Both CTAs walk the same units, so their rings advance in step.
template <class Tiling>
__device__ __forceinline__ void producer(SharedStorage<Tiling>& smem, const CUtensorMap* map_a,
                                         const CUtensorMap* map_b, const TileScheduler& sched, const SplitK& split) {
  PipelineState<kStages<Tiling>> write;  // the stage the producer fills next, across tiles
  const uint32_t rank = cluster_ctarank();
  // BEGIN SOLUTION step11: for each of this cluster's work items (split.begin(cluster_id_x(), cluster_count_x()), split.item(cursor.unit)), load K slices item.k_begin .. item.k_end - 1, the i-th being k_slice_in_turn(turn, i, item.k_begin, item.k_end) with turn = cursor.turn(), worked out once per tile, of this CTA's tile of the item's unit, sched.tile(unit, rank) (origin tile.m * 256, tile.n * 128), with load_slice; a TraceTile (TraceRole::producer, the unit) spans each tile for the timeline; a phantom tile past M is loaded too (the pair's MMA reads it, zeros, and the leader expects its bytes).
  for (WorkCursor cursor = split.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance()) {
    const WorkItem item = split.item(cursor.unit);
    const Tile tile = sched.tile(item.unit, static_cast<int>(rank));
    const int64_t turn = cursor.turn();  // once per tile: a 64-bit division
    const TraceTile traced(TraceRole::producer, cursor.unit);
    for (int64_t i = 0; i < item.k_end - item.k_begin; ++i)
      load_slice(smem, write, map_a, map_b, tile.m * Tiling::kTileM, tile.n * Tiling::kTileN,
                 k_slice_in_turn(turn, i, item.k_begin, item.k_end), rank);
  }
  // END SOLUTION step11
  // BEGIN SOLUTION step07: the tail: for the next kStages positions of the ring, wait (mbarrier_wait) on mma2tma[write.stage] with write.empty_parity() and advance write (the commits of the last slices, which no load waited for) before the CTA may tear down.
  // The commits of the last kStages slices were never waited on: no load followed them. Their
  // arrivals on mma2tma are asynchronous, and must land before the barriers' shared memory goes
  // away and TMEM is released. A position of the ring that was never filled passes at once (the
  // producer's parity of a fresh barrier).
  for (int s = 0; s < kStages<Tiling>; ++s) {
    mbarrier_wait(&smem.mma2tma[write.stage], write.empty_parity(), WaitTag{"mma2tma", "producer tail"});
    write.advance();
  }
  // END SOLUTION step07
}

// The MMAs of consumer `consumer` for one tile pair: every K slice of its block of A from the ring
// into its accumulator `acc`, each stage released in both CTAs by a commit once its MMAs complete
// (both MMA warps commit every slice); then one commit tells both CTAs' epilogue warpgroups
// `consumer` that the accumulator is final. One thread, in the leader CTA only.
template <class Tiling>
__device__ __forceinline__ void mma_tile(SharedStorage<Tiling>& smem, PipelineState<kStages<Tiling>>& read,
                                         int64_t k_slices, uint32_t acc, int consumer) {
  uint32_t a_block = 0;  // the byte offset of this consumer's block of A in a stage
  // BEGIN SOLUTION step10: consumer `consumer` reads block `consumer` of A, kBlockM rows, consumer * kBlockM * kTileK * 2 bytes into each stage.
  a_block = static_cast<uint32_t>(consumer) * kBlockM * kTileK * sizeof(__half);
  // END SOLUTION step10
  for (int64_t ks = 0; ks < k_slices; ++ks) {
    // BEGIN SOLUTION step05: wait (mbarrier_wait) on tma2mma[read.stage] with the consumer's parity, read.full_parity(); then tcgen05_fence_after_thread_sync.
    mbarrier_wait(&smem.tma2mma[read.stage], read.full_parity(), WaitTag{"tma2mma", "mma"});
    // Orders the MMAs below after the wait.
    tcgen05_fence_after_thread_sync();
    // END SOLUTION step05

    // BEGIN SOLUTION step02: the slice's MMAs, one per k16 step on make_smem_desc_k_sw128 descriptors of stage read.stage; enable_input_d is false only for the tile's very first MMA (first K slice, first k16 step); the MMA is the pair's, tcgen05_mma_f16<kCtaGroup> with kIdesc, on this consumer's block of A (a_block bytes into the stage) into its accumulator acc.
    // tcgen05.mma is issued by one thread and runs asynchronously, in issue order on the same
    // accumulator: the MMAs of consecutive slices queue up behind each other.
#pragma unroll
    for (int k = 0; k < kTileK / kMmaK; ++k) {
      const uint32_t k_bytes = k * kMmaK * sizeof(__half);  // 32 B per k16 slice
      const uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(smem.a[read.stage]) + a_block + k_bytes);
      const uint64_t b_desc = make_smem_desc_k_sw128(smem_addr(smem.b[read.stage]) + k_bytes);
      tcgen05_mma_f16<kCtaGroup<Tiling>>(acc, a_desc, b_desc, kIdesc<Tiling>, /*enable_input_d=*/ks > 0 || k > 0);
    }
    // END SOLUTION step02

    // BEGIN SOLUTION step09: tcgen05_commit_multicast<kCtaGroup> to mma2tma[read.stage] of both CTAs (kPairMask): the stage is free in both once these MMAs, which read both CTAs' shared memory, complete.
    tcgen05_commit_multicast<kCtaGroup<Tiling>>(&smem.mma2tma[read.stage], kPairMask<Tiling>);
    // END SOLUTION step09
    read.advance();
  }
  // BEGIN SOLUTION step10: one more commit, tcgen05_commit_multicast<kCtaGroup> to mma2ld[consumer] of both CTAs (kPairMask): it arrives once every MMA of this consumer's tile has completed, in both CTAs' TMEM.
  tcgen05_commit_multicast<kCtaGroup<Tiling>>(&smem.mma2ld[consumer], kPairMask<Tiling>);
  // END SOLUTION step10
}

// One epilogue warpgroup's part of a split tile (SplitK), its row of the block read (v, fp32 bits):
// stores it to its own slot in global memory, then takes a ticket. The part that takes the last
// ticket (parts - 1) adds every part's slot into v, in part order (so D does not depend on which
// part finished last), and returns true: it stores the block. The others return false. `t` is the
// thread's index in its warpgroup.
template <class Tiling>
__device__ __forceinline__ bool reduce_split(SharedStorage<Tiling>& smem,
                                             uint32_t (&v)[Tiling::kTileN / kLdColumns][kLdColumns],
                                             const SplitScratch& scratch, const WorkItem& item, uint32_t rank,
                                             int consumer, int t, uint32_t barrier) {
  auto slot = [&](int part) {
    return scratch.partials +
           (((item.split * item.parts + part) * Tiling::kClusterM + rank) * Tiling::kConsumers + consumer) *
               kPartialFloat4s<Tiling>;
  };
  uint32_t* ticket = scratch.tickets + (item.split * Tiling::kClusterM + rank) * Tiling::kConsumers + consumer;
  // BEGIN SOLUTION step11: store v to slot(item.part) (columns 4i .. 4i + 3 as a float4 at [i * kEpilogueThreads + t]; v holds float bits: tmem_f32 and f32_bits convert), sync the warpgroup (named_barrier_sync); thread 0 fences (fence_acq_rel_gpu: release), takes a ticket (atomic_add_gpu) into smem.ticket[consumer], fences again (acquire); sync again; all but the last part return false; the last sums slots 0 .. parts - 1 in order into v and resets the ticket to 0 (then it returns true).
  float4* mine = slot(item.part);
#pragma unroll
  for (int i = 0; i < Tiling::kTileN / 4; ++i) {
    const uint32_t* w = &v[4 * i / kLdColumns][4 * i % kLdColumns];
    mine[i * kEpilogueThreads + t] = make_float4(tmem_f32(w[0]), tmem_f32(w[1]), tmem_f32(w[2]), tmem_f32(w[3]));
  }
  // The named barrier orders every thread's stores before thread 0's release fence, which makes
  // them visible GPU-wide before its ticket (fences are cumulative); thread 0's acquire fence after
  // its ticket orders every part's stores, released before their tickets, before the second barrier
  // and so before any thread's loads below in the last part.
  named_barrier_sync(barrier, kEpilogueThreads);
  if (t == 0) {
    fence_acq_rel_gpu();
    smem.ticket[consumer] = atomic_add_gpu(ticket, 1);
    fence_acq_rel_gpu();
  }
  named_barrier_sync(barrier, kEpilogueThreads);
  if (smem.ticket[consumer] != static_cast<uint32_t>(item.parts - 1)) return false;
  for (int part = 0; part < item.parts; ++part) {
    const float4* sums = slot(part);
#pragma unroll
    for (int i = 0; i < Tiling::kTileN / 4; ++i) {
      const float4 x = sums[i * kEpilogueThreads + t];
      uint32_t* w = &v[4 * i / kLdColumns][4 * i % kLdColumns];
      const float base[4] = {part == 0 ? 0.0f : tmem_f32(w[0]), part == 0 ? 0.0f : tmem_f32(w[1]),
                             part == 0 ? 0.0f : tmem_f32(w[2]), part == 0 ? 0.0f : tmem_f32(w[3])};
      w[0] = f32_bits(base[0] + x.x);
      w[1] = f32_bits(base[1] + x.y);
      w[2] = f32_bits(base[2] + x.z);
      w[3] = f32_bits(base[3] + x.w);
    }
  }
  if (t == 0) *ticket = 0;  // every part has taken its ticket: zero again for the next launch
  // END SOLUTION step11
  return true;
}

// The epilogue of consumer `consumer`'s block of this CTA's tile, at (m0, n0): read accumulator
// `acc` (TMEM -> registers), release it on the leader's ld2mma[consumer], then fp16 -> this
// warpgroup's staging buffer (SW128 boxes) -> TMA store, unless the block `writes` nothing (it
// starts past M) or is a part of a split tile that is not the last to finish. Epilogue warpgroup
// `consumer`; thread t owns row t of the block.
template <class Tiling>
__device__ __forceinline__ void epilogue_tile(SharedStorage<Tiling>& smem, const CUtensorMap* map_d, int64_t m0,
                                              int64_t n0, int64_t N, bool writes, uint32_t acc, int consumer,
                                              const SplitScratch& scratch, const WorkItem& item) {
  const TraceEpilogue traced_epilogue;
  const int t = static_cast<int>(threadIdx.x) % kEpilogueThreads;               // 0 .. 127: the row in the block
  const uint32_t barrier = kEpilogueBarrier + static_cast<uint32_t>(consumer);  // this warpgroup's only
  const int warp = warp_id();
  // TMEM -> registers, the whole row: 4 x 32 columns.
  uint32_t v[Tiling::kTileN / kLdColumns][kLdColumns];  // columns 32 c .. 32 c + 31 of this thread's row, fp32 bits
#pragma unroll
  for (int c = 0; c < Tiling::kTileN / kLdColumns; ++c) {
    uint32_t taddr = 0;
    // BEGIN SOLUTION step01: warp w may read only TMEM lanes 32*(w%4)..+31 (tmem_lane_base(warp)): chunk c of its rows of this consumer's accumulator is at tmem_addr(acc, that lane base, column c * kLdColumns), and thread t of the warp gets lane base + t, i.e. tile row base + t.
    taddr = tmem_addr(acc, tmem_lane_base(warp), c * kLdColumns);
    // END SOLUTION step01
    tmem_ld_32x32b_x32(taddr, v[c]);
  }
  tmem_wait_ld();  // the loaded registers are valid only after the wait
#pragma unroll
  for (int c = 0; c < Tiling::kTileN / kLdColumns; ++c) tmem_fence_operands(v[c]);  // ... and not read before it

  // BEGIN SOLUTION step10: release accumulator `consumer` on the LEADER's ld2mma[consumer]: tcgen05_fence_before_thread_sync (orders the completed tcgen05.ld before the arrive), then every thread of this warpgroup, in both CTAs, arrives there (mbarrier_arrive_cluster to rank 0).
  tcgen05_fence_before_thread_sync();
  mbarrier_arrive_cluster(&smem.ld2mma[consumer], 0);
  // END SOLUTION step10

  // BEGIN SOLUTION step11: a part of a split item (item.parts > 1) of a block that writes goes on to stage and store it only if reduce_split (with this CTA's rank, cluster_ctarank()) says it is the last part to finish (every part of the tile agrees on writes).
  if (item.parts > 1 && writes && !reduce_split(smem, v, scratch, item, cluster_ctarank(), consumer, t, barrier))
    return;
  // END SOLUTION step11

  // BEGIN SOLUTION step07: the previous tile's TMA store may still be reading the staging buffer: thread 0 waits for it (tma_store_wait_group_read<0>), then the epilogue warpgroup syncs on its named barrier (named_barrier_sync) before anyone writes.
  if (t == 0) tma_store_wait_group_read<0>();
  named_barrier_sync(barrier, kEpilogueThreads);
  // END SOLUTION step07

  // Registers -> fp16 -> the staging buffer. Each thread writes 16-byte chunks of its own row; the
  // 8 rows of 8 consecutive lanes land in 8 different chunk positions of the swizzle: no bank
  // conflicts.
  const int row = t;
#pragma unroll
  for (int c = 0; c < Tiling::kTileN / kLdColumns; ++c) {
#pragma unroll
    for (int j = 0; j < kLdColumns; j += 8) {  // 8 fp16 = one 16-byte chunk
      const uint32_t* w = &v[c][j];
      const uint4 packed =
          make_uint4(pack_half2(w[0], w[1]), pack_half2(w[2], w[3]), pack_half2(w[4], w[5]), pack_half2(w[6], w[7]));
      const int col = c * kLdColumns + j;
      char* box = nullptr;  // the 64-column box holding column col
      uint32_t offset = 0;  // byte offset of (row, col) inside it
      // BEGIN SOLUTION step04: column col (a multiple of 8) is in box col / 64 of the staging buffer; inside it, it starts 16-byte chunk (col % 64) / 8 of row `row`, at sw128_offset(row, chunk).
      box = reinterpret_cast<char*>(smem.d[consumer][col / kStoreCols]);
      offset = sw128_offset(row, (col % kStoreCols) / 8);
      // END SOLUTION step04
      *reinterpret_cast<uint4*>(box + offset) = packed;
    }
  }
  // TMA reads shared memory through the async proxy; the stores above were generic-proxy stores.
  // Each writer fences its own stores, then the barrier waits for every writer.
  fence_proxy_async_shared();
  named_barrier_sync(barrier, kEpilogueThreads);

  // BEGIN SOLUTION step04: thread 0 stores box b at {n0 + 64 b, m0} with tma_store_2d (skip a box wholly past N, and every box of a tile that writes nothing; TMA clips the rest) and commits the bulk group (tma_store_commit_group); the next tile's epilogue waits for it to have read the buffer.
  if (t == 0) {
#pragma unroll
    for (int b = 0; b < kStoreBoxes<Tiling>; ++b)
      if (writes && n0 + b * kStoreCols < N)
        tma_store_2d(map_d, smem.d[consumer][b], static_cast<int32_t>(n0 + b * kStoreCols), static_cast<int32_t>(m0));
    tma_store_commit_group();
  }
  // END SOLUTION step04
}

// The MMA issuer of consumer `consumer`: one thread of MMA warp `consumer`, in the leader CTA only.
// For each work item: wait until both CTAs' epilogue warpgroups `consumer` have read its
// accumulator of the previous one, then its MMAs over the item's K slices (the accumulator starts
// afresh at the item's first slice: a part of a split tile sums only its own slices). Both MMA warps
// walk the same stages.
template <class Tiling>
__device__ __forceinline__ void mma(SharedStorage<Tiling>& smem, const SplitK& split, uint32_t tmem_acc, int consumer) {
  PipelineState<kStages<Tiling>> read;  // the stage the MMAs read next, across tiles
  int64_t local = 0;                    // this cluster's tile count
  uint32_t acc = 0;                     // this consumer's accumulator (a TMEM address)
  // BEGIN SOLUTION step10: consumer `consumer` accumulates at TMEM column 128 consumer (tmem_acc + consumer * kTileN).
  acc = tmem_acc + static_cast<uint32_t>(consumer) * Tiling::kTileN;
  // END SOLUTION step10
  for (WorkCursor cursor = split.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance(), ++local) {
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::mma, cursor.unit);
    const WorkItem item = split.item(cursor.unit);
    // BEGIN SOLUTION step10: wait (mbarrier_wait) on ld2mma[consumer] with parity (local & 1) ^ 1 (the first tile passes at once), then tcgen05_fence_after_thread_sync: the epilogue's reads of this accumulator come before these MMAs overwrite it.
    mbarrier_wait(&smem.ld2mma[consumer], static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma"});
    tcgen05_fence_after_thread_sync();
    // END SOLUTION step10
    mma_tile(smem, read, item.k_end - item.k_begin, acc, consumer);
  }
  // The drain: wait, as a next tile would, until warpgroup `consumer` of both CTAs have read the last
  // accumulator. The odd CTA's arrives on this barrier are remote; waiting for them here, before the
  // teardown's cluster barrier, leaves none in flight when the CTAs free TMEM and exit.
  mbarrier_wait(&smem.ld2mma[consumer], static_cast<uint32_t>(local & 1) ^ 1u, WaitTag{"ld2mma", "mma drain"});
}

// The epilogue of consumer `consumer`: epilogue warpgroup `consumer` of each CTA. For each work item,
// in the producer's order: wait for accumulator `consumer`, then the epilogue of block `consumer` of
// this CTA's tile.
template <class Tiling>
__device__ __forceinline__ void epilogue(SharedStorage<Tiling>& smem, const CUtensorMap* map_d,
                                         const TileScheduler& sched, const SplitK& split, const SplitScratch& scratch,
                                         int64_t M, int64_t N, uint32_t tmem_acc, int consumer) {
  const uint32_t rank = cluster_ctarank();
  const uint32_t acc = tmem_acc + static_cast<uint32_t>(consumer) * Tiling::kTileN;  // this consumer's accumulator
  int64_t local = 0;                                                                 // this cluster's tile count
  for (WorkCursor cursor = split.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance(), ++local) {
    const WorkItem item = split.item(cursor.unit);
    int64_t m0 = 0, n0 = 0;  // the block's first row and column
    // False for a block that starts past M (a phantom tile's, or block 1 of a tile that ends in
    // block 0): computed, and its accumulator read and released, but never stored.
    bool writes = false;
    // BEGIN SOLUTION step10: this CTA's tile is sched.tile(item.unit, rank), its origin (tile.m * 256, tile.n * 128); this warpgroup's block starts kBlockM * consumer rows further (64-bit); it writes D only if the block starts before M.
    const Tile tile = sched.tile(item.unit, static_cast<int>(rank));
    m0 = tile.m * Tiling::kTileM + consumer * kBlockM;
    n0 = tile.n * Tiling::kTileN;
    writes = m0 < M;
    // END SOLUTION step10
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::epilogue, cursor.unit);
    // BEGIN SOLUTION step07: wait (mbarrier_wait) on mma2ld[consumer] with parity local & 1; it completes once per tile.
    // Only the mbarrier tells that the MMAs have completed (a CTA barrier would prove only that
    // they were issued).
    mbarrier_wait(&smem.mma2ld[consumer], static_cast<uint32_t>(local & 1), WaitTag{"mma2ld", "epilogue"});
    // END SOLUTION step07
    tcgen05_fence_after_thread_sync();  // orders the tcgen05.ld below after the wait
    // tcgen05.ld is .sync.aligned: the whole warp must execute it together, and the lanes left the
    // wait's spin loop one by one.
    warp_sync();
    epilogue_tile(smem, map_d, m0, n0, N, writes, acc, consumer, scratch, item);
  }
  // The CTA's shared memory is released when it exits: the last store must have read it first.
  // (Its writes to D may still be in flight; the kernel's completion covers them.)
  if (threadIdx.x % kEpilogueThreads == 0) tma_store_wait_group_read<0>();
}

template <class Tiling>
__global__ void __launch_bounds__(kThreads<Tiling>)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_d, int64_t M, int64_t N, SplitK split, SplitScratch scratch) {
  SharedStorage<Tiling>& smem = dynamic_smem<SharedStorage<Tiling>>();
  const int warp = warp_id();
  const uint32_t rank = cluster_ctarank();

  // Setup, once per CTA. TMEM is allocated by one whole warp (tcgen05.alloc is .sync.aligned) and
  // freed by the same warp at the end; TMEM is not zeroed, each tile's first MMA overwrites it.
  // BEGIN SOLUTION step09: a cluster barrier first (cluster_sync, every thread of both CTAs: the peer is running); then warp 0 allocates the pair's TMEM, kTmemColumns (tmem_alloc<kCtaGroup, ...>: tcgen05.alloc.cta_group::2), and relinquishes the permit (tmem_relinquish_alloc_permit<kCtaGroup>), in both CTAs.
  cluster_sync();  // the pair's allocation is made by both CTAs, once both run
  if (warp == 0) {
    tmem_alloc<kCtaGroup<Tiling>, kTmemColumns<Tiling>>(&smem.tmem_base);
    tmem_relinquish_alloc_permit<kCtaGroup<Tiling>>();  // no more allocations here: a waiting CTA may allocate
  }
  // END SOLUTION step09
  if (threadIdx.x == 0) {
    // The maps live in kernel-parameter memory; fetching them into the TMA unit's descriptor
    // cache now hides that latency behind the barrier below.
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_d);
#pragma unroll
    for (int s = 0; s < kStages<Tiling>; ++s) {
      mbarrier_init(&smem.tma2mma[s], 1);                         // the leader's arrive.expect_tx (both CTAs' bytes)
      mbarrier_init(&smem.mma2tma[s], kReleaseArrivals<Tiling>);  // each MMA warp's tcgen05.commit after its MMAs
    }
#pragma unroll
    for (int i = 0; i < Tiling::kConsumers; ++i) {
      mbarrier_init(&smem.mma2ld[i], 1);  // MMA warp i's tcgen05.commit after its tile's last MMAs
      mbarrier_init(&smem.ld2mma[i], kLd2mmaArrivals<Tiling>);  // warpgroup i of both CTAs, once it has read TMEM
    }
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

  const TileScheduler sched((M + Tiling::kTileM - 1) / Tiling::kTileM, (N + Tiling::kTileN - 1) / Tiling::kTileN,
                            Tiling::kClusterM, kGroupM);

  // BEGIN SOLUTION step10: warp kProducerWarp: one elected thread (elect_one_sync) runs producer(); warp kFirstMmaWarp + i: in the leader CTA only (cluster rank 0), one elected thread runs mma() for consumer i; warpgroup i (warps 4 i .. 4 i + 3) runs epilogue() for consumer i. Every thread then falls through to the teardown.
  if (warp == kProducerWarp<Tiling>) {
    if (elect_one_sync()) producer(smem, &map_a, &map_b, sched, split);
  } else if (warp >= kFirstMmaWarp<Tiling>) {
    if (rank == 0 && elect_one_sync()) mma(smem, split, tmem_acc, warp - kFirstMmaWarp<Tiling>);
  } else {
    epilogue(smem, &map_d, sched, split, scratch, M, N, tmem_acc, warpgroup_id());
  }
  // END SOLUTION step10

  // Teardown. By now every MMA has completed (the epilogues waited for the last mma2ld), every
  // tcgen05.ld has completed (wait::ld) and every commit has arrived (the producer's tail). The
  // fences order those tcgen05 operations, in every role, before warp 0's dealloc.
  // BEGIN SOLUTION step09: reconverge each warp (warp_sync: the producer and the MMA issuers ran on one thread), then a cluster barrier (cluster_sync) between tcgen05_fence_before_thread_sync and tcgen05_fence_after_thread_sync: no CTA frees the pair's TMEM while the other may still use it, and none exits while its peer may still arrive on its barriers (the odd CTA's last ld2mma arrives).
  warp_sync();
  tcgen05_fence_before_thread_sync();
  cluster_sync();
  tcgen05_fence_after_thread_sync();
  // END SOLUTION step09
  if (warp == 0) {
    warp_sync();  // tcgen05.dealloc is .sync.aligned, and lane 0 alone ran the last store's wait
    tmem_dealloc<kCtaGroup<Tiling>, kTmemColumns<Tiling>>(tmem_acc);
  }
}

// The launcher of one tiling.
template <class Tiling>
Status run_tiling(const Problem& p, cudaStream_t stream) {
  const TileScheduler sched((p.m + Tiling::kTileM - 1) / Tiling::kTileM, (p.n + Tiling::kTileN - 1) / Tiling::kTileN,
                            Tiling::kClusterM, kGroupM);
  const int64_t k_slices = (p.k + kTileK - 1) / kTileK;
  // The tensor maps: A (M x K) in boxes of one K slice of a tile (both blocks), B (N x K) in boxes
  // of one K slice of kBRowsPerCta rows (each CTA of a pair loads one half), D (M x N) in boxes of 64
  // columns of a block; all in the 128-byte swizzle that the MMA descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, Tiling::kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kBRowsPerCta<Tiling>, kTileK, Swizzle::b128); !s.ok())
    return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kBlockM, kStoreCols, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(kThreads<Tiling>);
  cfg.cluster = dim3(Tiling::kClusterM);
  cfg.smem_bytes = smem_bytes<SharedStorage<Tiling>>();
  cfg.stream = stream;
  // The persistent grid: the clusters resident at once (one CTA per SM, both CTAs of a cluster in
  // one GPC), and the work split for that many; SplitK::grid then says how many to launch (every
  // cluster with an item when the last wave is split, else the grid of whole waves). Any grid and
  // split computes a correct D; its float rounding depends on both (the K order of a tile follows
  // its worker's turn, and a split tile adds its parts in part order).
  int clusters = 0;
  if (Status s = resident_clusters(kernel<Tiling>, kThreads<Tiling>, cfg.smem_bytes, Tiling::kClusterM, &clusters);
      !s.ok())
    return s;
  const SplitK split(sched.num_work(), clusters, k_slices, kMinSplitSlices, kMaxSplits);
  cfg.grid = dim3(static_cast<unsigned>(split.grid() * Tiling::kClusterM));
  // The split tiles' tickets and partial sums, in this stream's scratch (zero tickets, left zero).
  SplitScratch scratch;
  if (split.parts() > 1) {
    const size_t consumers = static_cast<size_t>(split.split_units()) * Tiling::kClusterM * Tiling::kConsumers;
    Scratch buffers;
    if (Status s = stream_scratch(stream, consumers,
                                  consumers * split.parts() * kPartialFloat4s<Tiling> * sizeof(float4), &buffers);
        !s.ok())
      return s;
    scratch.partials = static_cast<float4*>(buffers.data);
    scratch.tickets = buffers.counters;
  }
  return launch(kernel<Tiling>, cfg, map_a, map_b, map_d, p.m, p.n, split, scratch);
}

// The tilings run() chooses from, in the rule's order: rows per CTA, columns, CTAs per pair, and
// what one K slice of the tile costs, relative: the hopper track's values for the tilings of the
// same shape per worker (its README.md, the tiling sweep: 128 x N with a cluster for the pair, 64 x N
// without for one CTA of one consumer); not measured on a B200. Narrow tiles cost more per column:
// the same A box and barrier round trips serve fewer columns.
constexpr TileChoice kTilings[] = {{256, 128, 2, 136}, {256, 64, 2, 101}, {128, 128, 1, 80}, {128, 64, 1, 64}};
constexpr int kTilingCount = sizeof(kTilings) / sizeof(kTilings[0]);
template <int kIndex>
using TilingAt = TileConfig<kTilings[kIndex].rows, kTilings[kIndex].columns, kTilings[kIndex].cluster_ctas>;
static_assert(fits<TilingAt<0>>() && fits<TilingAt<1>>() && fits<TilingAt<2>>() && fits<TilingAt<3>>(),
              "every tiling run() chooses from");
// The rule (common/tile_config.cuh): the split as run_tiling makes it, what a split part's round
// trip through global memory costs in K slices, and how much less work a later tiling must promise
// to be taken: the hopper track's values too, not measured on a B200.
constexpr TileRule kTileRule = {kMinSplitSlices, kMaxSplits, /*split_cost_slices=*/14, /*gain_percent=*/5};

// The tiling run() uses (an index into kTilings): the one whose busiest worker (a pair, or a CTA
// where there is none) has the least work, counted in K slices of its tiles and parts and weighted by
// each tiling's slice cost (choose_tile), for the CTAs this GPU holds at once.
Status choose_tiling(const Problem& p, int* index) {
  int ctas = 0;  // every tiling holds one CTA per SM (fits<>), so as many at each
  if (Status s =
          resident_ctas(kernel<TilingAt<0>>, kThreads<TilingAt<0>>, smem_bytes<SharedStorage<TilingAt<0>>>(), &ctas);
      !s.ok())
    return s;
  *index = choose_tile(p.m, p.n, p.k, kTileK, ctas, kTilings, kTilingCount, kTileRule);
  return {};
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  int index = 0;
  if (Status s = choose_tiling(p, &index); !s.ok()) return s;
  switch (index) {
    case 0: return run_tiling<TilingAt<0>>(p, stream);
    case 1: return run_tiling<TilingAt<1>>(p, stream);
    case 2: return run_tiling<TilingAt<2>>(p, stream);
    case 3: return run_tiling<TilingAt<3>>(p, stream);
    default: return Status::failure("step 12: tiling " + std::to_string(index) + " is not one of kTilings");
  }
}

}  // namespace gemm::step12::blackwell
