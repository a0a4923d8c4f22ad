// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 9 of 12: 2-CTA cluster.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Clusters of two CTAs along M (`kClusterM`), the grid counted in clusters
//      (`resident_clusters`): a cluster's CTAs compute tiles (2i, n) and (2i+1, n), which need the
//      same B tile; both walk the same work units (`cluster_id_x`, `cluster_ctarank`), and a CTA
//      whose tile lies past M (a phantom) runs the pipeline but writes no D.
//   2. Each CTA loads its own A box and one half of the B tile (`kBRowsPerCta`), and multicasts
//      that half into both CTAs' shared memory (`tma_load_2d_multicast`, `kClusterMask`): every K
//      slice reads B from L2 once per cluster instead of once per CTA. A CTA's `full` therefore
//      counts bytes its peer's TMA writes: it expects A and the whole B tile.
//   3. A stage is free only once the consumers of both CTAs are done with it, since either CTA's
//      next multicast overwrites it in both: `empty` counts the releases of both CTAs
//      (`kReleaseArrivals`), the peer's arriving remotely (`release`, `mbarrier_arrive_cluster`).
//   4. The barriers are initialised before a cluster barrier (`cluster_arrive_relaxed`,
//      `cluster_wait`): the peer may signal them as soon as it passes it. No CTA exits while its
//      peer may still arrive on its barriers: the producer ends with a tail that waits for the last
//      release of every stage.
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

