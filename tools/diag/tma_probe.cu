// tma_probe: how fast the GEMM's operand loads run against the operands' row pitch (issue 17).
//
// Ragged K halves the speed of every hopper step: K = 3000 (row pitch 6000 bytes, 112 mod 128)
// runs at 0.41x cuBLAS where K = 3008 (pitch 6016, a multiple of 128) runs like 3072. Is the cost
// the pitch's alignment to the 128-byte box row (box {64, 128}, SWIZZLE_128B), the partial last K
// slice, the tensor map's L2 promotion, or TMA itself? This program moves exactly the bytes the
// GEMM's main loop moves, and nothing else, with each way of loading them, for pitches with every
// residue mod 128, with and without a partial last slice:
//
//   - patterns: `gemm`  576 output tiles of 3072 x 3072, each streaming all K slices of its A and B
//                       row tiles (tile t: A rows (t % 24) * 128, B rows (t / 24) * 128; L2 read
//                       out before each run, as gemm_bench's cold inputs);
//               `cold`  every (row tile, slice) of A and B once, L2 read out before each run: the
//                       DRAM path, where L2 promotion acts;
//               `warm`  the same, right after an untimed identical run: the L2 path alone.
//   - loads:    TMA 2-D maps (today's box {64,128} SW128 with each L2 promotion, SW64 with box
//               {32,128}, no swizzle with 128-, 256- and 512-byte box rows), 3-D views that put two
//               or four slices of one row next to each other in one box (longer contiguous runs
//               per box row) or land two whole SW128 tiles from one copy (3d:rows2, the layout
//               wgmma reads), 1-D bulk copies of 128 bytes per row (cp.async.bulk, no tensor map),
//               and cp.async 16-byte copies by 128 threads (the LSU path), a warp's copies covering
//               four 128-byte rows (the GEMM's slice), 512 contiguous bytes of one row, or four
//               whole L2 lines (each row's copies started at the line boundary before it), those
//               lines' chunks landing in order, rotated within their row, or split between two
//               stages as a GEMM must place them (lines/rotate, lines/even, lines/split); and a 3-D
//               view whose boxes are 128 rows of one phase (rows 8 apart), each box moved back by
//               the phase's offset in its lines so that every box row is one whole line (3d:phase),
//               and the same for A with B's 128 consecutive rows as eight such boxes of 16 rows, one
//               per phase, each moved back by its own phase's offset (3d:phase/b8). The cp.async
//               variants bypass L1 (.cg); ca, ca/512, ca/lines and ca/split are their twins
//               through L1 (.ca).
//   - configs:  pitch:cols pairs. `cols` bounds the loads (zeros past it, as the GEMM's K edge);
//               `pitch` is the row stride, so 6000:2944 is K = 3000's pitch without the partial
//               slice and 6144:3000 the partial slice on an aligned pitch.
//
// Every kernel is persistent, one CTA per SM (grid = #SMs unless --grid), keeps a ring of stages
// in flight (160 KB by default, step 8's five 32 KB stages) and never reads what lands. Reported:
// GB/s of in-bounds global bytes (the bytes each config needs, the same for every load kind but
// the 3-D views, which load whole slices only), bytes per SM-cycle (the SM clock measured in the
// run, clock64 against %globaltimer), and the ratio to the same column's aligned row 6144:3072.
// Then two sweeps of today's maps: ring depth (latency or throughput?) and grid size (a limit per
// SM, the TMA unit, or a shared one, L2?). It also prints, per config, the 128-byte L2 lines and
// 32-byte sectors a 128-byte box row touches, so that the measured ratios can be held against
// "time ~ lines" and "time ~ sectors", and `--ncu` mode runs each configuration once for ncu.
//
//   tma_probe [--configs P:C,...] [--variants NAME,...] [--patterns gemm,cold,warm] [--reps N]
//             [--ring BYTES] [--grid N] [--no-sweeps] [--ncu] [--csv FILE] [--model] [--list]
//   --model: the footprint table alone (no GPU needed).
//   --variants takes names (--list) and the groups `maps` (today's box with each L2 promotion,
//     SW64, no swizzle, cp.async) and `views` (wide boxes, 3-D views, 1-D bulk copies,
//     cp.async/512, cp.async/lines and its placements), each with today's sw128/256 as its
//     reference column. Default: all.
//   --ncu: one launch per (pattern, config, variant), each announced on stdout with its footprint
//     model, no sweeps; for `ncu -k regex:load_`. Its defaults: configs 6144:3072, 6000:3000,
//     6000:2944, 6080:3008; variants sw128/256, sw128/none, cp.async, bulk1d; patterns gemm, cold.
//
// Hopper only (sm_90a). The loads are the only work: a kernel's time is its load throughput.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "common/clock.cuh"
#include "common/fence.cuh"
#include "common/mbarrier.cuh"
#include "common/smem.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"

namespace gemm::tma_probe {

constexpr int kRows = 3072;                  // M = N of issue 17's shapes
constexpr int kTile = 128;                   // rows of a tile
constexpr int kTiles = kRows / kTile;        // 24 row tiles per operand
constexpr int kGemmTiles = kTiles * kTiles;  // 576 output tiles
constexpr uint32_t kSliceBytes = 128;        // one K slice of a row: 64 fp16
constexpr int kDefaultRingBytes = 160 * 1024;
constexpr int kMaxRingBytes = 192 * 1024;
constexpr int kMaxStages = 32;
constexpr int kCpAsyncThreads = 128;
constexpr int kCpAsyncStages = 5;  // 5 x 32 KB, the default ring

// What one launch moves, in units of one stage: a box of A and the box of B at the same K.
struct Work {
  int32_t units;       // stages in all: tiles x boxes_k x boxes_r
  int32_t chunk;       // units a CTA takes at a time: a whole tile (gemm) or one (cold, warm)
  int32_t gemm;        // 1: tile t covers A rows (t % 24) * 128 and B rows (t / 24) * 128; 0: both t * 128
  int32_t boxes_k;     // boxes along K per tile
  int32_t boxes_r;     // boxes along the rows per tile (128 / box rows)
  int32_t step_k;      // the box's K coordinate step: columns (2-D maps) or slices (3-D views)
  int32_t box_rows;    // rows of one box
  uint32_t box_bytes;  // shared-memory bytes of one box
  int32_t stages;      // the ring
  int32_t rows_mid;    // 3-D views: 1 if dimension 1 is the rows (then 2 is the slices), 0 if the slices
  int32_t phase;       // 1: the 3-D phase view (see Kind::tma_phase)
  int32_t b_phases;    // phase view: 1 if B's tile is one phase like A's, 8 if it is 128 consecutive rows
  // The raw operands, for the loads without a tensor map.
  const char* a;
  const char* b;
  uint64_t pitch;              // bytes from one row to the next
  uint32_t row_bytes;          // in-bounds bytes of a row (cols * 2)
  unsigned long long* clocks;  // CTA 0, thread 0: clock64 and %globaltimer at the start and the end
};

// Walks this CTA's units: chunks blockIdx.x, blockIdx.x + gridDim.x, ... of `chunk` units each;
// inside a tile the row boxes of one K box first, then the next K box. Two divisions per chunk,
// none per unit inside a chunk: the issuing thread spends its time issuing.
struct Cursor {
  int32_t chunk_index, left;  // the chunk, and the units left in it
  int32_t t, kb, rb;          // the unit: tile, box along K, box along the rows

