// Must NOT compile: a step file launching with cudaLaunchKernelEx instead of gemm::launch.
#include "emu/prelude.h"
__global__ void kernel(float* out) {}
cudaError_t run(float* out) {
  cudaLaunchConfig_t cfg{};
  return cudaLaunchKernelEx(&cfg, kernel, out);
}
