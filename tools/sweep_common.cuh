// Shared by the hopper measurement tools that time step kernels against cuBLAS in one process
// (tools/persistent_sweep.cu, tools/diag/ladder_diag.cu; each is one translation unit, built with
// one nvcc line): error checks, hashed inputs rotating over more than 3x the L2, cuBLAS as the
// reference, and interleaved CUDA-event timing. The benchmark suite (bench/) does not use it.
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "common/problem.h"

namespace gemm::sweep {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

inline void check_status(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", what, s.message().c_str());
    std::exit(1);
  }
}

// Uniform values in [-1, 1) from a hash of the index and the seed (all zeros would run faster).
__global__ void fill_uniform(__half* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    uint64_t x = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    p[i] = __float2half(static_cast<float>(x >> 40) / static_cast<float>(1 << 23) - 1.0f);
  }
}

inline double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Enough A/B pairs of one shape to cover 3x the L2 (at least 2; `sets` > 0 forces a count), so
// that a launch finds none of its inputs in L2 from the launch before; one D for every launch.
struct RotatingInputs {
  int64_t m, n, k;
  int sets = 0;
  std::vector<__half*> a, b;
  __half* d = nullptr;

  RotatingInputs(int64_t m_, int64_t n_, int64_t k_, int l2_bytes, int sets_ = 0) : m(m_), n(n_), k(k_) {
    const int64_t pair_bytes = (m * k + n * k) * int64_t{sizeof(__half)};
    sets = sets_ > 0 ? sets_ : static_cast<int>(std::max<int64_t>(2, (3 * int64_t{l2_bytes} + pair_bytes - 1) / pair_bytes));
    a.resize(sets);
    b.resize(sets);
    for (int i = 0; i < sets; ++i) {
      check_cuda(cudaMalloc(&a[i], m * k * sizeof(__half)), "cudaMalloc A");
      check_cuda(cudaMalloc(&b[i], n * k * sizeof(__half)), "cudaMalloc B");
      fill_uniform<<<1024, 256>>>(a[i], m * k, 2 * i + 1);
      fill_uniform<<<1024, 256>>>(b[i], n * k, 2 * i + 2);
    }
    check_cuda(cudaMalloc(&d, m * n * sizeof(__half)), "cudaMalloc D");
    check_cuda(cudaDeviceSynchronize(), "fill");
  }
  RotatingInputs(const RotatingInputs&) = delete;
  RotatingInputs& operator=(const RotatingInputs&) = delete;
  ~RotatingInputs() {
    for (int i = 0; i < sets; ++i) {
      cudaFree(a[i]);
      cudaFree(b[i]);
    }
    cudaFree(d);
  }

  Problem problem(int set, __half* out) const { return Problem{m, n, k, a[set], b[set], out}; }
  int64_t d_elems() const { return m * n; }
  double flops() const { return 2.0 * m * n * k; }
};

// D = A * B^T with cuBLAS, in the project's layout (A M x K, B N x K, D M x N, all row-major).
inline void cublas_gemm(cublasHandle_t handle, const RotatingInputs& in, int set, __half* out) {
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t st = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(in.n), static_cast<int>(in.m),
                                         static_cast<int>(in.k), &one, in.b[set], CUDA_R_16F, static_cast<int>(in.k),
                                         in.a[set], CUDA_R_16F, static_cast<int>(in.k), &zero, out, CUDA_R_16F,
                                         static_cast<int>(in.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: cublasGemmEx %d\n", static_cast<int>(st));
    std::exit(1);
  }
}

struct Config {
  std::string name;
  std::function<void(int set)> launch;  // one launch on input set `set`
  std::vector<float> ms;                // filled by time_interleaved
};

// Times the configurations in turns: each round launches every configuration once, each launch on
// the next input set, in an order rotated by one each round (so that no configuration always
// follows the same one, and clock drift over the run weighs on all alike); `warmup` rounds first.
// Then prints each one's median time, TFLOPS and ratio to configs[0] (the reference).
inline void time_interleaved(std::vector<Config>& configs, int sets, int warmup, int runs, double flops) {
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  int launches = 0;
  for (int round = 0; round < warmup + runs; ++round) {
    for (size_t i = 0; i < configs.size(); ++i) {
      Config& c = configs[(i + round) % configs.size()];
      const int set = launches++ % sets;
      if (round < warmup) {
        c.launch(set);
        continue;
      }
      check_cuda(cudaEventRecord(start), "cudaEventRecord");
      c.launch(set);
      check_cuda(cudaEventRecord(stop), "cudaEventRecord");
      check_cuda(cudaEventSynchronize(stop), c.name.c_str());
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      c.ms.push_back(ms);
    }
  }
  check_cuda(cudaGetLastError(), "timing");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const double ref_ms = median(configs[0].ms);
  for (const Config& c : configs) {
    const double med = median(c.ms);
    const auto [lo, hi] = std::minmax_element(c.ms.begin(), c.ms.end());
    std::printf("time   %-20s %8.4f ms  %7.1f TFLOPS  ratio %.3f  (median of %d; min %.4f, max %.4f ms)\n",
                c.name.c_str(), med, flops / med / 1e9, ref_ms / med, runs, *lo, *hi);
  }
}

}  // namespace gemm::sweep
