// consumer_probe: the MMA side of the register-operand phase design, alone (tenth session, P16).
//
// One warpgroup per SM does step 8's consumer work on shared memory that never changes: per K slice
// two m64n128k16 wgmmas per k16 step (the 128x128 tile's two 64-row halves), four k16 steps, one
// wgmma-group per slice, wait_group 1, over a ring of 4 stages of A and B (16 KB each, SW128).
// No loads, no barriers: the time is the consumer's issue and the tensor cores.
//   ss        A and B from shared memory by descriptor (step 8 as it is);
//   rs        A from registers, loaded by ldmatrix.x4 from the same SW128 tile before each slice;
//   rs/phase  A from registers, its tile laid out as tma_probe's 3d:phase/b8 lands it (eight
//             16-row boxes, one per row phase, each row's data shifted by its phase's chunk offset
//             d_q relative to B's lines), so a row's k16 step may start in this stage's tile and
//             end in the next one's: each ldmatrix row address is that row's own.
// A diagnostic for docs/runs, not part of the build:
//   nvcc -std=c++17 -O3 -arch=sm_90a -I. -o consumer_probe docs/runs/2026-11-26-h100-phase-b8/consumer_probe.cu
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/smem.cuh"
#include "docs/runs/2026-11-26-h100-phase-b8/rs_wgmma.cuh"

using namespace gemm;
using namespace gemm::hopper;

constexpr int kStages = 4;
constexpr uint32_t kTileBytes = 128 * 128;  // 128 rows x 64 fp16
constexpr int kSlices = 4096;               // K slices per CTA per launch

enum Mode { ss = 0, rs = 1, rs_phase = 2 };

// The A fragments of one slice: [half][k16 step][4 registers].
using Frags = uint32_t[2][4][4];

// Shared addresses of this lane's ldmatrix rows: off[h][k] inside a stage's A tile and whether the
// row's chunk pair lies in the next stage's tile (rs/phase only).
struct Rows {
  uint32_t off[2][4];
  uint32_t next[2][4];
};

template <Mode M>
__device__ __forceinline__ Rows lane_rows() {
  Rows r{};
  const int t = static_cast<int>(threadIdx.x), warp = t / 32, l = t % 32, mi = l / 8;
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 4; ++k) {
      const int n = 64 * h + 16 * warp + (mi & 1) * 8 + l % 8;  // the row of the tile
      int row = n, c = 2 * k + (mi >> 1);                       // its shared row and chunk
      if (M == rs_phase) {
        const int q = n % 8, d = (7 * q + 5) % 8;  // phase q's chunk offset from B's lines (any 0..7)
        row = q * 16 + n / 8;
        c += d;
      }
      r.off[h][k] = static_cast<uint32_t>(row * 128 + (((c & 7) ^ (row & 7)) * 16));
      r.next[h][k] = static_cast<uint32_t>(c >> 3);
    }
  return r;
}

template <Mode M>
__device__ __forceinline__ void load_frags(Frags& f, const Rows& r, uint32_t a_this, uint32_t a_next) {
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int k = 0; k < 4; ++k) ldmatrix_x4(f[h][k], (r.next[h][k] ? a_next : a_this) + r.off[h][k]);
}

template <Mode M>
__device__ __forceinline__ void slice(float (&acc)[2][64], const Frags& f, uint32_t a_base, uint32_t b_base) {
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  wgmma_fence();
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint64_t b_desc = make_wgmma_desc_k_sw128(b_base + 32 * k);
      if constexpr (M == ss)
        wgmma_f32_f16_ss<128>(acc[h], make_wgmma_desc_k_sw128(a_base + h * 64 * 128 + 32 * k), b_desc, true);
      else wgmma_rs(acc[h], f[h][k], b_desc);
    }
  wgmma_commit_group();
  wgmma_wait_group<1>();  // the slice before this one has finished: its fragments may be reloaded
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
}

