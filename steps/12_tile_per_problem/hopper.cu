// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 12 of 12: the tile per problem.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. The kernel is a template on its tiling, `TileConfig`: the CTA tile's rows (`kTileM`: 128, two
//      consumer warpgroups, or 64, one), its width (`kTileN`: 64, 128, 192 or
//      256 columns) and the CTAs per cluster (`kClusterM`: 2, B multicast, or 1, none); so is
//      everything that depends on them: the threads, the ring's depth (`ring_stages`), the staging
//      (`kStagingBoxes`), the B rows each CTA loads (`kBRowsPerCta`), the `empty` count, the wgmma's
//      N, the partial sums (`kPartialFloat4s`). A cluster of one publishes its barrier inits with
//      `__syncthreads` in place of the cluster barrier. `fits` checks each tiling against the
//      hardware (shared memory, the setmaxnreg pool, one CTA per SM), and `run_tiling` launches one.
//   2. `choose_tiling`: `run` picks the tiling whose busiest worker has the least work, counted in
//      K slices of its tiles and parts and weighted by each tiling's slice cost (`kTilings`,
//      `kTileRule`; the rule is `choose_tile` of common/tile_config.cuh, which arrives with this
//      lesson), from the problem's shape and the CTAs the GPU holds. No timing at run time: a
//      problem gets the same tiling, and the same D, every run.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include "common/cluster.cuh"
#include "common/device.cuh"
#include "common/fence.cuh"
#include "common/global_memory.cuh"
#include "common/hopper/setmaxnreg.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
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

