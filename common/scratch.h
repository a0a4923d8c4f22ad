// Scratch memory a launcher needs beside the operands (step 10's split-K partial sums and tickets).
//
// One zero-filled buffer per stream, allocated by the first call that needs it, regrown (and
// zero-filled again) when a call needs more, kept until the process exits. Calls on one stream run
// in order, so they share the buffer safely; calls on different streams get different buffers. A
// kernel that relies on zeros must leave them as it found them (step 10 resets its tickets).
// Host-only. In the emulated build the memory is host memory, as the emulator's operands are.
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "common/launch.cuh"  // cuda_failure
#include "common/problem.h"   // Status

namespace gemm {

inline Status stream_scratch(cudaStream_t stream, size_t bytes, void** out) {
  struct Buffer {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, Buffer> buffers;  // (device, stream)
  const std::lock_guard<std::mutex> lock(mutex);
  int device = 0;
#if !defined(GEMM_EMULATED)
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cuda_failure(e, "cudaGetDevice");
#endif
  Buffer& b = buffers[{device, stream}];
  if (b.bytes < bytes) {
#if defined(GEMM_EMULATED)
    std::free(b.ptr);
    b = Buffer{};
    b.ptr = std::calloc(1, bytes);
    if (b.ptr == nullptr) return Status::failure("scratch: out of host memory for " + std::to_string(bytes) + " bytes");
#else
    // Work already queued on the stream may still use the old buffer.
    if (b.ptr != nullptr) {
      if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
        return cuda_failure(e, "cudaStreamSynchronize");
      if (cudaError_t e = cudaFree(b.ptr); e != cudaSuccess) return cuda_failure(e, "cudaFree(scratch)");
      b = Buffer{};
    }
    if (cudaError_t e = cudaMalloc(&b.ptr, bytes); e != cudaSuccess) return cuda_failure(e, "cudaMalloc(scratch)");
    if (cudaError_t e = cudaMemsetAsync(b.ptr, 0, bytes, stream); e != cudaSuccess)
      return cuda_failure(e, "cudaMemsetAsync(scratch)");
#endif
    b.bytes = bytes;
  }
  *out = b.ptr;
  return {};
}

}  // namespace gemm
