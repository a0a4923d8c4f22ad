// phase_gemm: a prototype of the register-operand phase design (shape-performance.md, "Whole lines
// for both operands"; tenth session, P17). D (M x N, fp16) = A (M x K) * B (N x K)^T, fp16 in, fp32
// accumulate. Every operand load is whole 128-byte L2 lines, at any K that is a multiple of 8:
//   - A in tiles of 128 rows of one phase p (rows p + 8 g, g = g0 .. g0 + 127: rows 8 apart start at
//     one offset s_p in their lines), one TMA box {64, 1, 128} per line from the 3-D view
//     {K, 8 phases, M / 8}, its K coordinate moved back by s_p chunks so that each box row is a
//     whole line. It is wgmma's B operand, by descriptor; the k16 steps follow A's lines.
//   - B in tiles of 128 consecutive rows, as eight boxes {64, 1, 16}, one per phase q, each moved
//     back by its own s_q. ldmatrix reads them into wgmma's A operand (registers), each row at its
//     own chunk offset d = s_q - s_p from A's line. Stage l holds A's line l and, of each phase of
//     B, the line that A's line l starts in (line l where d >= 0, line l - 1 where d < 0), so line
//     j's k16 steps read stages j and j + 1 only: the ring holds stages 0 .. lines of each tile.
//   - The accumulator is the tile of D^T: 128 consecutive columns by 128 rows of phase p, written
//     with plain stores.
// A diagnostic for docs/runs, not a step: one consumer warpgroup, no epilogue overlap, A and B
// padded to a multiple of 8 rows (the 3-D views read whole groups of 8). It checks itself against
// cuBLAS (exact integer mode and a float mode, D poisoned with NaN and a guard band after it) and
// times itself against cuBLAS, inputs rotating over at least 3x the L2.
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. -o /tmp/phase_gemm \
//        docs/runs/2026-11-26-h100-phase-b8/phase_gemm.cu -lcublas
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/fence.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/mbarrier.cuh"
#include "common/smem.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/warp.cuh"
#include "docs/runs/2026-11-26-h100-phase-b8/rs_wgmma.cuh"

using namespace gemm;
using namespace gemm::hopper;