  __device__ __forceinline__ void seek(const Work& w) {
    const int32_t per_tile = w.boxes_k * w.boxes_r;
    const int32_t u = chunk_index * w.chunk;
    t = u / per_tile;
    const int32_t in = u - t * per_tile;
    kb = in / w.boxes_r;
    rb = in - kb * w.boxes_r;
    left = w.chunk;
  }
  __device__ __forceinline__ void start(const Work& w) {
    chunk_index = static_cast<int32_t>(blockIdx.x);
    if (valid(w)) seek(w);
  }
  __device__ __forceinline__ bool valid(const Work& w) const { return chunk_index * w.chunk < w.units; }
  __device__ __forceinline__ void next(const Work& w) {
    if (--left == 0) {
      chunk_index += static_cast<int32_t>(gridDim.x);
      if (valid(w)) seek(w);
      return;
    }
    if (++rb == w.boxes_r) {
      rb = 0;
      if (++kb == w.boxes_k) {
        kb = 0;
        ++t;
      }
    }
  }
  __device__ __forceinline__ int32_t row_a(const Work& w) const {
    return (w.gemm ? t % kTiles : t) * kTile + rb * w.box_rows;
  }
  __device__ __forceinline__ int32_t row_b(const Work& w) const {
    return (w.gemm ? t / kTiles : t) * kTile + rb * w.box_rows;
  }
};

// A ring slot and the parity of the phase its barrier completes next.
struct Ring {
  int32_t slot = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void next(int32_t stages) {
    if (++slot == stages) {
      slot = 0;
      phase ^= 1;
    }
  }
};

__device__ __forceinline__ void stamp(const Work& w, int which) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  w.clocks[2 * which] = static_cast<unsigned long long>(clock64());
  w.clocks[2 * which + 1] = globaltimer_ns();
}

// The ring: dynamic shared memory from a 1024-byte boundary (the SW128 atom), then the barriers.
__device__ __forceinline__ char* ring_base() {
  const uint32_t base = smem_addr(gemm_dynamic_smem);
  return reinterpret_cast<char*>(gemm_dynamic_smem) + (1024 - base % 1024) % 1024;
}

// Waits for the last min(issued, stages) stages, the ones nobody has waited for: the slots
// before `pos` (the next slot to fill), oldest first.
__device__ __forceinline__ void drain(uint64_t* full, int32_t stages, int32_t issued, Ring pos) {
  const int32_t pending = issued < stages ? issued : stages;
  Ring r = pos;  // step back `pending` slots: the oldest pending stage
  for (int32_t i = 0; i < pending; ++i) {
    if (r.slot == 0) {
      r.slot = stages;
      r.phase ^= 1;
    }
    --r.slot;
  }
  for (int32_t i = 0; i < pending; ++i, r.next(stages))
    mbarrier_wait(&full[r.slot], r.phase, WaitTag{"full", "drain", r.slot});
}

// TMA: one thread keeps `stages` stages in flight, each a box of A and one of B on one barrier.
template <int Rank>
__global__ void __launch_bounds__(32, 1)
    load_tma(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, const Work w) {
  if (threadIdx.x != 0) return;
  char* ring = ring_base();
  uint64_t* full = reinterpret_cast<uint64_t*>(ring + size_t{2} * w.box_bytes * w.stages);
  stamp(w, 0);
  tma_prefetch_descriptor(&map_a);
  tma_prefetch_descriptor(&map_b);
  for (int s = 0; s < w.stages; ++s) mbarrier_init(&full[s], 1);
  fence_mbarrier_init();
  // Stage j waits, before it reuses its slot, for the phase stage j - stages completed.
  Ring ring_pos;
  int32_t issued = 0;
  Cursor x;
  x.start(w);
  for (; x.valid(w); x.next(w), ring_pos.next(w.stages), ++issued) {
    const int32_t slot = ring_pos.slot;
    if (issued >= w.stages) mbarrier_wait(&full[slot], ring_pos.phase ^ 1, WaitTag{"full", "probe", slot});
    char* dst = ring + size_t{2} * w.box_bytes * slot;
    mbarrier_arrive_expect_tx(&full[slot], 2 * w.box_bytes);
    const int32_t k = x.kb * w.step_k, ra = x.row_a(w), rb = x.row_b(w);
    if constexpr (Rank == 2) {
      tma_load_2d(dst, &map_a, &full[slot], k, ra);
      tma_load_2d(dst + w.box_bytes, &map_b, &full[slot], k, rb);
    } else if (w.phase) {
      // Row tile i of 24 is the 128 rows p + 8 j (j = 128 (i / 8) ...) of phase p = i % 8; its box at
      // line kb starts s_p chunks before the slice, so that every box row is one whole line.
      const int32_t ta = ra / kTile, tb = rb / kTile;
      const int32_t pa = ta % 8, pb = tb % 8;
      const int32_t sa =
          static_cast<int32_t>(reinterpret_cast<uintptr_t>(w.a + static_cast<uint64_t>(pa) * w.pitch) % 128 / 16);
      const int32_t sb =
          static_cast<int32_t>(reinterpret_cast<uintptr_t>(w.b + static_cast<uint64_t>(pb) * w.pitch) % 128 / 16);
      tma_load_3d(dst, &map_a, &full[slot], 64 * x.kb - 8 * sa, pa, ta / 8 * kTile);
      if (w.b_phases == 1) {
        tma_load_3d(dst + w.box_bytes, &map_b, &full[slot], 64 * x.kb - 8 * sb, pb, tb / 8 * kTile);
      } else {
        // B's tile is rows rb .. rb + 127 as they are: groups rb / 8 .. rb / 8 + 15 of every phase q,
        // one box of 16 rows per phase, each moved back by its own phase's offset s_q.
        constexpr uint32_t kPhaseBoxBytes = kSliceBytes * kTile / 8;
        for (int32_t q = 0; q < 8; ++q) {
          const int32_t sq =
              static_cast<int32_t>(reinterpret_cast<uintptr_t>(w.b + static_cast<uint64_t>(q) * w.pitch) % 128 / 16);
          tma_load_3d(dst + w.box_bytes + q * kPhaseBoxBytes, &map_b, &full[slot], 64 * x.kb - 8 * sq, q, rb / 8);
        }
      }
    } else if (w.rows_mid) {
      tma_load_3d(dst, &map_a, &full[slot], 0, ra, k);
      tma_load_3d(dst + w.box_bytes, &map_b, &full[slot], 0, rb, k);
    } else {
      tma_load_3d(dst, &map_a, &full[slot], 0, k, ra);
      tma_load_3d(dst + w.box_bytes, &map_b, &full[slot], 0, k, rb);
    }
  }
  drain(full, w.stages, issued, ring_pos);
  stamp(w, 1);
}

// 1-D bulk copy (cp.async.bulk, no tensor map): `bytes` (a multiple of 16) from global `src` to
// this CTA's shared `dst`, completing on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