namespace gemm::step12::hopper {

using namespace gemm::hopper;

constexpr int kTileK = 64;   // one 128-byte swizzle atom of fp16
constexpr int kWgmmaM = 64;  // rows per wgmma
constexpr int kWgmmaK = 16;
// Each consumer warpgroup owns kConsumerRows rows of the tile: kConsumerHalves wgmmas of 64 rows
// each per k16 step.
constexpr int kConsumerRows = 64;
constexpr int kConsumerHalves = kConsumerRows / kWgmmaM;
// A tiling: the CTA tile, kTileM x kTileN (128 rows: two consumer warpgroups; 64: one), and the
// CTAs per cluster along M, kClusterM (2: they share the B tile, each loading kTileN / kClusterM
// rows of it and multicasting them to both; 1: a cluster of one, whose multicast reaches only
// itself, and where "the peer" and "both CTAs" below mean this CTA alone). The kernel and
// everything below that depends on the tile is a template on it; kTilings lists the ones run()
// chooses from (choose_tiling).
template <int kRows, int kColumns, int kCtas>
struct TileConfig {
  static constexpr int kTileM = kRows;
  static constexpr int kTileN = kColumns;
  static constexpr int kClusterM = kCtas;
  static constexpr int kConsumers = kRows / kConsumerRows;
};
template <class Tiling>
constexpr int kAccRegs = kWgmmaAccRegs<Tiling::kTileN>;  // f32 registers per thread per 64-row wgmma
template <class Tiling>
constexpr int kBRowsPerCta = Tiling::kTileN / Tiling::kClusterM;
template <class Tiling>
constexpr uint16_t kClusterMask = (1u << Tiling::kClusterM) - 1;  // multicast to every CTA of the cluster
// The warpgroups: the producer first, then the consumers (wgmma needs whole, aligned warpgroups).
constexpr int kProducerWarpgroup = 0;
constexpr int kFirstConsumerWarpgroup = 1;
template <class Tiling>
constexpr int kThreads = (1 + Tiling::kConsumers) * kWarpgroupSize;
// One CTA per SM. The launch gives every thread 65536 / kThreads registers, rounded down to a
// multiple of 8: 168 with two consumers; 256 with one, of which a thread may use 255 (the most an
// instruction can name). setmaxnreg moves them from the producer to
// the consumers: the warpgroups may hold no more than that pool (an .inc waits until registers are
// free; `fits` checks it), and with two consumers these counts fill it.
constexpr int kCtasPerSm = 1;
constexpr int kProducerRegs = 40;  // 3 x 168 - 2 x 232: what the consumers leave
constexpr int kConsumerRegs = 232;
// Named barriers of the consumers' epilogues: ids 1 and 2 (0 is __syncthreads).
constexpr uint32_t kFirstEpilogueBarrier = 1;
// The output tile is stored as boxes of kConsumerRows rows x 64 columns (a SW128 box row is at most
// 128 bytes). A consumer's staging buffer holds kStagingBoxes slots of one box each, used in turn,
// so that one box is staged while the TMA store of the box before it still reads its own slot: two
// slots (16 KB), or one per box where the boxes are odd in number.
constexpr int kStoreCols = 64;
template <class Tiling>
constexpr int kStoreBoxes = Tiling::kTileN / kStoreCols;
template <class Tiling>
constexpr int kStagingBoxes = kStoreBoxes<Tiling> % 2 == 0 ? 2 : kStoreBoxes<Tiling>;
// Bytes one K slice brings into a CTA's shared memory: what its `full` expects per phase. That is
// its own A box plus the WHOLE B tile: one half from its own multicast, one from its peer's. TMA
// always delivers the whole box, the zeros it fills past the edges included.
template <class Tiling>
constexpr uint32_t kStageBytes = (Tiling::kTileM + Tiling::kTileN) * kTileK * sizeof(__half);
// A stage is free once every consumer warp of every consumer warpgroup of every CTA of the cluster
// has seen its wgmmas complete: lane 0 of each warp arrives on the stage's `empty` in each CTA.
template <class Tiling>
constexpr uint32_t kReleaseArrivals = Tiling::kClusterM* Tiling::kConsumers*(kWarpgroupSize / kWarpSize);
// Tile rows per L2 group of the scheduler. Groups of several rows let the CTAs running at the same
// time share rows of A and columns of B in L2; one row per group (walking along N) shares only B.
// Step 6's README.md says why 16.
constexpr int kGroupM = 16;
// Splitting the last wave: each part gets at least kMinSplitSlices K slices, at most kMaxSplits
// parts. A split costs each part a store of its fp32 sums (64 KB per consumer at 256 columns), a
// GPU-wide fence and a ticket, and the last part the loads of every part's sum: about as long as
// several K slices of math, so a part must save more slices than that (NOTES.md: at 1024^3, two
// parts of 8 slices are slower than none).
constexpr int kMinSplitSlices = 12;
constexpr int kMaxSplits = 16;
// A consumer's rows of a split tile in fp32: its 128 threads' accumulators, as float4s in the
// order [register / 4][thread] (a warp's 32 float4 accesses are 512 contiguous bytes).
template <class Tiling>
constexpr int kPartialFloat4s = (kConsumerHalves * kAccRegs<Tiling> / 4) * kWarpgroupSize;
// What one CTA may have on the GPUs of this track (H100, H200: 227 KB of dynamic shared memory).
constexpr size_t kSmemLimit = 227 * 1024;
// The ring: as deep as fits beside the staging buffers and 1 KB for the barriers, at most 8 stages
// (at 128 rows: 4 at 256 and 192 columns, 6 at 128, 8 at 64; the static_assert on SharedStorage
// checks the fit). So every tiling fills an SM's shared memory: one CTA per SM.
template <class Tiling>
constexpr int ring_stages() {
  const size_t staging = Tiling::kConsumers * kStagingBoxes<Tiling> * kConsumerRows * kStoreCols * sizeof(__half);
  const int fit = static_cast<int>((kSmemLimit - 1024 - staging) / kStageBytes<Tiling>);
  return fit < 8 ? fit : 8;
}
template <class Tiling>
constexpr int kStages = ring_stages<Tiling>();

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
template <class Tiling>
struct alignas(1024) SharedStorage {
  __half a[kStages<Tiling>][Tiling::kTileM * kTileK];                               // written by TMA
  __half b[kStages<Tiling>][Tiling::kTileN * kTileK];                               // written by TMA, half by the peer
  __half d[Tiling::kConsumers][kStagingBoxes<Tiling>][kConsumerRows * kStoreCols];  // each consumer's staging
  uint64_t full[kStages<Tiling>];                                                   // mbarrier: the K slice has landed
  uint64_t empty[kStages<Tiling>];                                                  // mbarrier: every consumer is done
  uint32_t ticket[Tiling::kConsumers];                                              // each consumer's split ticket
};
template <class Tiling>
constexpr bool fits() {
  static_assert(sizeof(SharedStorage<Tiling>::a[0]) % 1024 == 0 && sizeof(SharedStorage<Tiling>::b[0]) % 1024 == 0 &&
                    sizeof(SharedStorage<Tiling>::d[0][0]) % 1024 == 0,
                "every tile must start on a 1024-byte boundary");
  static_assert(smem_bytes<SharedStorage<Tiling>>() <= kSmemLimit,
                "the ring and the staging buffers must fit in shared memory");
  static_assert(kStoreBoxes<Tiling> % kStagingBoxes<Tiling> == 0,
                "each tile's first box must find the first slot next in turn");
  static_assert(kProducerRegs + Tiling::kConsumers * kConsumerRegs <=
                    (1 + Tiling::kConsumers) * (65536 / kThreads<Tiling> / 8 * 8),
                "setmaxnreg: the warpgroups may hold no more registers than the launch gave the CTA");
  static_assert(smem_bytes<SharedStorage<Tiling>>() > kSmemLimit / 2, "one CTA per SM, as choose_tiling assumes");
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

// Loads K slice `k_slice` of the tile at (m0, n0) into the producer's next stage, once that stage is
// free in both CTAs, and moves the producer on: this CTA's A box, and B rows n0 + kBRowsPerCta rank
// onwards into both CTAs. One thread.
template <class Tiling>
__device__ __forceinline__ void load_slice(SharedStorage<Tiling>& smem, PipelineState<kStages<Tiling>>& write,
                                           const CUtensorMap* map_a, const CUtensorMap* map_b, int64_t m0, int64_t n0,
                                           int64_t k_slice, uint32_t rank) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on empty[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step09: announce kStageBytes on full[s] (mbarrier_arrive_expect_tx: A and the whole B), load A's box at {k0, m0} into stage s = write.stage (tma_load_2d), and multicast B's box at {k0, n0 + kBRowsPerCta rank} to both CTAs (tma_load_2d_multicast, mask kClusterMask) at row kBRowsPerCta rank of their B stage.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes<Tiling>);
  tma_load_2d(smem.a[s], map_a, &smem.full[s], k0, static_cast<int32_t>(m0));
  tma_load_2d_multicast(smem.b[s] + rank * kBRowsPerCta<Tiling> * kTileK, map_b, &smem.full[s], k0,
                        static_cast<int32_t>(n0 + rank * kBRowsPerCta<Tiling>), kClusterMask<Tiling>);
  // END SOLUTION step09
  write.advance();
}

// The producer: one thread. Walks this cluster's work units in the scheduler's order and loads
// every K slice of this CTA's tile of each into the ring; load_slice waits for a free stage. Both
// CTAs of the cluster walk the same units, so their rings advance in step.
template <class Tiling>
__device__ __forceinline__ void producer(SharedStorage<Tiling>& smem, const CUtensorMap* map_a,
                                         const CUtensorMap* map_b, const TileScheduler& sched, const SplitK& split) {
  PipelineState<kStages<Tiling>> write;  // the stage the producer fills next, across tiles
  const uint32_t rank = cluster_ctarank();
  // BEGIN SOLUTION step11: for each of this cluster's work items (split.begin(cluster_id_x(), cluster_count_x()), split.item(cursor.unit)), load K slices item.k_begin .. item.k_end - 1, the i-th being k_slice_in_turn(turn, i, item.k_begin, item.k_end) with turn = cursor.turn(), worked out once per tile, of this CTA's tile of the item's unit, sched.tile(unit, rank), with load_slice; a TraceTile (TraceRole::producer, the unit) spans each tile for the timeline (a phantom tile past M is loaded too: the peer expects its half of B).
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
  // BEGIN SOLUTION step09: the tail: for the next kStages positions of the ring, wait (mbarrier_wait) on empty[write.stage] with write.empty_parity() and advance write (the releases of the last slices, the peer's remote arrives among them, which no load waited for) before the CTA may exit.
  // The releases of the last kStages slices were never waited on: no load followed them. The
  // peer's consumers make theirs remotely, into this CTA's shared memory, which must stay until
  // they land. Once they have, nothing of the peer's reaches this CTA any more (its multicasts
  // all completed on `full` before this CTA's consumers finished), so no cluster barrier is
  // needed at the end. A position of the ring that was never filled passes at once.
  for (int s = 0; s < kStages<Tiling>; ++s) {
    mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer tail"});
    write.advance();
  }
  // END SOLUTION step09
}

// Releases stage s in both CTAs of the cluster: either CTA's producer multicasts its next B half
// into both, so each `empty` must hear from the consumers of both. One arrival per calling thread
// on each CTA's barrier, through its shared::cluster address (mapa; relaxed: it reports that the
// wgmmas finished reading, and publishes nothing, common/mbarrier.cuh).
template <class Tiling>
__device__ __forceinline__ void release(SharedStorage<Tiling>& smem, int s) {
  // BEGIN SOLUTION step09: arrive on empty[s] of every CTA of the cluster, ranks 0 .. kClusterM - 1 (mbarrier_arrive_cluster).
#pragma unroll
  for (uint32_t r = 0; r < Tiling::kClusterM; ++r) mbarrier_arrive_cluster(&smem.empty[s], r);
  // END SOLUTION step09
}

// One consumer warpgroup's main loop for one tile: every K slice from the ring into the
// accumulators of its kConsumerRows rows, which start at row `row0` of the tile. Both consumers
// wait on the same `full` barriers and each releases every stage.
template <class Tiling>
__device__ __forceinline__ void mma_tile(SharedStorage<Tiling>& smem, PipelineState<kStages<Tiling>>& read,
                                         float (&acc)[kConsumerHalves][kAccRegs<Tiling>], int row0, int64_t k_slices) {
  int release_stage = 0;  // the stage of the slice before this one: its wgmmas are the ones waited for
  for (int64_t ks = 0; ks < k_slices; ++ks) {
    // BEGIN SOLUTION step05: wait (mbarrier_wait) on full[read.stage] with the consumers' parity, read.full_parity().
    mbarrier_wait(&smem.full[read.stage], read.full_parity(), WaitTag{"full", "consumer"});
    // END SOLUTION step05

    // BEGIN SOLUTION step10: wgmma_fence_operands on each accumulator half, then wgmma_fence; the slice's wgmmas, wgmma_f32_f16_ss (kTileN wide) per half and k16 step on make_wgmma_desc_k_sw128 descriptors, scale-d 0 only for the tile's very first wgmma; this consumer's A rows start at row0 + 64 h of the stage (128 bytes per row), B is the whole stage, kTileN wide; then wgmma_commit_group.
#pragma unroll
    for (int h = 0; h < kConsumerHalves; ++h) wgmma_fence_operands(acc[h]);
    wgmma_fence();  // orders the accumulators' earlier accesses before the wgmmas below
#pragma unroll
    for (int h = 0; h < kConsumerHalves; ++h) {
#pragma unroll
      for (int k = 0; k < kTileK / kWgmmaK; ++k) {
        const uint32_t k_bytes = k * kWgmmaK * sizeof(__half);  // 32 B per k16 slice
        const uint64_t a_desc =
            make_wgmma_desc_k_sw128(smem_addr(smem.a[read.stage]) + (row0 + h * kWgmmaM) * 128 + k_bytes);
        const uint64_t b_desc = make_wgmma_desc_k_sw128(smem_addr(smem.b[read.stage]) + k_bytes);
        wgmma_f32_f16_ss<Tiling::kTileN>(acc[h], a_desc, b_desc, /*accumulate=*/ks > 0 || k > 0);
      }
    }
    wgmma_commit_group();
    // END SOLUTION step10

    // BEGIN SOLUTION step08: wait_group 1 leaves slice ks's group in flight and completes slice ks-1's (wgmma_wait_group<1>, then wgmma_fence_operands on each accumulator half); then lane 0 of each warp releases slice ks-1's stage with release() (none before the first slice).
    wgmma_wait_group<1>();  // this warp's share of slice ks-1's wgmmas has finished reading its stage
#pragma unroll
    for (int h = 0; h < kConsumerHalves; ++h) wgmma_fence_operands(acc[h]);
    if (ks > 0 && lane_id() == 0) release(smem, release_stage);
    // END SOLUTION step08
    release_stage = read.stage;
    read.advance();
  }
  // BEGIN SOLUTION step08: after the last slice, wait_group 0 completes its group (wgmma_wait_group<0>, then wgmma_fence_operands on each accumulator half: the epilogue reads them) and lane 0 of each warp releases its stage with release().
  wgmma_wait_group<0>();
#pragma unroll
  for (int h = 0; h < kConsumerHalves; ++h) wgmma_fence_operands(acc[h]);
  if (lane_id() == 0) release(smem, release_stage);
  // END SOLUTION step08
}

// One consumer warpgroup's epilogue of one tile: its registers -> fp16 -> its staging buffer (SW128
// boxes) -> TMA store, one 64-column box at a time, box b through slot b % kStagingBoxes. `c` is the
// consumer, `t` the thread's index in its warpgroup; (m0, n0) is the origin of the consumer's rows.
template <class Tiling>
__device__ __forceinline__ void epilogue_tile(SharedStorage<Tiling>& smem,
                                              const float (&acc)[kConsumerHalves][kAccRegs<Tiling>],
                                              const CUtensorMap* map_d, int64_t m0, int64_t n0, int64_t N, int c,
                                              int t) {
  const TraceEpilogue traced_epilogue;
  const uint32_t bar = kFirstEpilogueBarrier + c;  // this consumer's named barrier: its 128 threads only
#pragma unroll
  for (int box = 0; box < kStoreBoxes<Tiling>; ++box) {
    const int slot = box % kStagingBoxes<Tiling>;
    // BEGIN SOLUTION step10: thread 0 waits until the store that last read this slot has read it: tma_store_wait_group_read<kStagingBoxes - 1> leaves only the newer stores, which read the other slots, in flight. Then the consumer's own named barrier (named_barrier_sync, kFirstEpilogueBarrier + c, 128 threads).
    if (t == 0) tma_store_wait_group_read<kStagingBoxes<Tiling> - 1>();
    named_barrier_sync(bar, kWarpgroupSize);
    // END SOLUTION step10

    // Register i holds column 8 (i / 4) + ...: registers [32 b, 32 b + 32) of each 64-row half are
    // the columns of box b. Registers i and i+1 are adjacent columns of one row: one 4-byte store,
    // conflict-free in the SW128 layout.
    char* staged = reinterpret_cast<char*>(smem.d[c][slot]);
#pragma unroll
    for (int h = 0; h < kConsumerHalves; ++h) {
#pragma unroll
      for (int i = box * 32; i < (box + 1) * 32; i += 2) {
        const int row = h * kWgmmaM + wgmma_acc_row(t, i);
        const int col = wgmma_acc_col(t, i) - box * kStoreCols;  // inside this box
        const uint32_t offset = sw128_offset(row, col / 8) + (col % 8) * sizeof(__half);
        *reinterpret_cast<__half2*>(staged + offset) = __floats2half2_rn(acc[h][i], acc[h][i + 1]);
      }
    }
    // TMA reads shared memory through the async proxy; the stores above were generic-proxy stores.
    fence_proxy_async_shared();
    named_barrier_sync(bar, kWarpgroupSize);

    if (t == 0) {
      const int64_t col0 = n0 + box * kStoreCols;
      if (col0 < N) tma_store_2d(map_d, staged, static_cast<int32_t>(col0), static_cast<int32_t>(m0));
      tma_store_commit_group();  // one group per box, stored or not: the wait above counts boxes
    }
  }
}

// One consumer warpgroup's part of a split tile (SplitK): stores its partial sum to its own slot in
// global memory, then takes a ticket. The part that takes the last ticket (parts - 1) adds every
// part's slot into `acc`, in part order (so D does not depend on which part finished last), and
// returns true: it stores the tile. The others return false. `t` is the thread's index in its
// warpgroup.
template <class Tiling>
__device__ __forceinline__ bool reduce_split(SharedStorage<Tiling>& smem,
                                             float (&acc)[kConsumerHalves][kAccRegs<Tiling>],
                                             const SplitScratch& scratch, const WorkItem& item, uint32_t rank, int c,
                                             int t) {
  const uint32_t bar = kFirstEpilogueBarrier + c;
  auto slot = [&](int part) {
    return scratch.partials + (((item.split * item.parts + part) * Tiling::kClusterM + rank) * Tiling::kConsumers + c) *
                                  kPartialFloat4s<Tiling>;
  };
  uint32_t* ticket = scratch.tickets + (item.split * Tiling::kClusterM + rank) * Tiling::kConsumers + c;
  // BEGIN SOLUTION step11: store acc to slot(item.part) (registers 4i .. 4i + 3 at [i * kWarpgroupSize + t]), sync the warpgroup (named_barrier_sync); thread 0 fences (fence_acq_rel_gpu: release), takes a ticket (atomic_add_gpu) into smem.ticket[c], fences again (acquire); sync again; all but the last part return false; the last sums slots 0 .. parts - 1 in order into acc (as float2 halves) and resets the ticket to 0 (then it returns true).
  float4* mine = slot(item.part);
#pragma unroll
  for (int i = 0; i < kConsumerHalves * kAccRegs<Tiling> / 4; ++i) {
    const float* a = &acc[4 * i / kAccRegs<Tiling>][4 * i % kAccRegs<Tiling>];
    mine[i * kWarpgroupSize + t] = make_float4(a[0], a[1], a[2], a[3]);
  }
  // The named barrier orders every thread's stores before thread 0's release fence, which makes
  // them visible GPU-wide before its ticket (fences are cumulative); thread 0's acquire fence after
  // its ticket orders every part's stores, released before their tickets, before the second barrier
  // and so before any thread's loads below in the last part.
  named_barrier_sync(bar, kWarpgroupSize);
  if (t == 0) {
    fence_acq_rel_gpu();
    smem.ticket[c] = atomic_add_gpu(ticket, 1);
    fence_acq_rel_gpu();
  }
  named_barrier_sync(bar, kWarpgroupSize);
  if (smem.ticket[c] != static_cast<uint32_t>(item.parts - 1)) return false;
  // Loaded as float2 halves: a float4 must land in an aligned register quad, which the accumulators
  // need not be (ptxas would spill to make one).
  for (int part = 0; part < item.parts; ++part) {
    const float2* halves = reinterpret_cast<const float2*>(slot(part));
    if (part == 0) {
#pragma unroll
      for (int i = 0; i < kConsumerHalves * kAccRegs<Tiling> / 2; ++i) {
        const float2 h = halves[(i / 2 * kWarpgroupSize + t) * 2 + i % 2];
        float* a = &acc[2 * i / kAccRegs<Tiling>][2 * i % kAccRegs<Tiling>];
        a[0] = h.x;
        a[1] = h.y;
      }
    } else {
#pragma unroll
      for (int i = 0; i < kConsumerHalves * kAccRegs<Tiling> / 2; ++i) {
        const float2 h = halves[(i / 2 * kWarpgroupSize + t) * 2 + i % 2];
        float* a = &acc[2 * i / kAccRegs<Tiling>][2 * i % kAccRegs<Tiling>];
        a[0] += h.x;
        a[1] += h.y;
      }
    }
  }
  if (t == 0) *ticket = 0;  // every part has taken its ticket: zero again for the next launch
  // END SOLUTION step11
  return true;
}

// A consumer warpgroup (`c` = 0 or 1). For each of this cluster's work items, in the producer's
// order: the main loop over its rows of this CTA's tile (the item's K slices), then their epilogue,
// skipped where the rows all lie past M (a phantom tile, or the second consumer's half of the last
// tile row: its slices were still consumed and released, as the peer's ring depends on it; every
// part of a split tile skips alike) and for a part of a split tile that is not the last to finish.
template <class Tiling>
__device__ __forceinline__ void consumer(SharedStorage<Tiling>& smem, const CUtensorMap* map_d,
                                         const TileScheduler& sched, const SplitK& split, const SplitScratch& scratch,
                                         int64_t M, int64_t N, int c) {
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupSize;
  const uint32_t rank = cluster_ctarank();
  PipelineState<kStages<Tiling>> read;           // the stage this consumer multiplies next, across tiles
  float acc[kConsumerHalves][kAccRegs<Tiling>];  // this consumer's kConsumerRows rows of the tile
  for (WorkCursor cursor = split.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance()) {
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::consumer, cursor.unit);
    const WorkItem item = split.item(cursor.unit);
    const Tile tile = sched.tile(item.unit, static_cast<int>(rank));
    int64_t m0 = 0;  // this consumer's first row
    // BEGIN SOLUTION step10: consumer c owns rows m0 = tile.m * kTileM + c * kConsumerRows .. + kConsumerRows - 1 of the tile: run mma_tile on them over the item's K slices, then go on to the next item (continue) unless the tile is valid and m0 < M.
    mma_tile(smem, read, acc, c * kConsumerRows, item.k_end - item.k_begin);
    m0 = tile.m * Tiling::kTileM + c * kConsumerRows;
    if (!tile.valid || m0 >= M) continue;
    // END SOLUTION step10
    // BEGIN SOLUTION step11: a part of a split item (item.parts > 1) goes on to the epilogue only if reduce_split says it is the last part to finish.
    if (item.parts > 1 && !reduce_split(smem, acc, scratch, item, rank, c, t)) continue;
    // END SOLUTION step11
    epilogue_tile(smem, acc, map_d, m0, tile.n * Tiling::kTileN, N, c, t);
  }
  // The CTA's shared memory is released when it exits: the last store must have read it first.
  // (Its writes to D may still be in flight; the kernel's completion covers them.)
  if (t == 0) tma_store_wait_group_read<0>();
}

