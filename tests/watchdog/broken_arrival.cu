// The hang watchdog fires (common/mbarrier.cuh, GEMM_WATCHDOG): a kernel whose mbarrier expects 2
// arrivals and gets 1 would spin forever; built with GEMM_WATCHDOG=1, its wait gives up after the
// bound, prints the report and traps. This program launches it, synchronises, and prints what came
// back; ctest (label watchdog) passes when the device's report reached the host, which is the
// point: printf output must survive the trap. Its own process, since the trap ends the CUDA context.
// Exits 77 (ctest: skipped), with the reason, without a GPU (the harness's gpu_available: no device
// or no driver) or on a GPU without sm_90a-compatible code. Any other failure to find the GPU is a
// broken set-up, not a machine without one: it prints FAIL and exits 1.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "common/mbarrier.cuh"
#include "harness/backend.h"  // gpu_available
#include "harness/device.h"

namespace gemm::watchdog_test {

__global__ void broken_arrival_kernel() {
  __shared__ alignas(8) uint64_t bar;
  if (threadIdx.x == 0) mbarrier_init(&bar, 2);  // two arrivals complete the phase ...
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive(&bar);  // ... but only one comes
    mbarrier_wait(&bar, 0, WaitTag{"broken", "test", 3});
  }
}

}  // namespace gemm::watchdog_test

int main() {
  try {
    std::string why;
    if (!gemm::gpu_available(&why)) {
      std::printf("SKIP: %s\n", why.c_str());
      return 77;
    }
    const gemm::DeviceInfo device = gemm::query_device(0);
    if (device.cc_major != 9 || device.cc_minor != 0) {
      std::printf("SKIP: the watchdog test kernel is built for sm_90a; this GPU is sm_%d%d\n", device.cc_major,
                  device.cc_minor);
      return 77;
    }
  } catch (const std::exception& e) {  // gemm::Error: a failed query on a machine with a driver
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  const auto start = std::chrono::steady_clock::now();
  gemm::watchdog_test::broken_arrival_kernel<<<2, 32>>>();
  const cudaError_t launch = cudaGetLastError();
  const cudaError_t sync = cudaDeviceSynchronize();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fflush(stdout);
  std::printf("launch: %s; synchronize: %s after %.2f s\n", cudaGetErrorName(launch), cudaGetErrorName(sync), seconds);
  if (sync == cudaSuccess) {
    std::printf("FAIL: the broken kernel completed\n");
    return 1;
  }
  return 0;
}
