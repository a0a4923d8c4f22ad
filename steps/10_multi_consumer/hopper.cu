// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 10 of 12: multi-consumer.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. The CTA tile doubles to 128x256 (`kTileN`). One warpgroup cannot hold it (256 accumulator
//      registers a thread), so two consumer warpgroups (`kConsumers`) each own half of its rows
//      (`kConsumerRows`, `row0`), fed by the one producer from one ring.
//   2. A K slice now brings 48 KB for twice step 9's math: 1.33x the math per byte of shared
//      memory, 1.5x per byte from L2 (B is multicast). Four such stages fit beside the staging
//      buffers (`kStages`).
//   3. A stage is free once all sixteen consumer warps of the cluster (four per warpgroup, two
//      warpgroups in each of two CTAs) have released it (`kReleaseArrivals`).
//   4. Each consumer stores its own rows, on a named barrier of its own (`kFirstEpilogueBarrier`).
//      Four 48 KB stages leave 32 KB for staging, so each consumer stages one 64-column box at a
//      time through two slots (`kStagingBoxes`), waiting only until the store two boxes back has
//      read its slot (`tma_store_wait_group_read`). A consumer whose rows lie past M stores
//      nothing.
//   5. 384 threads, one CTA per SM: setmaxnreg gives the producer 40 registers and each consumer
//      thread 232 (`kProducerRegs`, `kConsumerRegs`), within what the launch gave the CTA.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

#include "common/cluster.cuh"
#include "common/device.cuh"
#include "common/fence.cuh"
#include "common/hopper/setmaxnreg.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
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