template <class Tiling>
__global__ void __launch_bounds__(kThreads<Tiling>, kCtasPerSm)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_d, int64_t M, int64_t N, SplitK split, SplitScratch scratch) {
  SharedStorage<Tiling>& smem = dynamic_smem<SharedStorage<Tiling>>();

  if (threadIdx.x == 0) {
    // The maps live in kernel-parameter memory; fetching them into the TMA unit's descriptor
    // cache now hides that latency behind the barrier below.
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_d);
#pragma unroll
    for (int s = 0; s < kStages<Tiling>; ++s) {
      mbarrier_init(&smem.full[s], 1);                          // the producer's arrive.expect_tx
      mbarrier_init(&smem.empty[s], kReleaseArrivals<Tiling>);  // lane 0 of each consumer warp of both CTAs
    }
    fence_mbarrier_init();  // the inits are visible to the async proxy and to the peer CTA
  }
  // BEGIN SOLUTION step09: every thread of both CTAs arrives on the cluster barrier (cluster_arrive_relaxed: relaxed, since fence_mbarrier_init orders the inits) in place of __syncthreads; each waits on it below, once its registers are set: the peer's multicasts and remote arrives reach this CTA's barriers only after they are initialised. A cluster of one (kClusterM == 1) has no peer: __syncthreads alone, and no wait below.
  if constexpr (Tiling::kClusterM > 1) {
    cluster_arrive_relaxed();
  } else {
    __syncthreads();  // a cluster of one: the CTA's own barrier publishes the inits
  }
  // END SOLUTION step09

  const TileScheduler sched((M + Tiling::kTileM - 1) / Tiling::kTileM, (N + Tiling::kTileN - 1) / Tiling::kTileN,
                            Tiling::kClusterM, kGroupM);

  // BEGIN SOLUTION step10: warpgroup kProducerWarpgroup lowers its registers to kProducerRegs (setmaxnreg_dec) and one elected thread (elect_one_sync) of its first warp runs producer(); the consumer warpgroups raise theirs to kConsumerRegs (setmaxnreg_inc) and run consumer() as consumers 0, 1. Each warpgroup of a cluster of two CTAs waits on the cluster barrier (cluster_wait) right after its setmaxnreg.
  if (warpgroup_id() == kProducerWarpgroup) {
    setmaxnreg_dec<kProducerRegs>();                      // the whole warpgroup executes it (.sync.aligned)
    if constexpr (Tiling::kClusterM > 1) cluster_wait();  // both CTAs' barriers are initialised: the arrive above
    if (warp_id() == 0 && elect_one_sync()) producer(smem, &map_a, &map_b, sched, split);
  } else {
    setmaxnreg_inc<kConsumerRegs>();
    if constexpr (Tiling::kClusterM > 1) cluster_wait();
    consumer(smem, &map_d, sched, split, scratch, M, N, warpgroup_id() - kFirstConsumerWarpgroup);
  }
  // END SOLUTION step10
}

