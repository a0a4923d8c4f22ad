// The references a step is checked against: cuBLAS on the GPU and a multithreaded CPU GEMM.
//
// Both compute D = A * B^T (docs/design.md, "The problem") and hand back the expected D on the host.
// cuBLAS is the reference for float mode on a GPU (and the speed baseline); the CPU reference is
// the one for exact mode, where any correct kernel matches it bit for bit, and for backends
// without cuBLAS.
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "common/problem.h"
#include "harness/backend.h"

namespace gemm {

// How the expected D of a problem is computed.
class Reference {
 public:
  virtual ~Reference() = default;
  virtual const char* name() const = 0;
  // The expected D (M x N, row-major) for the problem's A and B, which live on `backend`.
  // problem.d is not touched.
  virtual std::vector<__half> expected(Backend& backend, const Problem& problem) = 0;
};

// cuBLAS, the TN GEMM of docs/design.md: fp16 in and out, fp32 compute. Owns its handle.
class CublasReference final : public Reference {
 public:
  explicit CublasReference(cudaStream_t stream);
  ~CublasReference() override;
  CublasReference(const CublasReference&) = delete;
  CublasReference& operator=(const CublasReference&) = delete;

  const char* name() const override { return "cuBLAS"; }
  // Enqueues D = A * B^T into problem.d on the stream; does not wait. Also what gets timed.
  void run(const Problem& problem);
  std::vector<__half> expected(Backend& backend, const Problem& problem) override;

 private:
  cublasHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

// D = A * B^T on the CPU: each dot product accumulated in double in K order, then rounded to
// fp16 once. Rows are split over std::thread workers (threads = 0: one per hardware thread).
std::vector<__half> cpu_gemm(std::span<const __half> a, std::span<const __half> b, int64_t m, int64_t n, int64_t k,
                             unsigned threads = 0);

// cpu_gemm on the problem's A and B, copied to the host from the backend.
class CpuReference final : public Reference {
 public:
  const char* name() const override { return "CPU reference"; }
  std::vector<__half> expected(Backend& backend, const Problem& problem) override;
};

// The reference a mode is checked against on a GPU (docs/design.md, "Checking results"): cuBLAS for
// float mode; for exact mode the CPU reference, whose sums are exact, so D must equal it bit for bit.
Reference& reference_for(InputMode mode, CublasReference& cublas);

}  // namespace gemm
