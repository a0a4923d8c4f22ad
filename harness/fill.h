// The CUDA backend's fill and poison kernels (harness/fill.cu), enqueued on a stream.
// Internal to the harness: everything else goes through Backend::fill and Backend::poison.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "harness/hash.h"

namespace gemm::cuda {

// dst[i] = input_value(seed, i, mode) for i < count. Throws gemm::Error if the launch fails.
void fill_inputs(__half* dst, size_t count, uint64_t seed, InputMode mode, cudaStream_t stream);
// dst[i] = the fp16 with bit pattern `bits` for i < count.
void fill_bits(__half* dst, size_t count, uint16_t bits, cudaStream_t stream);

}  // namespace gemm::cuda