namespace gemm::step09::hopper {

using namespace gemm::hopper;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;   // one 128-byte swizzle atom of fp16
constexpr int kWgmmaM = 64;  // rows per wgmma: the 128-row tile takes two
constexpr int kWgmmaK = 16;
constexpr int kAccRegs = kWgmmaAccRegs<kTileN>;  // 64 f32 registers per thread per 64-row half
// The ring's depth. Up to six K slice buffers fit in shared memory beside the staging buffer (the
// static_assert below); step 8's README.md says why five.
constexpr int kStages = 5;
// CTAs per cluster, along M: they share the B tile. Each loads kTileN / kClusterM rows of it.
constexpr int kClusterM = 2;
constexpr int kBRowsPerCta = kTileN / kClusterM;
constexpr uint16_t kClusterMask = (1u << kClusterM) - 1;  // multicast to every CTA of the cluster
// Two warpgroups: the producer first, then the consumer (wgmma needs a whole, aligned warpgroup).
constexpr int kProducerWarpgroup = 0;
constexpr int kConsumerWarpgroup = 1;
constexpr int kThreads = 2 * kWarpgroupSize;
// One CTA per SM: the deep ring fills its shared memory. With a single CTA nothing competes for
// registers: ptxas launches every thread with the consumer's count (setmaxnreg.inc finds them
// already there), and the producer's setmaxnreg.dec only returns what it does not use.
constexpr int kCtasPerSm = 1;
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 232;
static_assert(kProducerRegs + kConsumerRegs <= 2 * (65536 / (kThreads * kCtasPerSm)),
              "setmaxnreg: the two warpgroups may hold no more registers than the launch gave the CTA");
// Named barrier of the consumer warpgroup's epilogue (id 0 is __syncthreads, which would wait for
// the producer warpgroup too).
constexpr uint32_t kEpilogueBarrier = 1;
// The output tile is stored as boxes of 64 columns: a SW128 box row is at most 128 bytes.
constexpr int kStoreCols = 64;
constexpr int kStoreBoxes = kTileN / kStoreCols;
// Bytes one K slice brings into a CTA's shared memory: what its `full` expects per phase. That is
// its own A box plus the WHOLE B tile: one half from its own multicast, one from its peer's. TMA
// always delivers the whole box, the zeros it fills past the edges included.
constexpr uint32_t kStageBytes = (kTileM + kTileN) * kTileK * sizeof(__half);
static_assert(kStageBytes == 32768, "A 128x64 + B 2 x 64x64 fp16");
// A stage is free once every consumer warp OF BOTH CTAs has seen its wgmmas complete: lane 0 of
// each warp arrives on the stage's `empty` in its own CTA and in the peer.
constexpr uint32_t kReleaseArrivals = kClusterM * (kWarpgroupSize / kWarpSize);
// Tile rows per L2 group of the scheduler. Groups of several rows let the CTAs running at the same
// time share rows of A and columns of B in L2; one row per group (walking along N) shares only B.
// Step 6's README.md says why 16.
constexpr int kGroupM = 16;
// What one CTA may have on the GPUs of this track (H100, H200: 227 KB of dynamic shared memory).
constexpr size_t kSmemLimit = 227 * 1024;

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
struct alignas(1024) SharedStorage {
  __half a[kStages][kTileM * kTileK];          // kStages x 16 KB, written by TMA
  __half b[kStages][kTileN * kTileK];          // kStages x 16 KB, written by TMA
  __half d[kStoreBoxes][kTileM * kStoreCols];  // 2 x 16 KB: the epilogue's output tile, read by TMA
  uint64_t full[kStages];                      // mbarrier: the stage's K slice has landed
  uint64_t empty[kStages];                     // mbarrier: both CTAs' consumers are done with it
};
static_assert(sizeof(SharedStorage::a[0]) % 1024 == 0 && sizeof(SharedStorage::b[0]) % 1024 == 0 &&
                  sizeof(SharedStorage::d[0]) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");
static_assert(sizeof(SharedStorage) <= kSmemLimit, "the ring and the staging buffer must fit in shared memory");

// Loads K slice `k_slice` of the tile at (m0, n0) into the producer's next stage, once that stage is
// free in both CTAs, and moves the producer on: this CTA's A box, and B rows n0 + 64 rank .. +63 into
// both CTAs. One thread.
__device__ __forceinline__ void load_slice(SharedStorage& smem, PipelineState<kStages>& write, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, int64_t m0, int64_t n0, int64_t k_slice,
                                           uint32_t rank) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on empty[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step09: announce kStageBytes on full[s] (mbarrier_arrive_expect_tx: A and the whole B), load A's box at {k0, m0} into stage s = write.stage (tma_load_2d), and multicast B's box at {k0, n0 + 64 rank} to both CTAs (tma_load_2d_multicast, mask kClusterMask) at row 64 rank of their B stage.
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

// The consumer's main loop for one tile: every K slice from the ring into the accumulators. The
// whole consumer warpgroup.
__device__ __forceinline__ void mma_tile(SharedStorage& smem, PipelineState<kStages>& read, float (&acc)[2][kAccRegs],
                                         int64_t k_slices) {
  int release_stage = 0;  // the stage of the slice before this one: its wgmmas are the ones waited for
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

    // BEGIN SOLUTION step08: wait_group 1 leaves slice ks's group in flight and completes slice ks-1's (wgmma_wait_group<1>, then wgmma_fence_operands on both accumulator halves); then lane 0 of each warp releases slice ks-1's stage with release() (none before the first slice).
    wgmma_wait_group<1>();  // this warp's share of slice ks-1's wgmmas has finished reading its stage
    wgmma_fence_operands(acc[0]);
    wgmma_fence_operands(acc[1]);
    if (ks > 0 && lane_id() == 0) release(smem, release_stage);
    // END SOLUTION step08
    release_stage = read.stage;
    read.advance();
  }
  // BEGIN SOLUTION step08: after the last slice, wait_group 0 completes its group (wgmma_wait_group<0>, then wgmma_fence_operands on both accumulator halves: the epilogue reads them) and lane 0 of each warp releases its stage with release().
  wgmma_wait_group<0>();
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  if (lane_id() == 0) release(smem, release_stage);
  // END SOLUTION step08
}

// The epilogue of one tile: registers -> fp16 -> the staging buffer (SW128 boxes) -> TMA store.
// The whole consumer warpgroup; `t` is the thread's index in it.
__device__ __forceinline__ void epilogue_tile(SharedStorage& smem, const float (&acc)[2][kAccRegs],
                                              const CUtensorMap* map_d, int64_t m0, int64_t n0, int64_t N, int t) {
  const TraceEpilogue traced_epilogue;
  // BEGIN SOLUTION step07: the previous tile's TMA store may still be reading the staging buffer: thread 0 waits for it (tma_store_wait_group_read<0>), then the consumer warpgroup syncs on its named barrier (named_barrier_sync) before anyone writes.
  if (t == 0) tma_store_wait_group_read<0>();
  named_barrier_sync(kEpilogueBarrier, kWarpgroupSize);
  // END SOLUTION step07

  // Registers i and i+1 are adjacent columns of one row: one 4-byte store. In the SW128 layout the
  // 8 rows a warp writes per instruction fall in 8 different 16-byte chunk positions: no bank
  // conflicts.
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
      // BEGIN SOLUTION step04: column col is in box col / 64 of the staging buffer; inside it, 16-byte chunk (col % 64) / 8 of row `row` sits at sw128_offset(row, chunk), and the column 2 * (col % 8) bytes further.
      box = reinterpret_cast<char*>(smem.d[col / kStoreCols]);
      offset = sw128_offset(row, (col % kStoreCols) / 8) + (col % 8) * sizeof(__half);
      // END SOLUTION step04
      *reinterpret_cast<__half2*>(box + offset) = __floats2half2_rn(acc[h][i], acc[h][i + 1]);
    }
  }
  // TMA reads shared memory through the async proxy; the stores above were generic-proxy stores.
  // Each writer fences its own stores, then the barrier waits for every writer.
  fence_proxy_async_shared();
  named_barrier_sync(kEpilogueBarrier, kWarpgroupSize);

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

// The consumer: the whole consumer warpgroup. For each of this cluster's work units, in the
// producer's order: the main loop over this CTA's tile, then its epilogue, skipped for a phantom
// tile past M (its slices were still consumed and released: the peer's ring depends on it).
__device__ __forceinline__ void consumer(SharedStorage& smem, const CUtensorMap* map_d, const TileScheduler& sched,
                                         int64_t N, int64_t k_slices) {
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupSize;
  const uint32_t rank = cluster_ctarank();
  PipelineState<kStages> read;  // the stage the consumer multiplies next, across tiles
  float acc[2][kAccRegs];       // rows 0-63 and 64-127 of the tile
  for (WorkCursor cursor = sched.begin(cluster_id_x(), cluster_count_x()); cursor.valid(); cursor.advance()) {
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::consumer, cursor.unit);
    // BEGIN SOLUTION step09: this CTA's tile of the unit is sched.tile(cursor.unit, rank); run mma_tile for every tile, and epilogue_tile (at its origin tile.m * 128, tile.n * 128) only for a valid one.
    const Tile tile = sched.tile(cursor.unit, static_cast<int>(rank));
    mma_tile(smem, read, acc, k_slices);
    if (tile.valid) epilogue_tile(smem, acc, map_d, tile.m * kTileM, tile.n * kTileN, N, t);
    // END SOLUTION step09
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

  // BEGIN SOLUTION step07: warpgroup kProducerWarpgroup lowers its registers to kProducerRegs (setmaxnreg_dec) and one elected thread (elect_one_sync) of its first warp runs producer(); the other warpgroup raises its registers to kConsumerRegs (setmaxnreg_inc) and runs consumer(). Each warpgroup waits on the cluster barrier (cluster_wait) right after its setmaxnreg.
  if (warpgroup_id() == kProducerWarpgroup) {
    setmaxnreg_dec<kProducerRegs>();  // the whole warpgroup executes it (.sync.aligned)
    cluster_wait();                   // both CTAs' barriers are initialised: the arrive above
    if (warp_id() == 0 && elect_one_sync()) producer(smem, &map_a, &map_b, sched, k_slices);
  } else if (warpgroup_id() == kConsumerWarpgroup) {
    setmaxnreg_inc<kConsumerRegs>();
    cluster_wait();
    consumer(smem, &map_d, sched, N, k_slices);
  }
  // END SOLUTION step07
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const TileScheduler sched((p.m + kTileM - 1) / kTileM, (p.n + kTileN - 1) / kTileN, kClusterM, kGroupM);
  // The tensor maps: A (M x K) in boxes of one K slice of a tile, B (N x K) in boxes of one K slice
  // of half a tile (each CTA loads one half), D (M x N) in boxes of 64 columns of a tile; all in the
  // 128-byte swizzle that the wgmma descriptors describe.
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

}  // namespace gemm::step09::hopper
