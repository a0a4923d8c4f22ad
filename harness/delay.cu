// enqueue_gpu_delay (harness/timer.h): one thread that spins for a number of SM clock cycles.
#include <cuda_runtime.h>

#include "harness/check.h"
#include "harness/timer.h"

namespace gemm {
namespace {

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) __nanosleep(256);
}

}  // namespace

void enqueue_gpu_delay(cudaStream_t stream, unsigned microseconds) {
  // Cycles at the peak SM clock: at a lower clock the delay only gets longer, which is harmless.
  int device = 0, clock_khz = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  const long long cycles = static_cast<long long>(microseconds) * (clock_khz / 1000);
  // The harness's own kernels launch with <<<>>>: the step-file rules (docs/design.md) are for steps.
  spin_kernel<<<1, 1, 0, stream>>>(cycles);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gemm
