// Errors the harness throws, and the checks that turn a failed CUDA or cuBLAS call into one.
//
// The harness never ignores a status: every CUDA and cuBLAS call goes through CUDA_CHECK or
// CUBLAS_CHECK, which throw gemm::Error naming the file:line, the call as written and the error.
// (A step's own launcher returns a gemm::Status instead: see harness/step.h.)
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace gemm {

// Anything the harness cannot carry on from: a failed CUDA or cuBLAS call, a bad argument.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// There is no GPU to run on (no device, or no driver). Programs report it and exit; tests skip.
class NoGpu : public Error {
 public:
  using Error::Error;
};

namespace detail {
[[noreturn]] inline void throw_call_failed(const char* call, const char* file, int line, const std::string& error) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + error);
}
}  // namespace detail

}  // namespace gemm

#define CUDA_CHECK(call)                                                                                      \
  do {                                                                                                        \
    const cudaError_t gemm_check_err_ = (call);                                                               \
    if (gemm_check_err_ != cudaSuccess)                                                                       \
      ::gemm::detail::throw_call_failed(                                                                      \
          #call, __FILE__, __LINE__,                                                                          \
          std::string(cudaGetErrorName(gemm_check_err_)) + " (" + cudaGetErrorString(gemm_check_err_) + ")"); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                            \
  do {                                                                                                \
    const cublasStatus_t gemm_check_status_ = (call);                                                 \
    if (gemm_check_status_ != CUBLAS_STATUS_SUCCESS)                                                  \
      ::gemm::detail::throw_call_failed(#call, __FILE__, __LINE__,                                    \
                                        std::string(cublasGetStatusName(gemm_check_status_)) + " (" + \
                                            cublasGetStatusString(gemm_check_status_) + ")");         \
  } while (0)