namespace {

// Two rings of 16 KB stages, one per operand: A's stage j is held until line j's wgmmas complete,
// B's only until the fragments that read it are in registers, so each gets its own lead.
constexpr int kStagesA = 7;
constexpr int kStagesB = 7;               // 14 x 16 KB: all the shared memory one CTA gets, less 3 KB
constexpr uint32_t kTile = 128 * 128;     // one operand's stage: 128 rows x 128 bytes
constexpr uint32_t kPhaseBox = 16 * 128;  // one of B's eight phase boxes: 16 rows

struct Params {
  __half* d;             // null: no stores (a timing variant)
  int no_loads, no_mma;  // timing variants: the producer arrives without loading; no wgmma issued
  int m, n, k;
  int m_tiles, tiles;  // m_tiles = 8 phases x ceil(ceil(M / 8) / 128)
  uint32_t s;          // rows of phase q start (s >> 4q) & 7 chunks (16 bytes) into their 128-byte line
  // (packed: an array indexed by a lane's phase would put the parameters in local memory)
  __device__ __forceinline__ int s_of(int q) const { return static_cast<int>((s >> (4 * q)) & 7); }
};

struct Tile {
  int phase, g0, n0;
};

__device__ __forceinline__ Tile tile_of(const Params& p, int t) {
  const int mt = t % p.m_tiles;
  return {mt % 8, (mt / 8) * 128, (t / p.m_tiles) * 128};
}

// A's lines that hold K columns 0 .. K - 1 of rows of phase `phase`.
__device__ __forceinline__ int lines_of(const Params& p, int phase) { return (p.k + 8 * p.s_of(phase) + 63) / 64; }

// One operand's ring: `stages` buffers of kTile bytes with their full and empty barriers.
struct Ring {
  char* buf;
  uint64_t* full;
  uint64_t* empty;
  uint32_t stages;
  uint32_t base = 0;  // ring position of this tile's line 0
  __device__ __forceinline__ uint32_t pos(int l) const { return base + static_cast<uint32_t>(l); }
  __device__ __forceinline__ char* stage(int l) const { return buf + (pos(l) % stages) * kTile; }
  __device__ __forceinline__ uint64_t* full_of(int l) const { return &full[pos(l) % stages]; }
  __device__ __forceinline__ void wait(int l) const {
    mbarrier_wait(full_of(l), (pos(l) / stages) & 1, WaitTag{"full", "consumer"});
  }
  // The producer's turn at line l: wait until the buffer's previous line was released.
  __device__ __forceinline__ void wait_empty(int l) const {
    if (pos(l) >= stages)
      mbarrier_wait(&empty[pos(l) % stages], ((pos(l) / stages) & 1) ^ 1, WaitTag{"empty", "producer"});
  }
  __device__ __forceinline__ void release(int l) const {
    if (lane_id() == 0) mbarrier_arrive(&empty[pos(l) % stages]);
  }
};

__device__ void producer(const CUtensorMap* map_a, const CUtensorMap* map_b, const Params& p, Ring ra, Ring rb) {
  for (int t = static_cast<int>(blockIdx.x); t < p.tiles; t += static_cast<int>(gridDim.x)) {
    const Tile tl = tile_of(p, t);
    const int lines = lines_of(p, tl.phase);
    for (int l = 0; l <= lines; ++l) {  // line j's k16 steps read B's stages j and j + 1
      rb.wait_empty(l);
      if (p.no_loads) {
        mbarrier_arrive(rb.full_of(l));
        if (l < lines) {
          ra.wait_empty(l);
          mbarrier_arrive(ra.full_of(l));
        }
        continue;
      }
      mbarrier_arrive_expect_tx(rb.full_of(l), kTile);  // boxes out of bounds still land (zeros)
      for (int q = 0; q < 8; ++q) {
        const int back = p.s_of(q) < p.s_of(tl.phase) ? 64 : 0;  // d < 0: the line before
        tma_load_3d(rb.stage(l) + q * kPhaseBox, map_b, rb.full_of(l), 64 * l - 8 * p.s_of(q) - back, q, tl.n0 / 8);
      }
      if (l < lines) {
        ra.wait_empty(l);
        mbarrier_arrive_expect_tx(ra.full_of(l), kTile);
        tma_load_3d(ra.stage(l), map_a, ra.full_of(l), 64 * l - 8 * p.s_of(tl.phase), tl.phase, tl.g0);
      }
    }
    ra.base += static_cast<uint32_t>(lines);
    rb.base += static_cast<uint32_t>(lines + 1);
  }
}

using Frags = uint32_t[2][4][4];  // [64-row half][k16 step][ldmatrix.x4 registers]

// This lane's ldmatrix row addresses for one tile: off inside a stage's B tile, and which of the
// stages j, j + 1 holds the chunk.
struct LaneRows {
  uint32_t off[2][4];
  uint32_t line[2][4];
};

__device__ __forceinline__ LaneRows lane_rows(const Params& p, int phase) {
  const int th = static_cast<int>(threadIdx.x) % 128, warp = th / 32, l = th % 32, mi = l / 8;
  LaneRows r;
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      // ldmatrix.x4: lanes 8i .. 8i + 7 give the rows of matrix i = (rows 0-7 | 8-15) x (k 0-7 | 8-15).
      const int n = 64 * h + 16 * warp + (mi & 1) * 8 + l % 8;  // B row in the tile, of phase n % 8
      const int q = n % 8, row = q * 16 + n / 8;                // its row in the stage's B tile
      const int d = p.s_of(q) - p.s_of(phase);
      const int c = 2 * k + (mi >> 1) + d + (d < 0 ? 8 : 0);  // chunk from the start of stage j's line
      const int ch = c % 8;
      r.off[h][k] = static_cast<uint32_t>(row * 128 + ((ch ^ (row & 7)) * 16));  // SW128
      r.line[h][k] = static_cast<uint32_t>(c / 8);
    }
  return r;
}

