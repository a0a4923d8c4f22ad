// Must compile: the language features and common/ helpers a step file may use.
#include "emu/prelude.h"

#include "common/launch.cuh"
#include "common/smem.cuh"
struct alignas(1024) Storage {
  float x[256];
};
__global__ void __launch_bounds__(128, 1) kernel(float* out) {
  Storage& s = gemm::dynamic_smem<Storage>();
  s.x[threadIdx.x] = static_cast<float>(blockIdx.x * blockDim.x + threadIdx.x);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 2; ++i) out[threadIdx.x + i * gridDim.x] = s.x[threadIdx.x];
}
gemm::Status run(float* out) {
  gemm::LaunchConfig cfg;
  cfg.smem_bytes = gemm::smem_bytes<Storage>();
  return gemm::launch(kernel, cfg, out);
}