// The same stages as TMA's box {64, 128}, as 128 row copies of up to 128 bytes per operand, issued
// by one warp (4 rows per lane). Past the row's end nothing is copied (the partial slice is short).
__global__ void __launch_bounds__(32, 1) load_bulk(const Work w) {
  const int lane = static_cast<int>(threadIdx.x);
  char* ring = ring_base();
  uint64_t* full = reinterpret_cast<uint64_t*>(ring + size_t{2} * w.box_bytes * w.stages);
  stamp(w, 0);
  if (lane == 0) {
    for (int s = 0; s < w.stages; ++s) mbarrier_init(&full[s], 1);
    fence_mbarrier_init();
  }
  __syncwarp();
  Ring pos;
  int32_t issued = 0;
  Cursor x;
  x.start(w);
  for (; x.valid(w); x.next(w), pos.next(w.stages), ++issued) {
    const int32_t slot = pos.slot;
    if (issued >= w.stages) mbarrier_wait(&full[slot], pos.phase ^ 1, WaitTag{"full", "probe", slot});
    const uint32_t k_bytes = static_cast<uint32_t>(x.kb) * kSliceBytes;
    const uint32_t bytes = w.row_bytes - k_bytes < kSliceBytes ? w.row_bytes - k_bytes : kSliceBytes;
    if (lane == 0) mbarrier_arrive_expect_tx(&full[slot], 2 * kTile * bytes);
    __syncwarp();  // the stage's bytes are expected before any of its copies can complete
    char* dst = ring + size_t{2} * w.box_bytes * slot;
    const char* a = w.a + static_cast<uint64_t>(x.row_a(w)) * w.pitch + k_bytes;
    const char* b = w.b + static_cast<uint64_t>(x.row_b(w)) * w.pitch + k_bytes;
    for (int r = lane; r < kTile; r += 32) {
      bulk_load(dst + r * kSliceBytes, a + r * w.pitch, bytes, &full[slot]);
      bulk_load(dst + w.box_bytes + r * kSliceBytes, b + r * w.pitch, bytes, &full[slot]);
    }
  }
  drain(full, w.stages, issued, pos);
  stamp(w, 1);
}

// cp.async (the LSU path, L1 bypassed): 128 threads, 16-byte copies, 16 per thread per stage. A
// box row is RowBytes of one row (RowBytes / 16 threads): at 128 a warp's 32 copies are 4 whole
// 128-byte rows (the GEMM's slice); at 512 they are 512 contiguous bytes of one row, four slices,
// so that the warp's copies touch each L2 line of the row once. Past the row's end the copy reads
// nothing and writes zeros (src-size 0), as TMA's fill. A thread only ever rewrites its own chunks,
// after their group completed, so the ring needs no barrier.
// Lines: each row's copies start at the 128-byte line boundary at or before the row's start
// instead of at the row's start, so that every 128 bytes a warp copies are one whole L2 line at any
// pitch (the same number of bytes; the data is the row's shifted by up to 112 bytes, which a GEMM
// would place with the copies' shared-memory addresses, and which this probe never reads). Where a
// line's chunks land (only with Lines), for a row that starts s chunks into its line:
//   Place::plain   chunk q at column q of the row (the data unplaced);
//   Place::rotate  at column (q - s) % 8 of the row: placed, in one 128-byte row of shared memory;
//   Place::even    at column (q - s') % 8, s' = s rounded down to even: two chunks of a 32-byte
//                  sector stay in one 32-byte unit of shared memory;
//   Place::split   as a GEMM must place them: chunks q >= s at column q - s of this stage, chunks
//                  q < s at column 8 - s + q of the same row of the stage before (the slice the
//                  line's head belongs to), each column swizzled (c ^ row % 8) as wgmma's SW128.
// L1 = false: .cg, the copy bypasses L1; true: .ca, it is looked up in and allocated in L1 (to see
// whether the L2 requests then follow the global lines rather than where the chunks land).
template <bool L1>
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, uint32_t src_bytes) {
  if constexpr (L1)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
                 : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
                 : "memory");
}

enum class Place { plain, rotate, even, split };

template <int Stages, int RowBytes, bool Lines = false, Place P = Place::plain, bool L1 = false>
__global__ void __launch_bounds__(kCpAsyncThreads, 1) load_cpasync(const Work w) {
  constexpr int kChunksPerRow = RowBytes / 16;
  constexpr int kChunksPerBox = kChunksPerRow * (kTile * static_cast<int>(kSliceBytes) / RowBytes);
  char* ring = ring_base();
  const int t = static_cast<int>(threadIdx.x);
  stamp(w, 0);
  // This CTA's units, and a cursor Stages - 1 units ahead of the one waited for.
  const int32_t chunks = w.units / w.chunk;
  const int32_t n = chunks > static_cast<int32_t>(blockIdx.x)
                        ? (chunks - static_cast<int32_t>(blockIdx.x) + static_cast<int32_t>(gridDim.x) - 1) /
                              static_cast<int32_t>(gridDim.x) * w.chunk
                        : 0;
  Cursor ahead;
  ahead.start(w);
  int32_t slot = 0;
  const auto issue_next = [&]() {
    if (ahead.valid(w)) {
      char* stage = ring + size_t{2} * w.box_bytes * slot;
      const uint32_t k_bytes = static_cast<uint32_t>(ahead.kb) * RowBytes;
      const char* a = w.a + static_cast<uint64_t>(ahead.row_a(w)) * w.pitch;
      const char* b = w.b + static_cast<uint64_t>(ahead.row_b(w)) * w.pitch;
#pragma unroll
      for (int i = 0; i < 2 * kChunksPerBox / kCpAsyncThreads; ++i) {
        const int q = t + i * kCpAsyncThreads;
        const int op = q / kChunksPerBox, row = (q % kChunksPerBox) / kChunksPerRow, chunk = q % kChunksPerRow;
        const uint32_t off = k_bytes + chunk * 16;
        const bool in = off < w.row_bytes;
        const char* row_src = (op ? b : a) + row * w.pitch;
        const int s = static_cast<int>(reinterpret_cast<uintptr_t>(row_src) % 128 / 16);
        if constexpr (Lines) row_src -= reinterpret_cast<uintptr_t>(row_src) % 128;
        const char* src = row_src + (in ? off : 0);
        char* dst = stage + op * w.box_bytes + row * RowBytes;
        if constexpr (P == Place::plain) dst += chunk * 16;
        else if constexpr (P == Place::rotate) dst += ((chunk - s) & 7) * 16;
        else if constexpr (P == Place::even) dst += ((chunk - (s & ~1)) & 7) * 16;
        else {
          if (chunk < s)
            dst = ring + size_t{2} * w.box_bytes * (slot == 0 ? Stages - 1 : slot - 1) + op * w.box_bytes +
                  row * RowBytes;
          dst += (((chunk - s) & 7) ^ (row % 8)) * 16;
        }
        cp_async_16<L1>(dst, src, in ? 16 : 0);
      }
      ahead.next(w);
    }
    slot = slot + 1 == Stages ? 0 : slot + 1;
    asm volatile("cp.async.commit_group;" ::: "memory");  // one group per stage, empty past the end
  };
  for (int s = 0; s < Stages - 1; ++s) issue_next();
  for (int32_t j = 0; j < n; ++j) {
    issue_next();
    asm volatile("cp.async.wait_group %0;" ::"n"(Stages - 1) : "memory");  // unit j has landed
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  stamp(w, 1);
}

// Reads a buffer of 3x the L2 through L2 (ld.global.cg), so that the next kernel finds none of the
// operands there; reads leave no dirty lines to write back during the timed run.
__global__ void l2_flush_kernel(const uint4* p, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

// Keeps the GPU busy for `ns` nanoseconds, so that the host has enqueued what follows before the
// GPU reaches it (the host's launch latency stays out of a timed region).
__global__ void spin_kernel(unsigned ns) {
  const uint64_t t0 = globaltimer_ns();
  while (globaltimer_ns() - t0 < ns) {
  }
}

__global__ void fill_kernel(uint32_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 0x9e3779b9u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    p[i] = x & 0x3bff3bffu;  // two finite fp16 values, |x| < 1
  }
}

}  // namespace gemm::tma_probe

