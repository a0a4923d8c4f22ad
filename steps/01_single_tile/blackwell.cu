// GEMM, step by step -- blackwell track (sm_100a: B200, GB200), step 1 of 12: a single tile.
//
// D[M,N] = A[M,K] * B[N,K]^T in fp16, summed in fp32. Each step's file is the previous step's plus
// one lesson (step 1 is the start), so `diff` against the previous step's file is the lesson in
// code. README.md beside this file explains it; the top README and docs/design.md explain the
// ladder and the kernel as a whole.
//
// What this step adds:
//   1. Four warps (128 threads) compute one 128x128 tile with K = 64; `run` refuses any other shape
//      (`Contract::single_tile`).
//   2. Setup: warp 0 allocates 128 TMEM columns (`tmem_alloc`, `tmem_relinquish_alloc_permit`);
//      thread 0 initialises the mbarrier the MMAs complete on (`mma_done`, `mbarrier_init`,
//      `fence_mbarrier_init`); a CTA barrier between tcgen05 fences publishes both.
//   3. Threads copy A and B from global memory into shared memory in the 128-byte swizzle layout
//      (`copy_tile_sw128`, `sw128_offset`): each tile starts on a 1024-byte boundary
//      (`alignas(1024)`).
//   4. Each writer fences its stores into the async proxy (`fence_proxy_async_shared`); a CTA
//      barrier waits for every writer, and `tcgen05_fence_after_thread_sync` orders the MMAs after
//      it.
//   5. One thread issues 4 `tcgen05_mma_f16` M128 N128 K16 on shared-memory descriptors
//      (`make_smem_desc_k_sw128`) and an instruction descriptor (`kIdesc`, `make_idesc_f16`); the
//      first runs with enable_input_d false, since TMEM is not zeroed. `tcgen05_commit` arrives on
//      `mma_done` once they complete.
//   6. Every thread waits on `mma_done` (`mbarrier_wait`), and each warp reads its 32 TMEM lanes
//      (`tmem_ld_32x32b_x32`, `tmem_lane_base`, `tmem_wait_ld`): one row per thread, converted to
//      fp16 (`pack_half2`) and stored to D.
//   7. Teardown: warp 0 frees the TMEM (`tmem_dealloc`) after a CTA barrier between tcgen05 fences.
//   8. The timeline's spans (`TraceTile`, `TraceEpilogue`; docs/timeline.md), which every step
//      keeps: empty unless the build is traced.
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
#include "common/trace.cuh"
#include "common/warp.cuh"