// The launcher of one tiling.
template <class Tiling>
Status run_tiling(const Problem& p, cudaStream_t stream) {
  const TileScheduler sched((p.m + Tiling::kTileM - 1) / Tiling::kTileM, (p.n + Tiling::kTileN - 1) / Tiling::kTileN,
                            Tiling::kClusterM, kGroupM);
  const int64_t k_slices = (p.k + kTileK - 1) / kTileK;
  // The tensor maps: A (M x K) in boxes of one K slice of a tile, B (N x K) in boxes of one K slice
  // of half a tile (each CTA loads one half), D (M x N) in boxes of one consumer's rows x 64
  // columns; all in the 128-byte swizzle that the wgmma descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, Tiling::kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kBRowsPerCta<Tiling>, kTileK, Swizzle::b128); !s.ok())
    return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kConsumerRows, kStoreCols, Swizzle::b128); !s.ok()) return s;
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

// The tilings run() chooses from, in the rule's order: rows, columns, CTAs per cluster, and what one
// K slice of the CTA tile costs, scaled so that 128 x 256 costs 256 (README.md: the tiling sweep).
// Narrow tiles cost more per column: the same A box and barrier round trips serve fewer columns.
constexpr TileChoice kTilings[] = {{128, 256, 2, 256}, {128, 192, 2, 190}, {128, 128, 2, 136}, {128, 64, 2, 101},
                                   {64, 256, 1, 134},  {64, 128, 1, 80},   {64, 64, 1, 64}};