// ---------------------------------------------------------------------------------------------
// Host
// ---------------------------------------------------------------------------------------------
namespace {

using namespace gemm;
using namespace gemm::tma_probe;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "tma_probe: %s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    std::exit(1);
  }
}

enum class Kind { tma_project, tma_2d, tma_3d, tma_3d_rows_mid, tma_phase, bulk_1d, cp_async };
enum class Pattern { gemm, cold, warm };

const char* pattern_name(Pattern p) { return p == Pattern::gemm ? "gemm" : p == Pattern::cold ? "cold" : "warm"; }

struct Variant {
  const char* name;  // the column and --variants key
  const char* what;
  Kind kind;
  uint32_t box_cols;    // 2-D: the box's inner dimension (fp16); 3-D: 64
  uint32_t box_slices;  // 3-D: slices per box (dimension 1)
  uint32_t box_rows;
  CUtensorMapSwizzle swizzle;
  L2Promotion promotion;
  bool lines = false;          // cp.async: copies start at the line boundary before each row
  Place place = Place::plain;  // ... and where a line's chunks land
  uint32_t b_box_rows = 0;     // phase view: rows of one box of B when not box_rows (8 boxes a tile)
  bool l1 = false;             // cp.async: .ca (through L1) instead of .cg
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"sw128/256", "today: 2-D box {64,128}, SWIZZLE_128B, L2 promotion 256 B (make_tensor_map_2d)", Kind::tma_project,
       64, 1, 128, CU_TENSOR_MAP_SWIZZLE_128B, L2Promotion::b256},
      {"sw128/none", "today's box, L2 promotion none", Kind::tma_project, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_128B,
       L2Promotion::none},
      {"sw128/64", "today's box, L2 promotion 64 B", Kind::tma_project, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_128B,
       L2Promotion::b64},
      {"sw128/128", "today's box, L2 promotion 128 B", Kind::tma_project, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_128B,
       L2Promotion::b128},
      {"sw64", "2-D box {32,128} (64-byte rows), SWIZZLE_64B, promotion 256 B", Kind::tma_2d, 32, 1, 128,
       CU_TENSOR_MAP_SWIZZLE_64B, L2Promotion::b256},
      {"none64", "2-D box {64,128}, no swizzle, promotion 256 B", Kind::tma_2d, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE,
       L2Promotion::b256},
      {"none128", "2-D box {128,64} (256-byte rows), no swizzle, promotion 256 B", Kind::tma_2d, 128, 1, 64,
       CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::b256},
      {"none256", "2-D box {256,32} (512-byte rows), no swizzle, promotion 256 B", Kind::tma_2d, 256, 1, 32,
       CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::b256},
      {"3d:2x64",
       "3-D view {64, slices, rows} strides {128 B, pitch}, box {64,2,64}, SW128: 2 slices of a row adjacent",
       Kind::tma_3d, 64, 2, 64, CU_TENSOR_MAP_SWIZZLE_128B, L2Promotion::b256},
      {"3d:4x64", "3-D view as above, box {64,4,32}, SW128: 4 slices (512 B) of a row adjacent", Kind::tma_3d, 64, 4,
       32, CU_TENSOR_MAP_SWIZZLE_128B, L2Promotion::b256},
      {"3d:rows2",
       "3-D view {64, rows, slices} strides {pitch, 128 B}, box {64,64,2}, SW128: two whole SW128 tiles (wgmma's layout) in one copy",
       Kind::tma_3d_rows_mid, 64, 2, 64, CU_TENSOR_MAP_SWIZZLE_128B, L2Promotion::b256},
      {"3d:phase",
       "3-D view {K, 8 phases, rows / 8} strides {pitch, 8 pitch}, box {64,1,128}, SW128: 128 rows of one phase "
       "(rows 8 apart start at one offset in their lines), the box moved back by that offset: whole lines",
       Kind::tma_phase, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_128B, L2Promotion::b256},
      {"3d:phase/b8",
       "A as 3d:phase; B's tile 128 consecutive rows as 8 boxes {64,1,16}, one per phase, each moved back by its "
       "phase's offset: whole lines, B's rows in phase order",
       Kind::tma_phase, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_128B, L2Promotion::b256, false, Place::plain, 16},
      {"bulk1d", "cp.async.bulk (1-D, no tensor map): one 128-byte copy per row and slice, one warp", Kind::bulk_1d, 64,
       1, 128, CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none},
      {"cp.async", "cp.async.cg 16 B by 128 threads (LSU path, L1 bypassed), 5 stages of 32 KB", Kind::cp_async, 64, 1,
       128, CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none},
      {"cp.async/512",
       "as cp.async, but a box row is 512 bytes (4 slices) of 32 rows: a warp's copies are one row's 512 contiguous "
       "bytes",
       Kind::cp_async, 256, 1, 32, CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none},
      {"cp.async/lines",
       "as cp.async, but each row's copies start at the L2 line boundary at or before the row's start: every 128 "
       "bytes a warp copies are one whole line at any pitch",
       Kind::cp_async, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none, true, Place::plain},
      {"lines/rotate", "as cp.async/lines, each chunk placed at its column of the row's slice in the same row",
       Kind::cp_async, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none, true, Place::rotate},
      {"lines/even",
       "as lines/rotate, rotated by an even number of chunks: a sector's two chunks stay in one 32-byte unit",
       Kind::cp_async, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none, true, Place::even},
      {"lines/split",
       "as cp.async/lines, placed as a GEMM must: head chunks into this stage, tail chunks into the stage before, "
       "SW128 columns",
       Kind::cp_async, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none, true, Place::split},
      {"ca", "as cp.async, with cp.async.ca: looked up in and allocated in L1", Kind::cp_async, 64, 1, 128,
       CU_TENSOR_MAP_SWIZZLE_NONE, L2Promotion::none, false, Place::plain, 0, true},
      {"ca/512", "as cp.async/512, with cp.async.ca", Kind::cp_async, 256, 1, 32, CU_TENSOR_MAP_SWIZZLE_NONE,
       L2Promotion::none, false, Place::plain, 0, true},
      {"ca/lines", "as cp.async/lines, with cp.async.ca", Kind::cp_async, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE,
       L2Promotion::none, true, Place::plain, 0, true},
      {"ca/split", "as lines/split, with cp.async.ca", Kind::cp_async, 64, 1, 128, CU_TENSOR_MAP_SWIZZLE_NONE,
       L2Promotion::none, true, Place::split, 0, true},
  };
  return all;
}

// The cp.async kernel a cp.async variant runs.
using CpAsyncKernel = void (*)(Work);
CpAsyncKernel cpasync_kernel(const Variant& v) {
  if (v.l1) {
    if (!v.lines)
      return v.box_cols == 64 ? load_cpasync<kCpAsyncStages, 128, false, Place::plain, true>
                              : load_cpasync<kCpAsyncStages, 512, false, Place::plain, true>;
    return v.place == Place::split ? load_cpasync<kCpAsyncStages, 128, true, Place::split, true>
                                   : load_cpasync<kCpAsyncStages, 128, true, Place::plain, true>;
  }
  if (!v.lines) return v.box_cols == 64 ? load_cpasync<kCpAsyncStages, 128> : load_cpasync<kCpAsyncStages, 512>;
  switch (v.place) {
    case Place::plain: return load_cpasync<kCpAsyncStages, 128, true, Place::plain>;
    case Place::rotate: return load_cpasync<kCpAsyncStages, 128, true, Place::rotate>;
    case Place::even: return load_cpasync<kCpAsyncStages, 128, true, Place::even>;
    case Place::split: return load_cpasync<kCpAsyncStages, 128, true, Place::split>;
  }
  return nullptr;
}

