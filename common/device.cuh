// What the GPU keeps resident: the grid of a persistent kernel (steps 6-10) is the CTAs that run at
// once, SMs x CTAs of this kernel per SM, read from the device and the occupancy API at launch time
// (the kernel's registers, block size and shared memory decide the CTAs per SM); from step 8 on,
// trimmed to whole waves of work (balanced_grid, common/scheduler.cuh).
// https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__OCCUPANCY.html
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "common/defs.cuh"
#include "common/launch.cuh"
#include "common/problem.h"

namespace gemm {

#if defined(__CUDACC__)

// Sets *ctas to the number of CTAs of `kernel` (launched with `threads` threads and `smem_bytes`
// of dynamic shared memory) that the current device runs at once: its SM count times the CTAs that
// fit on one SM. Host only; nothing is launched. A kernel of which not even one CTA fits gets a
// failure naming the numbers.
template <class... KernelArgs>
Status resident_ctas(void (*kernel)(KernelArgs...), int threads, size_t smem_bytes, int* ctas) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cuda_failure(e, "cudaGetDevice");
  int sms = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    return cuda_failure(e, "cudaDeviceGetAttribute(MultiProcessorCount)");
  // The occupancy calculator counts only the dynamic shared memory the kernel is allowed: raise
  // the limit first, as launch() does (a request above the device's opt-in limit fails here).
  if (Status s = allow_dynamic_smem(kernel, smem_bytes); !s.ok()) return s;
  int per_sm = 0;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes);
      e != cudaSuccess)
    return cuda_failure(e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (per_sm < 1)
    return Status::failure("occupancy: not one CTA of " + std::to_string(threads) + " threads and " +
                           std::to_string(smem_bytes) + " bytes of shared memory fits on an SM");
  *ctas = sms * per_sm;
  return {};
}

// Sets *clusters to the number of clusters of `cluster_size` CTAs (along x) of `kernel` that the
// current device runs at once (steps 9-10: the persistent grid is that many clusters). The CTAs of
// a cluster are placed on the SMs of one GPC, so this can be fewer than resident_ctas / cluster_size
// when a GPC's SM count is not a multiple of the cluster size. Host only; nothing is launched.
template <class... KernelArgs>
Status resident_clusters(void (*kernel)(KernelArgs...), int threads, size_t smem_bytes, int cluster_size,
                         int* clusters) {
  if (Status s = allow_dynamic_smem(kernel, smem_bytes); !s.ok()) return s;
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(static_cast<unsigned>(cluster_size));
  lc.blockDim = dim3(static_cast<unsigned>(threads));
  lc.dynamicSmemBytes = smem_bytes;
  cudaLaunchAttribute attr[1]{};
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster_size);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  int n = 0;
  if (cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kernel, &lc); e != cudaSuccess)
    return cuda_failure(e, "cudaOccupancyMaxActiveClusters");
  if (n < 1)
    return Status::failure("occupancy: not one cluster of " + std::to_string(cluster_size) + " CTAs of " +
                           std::to_string(threads) + " threads and " + std::to_string(smem_bytes) +
                           " bytes of shared memory fits on the GPU");
  *clusters = n;
  return {};
}

#elif defined(GEMM_EMULATED)

namespace emu {
// The functional emulator's answer (emu/): its SM count (Options::sm_count) times the CTAs
// of `threads` threads and `smem_bytes` of shared memory that fit on one emulated SM.
Status resident_ctas(int threads, size_t smem_bytes, int* ctas);
}  // namespace emu

// In gemm::emulated (emu/prelude.h), apart from the GPU build's definition above.
inline namespace emulated {
template <class... KernelArgs>
Status resident_ctas(void (*)(KernelArgs...), int threads, size_t smem_bytes, int* ctas) {
  return emu::resident_ctas(threads, smem_bytes, ctas);
}
// The emulated SMs have no GPCs: any cluster_size resident CTAs make a resident cluster.
template <class... KernelArgs>
Status resident_clusters(void (*)(KernelArgs...), int threads, size_t smem_bytes, int cluster_size, int* clusters) {
  int ctas = 0;
  if (Status s = emu::resident_ctas(threads, smem_bytes, &ctas); !s.ok()) return s;
  if (ctas < cluster_size)
    return Status::failure("occupancy: not one cluster of " + std::to_string(cluster_size) +
                           " CTAs fits on the emulated GPU");
  *clusters = ctas / cluster_size;
  return {};
}
}  // namespace emulated

#endif

}  // namespace gemm