namespace gemm::step01::blackwell {

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

// Both tiles are rows x 128 bytes in the SW128 layout; each starts on a 1024-byte boundary
// (the swizzle pattern repeats every 8 rows = 1024 bytes, and the descriptors' base offset is 0).
struct alignas(1024) SharedStorage {
  __half a[kTileM * kTileK];  // 16 KB
  __half b[kTileN * kTileK];  // 16 KB
  uint64_t mma_done;          // mbarrier: tcgen05.commit arrives once the MMAs have completed
  uint32_t tmem_base;         // tcgen05.alloc writes the accumulator's TMEM address here
};
static_assert(sizeof(SharedStorage::a) % 1024 == 0, "B must start on a 1024-byte boundary");

// Copies a rows x 64 fp16 tile (row-major, leading dimension ld) into shared memory, SW128.
__device__ void copy_tile_sw128(__half* tile, const __half* src, int rows, int64_t ld) {
  for (int i = threadIdx.x; i < rows * 8; i += blockDim.x) {
    const int row = i / 8;
    const int chunk = i % 8;
    const uint4 v = *reinterpret_cast<const uint4*>(src + row * ld + chunk * 8);
    // BEGIN SOLUTION step01: 16-byte chunk c (0..7) of row r goes to byte sw128_offset(r, c) of the tile.
    *reinterpret_cast<uint4*>(reinterpret_cast<char*>(tile) + sw128_offset(row, chunk)) = v;
    // END SOLUTION step01
  }
}

// Two fp32 accumulator cells (raw TMEM bits) rounded to fp16 and packed as D stores them: the
// lower column in the low half.
__device__ uint32_t pack_half2(uint32_t lo, uint32_t hi) {
  const __half2_raw h = __floats2half2_rn(tmem_f32(lo), tmem_f32(hi));
  return static_cast<uint32_t>(h.x) | (static_cast<uint32_t>(h.y) << 16);
}

__global__ void __launch_bounds__(kThreads) kernel(const __half* A, const __half* B, __half* D) {
  SharedStorage& smem = dynamic_smem<SharedStorage>();

  // Setup. TMEM is allocated by one whole warp (tcgen05.alloc is .sync.aligned) and freed by the
  // same warp at the end; TMEM is not zeroed, the first MMA overwrites it.
  if (warp_id() == 0) {
    tmem_alloc<1, kTmemColumns>(&smem.tmem_base);
    tmem_relinquish_alloc_permit<1>();  // no more allocations here: a waiting CTA may allocate
  }
  if (threadIdx.x == 0) {
    mbarrier_init(&smem.mma_done, 1);  // one arrival completes a phase: the tcgen05.commit
    fence_mbarrier_init();             // the init is visible to the async proxy before any commit
  }
  // The barrier publishes the mbarrier init and the TMEM address (an ordinary shared-memory write
  // by tcgen05.alloc). The tcgen05 fences around it order warp 0's alloc before every thread's
  // later tcgen05 operations (the MMAs, the loads).
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t tmem_acc = smem.tmem_base;  // lane 0, first allocated column
  // The timeline's spans (docs/timeline.md), each to the end of its scope; empty unless traced.
  const TraceTile traced(TraceRole::cta, blockIdx.x);

  copy_tile_sw128(smem.a, A, kTileM, kTileK);
  copy_tile_sw128(smem.b, B, kTileN, kTileK);
  // tcgen05.mma reads shared memory through the async proxy; the copies above were generic-proxy
  // stores. Each writer fences its own stores, then the barrier waits for every writer, and
  // tcgen05.fence::after_thread_sync orders the MMAs below after the barrier.
  fence_proxy_async_shared();
  __syncthreads();
  tcgen05_fence_after_thread_sync();

  // One thread issues the MMAs (tcgen05.mma is not a warp-wide instruction). They run
  // asynchronously and in issue order on the same accumulator.
  if (threadIdx.x == 0) {
    // BEGIN SOLUTION step01: one tcgen05_mma_f16<1> per k16 slice into tmem_acc with kIdesc, on descriptors of the SW128 tiles (make_smem_desc_k_sw128: start + 32 B per k16 slice); enable_input_d from the second k16 slice on.
#pragma unroll
    for (int k = 0; k < kTileK / kMmaK; ++k) {
      const uint32_t k_bytes = k * kMmaK * sizeof(__half);  // 32 B per k16 slice
      const uint64_t a_desc = make_smem_desc_k_sw128(smem_addr(smem.a) + k_bytes);
      const uint64_t b_desc = make_smem_desc_k_sw128(smem_addr(smem.b) + k_bytes);
      tcgen05_mma_f16<1>(tmem_acc, a_desc, b_desc, kIdesc, /*enable_input_d=*/k > 0);
    }
    // END SOLUTION step01
    tcgen05_commit<1>(&smem.mma_done);  // one arrive once every MMA above has completed
  }
  // Only the mbarrier tells that the MMAs have completed: a CTA barrier would prove only that they
  // were issued. mma_done completes its first phase (parity 0) here.
  mbarrier_wait(&smem.mma_done, 0, WaitTag{"mma_done", "epilogue"});
  tcgen05_fence_after_thread_sync();  // orders the tcgen05.ld below after the wait

  // tcgen05.ld is .sync.aligned: the whole warp must execute it together. The mbarrier spin loop
  // above may leave the lanes diverged (each lane retries on its own), so reconverge explicitly.
  warp_sync();

  const TraceEpilogue traced_epilogue;
  // Epilogue: TMEM -> registers -> fp16 -> global, 32 columns per tcgen05.ld.
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
    for (int j = 0; j < kLdColumns; j += 8) {  // 8 fp16 = one 16-byte store
      const uint4 packed = make_uint4(pack_half2(v[j], v[j + 1]), pack_half2(v[j + 2], v[j + 3]),
                                      pack_half2(v[j + 4], v[j + 5]), pack_half2(v[j + 6], v[j + 7]));
      *reinterpret_cast<uint4*>(D + row * kTileN + c + j) = packed;
    }
  }

  // Teardown. Every thread's tcgen05.ld has completed (wait::ld above); the fences and the barrier
  // order them all before warp 0's dealloc, so no warp still reads the columns being freed.
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  if (warp_id() == 0) tmem_dealloc<1, kTmemColumns>(tmem_acc);
}

Status run(const Problem& p, cudaStream_t stream) {
  if (Status s = check_problem(Contract::single_tile, p); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.grid = dim3(1);
  cfg.block = dim3(kThreads);
  cfg.smem_bytes = smem_bytes<SharedStorage>();
  cfg.stream = stream;
  return launch(kernel, cfg, p.a, p.b, p.d);
}

}  // namespace gemm::step01::blackwell