struct Config {
  uint64_t pitch;  // bytes
  uint32_t cols;   // fp16 columns in bounds (K)
};

std::string config_name(const Config& c) { return std::to_string(c.pitch) + ":" + std::to_string(c.cols); }

// Per 128-byte slice of a row (the TMA box row of today's maps; the in-bounds part of the last
// slice), averaged over the 3072 rows of a 256-byte-aligned matrix: 128-byte L2 lines and 32-byte
// sectors touched.
struct Footprint {
  double lines = 0, sectors = 0;
};
Footprint footprint(const Config& c) {
  Footprint f;
  const uint64_t row_bytes = uint64_t{c.cols} * 2;
  const uint64_t slices = (row_bytes + kSliceBytes - 1) / kSliceBytes;
  for (uint64_t r = 0; r < kRows; ++r)
    for (uint64_t s = 0; s < slices; ++s) {
      const uint64_t start = r * c.pitch + s * kSliceBytes;
      const uint64_t end = r * c.pitch + std::min(row_bytes, (s + 1) * kSliceBytes);  // exclusive
      f.lines += static_cast<double>((end - 1) / 128 - start / 128 + 1);
      f.sectors += static_cast<double>((end - 1) / 32 - start / 32 + 1);
    }
  const double n = static_cast<double>(kRows * slices);
  f.lines /= n;
  f.sectors /= n;
  return f;
}

// The footprint model: what a 128-byte slice of a row touches in L2, per config.
void print_footprints(const std::vector<Config>& configs) {
  std::printf("== footprint of one 128-byte box row (averaged over rows and slices) ==\n");
  std::printf("%-11s %9s %8s %9s %10s %12s %12s\n", "pitch:cols", "pitch%128", "partial", "L2 lines", "sectors",
              "1/lines rel", "4/sectors rel");
  for (const Config& c : configs) {
    const Footprint f = footprint(c);
    std::printf("%-11s %9llu %8u %9.3f %10.3f %12.3f %12.3f\n", config_name(c).c_str(),
                static_cast<unsigned long long>(c.pitch % 128), c.cols % 64, f.lines, f.sectors, 1.0 / f.lines,
                4.0 / f.sectors);
  }
  std::printf(
      "(if a box row costs one request per L2 line touched, throughput goes as '1/lines rel'; if it goes by sectors, "
      "as '4/sectors rel')\n\n");
}

// --ncu: each probe launch prints a line, so that ncu's kernel IDs map to (pattern, config,
// variant), with the footprint model's L2 lines and sectors for the launch.
bool g_ncu_log = false;
int g_ncu_launch = 0;

struct Options {
  std::vector<Config> configs;
  std::vector<std::string> variant_names;
  std::vector<Pattern> patterns{Pattern::gemm, Pattern::cold, Pattern::warm};
  int reps = 7;
  int warmup = 1;  // untimed runs before the timed ones
  int ring_bytes = kDefaultRingBytes;
  int grid = 0;  // 0: #SMs
  bool sweeps = true;
  bool model_only = false;
  bool ncu = false;
  bool patterns_given = false;
  std::string csv;
};

const std::vector<Config> kDefaultConfigs = {
    {6144, 3072}, {6144, 3000},  // aligned pitch; the same with a partial last slice (56 columns)
    {6016, 3008},                // K = 3008
    {6080, 3040}, {6080, 3008},  // K = 3040 (pitch 64 mod 128), and without its partial slice
    {6000, 3000}, {6000, 2944},  // K = 3000 (pitch 112 mod 128), and without its partial slice
    {6064, 3032}, {6064, 3008},  // pitch 48 mod 128 (16 mod 32)
    {6048, 3024}, {6048, 3008},  // pitch 32 mod 128 (0 mod 32)
    {6032, 3016}, {6032, 3008},  // pitch 16 mod 128
    {6096, 3048}, {6096, 3008},  // pitch 80 mod 128
    {6112, 3056}, {6112, 3008},  // pitch 96 mod 128
    {6128, 3064}, {6128, 3008},  // pitch 112 mod 128 (as 6000)
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    const size_t j = std::min(s.find(sep, i), s.size());
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "tma_probe: %s\nusage: tma_probe [--configs PITCH:COLS,...] [--variants NAME,...] "
               "[--patterns gemm,cold,warm] [--reps N] [--ring BYTES] [--grid N] [--no-sweeps] [--ncu] "
               "[--csv FILE] [--model] [--list]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
      return argv[++i];
    };
    if (arg == "--configs") {
      for (const std::string& c : split(value(), ',')) {
        const size_t colon = c.find(':');
        if (colon == std::string::npos) usage("a config is PITCH_BYTES:COLS, e.g. 6000:3000");
        Config cfg{std::stoull(c.substr(0, colon)), static_cast<uint32_t>(std::stoul(c.substr(colon + 1)))};
        if (cfg.pitch % 16 != 0 || cfg.pitch < uint64_t{cfg.cols} * 2 || cfg.pitch > 8192 || cfg.cols % 8 != 0 ||
            cfg.cols == 0)
          usage(
              "a config needs a pitch that is a multiple of 16, holds the row and is at most 8192, and cols a "
              "positive multiple of 8");
        o.configs.push_back(cfg);
      }
    } else if (arg == "--variants") {
      for (const std::string& n : split(value(), ',')) {
        if (n == "maps")  // today's box with each L2 promotion, the other swizzles, and cp.async
          o.variant_names.insert(o.variant_names.end(),
                                 {"sw128/256", "sw128/none", "sw128/64", "sw128/128", "sw64", "none64", "cp.async"});
        else if (n == "views")  // longer contiguous runs: wide boxes, 3-D views, 1-D bulk copies
          o.variant_names.insert(
              o.variant_names.end(),
              {"sw128/256", "none128", "none256", "3d:2x64", "3d:4x64", "3d:rows2", "bulk1d", "cp.async/512",
               "cp.async/lines", "lines/rotate", "lines/even", "lines/split", "3d:phase", "3d:phase/b8"});
        else o.variant_names.push_back(n);
      }
    } else if (arg == "--patterns") {
      o.patterns.clear();
      o.patterns_given = true;
      for (const std::string& p : split(value(), ',')) {
        if (p == "gemm") o.patterns.push_back(Pattern::gemm);
        else if (p == "cold") o.patterns.push_back(Pattern::cold);
        else if (p == "warm") o.patterns.push_back(Pattern::warm);
        else usage("patterns are gemm, cold and warm");
      }
    } else if (arg == "--reps") {
      o.reps = std::max(1, std::stoi(value()));
    } else if (arg == "--ring") {
      o.ring_bytes = std::stoi(value());
      if (o.ring_bytes < 32768 || o.ring_bytes > kMaxRingBytes) usage("--ring must be 32768..196608");
    } else if (arg == "--grid") {
      o.grid = std::stoi(value());
    } else if (arg == "--no-sweeps") {
      o.sweeps = false;
    } else if (arg == "--ncu") {  // one launch per cell, nothing else: for ncu -k regex:load_
      o.reps = 1;
      o.warmup = 0;
      o.sweeps = false;
      o.ncu = true;
      g_ncu_log = true;
    } else if (arg == "--csv") {
      o.csv = value();
    } else if (arg == "--model") {  // the footprint table alone; needs no GPU
      o.model_only = true;
    } else if (arg == "--list") {
      for (const Variant& v : variants()) std::printf("%-10s %s\n", v.name, v.what);
      std::exit(0);
    } else {
      usage(("unknown flag " + arg).c_str());
    }
  }
  if (o.ncu) {  // --ncu's defaults: K = 3072, K = 3000 with and without its partial slice, K = 3040's pitch
    if (o.configs.empty()) o.configs = {{6144, 3072}, {6000, 3000}, {6000, 2944}, {6080, 3008}};
    if (o.variant_names.empty()) o.variant_names = {"sw128/256", "sw128/none", "cp.async", "bulk1d"};
    if (!o.patterns_given) o.patterns = {Pattern::gemm, Pattern::cold};
  }
  if (o.configs.empty()) o.configs = kDefaultConfigs;
  if (o.variant_names.empty())
    for (const Variant& v : variants()) o.variant_names.push_back(v.name);
  std::vector<std::string> unique;  // each column once, in the order first named
  for (const std::string& n : o.variant_names)
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);
  o.variant_names = unique;
  for (const std::string& n : o.variant_names)
    if (std::none_of(variants().begin(), variants().end(), [&](const Variant& v) { return n == v.name; }))
      usage(("unknown variant " + n + " (--list names them)").c_str());
  return o;
}