__device__ __forceinline__ void load_frags(Frags& f, const LaneRows& r, const Ring& rb, int j) {
  const uint32_t b0 = smem_addr(rb.stage(j)), b1 = smem_addr(rb.stage(j + 1));
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int k = 0; k < 4; ++k) ldmatrix_x4(f[h][k], (r.line[h][k] ? b1 : b0) + r.off[h][k]);
}

// Line j: its MMAs from `cur`; B's stage j released (its last reader, `cur`, is in registers: the
// wgmma.fence waited for it); then, line j - 1's MMAs complete, A's stage j - 1 released and line
// j + 1's fragments loaded into `next` from B's stages j + 1 and j + 2.
template <bool Mma>
__device__ __forceinline__ void line_step(float (&acc)[2][64], const Frags& cur, Frags& next, const LaneRows& r,
                                          const Ring& ra, const Ring& rb, int j, int lines) {
  ra.wait(j);
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  wgmma_fence();
  const uint32_t a = smem_addr(ra.stage(j));
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint64_t a_desc = make_wgmma_desc_k_sw128(a + 32 * k);  // A's 128 phase rows: wgmma's N
#pragma unroll
    for (int h = 0; h < 2; ++h)
      if constexpr (Mma) wgmma_rs(acc[h], cur[h][k], a_desc);
  }
  wgmma_commit_group();
  rb.release(j);
  wgmma_wait_group<1>();  // line j - 1's wgmmas are done reading A's stage j - 1
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  if (j > 0) ra.release(j - 1);
  if (j + 1 < lines) {
    rb.wait(j + 2);
    load_frags(next, r, rb, j + 1);
  }
}

template <bool Mma>
__device__ void consumer(const Params& p, Ring ra, Ring rb) {
  const int th = static_cast<int>(threadIdx.x) % 128;
  float acc[2][64];
  Frags f0, f1;
  for (int t = static_cast<int>(blockIdx.x); t < p.tiles; t += static_cast<int>(gridDim.x)) {
    const Tile tl = tile_of(p, t);
    const int lines = lines_of(p, tl.phase);
    const LaneRows rows = lane_rows(p, tl.phase);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 64; ++i) acc[h][i] = 0.0f;
    rb.wait(0);
    rb.wait(1);
    load_frags(f0, rows, rb, 0);
    for (int j = 0; j < lines; j += 2) {  // two lines a trip: the fragment sets stay in registers
      line_step<Mma>(acc, f0, f1, rows, ra, rb, j, lines);
      if (j + 1 < lines) line_step<Mma>(acc, f1, f0, rows, ra, rb, j + 1, lines);
    }
    wgmma_wait_group<0>();
    wgmma_fence_operands(acc[0]);
    wgmma_fence_operands(acc[1]);
    ra.release(lines - 1);
    rb.release(lines);
    // Accumulator register i of thread th: wgmma row = B row, wgmma column = A's phase row.
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const int n = tl.n0 + 64 * h + 16 * (th / 32) + (th % 32) / 4 + 8 * ((i >> 1) & 1);
        const int m = tl.phase + 8 * (tl.g0 + 8 * (i >> 2) + 2 * (th % 4) + (i & 1));
        if (p.d != nullptr && m < p.m && n < p.n) p.d[static_cast<size_t>(m) * p.n + n] = __float2half_rn(acc[h][i]);
      }
    ra.base += static_cast<uint32_t>(lines);
    rb.base += static_cast<uint32_t>(lines + 1);
  }
}

