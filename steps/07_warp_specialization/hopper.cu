// GEMM, step by step -- hopper track (sm_90a: H100, H200), step 7 of 12: warp specialization.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Two warpgroups with one job each, and the kernel a short dispatch on the warpgroup: one
//      elected thread of the producer (`kProducerWarpgroup`) runs `producer`, which streams every K
//      slice of every tile of this CTA into the ring, waiting only for a free stage; the consumer
//      (`kConsumerWarpgroup`) runs `consumer`, which calls `mma_tile` and `epilogue_tile` for each
//      tile and never issues a load.
//   2. The two meet only at the ring's barriers, `full` and `empty`: `mma_tile` no longer refills a
//      stage, and `prefetch_tile` is gone, since the producer runs ahead on its own.
//   3. `setmaxnreg` moves registers after launch: the producer lowers its own to `kProducerRegs`,
//      the consumer raises its own to `kConsumerRegs`, together no more than the launch gave two
//      CTAs per SM (`kCtasPerSm`).
//   4. The epilogue stages its tile in a buffer of its own (`smem.d`): loads now run during the
//      epilogue, so the A buffers are not free then. It first waits until the previous tile's store
//      has read that buffer (`tma_store_wait_group_read`), and syncs on a named barrier of its own
//      (`kEpilogueBarrier`, `named_barrier_sync`), since `__syncthreads` would wait for the
//      producer too.
//   5. The consumer leaves its accumulators (`acc`) unset: the tile's first wgmma runs with scale-d
//      = 0, which ignores them (steps 1-6 zero them only because ptxas schedules those kernels
//      better so).
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>

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

namespace gemm::step07::hopper {

using namespace gemm::hopper;

constexpr int kTileM = 128;
constexpr int kTileN = 128;
constexpr int kTileK = 64;   // one 128-byte swizzle atom of fp16
constexpr int kWgmmaM = 64;  // rows per wgmma: the 128-row tile takes two
constexpr int kWgmmaK = 16;
constexpr int kAccRegs = kWgmmaAccRegs<kTileN>;  // 64 f32 registers per thread per 64-row half
constexpr int kStages = 2;                       // two K slice buffers (step 8 deepens the ring)
// Two warpgroups: the producer first, then the consumer (wgmma needs a whole, aligned warpgroup).
constexpr int kProducerWarpgroup = 0;
constexpr int kConsumerWarpgroup = 1;
constexpr int kThreads = 2 * kWarpgroupSize;
// Two CTAs per SM, as in step 6: while one CTA runs its epilogue, the other keeps the tensor cores
// busy. __launch_bounds__(kThreads, kCtasPerSm) gives each thread 65536 / (2 x 256) registers at
// launch; setmaxnreg moves them from the producer to the consumer, whose 128 accumulators need the
// most, and its .inc waits until the pool holds what it asks: the two may not ask for more than
// the launch gave (README.md).
constexpr int kCtasPerSm = 2;
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
// Bytes one K slice brings into shared memory: what `full` expects per phase. TMA always delivers
// the whole box, the zeros it fills past the edges included.
constexpr uint32_t kStageBytes = (kTileM + kTileN) * kTileK * sizeof(__half);
static_assert(kStageBytes == 32768, "A 128x64 + B 128x64 fp16");
// A stage is free once every consumer warp has seen its wgmmas complete: lane 0 of each warp
// arrives, after that warp's wgmma.wait_group.
constexpr uint32_t kReleaseArrivals = kWarpgroupSize / kWarpSize;
// Tile rows per L2 group of the scheduler. Groups of several rows let the CTAs running at the same
// time share rows of A and columns of B in L2; one row per group (walking along N) shares only B.
// Step 6's README.md says why 16.
constexpr int kGroupM = 16;

// Every tile is rows x 128 bytes in the SW128 layout and starts on a 1024-byte boundary (the
// swizzle pattern repeats every 8 rows = 1024 bytes; TMA and the descriptors assume it).
struct alignas(1024) SharedStorage {
  __half a[kStages][kTileM * kTileK];          // 2 x 16 KB, written by TMA
  __half b[kStages][kTileN * kTileK];          // 2 x 16 KB, written by TMA
  __half d[kStoreBoxes][kTileM * kStoreCols];  // 2 x 16 KB: the epilogue's output tile, read by TMA
  uint64_t full[kStages];                      // mbarrier: the stage's K slice has landed
  uint64_t empty[kStages];                     // mbarrier: the stage's consumers are done with it
};
static_assert(sizeof(SharedStorage::a[0]) % 1024 == 0 && sizeof(SharedStorage::b[0]) % 1024 == 0 &&
                  sizeof(SharedStorage::d[0]) % 1024 == 0,
              "every tile must start on a 1024-byte boundary");

// Loads K slice `k_slice` of the tile at (m0, n0) into the producer's next stage, once that stage is
// free, and moves the producer on. One thread.
__device__ __forceinline__ void load_slice(SharedStorage& smem, PipelineState<kStages>& write, const CUtensorMap* map_a,
                                           const CUtensorMap* map_b, int64_t m0, int64_t n0, int64_t k_slice) {
  // BEGIN SOLUTION step05: wait (mbarrier_wait) on empty[write.stage] with the producer's parity, write.empty_parity() (it passes at once on the first lap of the ring).
  mbarrier_wait(&smem.empty[write.stage], write.empty_parity(), WaitTag{"empty", "producer"});
  // END SOLUTION step05
  // BEGIN SOLUTION step04: announce kStageBytes on full[s] (mbarrier_arrive_expect_tx), then load the boxes at {k0, m0} of A and {k0, n0} of B (k0 = k_slice * 64) into stage s = write.stage with tma_load_2d.
  const int s = write.stage;
  const int32_t k0 = static_cast<int32_t>(k_slice * kTileK);
  mbarrier_arrive_expect_tx(&smem.full[s], kStageBytes);
  tma_load_2d(smem.a[s], map_a, &smem.full[s], k0, static_cast<int32_t>(m0));
  tma_load_2d(smem.b[s], map_b, &smem.full[s], k0, static_cast<int32_t>(n0));
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
}

// The consumer's main loop for one tile: every K slice from the ring into the accumulators. The
// whole consumer warpgroup.
__device__ __forceinline__ void mma_tile(SharedStorage& smem, PipelineState<kStages>& read, float (&acc)[2][kAccRegs],
                                         int64_t k_slices) {
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

    // BEGIN SOLUTION step05: wait_group 0 completes this slice's group (wgmma_wait_group<0>, then wgmma_fence_operands on both accumulator halves); then lane 0 of each warp arrives on empty[read.stage] (mbarrier_arrive).
    wgmma_wait_group<0>();  // this warp's share of slice ks's wgmmas has finished reading the stage
    wgmma_fence_operands(acc[0]);
    wgmma_fence_operands(acc[1]);
    if (lane_id() == 0) mbarrier_arrive(&smem.empty[read.stage]);
    // END SOLUTION step05
    read.advance();
  }
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

// The consumer: the whole consumer warpgroup. For each of this CTA's tiles, in the producer's
// order: the main loop, then the epilogue.
__device__ __forceinline__ void consumer(SharedStorage& smem, const CUtensorMap* map_d, const TileScheduler& sched,
                                         int64_t N, int64_t k_slices) {
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupSize;
  PipelineState<kStages> read;  // the stage the consumer multiplies next, across tiles
  float acc[2][kAccRegs];       // rows 0-63 and 64-127 of the tile
  for (WorkCursor cursor = sched.begin(blockIdx.x, gridDim.x); cursor.valid(); cursor.advance()) {
    int64_t m0 = 0, n0 = 0;  // the tile's first row and column
    // BEGIN SOLUTION step06: this unit's tile is sched.tile(cursor.unit, 0) (cluster_m = 1: every CTA is rank 0 of its own cluster); its origin is (tile.m * 128, tile.n * 128), 64-bit.
    const Tile tile = sched.tile(cursor.unit, 0);
    m0 = tile.m * kTileM;
    n0 = tile.n * kTileN;
    // END SOLUTION step06
    // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
    const TraceTile traced(TraceRole::consumer, cursor.unit);
    mma_tile(smem, read, acc, k_slices);
    epilogue_tile(smem, acc, map_d, m0, n0, N, t);
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
      mbarrier_init(&smem.empty[s], kReleaseArrivals);  // lane 0 of each consumer warp
    }
    fence_mbarrier_init();  // the inits are visible to the async proxy (TMA's complete_tx)
  }
  // The last CTA-wide barrier: nobody uses a barrier before it is initialised. From here on the two
  // warpgroups run apart and sync only through the mbarriers (and the consumer's named barrier).
  __syncthreads();