namespace gemm::step10::hopper {

using namespace gemm::hopper;

// The CTA tile: 128 x 256, twice step 9's, its rows split between the two consumer warpgroups
// (README.md says why not 256 x 128).
constexpr int kTileM = 128;
constexpr int kTileN = 256;
constexpr int kTileK = 64;   // one 128-byte swizzle atom of fp16
constexpr int kWgmmaM = 64;  // rows per wgmma
constexpr int kWgmmaK = 16;
// Two consumer warpgroups, each owning kConsumerRows rows of the tile: kConsumerHalves wgmmas of
// 64 rows each per k16 step.
constexpr int kConsumers = 2;
constexpr int kConsumerRows = kTileM / kConsumers;
constexpr int kConsumerHalves = kConsumerRows / kWgmmaM;
constexpr int kAccRegs = kWgmmaAccRegs<kTileN>;  // f32 registers per thread per 64-row wgmma
static_assert(kConsumerHalves * kAccRegs == 128, "128 accumulator registers per consumer thread");
// The ring: as deep as fits beside the staging buffers (the static_assert below).
constexpr int kStages = 4;
// CTAs per cluster, along M: they share the B tile. Each loads kTileN / kClusterM rows of it.
constexpr int kClusterM = 2;
constexpr int kBRowsPerCta = kTileN / kClusterM;
constexpr uint16_t kClusterMask = (1u << kClusterM) - 1;  // multicast to every CTA of the cluster
// Three warpgroups: the producer first, then the two consumers (wgmma needs whole, aligned
// warpgroups).
constexpr int kProducerWarpgroup = 0;
constexpr int kFirstConsumerWarpgroup = 1;
constexpr int kThreads = (1 + kConsumers) * kWarpgroupSize;
// One CTA per SM. The launch gives every thread 65536 / 384 registers, rounded down to a multiple
// of 8: 168. setmaxnreg moves them from the producer to the consumers: the warpgroups may hold no
// more than that pool (an .inc waits until registers are free), and these counts fill it.
constexpr int kCtasPerSm = 1;
constexpr int kProducerRegs = 40;  // 3 x 168 - 2 x 232: what the consumers leave
constexpr int kConsumerRegs = 232;
static_assert(kProducerRegs + kConsumers * kConsumerRegs <= (1 + kConsumers) * (65536 / kThreads / 8 * 8),
              "setmaxnreg: the warpgroups may hold no more registers than the launch gave the CTA");
// Named barriers of the two consumers' epilogues: ids 1 and 2 (0 is __syncthreads).
constexpr uint32_t kFirstEpilogueBarrier = 1;
// The output tile is stored as boxes of kConsumerRows rows x 64 columns (a SW128 box row is at most
// 128 bytes). A consumer's staging buffer is 16 KB, so that a fourth stage fits: kStagingBoxes slots
// of one box each, used in turn, so that one box is staged while the TMA store of the box before it
// still reads its own slot.
constexpr int kStoreCols = 64;
constexpr int kStoreBoxes = kTileN / kStoreCols;
constexpr int kStagingBoxes = 16384 / (kConsumerRows * kStoreCols * 2);
static_assert(kStoreBoxes % kStagingBoxes == 0, "each tile's first box must find the first slot next in turn");
// Bytes one K slice brings into a CTA's shared memory: what its `full` expects per phase. That is
// its own A box plus the WHOLE B tile: one half from its own multicast, one from its peer's. TMA
// always delivers the whole box, the zeros it fills past the edges included.
constexpr uint32_t kStageBytes = (kTileM + kTileN) * kTileK * sizeof(__half);
static_assert(kStageBytes == 49152, "A + B of a 128 x 256 tile, 64 wide in K, fp16");
// A stage is free once every consumer warp of both consumer warpgroups of both CTAs has seen its
// wgmmas complete: lane 0 of each warp arrives on the stage's `empty` in its own CTA and the peer.
constexpr uint32_t kReleaseArrivals = kClusterM * kConsumers * (kWarpgroupSize / kWarpSize);
// Tile rows per L2 group of the scheduler. Groups of several rows let the CTAs running at the same
// time share rows of A and columns of B in L2; one row per group (walking along N) shares only B.
// Step 6's README.md says why 16.
constexpr int kGroupM = 16;
// What one CTA may have on the GPUs of this track (H100, H200: 227 KB of dynamic shared memory).
constexpr size_t kSmemLimit = 227 * 1024;

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
struct alignas(1024) SharedStorage {
  __half a[kStages][kTileM * kTileK];                               // written by TMA
  __half b[kStages][kTileN * kTileK];                               // written by TMA, half by the peer
  __half d[kConsumers][kStagingBoxes][kConsumerRows * kStoreCols];  // each consumer's staging, read by TMA
  uint64_t full[kStages];                                           // mbarrier: the K slice has landed
  uint64_t empty[kStages];                                          // mbarrier: every consumer is done
};
static_assert(sizeof(SharedStorage::a[0]) % 1024 == 0 && sizeof(SharedStorage::b[0]) % 1024 == 0 &&
                  sizeof(SharedStorage::d[0][0]) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");
static_assert(sizeof(SharedStorage) <= kSmemLimit, "the ring and the staging buffers must fit in shared memory");

// Loads K slice `k_slice` of the tile at (m0, n0) into the producer's next stage, once that stage is
// free in both CTAs, and moves the producer on: this CTA's A box, and B rows n0 + kBRowsPerCta rank
// onwards into both CTAs. One thread.
__device__ __forceinline__ void load_slice(SharedStorage& smem, PipelineState<kStages>& write, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, int64_t m0, int64_t n0, int64_t k_slice,
                                           uint32_t rank) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on empty[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step09: announce kStageBytes on full[s] (mbarrier_arrive_expect_tx: A and the whole B), load A's box at {k0, m0} into stage s = write.stage (tma_load_2d), and multicast B's box at {k0, n0 + kBRowsPerCta rank} to both CTAs (tma_load_2d_multicast, mask kClusterMask) at row kBRowsPerCta rank of their B stage.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes);
  tma_load_2d(smem.a[s], map_a, &smem.full[s], k0, static_cast<int32_t>(m0));
  tma_load_2d_multicast(smem.b[s] + rank * kBRowsPerCta * kTileK, map_b, &smem.full[s], k0,
                        static_cast<int32_t>(n0 + rank * kBRowsPerCta), kClusterMask);
  // END SOLUTION step09
  write.advance();
}

// The producer: one thread. Walks this cluster's work units in the scheduler's order and loads
// every K slice of this CTA's tile of each into the ring; load_slice waits for a free stage. Both
// CTAs of the cluster walk the same units, so their rings advance in step.
__device__ __forceinline__ void producer(SharedStorage& smem, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                         const TileScheduler& sched, int64_t k_slices) {
  PipelineState<kStages> write;  // the stage the producer fills next, across tiles
  const uint32_t rank = cluster_ctarank();
  // BEGIN SOLUTION step09: for each of this cluster's work units (sched.begin(cluster_id_x(), cluster_count_x())), load this CTA's tile, sched.tile(unit, rank), with load_slice, the i-th K slice being k_slice_in_turn(turn, i, 0, k_slices) with turn = cursor.turn(), worked out once per tile; a TraceTile (TraceRole::producer, the unit) spans each tile for the timeline (a phantom tile past M is loaded too: the peer expects its half of B).
  for (WorkCursor cursor = sched.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance()) {
    const Tile tile = sched.tile(cursor.unit, static_cast<int>(rank));
    const int64_t turn = cursor.turn();  // once per tile: a 64-bit division
    const TraceTile traced(TraceRole::producer, cursor.unit);
    for (int64_t i = 0; i < k_slices; ++i)
      load_slice(smem, write, map_a, map_b, tile.m * kTileM, tile.n * kTileN, k_slice_in_turn(turn, i, 0, k_slices),
                 rank);
  }
  // END SOLUTION step09
  // BEGIN SOLUTION step09: the tail: for the next kStages positions of the ring, wait (mbarrier_wait) on empty[write.stage] with write.empty_parity() and advance write (the releases of the last slices, the peer's remote arrives among them, which no load waited for) before the CTA may exit.
  // The releases of the last kStages slices were never waited on: no load followed them. The
  // peer's consumers make theirs remotely, into this CTA's shared memory, which must stay until
  // they land. Once they have, nothing of the peer's reaches this CTA any more (its multicasts
  // all completed on `full` before this CTA's consumers finished), so no cluster barrier is
  // needed at the end. A position of the ring that was never filled passes at once.
  for (int s = 0; s < kStages; ++s) {
    mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer tail"});
    write.advance();
  }
  // END SOLUTION step09
}

// Releases stage s in both CTAs of the cluster: either CTA's producer multicasts its next B half
// into both, so each `empty` must hear from the consumers of both. One arrival per calling thread
// on each CTA's barrier, through its shared::cluster address (mapa; relaxed: it reports that the
// wgmmas finished reading, and publishes nothing, common/mbarrier.cuh).
__device__ __forceinline__ void release(SharedStorage& smem, int s) {
  // BEGIN SOLUTION step09: arrive on empty[s] of every CTA of the cluster, ranks 0 .. kClusterM - 1 (mbarrier_arrive_cluster).
#pragma unroll
  for (uint32_t r = 0; r < kClusterM; ++r) mbarrier_arrive_cluster(&smem.empty[s], r);
  // END SOLUTION step09
}

// One consumer warpgroup's main loop for one tile: every K slice from the ring into the
// accumulators of its kConsumerRows rows, which start at row `row0` of the tile. Both consumers
// wait on the same `full` barriers and each releases every stage.
__device__ __forceinline__ void mma_tile(SharedStorage& smem, PipelineState<kStages>& read,
                                         float (&acc)[kConsumerHalves][kAccRegs], int row0, int64_t k_slices) {
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
        wgmma_f32_f16_ss<kTileN>(acc[h], a_desc, b_desc, /*accumulate=*/ks > 0 || k > 0);
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
__device__ __forceinline__ void epilogue_tile(SharedStorage& smem, const float (&acc)[kConsumerHalves][kAccRegs],
                                              const CUtensorMap* map_d, int64_t m0, int64_t n0, int64_t N, int c,
                                              int t) {
  const TraceEpilogue traced_epilogue;
  const uint32_t bar = kFirstEpilogueBarrier + c;  // this consumer's named barrier: its 128 threads only
#pragma unroll
  for (int box = 0; box < kStoreBoxes; ++box) {
    const int slot = box % kStagingBoxes;
    // BEGIN SOLUTION step10: thread 0 waits until the store that last read this slot has read it: tma_store_wait_group_read<kStagingBoxes - 1> leaves only the newer stores, which read the other slots, in flight. Then the consumer's own named barrier (named_barrier_sync, kFirstEpilogueBarrier + c, 128 threads).
    if (t == 0) tma_store_wait_group_read<kStagingBoxes - 1>();
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

// A consumer warpgroup (`c` = 0 or 1). For each of this cluster's work units, in the producer's
// order: the main loop over its rows of this CTA's tile, then their epilogue, skipped where the rows
// all lie past M (a phantom tile, or the second consumer's half of the last tile row: its slices
// were still consumed and released, as the peer's ring depends on it).
__device__ __forceinline__ void consumer(SharedStorage& smem, const CUtensorMap* map_d, const TileScheduler& sched,
                                         int64_t M, int64_t N, int64_t k_slices, int c) {
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupSize;
  const uint32_t rank = cluster_ctarank();
  PipelineState<kStages> read;           // the stage this consumer multiplies next, across tiles
  float acc[kConsumerHalves][kAccRegs];  // this consumer's kConsumerRows rows of the tile
  for (WorkCursor cursor = sched.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance()) {
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::consumer, cursor.unit);
    const Tile tile = sched.tile(cursor.unit, static_cast<int>(rank));
    // BEGIN SOLUTION step10: consumer c owns rows m0 = tile.m * kTileM + c * kConsumerRows .. + kConsumerRows - 1 of the tile: run mma_tile on them, then (for a valid tile with m0 < M) epilogue_tile at row m0.
    mma_tile(smem, read, acc, c * kConsumerRows, k_slices);
    const int64_t m0 = tile.m * kTileM + c * kConsumerRows;
    if (tile.valid && m0 < M) epilogue_tile(smem, acc, map_d, m0, tile.n * kTileN, N, c, t);
    // END SOLUTION step10
  }
  // The CTA's shared memory is released when it exits: the last store must have read it first.
  // (Its writes to D may still be in flight; the kernel's completion covers them.)
  if (t == 0) tma_store_wait_group_read<0>();
}

__global__ void __launch_bounds__(kThreads, kCtasPerSm)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
           const __grid_constant__ CUtensorMap map_d, int64_t M, int64_t N, int64_t K) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();

  if (threadIdx.x == 0) {
    // The maps live in kernel-parameter memory; fetching them into the TMA unit's descriptor
    // cache now hides that latency behind the barrier below.
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    tma_prefetch_descriptor(&map_d);
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&smem.full[s], 1);                  // the producer's arrive.expect_tx
      mbarrier_init(&smem.empty[s], kReleaseArrivals);  // lane 0 of each consumer warp of both CTAs
    }
    fence_mbarrier_init();  // the inits are visible to the async proxy and to the peer CTA
  }
  // BEGIN SOLUTION step09: every thread of both CTAs arrives on the cluster barrier (cluster_arrive_relaxed: relaxed, since fence_mbarrier_init orders the inits) in place of __syncthreads; each waits on it below, once its registers are set: the peer's multicasts and remote arrives reach this CTA's barriers only after they are initialised.
  cluster_arrive_relaxed();
  // END SOLUTION step09

  const int64_t k_slices = (K + kTileK - 1) / kTileK;
  const TileScheduler sched((M + kTileM - 1) / kTileM, (N + kTileN - 1) / kTileN, kClusterM, kGroupM);

  // BEGIN SOLUTION step10: warpgroup kProducerWarpgroup lowers its registers to kProducerRegs (setmaxnreg_dec) and one elected thread (elect_one_sync) of its first warp runs producer(); warpgroups 1 and 2 raise theirs to kConsumerRegs (setmaxnreg_inc) and run consumer() as consumers 0 and 1. Each warpgroup waits on the cluster barrier (cluster_wait) right after its setmaxnreg.
  if (warpgroup_id() == kProducerWarpgroup) {
    setmaxnreg_dec<kProducerRegs>();  // the whole warpgroup executes it (.sync.aligned)
    cluster_wait();                   // both CTAs' barriers are initialised: the arrive above
    if (warp_id() == 0 && elect_one_sync()) producer(smem, &map_a, &map_b, sched, k_slices);
  } else {
    setmaxnreg_inc<kConsumerRegs>();
    cluster_wait();
    consumer(smem, &map_d, sched, M, N, k_slices, warpgroup_id() - kFirstConsumerWarpgroup);
  }
  // END SOLUTION step10
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const TileScheduler sched((p.m + kTileM - 1) / kTileM, (p.n + kTileN - 1) / kTileN, kClusterM, kGroupM);
  // The tensor maps: A (M x K) in boxes of one K slice of a tile, B (N x K) in boxes of one K slice
  // of half a tile (each CTA loads one half), D (M x N) in boxes of one consumer's rows x 64
  // columns; all in the 128-byte swizzle that the wgmma descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kBRowsPerCta, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kConsumerRows, kStoreCols, Swizzle::b128); !s.ok()) return s;
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

}  // namespace gemm::step10::hopper