__global__ void __launch_bounds__(256, 1)
    phase_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, const Params p) {
  const uint32_t raw = smem_addr(gemm_dynamic_smem);
  char* base = reinterpret_cast<char*>(gemm_dynamic_smem) + (1024 - raw % 1024) % 1024;  // SW128 atoms
  uint64_t* bars = reinterpret_cast<uint64_t*>(base + (kStagesA + kStagesB) * kTile);
  const Ring ra{base, bars, bars + kStagesA, kStagesA};
  const Ring rb{base + kStagesA * kTile, bars + 2 * kStagesA, bars + 2 * kStagesA + kStagesB, kStagesB};
  if (threadIdx.x == 0) {
    tma_prefetch_descriptor(&map_a);
    tma_prefetch_descriptor(&map_b);
    for (int s = 0; s < 2 * (kStagesA + kStagesB); ++s)  // full: the producer's arrive_expect_tx;
      mbarrier_init(&bars[s], s < kStagesA || (s >= 2 * kStagesA && s < 2 * kStagesA + kStagesB) ? 1 : 4);
    fence_mbarrier_init();  // empty: lane 0 of each consumer warp
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    if (threadIdx.x == 0) producer(&map_a, &map_b, p, ra, rb);
  } else {
    if (p.no_mma) consumer<false>(p, ra, rb);
    else consumer<true>(p, ra, rb);
  }
}

__global__ void fill(__half* x, size_t rows, size_t valid_rows, size_t k, uint32_t seed, int integer) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < rows * k; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed * 0x9e3779b9u ^ static_cast<uint32_t>(i >> 32);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    float v = integer ? static_cast<float>(static_cast<int>(h % 3) - 1) : static_cast<float>(h % 2001) / 1000.0f - 1.0f;
    if (i / k >= valid_rows) v = 0.0f;  // the padding rows
    x[i] = __float2half_rn(v);
  }
}

#define CUDA_CHECK(x)                                                                           \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d %s: %s (%s)\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_), \
                   cudaGetErrorString(e_));                                                     \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)
#define CUBLAS_CHECK(x)                                                                      \
  do {                                                                                       \
    cublasStatus_t s_ = (x);                                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s:%d %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, int(s_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// The 3-D phase view {K, 8 phases, rows / 8} of a row-major fp16 matrix with `rows` (a multiple of
// 8) rows of K, box {64, 1, groups}, SW128.
void phase_map(CUtensorMap* map, const __half* base, int rows, int k, uint32_t groups) {
  const auto& enc = gemm::detail::tensor_map_encoder();
  if (enc.fn == nullptr) {
    std::fprintf(stderr, "no cuTensorMapEncodeTiled\n");
    std::exit(1);
  }
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(k), 8, static_cast<cuuint64_t>(rows / 8)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(k) * 2, static_cast<cuuint64_t>(k) * 16};
  const cuuint32_t box[3] = {64, 1, groups};
  const cuuint32_t elem[3] = {1, 1, 1};
  const CUresult r = enc.fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<__half*>(base), dims, strides, box,
                            elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled: CUresult %d\n", static_cast<int>(r));
    std::exit(1);
  }
}

struct PhaseProblem {
  int m, n, k, m_pad, n_pad, copies;
  std::vector<__half*> a, b;
  std::vector<CUtensorMap> map_a, map_b;
  __half* d = nullptr;  // m x n, then a guard band of kGuard elements
  __half* d_ref = nullptr;
  Params p{};
};
constexpr size_t kGuard = 4096;
constexpr uint16_t kGuardBits = 0x1234, kNanBits = 0x7e00;

struct Variant {
  bool store = true, loads = true, mma = true;
};

void launch(const PhaseProblem& pr, int copy, int sms, size_t smem, Variant v = {}) {
  Params p = pr.p;
  if (!v.store) p.d = nullptr;
  p.no_loads = !v.loads;
  p.no_mma = !v.mma;
  phase_gemm<<<sms, 256, smem>>>(pr.map_a[copy], pr.map_b[copy], p);
  CUDA_CHECK(cudaGetLastError());
}