constexpr int kTilingCount = sizeof(kTilings) / sizeof(kTilings[0]);
template <int kIndex>
using TilingAt = TileConfig<kTilings[kIndex].rows, kTilings[kIndex].columns, kTilings[kIndex].cluster_ctas>;
static_assert(fits<TilingAt<0>>() && fits<TilingAt<1>>() && fits<TilingAt<2>>() && fits<TilingAt<3>>() &&
                  fits<TilingAt<4>>() && fits<TilingAt<5>>() && fits<TilingAt<6>>(),
              "every tiling run() chooses from");
// The rule (common/tile_config.cuh): the split as run_tiling makes it, what a split part's round
// trip through global memory costs in K slices, and how much less work a later tiling must promise
// to be taken, against the rule's error on the sweep (README.md says where each number comes from).
constexpr TileRule kTileRule = {kMinSplitSlices, kMaxSplits, /*split_cost_slices=*/14, /*gain_percent=*/5};

// The tiling run() uses (an index into kTilings): the one whose busiest worker (a cluster, or a CTA
// where there is none) has the least work, counted in K slices of its tiles and parts and weighted by
// each tiling's slice cost (choose_tile), for the CTAs this GPU holds at once.
Status choose_tiling(const Problem& p, int* index) {
  int ctas = 0;  // every tiling holds one CTA per SM (it fills the shared memory), so as many at each
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
    case 4: return run_tiling<TilingAt<4>>(p, stream);
    case 5: return run_tiling<TilingAt<5>>(p, stream);
    case 6: return run_tiling<TilingAt<6>>(p, stream);
    default: return Status::failure("step 12: tiling " + std::to_string(index) + " is not one of kTilings");
  }
}

}  // namespace gemm::step12::hopper