template <Mode M>
__global__ void __launch_bounds__(128, 1) consumer(float* out) {
  const uint32_t base = (smem_addr(gemm_dynamic_smem) + 1023) / 1024 * 1024;
  const uint32_t a0 = base, b0 = base + kStages * kTileBytes;
  // Fill the ring with small fp16 values (the tensor cores' power, and so the clock, depend on them).
  __half* p = reinterpret_cast<__half*>(gemm_dynamic_smem + (base - smem_addr(gemm_dynamic_smem)));
  for (uint32_t i = threadIdx.x; i < 2 * kStages * kTileBytes / 2; i += blockDim.x) {
    uint32_t x = i * 2654435761u + blockIdx.x * 97u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = __float2half(static_cast<float>(x % 2001) / 1000.0f - 1.0f);
  }
  __syncthreads();
  float acc[2][64];
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 64; ++i) acc[h][i] = 0.0f;
  const Rows rows = lane_rows<M>();
  Frags f0, f1;
  const auto a_of = [&](int s) { return a0 + static_cast<uint32_t>(s % kStages) * kTileBytes; };
  const auto b_of = [&](int s) { return b0 + static_cast<uint32_t>(s % kStages) * kTileBytes; };
  if constexpr (M != ss) load_frags<M>(f0, rows, a_of(0), a_of(1));
  for (int s = 0; s < kSlices; s += 2) {  // two slices a trip: the two fragment sets stay apart
    slice<M>(acc, f0, a_of(s), b_of(s));
    if constexpr (M != ss) load_frags<M>(f1, rows, a_of(s + 1), a_of(s + 2));
    slice<M>(acc, f1, a_of(s + 1), b_of(s + 1));
    if constexpr (M != ss) load_frags<M>(f0, rows, a_of(s + 2), a_of(s + 3));
  }
  wgmma_wait_group<0>();
  wgmma_fence_operands(acc[0]);
  wgmma_fence_operands(acc[1]);
  float sum = 0.0f;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 64; ++i) sum += acc[h][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s: %s (%s)\n", #x, cudaGetErrorName(e_), cudaGetErrorString(e_)); \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

template <Mode M>
int run(const char* name, int sms, float* out, double* tflops) {
  const int smem = 2 * kStages * kTileBytes + 1024;
  CHECK(cudaFuncSetAttribute(consumer<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<double> ms;
  for (int rep = 0; rep < 9; ++rep) {
    CHECK(cudaEventRecord(e0));
    consumer<M><<<sms, 128, smem>>>(out);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (rep >= 2) ms.push_back(t);  // two warm-up launches
  }
  std::sort(ms.begin(), ms.end());
  const double flops = 2.0 * 128 * 128 * 64 * kSlices * sms;
  *tflops = flops / (ms[ms.size() / 2] * 1e-3) / 1e12;
  std::printf("%-9s median %.3f ms (min %.3f, max %.3f): %.1f TFLOPS\n", name, ms[ms.size() / 2], ms.front(), ms.back(),
              *tflops);
  return 0;
}

int main() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; one warpgroup per SM, %d K slices of 128x128x64 each\n", prop.name, prop.multiProcessorCount,
              kSlices);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float) * 128 * prop.multiProcessorCount));
  double t_ss = 0, t_rs = 0, t_phase = 0;
  for (int round = 0; round < 2; ++round) {  // twice, interleaved: the second round is reported
    if (run<ss>("ss", prop.multiProcessorCount, out, &t_ss) || run<rs>("rs", prop.multiProcessorCount, out, &t_rs) ||
        run<rs_phase>("rs/phase", prop.multiProcessorCount, out, &t_phase))
      return 1;
  }
  std::printf("rs / ss %.3f, rs/phase / ss %.3f\n", t_rs / t_ss, t_phase / t_ss);
  CHECK(cudaFree(out));
  return 0;
}