void cublas_gemm(cublasHandle_t h, const PhaseProblem& pr, int copy, __half* d) {
  const float one = 1.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, pr.n, pr.m, pr.k, &one, pr.b[copy], CUDA_R_16F, pr.k,
                            pr.a[copy], CUDA_R_16F, pr.k, &zero, d, CUDA_R_16F, pr.n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

// One check: fill copy 0, poison D and its guard, run both, compare. Returns the failures.
long check(cublasHandle_t h, PhaseProblem& pr, int sms, size_t smem, bool integer) {
  const size_t mn = size_t(pr.m) * pr.n;
  fill<<<1024, 256>>>(pr.a[0], pr.m_pad, pr.m, pr.k, 11, integer);
  fill<<<1024, 256>>>(pr.b[0], pr.n_pad, pr.n, pr.k, 23, integer);
  CUDA_CHECK(cudaGetLastError());
  std::vector<uint16_t> poison(mn + kGuard, kNanBits);
  std::fill(poison.begin() + mn, poison.end(), kGuardBits);
  CUDA_CHECK(cudaMemcpy(pr.d, poison.data(), poison.size() * 2, cudaMemcpyHostToDevice));
  launch(pr, 0, sms, smem);
  cublas_gemm(h, pr, 0, pr.d_ref);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint16_t> got(mn + kGuard), want(mn);
  CUDA_CHECK(cudaMemcpy(got.data(), pr.d, got.size() * 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(want.data(), pr.d_ref, want.size() * 2, cudaMemcpyDeviceToHost));
  long bad = 0, nan = 0, guard = 0;
  double worst = 0;
  for (size_t i = 0; i < mn; ++i) {
    __half_raw gr, wr;
    gr.x = got[i];
    wr.x = want[i];
    const float g = __half2float(__half(gr)), w = __half2float(__half(wr));
    if (std::isnan(g)) {
      ++nan;
      continue;
    }
    const double err = std::fabs(double(g) - w);
    worst = std::max(worst, err);
    // Integer mode: exact. Float mode: the two fp32 sums may round to neighbouring fp16 values.
    if (integer ? got[i] != want[i] : err > 2e-3 + std::ldexp(std::fabs(w), -9)) ++bad;
  }
  for (size_t i = mn; i < mn + kGuard; ++i) guard += got[i] != kGuardBits;
  std::printf("  check %-7s: %ld wrong, %ld NaN (unwritten), %ld guard elements touched; max |D - cuBLAS| %.3g\n",
              integer ? "integer" : "float", bad, nan, guard, worst);
  return bad + nan + guard;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

// phase_gemm [--only I] [--no-store] [--no-loads] [--no-mma]: I (0-3) runs one of the four sizes;
// the others time the kernel without its stores of D, without its loads (the producer only
// arrives), or without its wgmmas (the checks still run the whole kernel).
int main(int argc, char** argv) {
  int only = -1;
  Variant v;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-store")) v.store = false;
    else if (!std::strcmp(argv[i], "--no-loads")) v.loads = false;
    else if (!std::strcmp(argv[i], "--no-mma")) v.mma = false;
    else {
      std::fprintf(stderr, "usage: phase_gemm [--only 0..3] [--no-store] [--no-loads] [--no-mma]\n");
      return 2;
    }
  }
  const bool whole = v.store && v.loads && v.mma;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("%s, %d SMs, L2 %d MB\n", prop.name, sms, prop.l2CacheSize >> 20);
  const size_t smem = (kStagesA + kStagesB) * size_t{kTile} + 1024 + 2 * (kStagesA + kStagesB) * sizeof(uint64_t);
  CUDA_CHECK(cudaFuncSetAttribute(phase_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  const int sizes[][3] = {{3000, 3000, 3000}, {3072, 3072, 3072}, {4001, 1000, 2056}, {4096, 1024, 2048}};
  long failures = 0;
  double ratio[4] = {};
  for (int si = 0; si < 4; ++si) {
    if (only >= 0 && si != only) continue;
    PhaseProblem pr;
    pr.m = sizes[si][0];
    pr.n = sizes[si][1];
    pr.k = sizes[si][2];
    pr.m_pad = (pr.m + 7) / 8 * 8;
    pr.n_pad = (pr.n + 7) / 8 * 8;
    const double bytes = double(pr.m_pad + pr.n_pad) * pr.k * 2;
    pr.copies = std::max(1, static_cast<int>(std::ceil(3.0 * prop.l2CacheSize / bytes)));
    for (int c = 0; c < pr.copies; ++c) {
      __half *a, *b;
      CUDA_CHECK(cudaMalloc(&a, size_t(pr.m_pad) * pr.k * 2));
      CUDA_CHECK(cudaMalloc(&b, size_t(pr.n_pad) * pr.k * 2));
      pr.a.push_back(a);
      pr.b.push_back(b);
      CUtensorMap ma, mb;
      phase_map(&ma, a, pr.m_pad, pr.k, 128);
      phase_map(&mb, b, pr.n_pad, pr.k, 16);
      pr.map_a.push_back(ma);
      pr.map_b.push_back(mb);
    }
    CUDA_CHECK(cudaMalloc(&pr.d, (size_t(pr.m) * pr.n + kGuard) * 2));
    CUDA_CHECK(cudaMalloc(&pr.d_ref, size_t(pr.m) * pr.n * 2));
    pr.p.d = pr.d;
    pr.p.m = pr.m;
    pr.p.n = pr.n;
    pr.p.k = pr.k;
    pr.p.m_tiles = 8 * ((pr.m_pad / 8 + 127) / 128);
    pr.p.tiles = pr.p.m_tiles * ((pr.n + 127) / 128);
    for (int q = 0; q < 8; ++q)  // the bases are 256-byte aligned
      pr.p.s |= static_cast<uint32_t>((uint64_t(q) * pr.k * 2) % 128 / 16) << (4 * q);
    std::printf("%dx%dx%d: %d tiles, %d input copies, chunk offsets of the phases:", pr.m, pr.n, pr.k, pr.p.tiles,
                pr.copies);
    for (int q = 0; q < 8; ++q) std::printf(" %u", (pr.p.s >> (4 * q)) & 7);
    std::printf("\n");
    failures += check(h, pr, sms, smem, true);
    failures += check(h, pr, sms, smem, false);
    for (int c = 0; c < pr.copies; ++c) {
      fill<<<1024, 256>>>(pr.a[c], pr.m_pad, pr.m, pr.k, 100 + c, 0);
      fill<<<1024, 256>>>(pr.b[c], pr.n_pad, pr.n, pr.k, 200 + c, 0);
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<double> t_phase, t_cublas;
    for (int rep = 0; rep < 23; ++rep) {  // interleaved; the first two of each are warm-up
      const int c = rep % pr.copies;
      for (int which = 0; which < 2; ++which) {
        CUDA_CHECK(cudaEventRecord(e0));
        if (which == 0) launch(pr, c, sms, smem, v);
        else cublas_gemm(h, pr, c, pr.d_ref);
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (rep >= 2) (which == 0 ? t_phase : t_cublas).push_back(ms);
      }
    }
    const double flops = 2.0 * pr.m * pr.n * pr.k;
    const double tp = flops / (median(t_phase) * 1e-3) / 1e12, tc = flops / (median(t_cublas) * 1e-3) / 1e12;
    ratio[si] = tp / tc;
    std::printf("  phase_gemm%s %.1f TFLOPS (median of 21, %.1f us), cuBLAS %.1f TFLOPS (%.1f us): %.3fx cuBLAS\n",
                whole ? "" : " (a timing variant)", tp, median(t_phase) * 1e3, tc, median(t_cublas) * 1e3, ratio[si]);
    for (int c = 0; c < pr.copies; ++c) {
      CUDA_CHECK(cudaFree(pr.a[c]));
      CUDA_CHECK(cudaFree(pr.b[c]));
    }
    CUDA_CHECK(cudaFree(pr.d));
    CUDA_CHECK(cudaFree(pr.d_ref));
  }
  if (only < 0)
    std::printf("ragged / aligned ratio: 3000^3 / 3072^3 %.3f, 4001x1000x2056 / 4096x1024x2048 %.3f\n",
                ratio[0] / ratio[1], ratio[2] / ratio[3]);
  std::printf("%s\n", failures ? "CHECK FAILED" : "all checks passed");
  CUBLAS_CHECK(cublasDestroy(h));
  return failures ? 1 : 0;
}
