// enqueue_gpu_delay (harness/timer.h): one thread that waits for a number of nanoseconds of the
// GPU's global timer.
#include <cuda_runtime.h>

#include "common/clock.cuh"
#include "harness/check.h"
#include "harness/timer.h"

namespace gemm {
namespace {

// Wall-clock time, not SM cycles: waited for in clock64 cycles at the peak SM clock, with
// __nanosleep in the loop, "50 us" measured about 500 us on an H100 (bench/README.md).
__global__ void spin_kernel(uint64_t ns) {
  const uint64_t start = globaltimer_ns();
  while (globaltimer_ns() - start < ns) __nanosleep(256);
}

}  // namespace

void enqueue_gpu_delay(cudaStream_t stream, unsigned microseconds) {
  // The harness's own kernels launch with <<<>>>: the step-file rules (docs/design.md) are for steps.
  spin_kernel<<<1, 1, 0, stream>>>(uint64_t{microseconds} * 1000);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace gemm