struct Device {
  int sms = 0, clock_khz = 0, mem_clock_khz = 0, l2_bytes = 0, smem_optin = 0;
  std::string name;
};

struct Buffers {
  char* a = nullptr;
  char* b = nullptr;
  const uint4* flush = nullptr;
  size_t flush_vec = 0;
  unsigned* sink = nullptr;
  unsigned long long* clocks = nullptr;
};

struct Result {
  bool ok = false;
  std::string why;  // when !ok
  double ms = 0, ghz = 0, bytes = 0, smem_bytes = 0;
  int grid = 0, stages = 0;
  double gbs() const { return bytes / (ms * 1e6); }
  double bytes_per_sm_clk() const { return bytes / (ms * 1e-3 * ghz * 1e9 * grid); }
};

CUresult encode(CUtensorMap* map, const Variant& v, const Config& c, const char* base, uint32_t box_rows) {
  const auto& enc = gemm::detail::tensor_map_encoder();
  if (enc.fn == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUtensorMapL2promotion promo = gemm::detail::to_driver(v.promotion);
  if (v.kind == Kind::tma_3d) {
    // {64 columns, slices, rows}: only whole slices (a 3-D view cannot stop a slice at K).
    const cuuint64_t dims[3] = {64, c.cols / 64, kRows};
    const cuuint64_t strides[2] = {kSliceBytes, c.pitch};
    const cuuint32_t box[3] = {64, v.box_slices, v.box_rows};
    return enc.fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<char*>(base), dims, strides, box, elem_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, v.swizzle, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  if (v.kind == Kind::tma_3d_rows_mid) {
    // {64 columns, rows, slices}: the box lands as `box_slices` SW128 tiles of box_rows x 64, one
    // after the other (the layout wgmma reads), from one instruction.
    const cuuint64_t dims[3] = {64, kRows, c.cols / 64};
    const cuuint64_t strides[2] = {c.pitch, kSliceBytes};
    const cuuint32_t box[3] = {64, v.box_rows, v.box_slices};
    return enc.fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<char*>(base), dims, strides, box, elem_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, v.swizzle, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  if (v.kind == Kind::tma_phase) {
    // {K, 8 phases, rows / 8}: rows p, p + 8, ... of phase p; a box is 128 rows of one phase.
    const cuuint64_t dims[3] = {c.cols, 8, kRows / 8};
    const cuuint64_t strides[2] = {c.pitch, 8 * c.pitch};
    const cuuint32_t box[3] = {64, 1, box_rows};
    return enc.fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<char*>(base), dims, strides, box, elem_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, v.swizzle, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  const cuuint64_t dims[2] = {c.cols, kRows};
  const cuuint64_t strides[1] = {c.pitch};
  const cuuint32_t box[2] = {v.box_cols, v.box_rows};
  return enc.fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<char*>(base), dims, strides, box, elem_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, v.swizzle, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One (variant, config, pattern): the median of `reps` timed launches.
Result measure(const Device& dev, const Buffers& buf, const Variant& v, const Config& c, Pattern pattern, int reps,
               int warmup, int ring_bytes, int grid, int stages_override = 0) {
  Result r;
  r.grid = grid;
  Work w{};
  const bool gemm_pattern = pattern == Pattern::gemm;
  w.gemm = gemm_pattern ? 1 : 0;
  w.a = buf.a;
  w.b = buf.b;
  w.pitch = c.pitch;
  w.row_bytes = c.cols * 2;
  w.clocks = buf.clocks;
  uint32_t cols_used = c.cols;
  CUtensorMap map_a{}, map_b{};
  switch (v.kind) {
    case Kind::tma_project: {
      TensorMapOptions options;
      options.l2_promotion = v.promotion;
      options.row_stride_bytes = c.pitch;
      for (auto [map, base] : {std::pair{&map_a, buf.a}, std::pair{&map_b, buf.b}})
        if (Status s = make_tensor_map_2d(map, base, kRows, c.cols, v.box_rows, v.box_cols, Swizzle::b128, options);
            !s.ok()) {
          r.why = s.message();
          return r;
        }
      w.box_rows = static_cast<int32_t>(v.box_rows);
      w.boxes_k = static_cast<int32_t>((c.cols + v.box_cols - 1) / v.box_cols);
      w.step_k = static_cast<int32_t>(v.box_cols);
      w.box_bytes = v.box_cols * 2 * v.box_rows;
      break;
    }
    case Kind::tma_2d:
    case Kind::tma_3d:
    case Kind::tma_3d_rows_mid:
    case Kind::tma_phase: {
      const uint32_t b_rows = v.b_box_rows ? v.b_box_rows : v.box_rows;
      for (auto [map, base, rows] : {std::tuple{&map_a, buf.a, v.box_rows}, std::tuple{&map_b, buf.b, b_rows}})
        if (CUresult e = encode(map, v, c, base, rows); e != CUDA_SUCCESS) {
          r.why = "cuTensorMapEncodeTiled refused it (CUresult " + std::to_string(static_cast<int>(e)) + ")";
          return r;
        }
      w.box_rows = static_cast<int32_t>(v.box_rows);
      if (v.kind == Kind::tma_phase) {  // lines 0 .. slices: a slice spans two lines
        w.phase = 1;
        w.b_phases = v.b_box_rows ? 8 : 1;
        w.boxes_k = static_cast<int32_t>((c.cols + 63) / 64 + 1);
        w.step_k = 64;
        w.box_bytes = 64 * 2 * v.box_rows;
      } else if (v.kind == Kind::tma_2d) {
        w.boxes_k = static_cast<int32_t>((c.cols + v.box_cols - 1) / v.box_cols);
        w.step_k = static_cast<int32_t>(v.box_cols);
        w.box_bytes = v.box_cols * 2 * v.box_rows;
      } else {
        w.rows_mid = v.kind == Kind::tma_3d_rows_mid ? 1 : 0;
        const uint32_t slices = c.cols / 64;
        cols_used = slices * 64;
        w.boxes_k = static_cast<int32_t>((slices + v.box_slices - 1) / v.box_slices);
        w.step_k = static_cast<int32_t>(v.box_slices);
        w.box_bytes = 64 * 2 * v.box_slices * v.box_rows;
      }
      break;
    }
    case Kind::bulk_1d:
    case Kind::cp_async:  // a box of box_rows rows x box_cols columns: 16 KB, as TMA's {64, 128}
      w.box_rows = static_cast<int32_t>(v.box_rows);
      w.boxes_k = static_cast<int32_t>((c.cols + v.box_cols - 1) / v.box_cols);
      w.step_k = static_cast<int32_t>(v.box_cols);
      w.box_bytes = v.box_cols * 2 * v.box_rows;
      break;
  }
  w.boxes_r = kTile / w.box_rows;
  const int64_t tiles = gemm_pattern ? kGemmTiles : kTiles;
  w.units = static_cast<int32_t>(tiles * w.boxes_k * w.boxes_r);
  w.chunk = gemm_pattern ? w.boxes_k * w.boxes_r : 1;
  w.stages = v.kind == Kind::cp_async ? kCpAsyncStages
                                      : std::clamp(ring_bytes / static_cast<int>(2 * w.box_bytes), 1, kMaxStages);
  if (stages_override > 0 && v.kind != Kind::cp_async) w.stages = stages_override;
  r.stages = w.stages;
  r.bytes = static_cast<double>(tiles) * 2 * kTile * cols_used * 2;
  r.smem_bytes = static_cast<double>(w.units) * 2 * w.box_bytes;
  const size_t smem = size_t{2} * w.box_bytes * w.stages + 8 * kMaxStages + 1024;
  if (smem > static_cast<size_t>(dev.smem_optin)) {
    r.why = "needs " + std::to_string(smem) + " bytes of shared memory";
    return r;
  }

  const auto kernel_attr = [&](auto kernel) {
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)),
          "cudaFuncSetAttribute");
  };
  switch (v.kind) {
    case Kind::tma_project:
    case Kind::tma_2d: kernel_attr(load_tma<2>); break;
    case Kind::tma_3d:
    case Kind::tma_3d_rows_mid:
    case Kind::tma_phase: kernel_attr(load_tma<3>); break;
    case Kind::bulk_1d: kernel_attr(load_bulk); break;
    case Kind::cp_async: kernel_attr(cpasync_kernel(v)); break;
  }
  const auto launch = [&]() {
    if (g_ncu_log) {
      const Footprint f = footprint(c);
      const double row_slices = static_cast<double>(tiles) * 2 * kTile * ((c.cols + 63) / 64);
      std::printf(
          "[ncu] probe launch %d: pattern %s, config %s, variant %s; model for 128-byte box rows: %.0f L2 "
          "lines, %.0f sectors, %.0f in-bounds bytes\n",
          g_ncu_launch++, pattern_name(pattern), config_name(c).c_str(), v.name, row_slices * f.lines,
          row_slices * f.sectors, r.bytes);
      std::fflush(stdout);
    }
    switch (v.kind) {
      case Kind::tma_project:
      case Kind::tma_2d: load_tma<2><<<grid, 32, smem>>>(map_a, map_b, w); break;
      case Kind::tma_3d:
      case Kind::tma_3d_rows_mid:
      case Kind::tma_phase: load_tma<3><<<grid, 32, smem>>>(map_a, map_b, w); break;
      case Kind::bulk_1d: load_bulk<<<grid, 32, smem>>>(w); break;
      case Kind::cp_async: cpasync_kernel(v)<<<grid, kCpAsyncThreads, smem>>>(w); break;
    }
    check(cudaGetLastError(), "kernel launch");
  };
  const auto flush = [&]() {
    l2_flush_kernel<<<dev.sms * 4, 512>>>(buf.flush, buf.flush_vec, buf.sink);
    check(cudaGetLastError(), "l2 flush launch");
  };

  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  std::vector<double> ms, ghz;
  for (int rep = 0; rep < warmup + reps; ++rep) {  // the first `warmup` runs are not timed
    if (pattern == Pattern::warm) {
      spin_kernel<<<1, 1>>>(30000);
      launch();  // the timed run finds what this one loaded in L2
    } else {
      flush();  // also keeps the GPU busy while the host enqueues the timed run
    }
    check(cudaEventRecord(e0), "cudaEventRecord");
    launch();
    check(cudaEventRecord(e1), "cudaEventRecord");
    check(cudaEventSynchronize(e1), "kernel run");
    float t = 0;
    check(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
    unsigned long long clocks[4];
    check(cudaMemcpy(clocks, buf.clocks, sizeof clocks, cudaMemcpyDeviceToHost), "cudaMemcpy clocks");
    if (rep < warmup) continue;
    ms.push_back(t);
    if (clocks[3] > clocks[1]) ghz.push_back(static_cast<double>(clocks[2] - clocks[0]) / (clocks[3] - clocks[1]));
  }
  check(cudaEventDestroy(e0), "cudaEventDestroy");
  check(cudaEventDestroy(e1), "cudaEventDestroy");
  r.ms = median(ms);
  r.ghz = ghz.empty() ? dev.clock_khz * 1e-6 : median(ghz);
  r.ok = true;
  return r;
}

const Variant& variant_named(const std::string& n) {
  return *std::find_if(variants().begin(), variants().end(), [&](const Variant& v) { return n == v.name; });
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  if (opt.model_only) {
    print_footprints(opt.configs);
    return 0;
  }

  Device dev;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "tma_probe: no CUDA device\n");
    return 3;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  if (prop.major != 9) {
    std::fprintf(stderr, "tma_probe: needs a Hopper GPU (sm_90), this is sm_%d%d\n", prop.major, prop.minor);
    return 3;
  }
  dev.name = prop.name;
  check(cudaDeviceGetAttribute(&dev.sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  check(cudaDeviceGetAttribute(&dev.clock_khz, cudaDevAttrClockRate, 0), "attribute");
  check(cudaDeviceGetAttribute(&dev.mem_clock_khz, cudaDevAttrMemoryClockRate, 0), "attribute");
  check(cudaDeviceGetAttribute(&dev.l2_bytes, cudaDevAttrL2CacheSize, 0), "attribute");
  check(cudaDeviceGetAttribute(&dev.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0), "attribute");
  const int grid = opt.grid > 0 ? opt.grid : dev.sms;

  // Operands sized for the largest pitch, 256-byte aligned (cudaMalloc), filled with finite fp16.
  uint64_t max_pitch = 0;
  for (const Config& c : opt.configs) max_pitch = std::max(max_pitch, c.pitch);
  max_pitch = std::max<uint64_t>(max_pitch, 6144);
  const size_t operand_bytes = max_pitch * kRows + 4096;
  Buffers buf;
  check(cudaMalloc(&buf.a, operand_bytes), "cudaMalloc A");
  check(cudaMalloc(&buf.b, operand_bytes), "cudaMalloc B");
  fill_kernel<<<dev.sms * 4, 256>>>(reinterpret_cast<uint32_t*>(buf.a), operand_bytes / 4, 1u);
  fill_kernel<<<dev.sms * 4, 256>>>(reinterpret_cast<uint32_t*>(buf.b), operand_bytes / 4, 2u);
  buf.flush_vec = size_t{3} * static_cast<size_t>(dev.l2_bytes) / sizeof(uint4);
  uint4* flush = nullptr;
  check(cudaMalloc(&flush, buf.flush_vec * sizeof(uint4)), "cudaMalloc flush");
  fill_kernel<<<dev.sms * 4, 256>>>(reinterpret_cast<uint32_t*>(flush), buf.flush_vec * 4, 3u);
  buf.flush = flush;
  check(cudaMalloc(&buf.sink, sizeof(unsigned)), "cudaMalloc sink");
  check(cudaMalloc(&buf.clocks, 4 * sizeof(unsigned long long)), "cudaMalloc clocks");
  check(cudaDeviceSynchronize(), "fill");

  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("tma_probe: %s, %d SMs, SM clock max %d MHz, memory clock %d MHz, L2 %d MB, driver %d, runtime %d\n",
              dev.name.c_str(), dev.sms, dev.clock_khz / 1000, dev.mem_clock_khz / 1000, dev.l2_bytes >> 20, driver,
              runtime);
  std::printf("grid %d CTAs (one per SM), ring %d bytes, median of %d runs; matrices %d rows, A and B\n", grid,
              opt.ring_bytes, opt.reps, kRows);
  std::printf("cells: GB/s of in-bounds global bytes, and bytes per SM-cycle (SM clock measured in the run)\n\n");

  FILE* csv = nullptr;
  if (!opt.csv.empty()) {
    csv = std::fopen(opt.csv.c_str(), "w");
    if (csv == nullptr) {
      std::fprintf(stderr, "tma_probe: cannot write %s\n", opt.csv.c_str());
      return 1;
    }
    std::fprintf(csv,
                 "table,pattern,variant,pitch,cols,grid,stages,ms,gbs,bytes_per_sm_clk,sm_ghz,bytes,smem_bytes,ok\n");
  }
  const auto csv_row = [&](const char* table, Pattern p, const Variant& v, const Config& c, const Result& r) {
    if (csv == nullptr) return;
    std::fprintf(csv, "%s,%s,%s,%llu,%u,%d,%d,%.5f,%.1f,%.3f,%.4f,%.0f,%.0f,%d\n", table, pattern_name(p), v.name,
                 static_cast<unsigned long long>(c.pitch), c.cols, r.grid, r.stages, r.ms, r.ok ? r.gbs() : 0.0,
                 r.ok ? r.bytes_per_sm_clk() : 0.0, r.ghz, r.bytes, r.smem_bytes, r.ok ? 1 : 0);
  };

  print_footprints(opt.configs);

  std::vector<const Variant*> vs;
  for (const std::string& n : opt.variant_names) vs.push_back(&variant_named(n));

  for (Pattern p : opt.patterns) {
    const char* what = p == Pattern::gemm ? "the GEMM's loads: 576 tiles x all K slices of A and B, L2 read out first"
                       : p == Pattern::cold
                           ? "every (row tile, slice) of A and B once, L2 read out first (DRAM path)"
                           : "every (row tile, slice) of A and B once, right after the same run (L2 path)";
    std::printf("== pattern %s: %s ==\n", pattern_name(p), what);
    std::vector<std::vector<Result>> table(opt.configs.size());
    std::printf("%-11s", "pitch:cols");
    for (const Variant* v : vs) std::printf(" %12s", v->name);
    std::printf("\n");
    for (size_t i = 0; i < opt.configs.size(); ++i) {
      std::printf("%-11s", config_name(opt.configs[i]).c_str());
      for (const Variant* v : vs) {
        const Result r = measure(dev, buf, *v, opt.configs[i], p, opt.reps, opt.warmup, opt.ring_bytes, grid);
        table[i].push_back(r);
        csv_row("main", p, *v, opt.configs[i], r);
        if (r.ok) std::printf(" %6.0f %5.1f", r.gbs(), r.bytes_per_sm_clk());
        else std::printf(" %12s", "n/a");
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    for (size_t j = 0; j < vs.size(); ++j)
      for (size_t i = 0; i < opt.configs.size(); ++i)
        if (!table[i][j].ok)
          std::printf("  n/a %s at %s: %s\n", vs[j]->name, config_name(opt.configs[i]).c_str(),
                      table[i][j].why.c_str());
    // Ratios to the first config (6144:3072 by default) in the same column.
    std::printf("ratio to %s in the same column:\n%-11s", config_name(opt.configs[0]).c_str(), "pitch:cols");
    for (const Variant* v : vs) std::printf(" %12s", v->name);
    std::printf("\n");
    for (size_t i = 0; i < opt.configs.size(); ++i) {
      std::printf("%-11s", config_name(opt.configs[i]).c_str());
      for (size_t j = 0; j < vs.size(); ++j) {
        const Result& r = table[i][j];
        const Result& base = table[0][j];
        if (r.ok && base.ok) std::printf(" %12.3f", r.gbs() / base.gbs());
        else std::printf(" %12s", "n/a");
      }
      std::printf("\n");
    }
    std::printf("SM clock in these runs: %.3f GHz (median of the first column)\n\n",
                table[0].empty() ? 0.0 : table[0][0].ghz);
  }

  if (opt.sweeps) {
    const Variant today = variant_named("sw128/256");
    const Variant lsu = variant_named("cp.async");
    const std::vector<Config> sweep_configs = {{6144, 3072}, {6080, 3040}, {6000, 3000}, {6000, 2944}};
    std::printf("== sweep: ring depth, today's maps (sw128/256), pattern gemm: GB/s and bytes/SM-cycle ==\n");
    std::printf("%-11s", "pitch:cols");
    const int depths[] = {1, 2, 3, 4, 5, 6};
    for (int d : depths) std::printf(" %9d x32K", d);
    std::printf("\n");
    for (const Config& c : sweep_configs) {
      std::printf("%-11s", config_name(c).c_str());
      for (int d : depths) {
        const Result r = measure(dev, buf, today, c, Pattern::gemm, opt.reps, opt.warmup, opt.ring_bytes, grid, d);
        csv_row("depth", Pattern::gemm, today, c, r);
        if (r.ok) std::printf(" %7.0f %6.1f", r.gbs(), r.bytes_per_sm_clk());
        else std::printf(" %14s", "n/a");
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    std::printf(
        "(throughput rising with depth: latency-bound; flat from a small depth on: a throughput limit)\n\n"
        "== sweep: grid size, pattern gemm, default ring: GB/s and bytes per active SM-cycle ==\n");
    const int grids[] = {dev.sms, dev.sms / 2, dev.sms / 4, 16, 8};
    for (const Variant* v : {&today, &lsu}) {
      std::printf("%-20s", v->name);
      for (int g : grids) std::printf(" %9d CTAs", g);
      std::printf("\n");
      for (const Config& c : sweep_configs) {
        std::printf("  %-18s", config_name(c).c_str());
        for (int g : grids) {
          const Result r = measure(dev, buf, *v, c, Pattern::gemm, opt.reps, opt.warmup, opt.ring_bytes, g);
          csv_row("grid", Pattern::gemm, *v, c, r);
          if (r.ok) std::printf(" %7.0f %6.1f", r.gbs(), r.bytes_per_sm_clk());
          else std::printf(" %14s", "n/a");
          std::fflush(stdout);
        }
        std::printf("\n");
      }
    }
    std::printf(
        "(bytes per active SM-cycle constant as the grid shrinks: the limit is per SM (the TMA unit or its port); "
        "rising: a shared limit (L2 slices, the crossbar, DRAM))\n");
  }
  if (csv != nullptr) std::fclose(csv);
  check(cudaFree(buf.a), "cudaFree");
  check(cudaFree(buf.b), "cudaFree");
  check(cudaFree(flush), "cudaFree");
  check(cudaFree(buf.sink), "cudaFree");
  check(cudaFree(buf.clocks), "cudaFree");
  return 0;
}
