// Scratch memory a launcher needs beside the operands (step 11's split-K partial sums and tickets).
//
// Per stream, two buffers, each allocated by the first call that needs it, regrown when a call
// needs more, and kept until the process exits:
//   - counters: zero-filled when allocated; every kernel that uses them must leave them zero when it
//     finishes (step 11 resets each ticket it took), so the next launch finds them zero;
//   - data: contents unspecified; a kernel writes what it reads.
// Calls on one stream run in order, so they share the buffers safely; calls on different streams
// get different buffers. Host-only. In the emulated build the memory is host memory, as the
// emulator's operands are, which the emulator watches: a CTA that reads another CTA's writes without
// a release/acquire pair between them, or data no thread wrote in the launch, is reported.
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "common/launch.cuh"  // cuda_failure
#include "common/problem.h"   // Status

namespace gemm {

#if defined(GEMM_EMULATED)
namespace emu {
// Host memory the emulator watches while kernels run (emu/global.cpp): page-aligned, `bytes`
// rounded up to whole pages, zero-filled. `defined`: its contents are defined at a launch (the
// counters); else unspecified (the data: a kernel reads only what it wrote in the same launch).
void* global_alloc(size_t bytes, bool defined);
void global_free(void* p);
}  // namespace emu

// In gemm::emulated (emu/prelude.h): the GPU build defines the same inline functions with
// other bodies, and one program links both builds.
inline namespace emulated {
#endif

struct Scratch {
  uint32_t* counters = nullptr;  // zero; leave them zero
  void* data = nullptr;          // 256-byte aligned, contents unspecified
};

namespace detail {

// Grows `*ptr` (holding `*have` bytes) to at least `bytes`, zero-filled if `zero`.
inline Status grow_scratch(cudaStream_t stream, size_t bytes, bool zero, void** ptr, size_t* have) {
  if (*have >= bytes) return {};
#if defined(GEMM_EMULATED)
  (void)stream;
  emu::global_free(*ptr);
  *ptr = emu::global_alloc(bytes, zero);  // zeroed either way
  *have = 0;
  if (*ptr == nullptr) return Status::failure("scratch: out of host memory for " + std::to_string(bytes) + " bytes");
#else
  if (*ptr != nullptr) {
    // Work already queued on the stream may still use the old buffer.
    if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
      return cuda_failure(e, "cudaStreamSynchronize");
    if (cudaError_t e = cudaFree(*ptr); e != cudaSuccess) return cuda_failure(e, "cudaFree(scratch)");
    *ptr = nullptr;
    *have = 0;
  }
  if (cudaError_t e = cudaMalloc(ptr, bytes); e != cudaSuccess) return cuda_failure(e, "cudaMalloc(scratch)");
  if (zero)
    if (cudaError_t e = cudaMemsetAsync(*ptr, 0, bytes, stream); e != cudaSuccess)
      return cuda_failure(e, "cudaMemsetAsync(scratch)");
#endif
  *have = bytes;
  return {};
}

}  // namespace detail

// This stream's scratch, with room for at least `counters` counters and `data_bytes` bytes.
inline Status stream_scratch(cudaStream_t stream, size_t counters, size_t data_bytes, Scratch* out) {
  struct Buffers {
    void* counters = nullptr;
    size_t counter_bytes = 0;
    void* data = nullptr;
    size_t data_bytes = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, Buffers> all;  // (device, stream)
  const std::lock_guard<std::mutex> lock(mutex);
  int device = 0;
#if !defined(GEMM_EMULATED)
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cuda_failure(e, "cudaGetDevice");
#endif
  Buffers& b = all[{device, stream}];
  if (Status s = detail::grow_scratch(stream, counters * sizeof(uint32_t), true, &b.counters, &b.counter_bytes);
      !s.ok())
    return s;
  if (Status s = detail::grow_scratch(stream, data_bytes, false, &b.data, &b.data_bytes); !s.ok()) return s;
  out->counters = static_cast<uint32_t*>(b.counters);
  out->data = b.data;
  return {};
}

#if defined(GEMM_EMULATED)
}  // namespace emulated
#endif

}  // namespace gemm
