// Scratch diagnostic: what a cluster launch costs per call, apart from any GEMM.
// A kernel of `ctas` CTAs of 384 threads with ~200 KB of dynamic shared memory (one CTA per SM, as
// steps 8-10), launched plain or in clusters of two (with or without a cluster barrier at entry),
// each CTA's thread 0 busy for `work_us`. Timed two ways, as the benchmarks do: alone after a
// 200 us GPU spin (gemm_bench's time_alone) and back to back (the step executables' time_ms).
// Per CTA it records %globaltimer at entry and exit: the spread of the entries is the dispatch.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

__device__ __forceinline__ unsigned long long gt() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long t0 = gt();
  while (gt() - t0 < ns) {
  }
}

struct Rec {
  unsigned long long start, end;
  unsigned sm, pad;
};

template <bool kSync>
__global__ void __launch_bounds__(384, 1) probe(Rec* rec, unsigned long long work_ns) {
  extern __shared__ char smem[];
  const unsigned long long t0 = gt();
  if (kSync) cluster_sync();
  if (threadIdx.x == 0) {
    while (gt() - t0 < work_ns) {
    }
    smem[0] = 1;
  }
  __syncthreads();
  if (kSync) cluster_sync();
  if (threadIdx.x == 0) {
    rec[blockIdx.x].start = t0;
    rec[blockIdx.x].end = gt();
    rec[blockIdx.x].sm = smid();
  }
}

struct Config {
  const char* name;
  int cluster;
  bool sync;
};
static const Config kConfigs[] = {{"plain", 1, false}, {"cluster2", 2, false}, {"cluster2+sync", 2, true}};
constexpr int kSmem = 200 * 1024;

static void launch(const Config& c, int ctas, Rec* rec, unsigned long long work_ns, cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(ctas);
  cfg.blockDim = dim3(384);
  cfg.dynamicSmemBytes = kSmem;
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = c.cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = c.cluster > 1 ? 1 : 0;
  if (c.sync) CK(cudaLaunchKernelEx(&cfg, probe<true>, rec, work_ns));
  else CK(cudaLaunchKernelEx(&cfg, probe<false>, rec, work_ns));
  CK(cudaGetLastError());
}

static float med(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.f : v[v.size() / 2];
}

int main() {
  CK(cudaFuncSetAttribute(probe<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CK(cudaFuncSetAttribute(probe<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPU: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  Rec* rec;
  CK(cudaMalloc(&rec, 1024 * sizeof(Rec)));
  cudaEvent_t ev[2];
  CK(cudaEventCreate(&ev[0]));
  CK(cudaEventCreate(&ev[1]));
  const int kRounds = 60;
  for (int ctas : {128, 132}) {
    for (unsigned long long work_us : {0ull, 20ull, 180ull}) {
      const unsigned long long work_ns = work_us * 1000;
      // alone, in turns (config order rotated each round)
      std::vector<std::vector<float>> alone(3), b2b(3), spread(3), body(3);
      for (int r = -3; r < kRounds; ++r) {
        for (int j = 0; j < 3; ++j) {
          const int ci = (j + (r < 0 ? 0 : r)) % 3;
          spin_kernel<<<1, 1, 0, s>>>(200000);
          CK(cudaEventRecord(ev[0], s));
          launch(kConfigs[ci], ctas, rec, work_ns, s);
          CK(cudaEventRecord(ev[1], s));
          CK(cudaEventSynchronize(ev[1]));
          float ms;
          CK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
          std::vector<Rec> h(ctas);
          CK(cudaMemcpy(h.data(), rec, ctas * sizeof(Rec), cudaMemcpyDeviceToHost));
          unsigned long long s0 = ~0ull, s1 = 0, e1 = 0;
          for (const Rec& x : h) {
            s0 = std::min(s0, x.start);
            s1 = std::max(s1, x.start);
            e1 = std::max(e1, x.end);
          }
          if (r >= 0) {
            alone[ci].push_back(ms * 1000.f);
            spread[ci].push_back((s1 - s0) / 1000.f);
            body[ci].push_back((e1 - s0) / 1000.f);
          }
        }
      }
      // back to back: 40 calls of one config, events between them
      for (int ci = 0; ci < 3; ++ci) {
        std::vector<cudaEvent_t> e(41);
        for (auto& x : e) CK(cudaEventCreate(&x));
        for (int w = 0; w < 3; ++w) launch(kConfigs[ci], ctas, rec, work_ns, s);
        CK(cudaEventRecord(e[0], s));
        for (int i = 0; i < 40; ++i) {
          launch(kConfigs[ci], ctas, rec, work_ns, s);
          CK(cudaEventRecord(e[i + 1], s));
        }
        CK(cudaEventSynchronize(e[40]));
        for (int i = 0; i < 40; ++i) {
          float ms;
          CK(cudaEventElapsedTime(&ms, e[i], e[i + 1]));
          b2b[ci].push_back(ms * 1000.f);
        }
        for (auto& x : e) CK(cudaEventDestroy(x));
      }
      for (int ci = 0; ci < 3; ++ci)
        std::printf(
            "ctas %3d work %3llu us  %-14s alone %7.2f us (min %7.2f)  back-to-back %7.2f us  body %7.2f us  entry spread %5.2f us\n",
            ctas, work_us, kConfigs[ci].name, med(alone[ci]), *std::min_element(alone[ci].begin(), alone[ci].end()),
            med(b2b[ci]), med(body[ci]), med(spread[ci]));
    }
  }
  // where the CTAs sit: smid per blockIdx, plain and cluster2 (128 CTAs, no work)
  for (int ci = 0; ci < 2; ++ci) {
    launch(kConfigs[ci], 128, rec, 0, s);
    CK(cudaStreamSynchronize(s));
    std::vector<Rec> h(128);
    CK(cudaMemcpy(h.data(), rec, 128 * sizeof(Rec), cudaMemcpyDeviceToHost));
    std::printf("smid by blockIdx, %s:", kConfigs[ci].name);
    for (const Rec& x : h) std::printf(" %u", x.sm);
    std::printf("\n");
  }
  return 0;
}
