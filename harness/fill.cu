// The CUDA backend's fill and poison kernels: grid-stride loops over 64-bit indices, so one
// launch of a fixed size covers any buffer (an operand can exceed 2^31 elements).
#include "harness/check.h"
#include "harness/fill.h"

namespace gemm::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

__global__ void fill_inputs_kernel(__half* dst, size_t count, uint64_t seed, InputMode mode) {
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = input_value(seed, i, mode);
}

__global__ void fill_bits_kernel(__half* dst, size_t count, uint16_t bits) {
  const __half value = half_from_bits(bits);
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    dst[i] = value;
}

unsigned blocks_for(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

}  // namespace

// The harness's own kernels launch with <<<>>>: the step-file rules (docs/design.md) are for steps.
void fill_inputs(__half* dst, size_t count, uint64_t seed, InputMode mode, cudaStream_t stream) {
  if (count == 0) return;
  fill_inputs_kernel<<<blocks_for(count), kThreads, 0, stream>>>(dst, count, seed, mode);
  CUDA_CHECK(cudaGetLastError());
}

void fill_bits(__half* dst, size_t count, uint16_t bits, cudaStream_t stream) {
  if (count == 0) return;
  fill_bits_kernel<<<blocks_for(count), kThreads, 0, stream>>>(dst, count, bits);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gemm::cuda