  const int64_t k_slices = (K + kTileK - 1) / kTileK;
  const TileScheduler sched((M + kTileM - 1) / kTileM, (N + kTileN - 1) / kTileN, /*cluster_m=*/1, kGroupM);

  // BEGIN SOLUTION step07: warpgroup kProducerWarpgroup lowers its registers to kProducerRegs (setmaxnreg_dec) and one elected thread (elect_one_sync) of its first warp runs producer(); the other warpgroup raises its registers to kConsumerRegs (setmaxnreg_inc) and runs consumer().
  if (warpgroup_id() == kProducerWarpgroup) {
    setmaxnreg_dec<kProducerRegs>();  // the whole warpgroup executes it (.sync.aligned)
    if (warp_id() == 0 && elect_one_sync()) producer(smem, &map_a, &map_b, sched, k_slices);
  } else if (warpgroup_id() == kConsumerWarpgroup) {
    setmaxnreg_inc<kConsumerRegs>();
    consumer(smem, &map_d, sched, N, k_slices);
  }
  // END SOLUTION step07
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::general, p); !s.ok()) return s;
  const int64_t tiles = ((p.m + kTileM - 1) / kTileM) * ((p.n + kTileN - 1) / kTileN);
  // The tensor maps: A (M x K) and B (N x K) in boxes of one K slice of a tile, D (M x N) in boxes
  // of 64 columns of a tile; all in the 128-byte swizzle that the wgmma descriptors describe.
  CUtensorMap map_a, map_b, map_d;
  if (Status s = make_tensor_map_2d(&map_a, p.a, p.m, p.k, kTileM, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_b, p.b, p.n, p.k, kTileN, kTileK, Swizzle::b128); !s.ok()) return s;
  if (Status s = make_tensor_map_2d(&map_d, p.d, p.m, p.n, kTileM, kStoreCols, Swizzle::b128); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  cfg.stream = stream;
  // The persistent grid: the CTAs resident at once (kCtasPerSm per SM), and no more CTAs than
  // tiles. Any grid computes a correct D; its float rounding depends on the grid, which sets the
  // turn, and so the K order, of each tile (k_slice_in_turn).
  int ctas = 0;
  if (Status s = resident_ctas(kernel, kThreads, cfg.smem_bytes, &ctas); !s.ok()) return s;
  if (ctas > tiles) ctas = static_cast<int>(tiles);
  cfg.grid = dim3(static_cast<unsigned>(ctas));
  return launch(kernel, cfg, map_a, map_b, map_d, p.m, p.n, p.k);
}

}  // namespace gemm::step07::hopper
