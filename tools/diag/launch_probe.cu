// Probe (2026-11-29, not kept): what a launch costs in event time, by launch configuration (empty kernels).
// nvcc -arch=sm_90a -O2 -o launch_probe launch_probe.cu -lcuda; figures: steps/11_shapes/NOTES.md.
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void spin(unsigned long long ns) {
  unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); if (t - t0 > ns) break; }
}
__global__ void k_empty() {}
struct Big { long long v[16]; };
__global__ void k_params(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,
                         const __grid_constant__ CUtensorMap d, long long M, long long N, int g, Big s, Big t) {
  if (M < 0) printf("%d\n", (int)(a.opaque[0] + b.opaque[0] + d.opaque[0] + N + g + s.v[0] + t.v[0]));
}
template <class F> float median_us(F launch) {
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int i = 0; i < 300; ++i) {
    spin<<<1, 1>>>(100000);
    cudaEventRecord(e0); launch(); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 20) ts.push_back(ms * 1000);
  }
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}
int main() {
  CUtensorMap m{};
  Big big{};
  CK(cudaFuncSetAttribute(k_empty, cudaFuncAttributeMaxDynamicSharedMemorySize, 231424));
  CK(cudaFuncSetAttribute(k_params, cudaFuncAttributeMaxDynamicSharedMemorySize, 231424));
  CK(cudaFuncSetAttribute(k_empty, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  auto ex = [&](auto kern, int cluster, size_t smem, auto... args) {
    cudaLaunchConfig_t c{}; c.gridDim = dim3(128); c.blockDim = dim3(384); c.dynamicSmemBytes = smem;
    cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = cluster; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    c.attrs = at; c.numAttrs = cluster > 0 ? 1 : 0;
    cudaError_t e = cudaLaunchKernelEx(&c, kern, args...); if (e != cudaSuccess) printf("launch: %s\n", cudaGetErrorString(e));
  };
  for (int rep = 0; rep < 2; ++rep) {
    printf("rep %d\n", rep);
    printf("  empty <<<128,384>>>, no smem:                %.2f us\n", median_us([&] { k_empty<<<128, 384>>>(); }));
    printf("  empty, no cluster, 215040 B smem:             %.2f us\n", median_us([&] { ex(k_empty, 0, 215040); }));
    printf("  empty, cluster 2, no smem:                    %.2f us\n", median_us([&] { ex(k_empty, 2, 0); }));
    printf("  empty, cluster 2, 213268 B smem:              %.2f us\n", median_us([&] { ex(k_empty, 2, 213268); }));
    printf("  empty, cluster 2, 215040 B smem:              %.2f us\n", median_us([&] { ex(k_empty, 2, 215040); }));
    printf("  empty, cluster 2, 231424 B smem:              %.2f us\n", median_us([&] { ex(k_empty, 2, 231424); }));
    printf("  params (3 maps + 2 x 128 B), cluster 2, 215040: %.2f us\n",
           median_us([&] { ex(k_params, 2, 215040, m, m, m, 1LL, 1LL, 1, big, big); }));
    printf("  params, no cluster, no smem:                  %.2f us\n",
           median_us([&] { ex(k_params, 0, 0, m, m, m, 1LL, 1LL, 1, big, big); }));
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
