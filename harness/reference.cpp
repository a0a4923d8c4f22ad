#include "harness/reference.h"

#include <algorithm>
#include <climits>
#include <thread>

namespace gemm {

CublasReference::CublasReference(cudaStream_t stream) : stream_(stream) {
  CUBLAS_CHECK(cublasCreate(&handle_));
  CUBLAS_CHECK(cublasSetStream(handle_, stream));
}

CublasReference::~CublasReference() { cublasDestroy(handle_); }

void CublasReference::run(const Problem& p) {
  // cuBLAS takes int dimensions; the shape contract keeps each of M, N, K at most 2^31 - 1.
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    throw Error("cuBLAS reference: " + shape_string(p) + " exceeds int");
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const float one = 1.0f, zero = 0.0f;
  // cuBLAS is column-major: row-major D[M,N] is column-major D^T[N,M] = B[N,K] * A^T, with B and A
  // (row-major, K-major) read as transposed column-major K x N and K x M matrices: "TN".
  CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, p.b, CUDA_R_16F, k, p.a, CUDA_R_16F, k,
                            &zero, p.d, CUDA_R_16F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

std::vector<__half> CublasReference::expected(Backend& backend, const Problem& p) {
  DeviceBuffer<__half> d(backend, static_cast<size_t>(p.m * p.n));
  Problem q = p;
  q.d = d.get();
  run(q);
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // the backend's copy may use another stream
  return d.to_host();
}

std::vector<__half> cpu_gemm(std::span<const __half> a, std::span<const __half> b, int64_t m, int64_t n, int64_t k,
                             unsigned threads) {
  if (a.size() != static_cast<size_t>(m * k) || b.size() != static_cast<size_t>(n * k))
    throw Error("cpu_gemm: A or B does not hold M*K or N*K elements");
  std::vector<__half> d(static_cast<size_t>(m * n));
  if (d.empty()) return d;
  // fp16 -> float once, not inside the inner loop (host fp16 conversion is bit twiddling).
  std::vector<float> af(a.size()), bf(b.size());
  std::transform(a.begin(), a.end(), af.begin(), __half2float);
  std::transform(b.begin(), b.end(), bf.begin(), __half2float);

  auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* ai = af.data() + i * k;
      for (int64_t j = 0; j < n; ++j) {
        const float* bj = bf.data() + j * k;
        double acc = 0.0;
        for (int64_t kk = 0; kk < k; ++kk) acc += static_cast<double>(ai[kk]) * bj[kk];
        d[i * n + j] = __double2half(acc);  // one rounding, straight from double
      }
    }
  };

  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const int64_t workers = std::min<int64_t>(threads, m);
  const int64_t chunk = (m + workers - 1) / workers;
  std::vector<std::thread> pool;
  for (int64_t w = 1; w < workers; ++w) pool.emplace_back(rows, w * chunk, std::min(m, (w + 1) * chunk));
  rows(0, std::min(m, chunk));  // this thread takes the first chunk
  for (auto& t : pool) t.join();
  return d;
}

std::vector<__half> CpuReference::expected(Backend& backend, const Problem& p) {
  std::vector<__half> a(static_cast<size_t>(p.m * p.k)), b(static_cast<size_t>(p.n * p.k));
  backend.copy_to_host(a.data(), p.a, a.size() * sizeof(__half));
  backend.copy_to_host(b.data(), p.b, b.size() * sizeof(__half));
  return cpu_gemm(a, b, p.m, p.n, p.k);
}

Reference& reference_for(InputMode mode, CublasReference& cublas) {
  static CpuReference cpu;  // stateless
  if (mode == InputMode::exact_int) return cpu;
  return cublas;
}

}  // namespace gemm
