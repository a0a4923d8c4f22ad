// The measurement behind step 6's L2 group size (kGroupM), and a check that its persistent grid
// computes the same D whatever the grid. Hopper track; not part of the CMake build (the driver and
// the benchmark suite are); one nvcc line on a machine with an H100 or H200:
//
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. tools/persistent_sweep.cu \
//        -lcublas -o persistent_sweep && ./persistent_sweep [M N K]...     (default 4096^3 8192^3)
//
// For every shape:
//  1. check: step 6 with grids of 1, 7 and 1000 CTAs (more CTAs than tiles at the ragged shapes),
//     the resident grid, and group sizes 1 and 16, writes D bit for bit equal to step 5's (the
//     same wgmmas on the same data per tile, so the same bits), and so does the default run();
//  2. time: cuBLAS, steps 3-6, and step 6 at group_m = 1, 2, 4, 8, 16, 32, 64, each the median
//     of kRuns launches timed one by one with CUDA events, all in one process. The configurations
//     take turns (one launch each per round), and every launch reads the next of as many A/B pairs
//     as cover 3x the L2 cache (so that L2 holds no input of the launch before). Inputs: uniform
//     in [-1, 1) from a hash (zeros would run faster).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "steps/03_tiling/hopper.cu"
#include "steps/04_tma/hopper.cu"
#include "steps/05_pipeline/hopper.cu"
#include "steps/06_persistent/hopper.cu"

namespace {

constexpr int kRuns = 15;
constexpr int kWarmup = 2;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "error: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check_status(const gemm::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", what, s.message().c_str());
    std::exit(1);
  }
}

__global__ void fill_uniform(__half* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    uint64_t x = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    p[i] = __float2half(static_cast<float>(x >> 40) / static_cast<float>(1 << 23) - 1.0f);  // [-1, 1)
  }
}

struct Shape {
  int64_t m, n, k;
};

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void run_shape(const Shape& s, cublasHandle_t handle, int l2_bytes) {
  const int64_t a_elems = s.m * s.k, b_elems = s.n * s.k, d_elems = s.m * s.n;
  const int64_t pair_bytes = (a_elems + b_elems) * 2;
  const int sets = static_cast<int>(std::max<int64_t>(2, (3 * int64_t{l2_bytes} + pair_bytes - 1) / pair_bytes));
  std::vector<__half*> a(sets), b(sets);
  for (int i = 0; i < sets; ++i) {
    check_cuda(cudaMalloc(&a[i], a_elems * 2), "cudaMalloc A");
    check_cuda(cudaMalloc(&b[i], b_elems * 2), "cudaMalloc B");
    fill_uniform<<<1024, 256>>>(a[i], a_elems, 2 * i + 1);
    fill_uniform<<<1024, 256>>>(b[i], b_elems, 2 * i + 2);
  }
  __half *d = nullptr, *d_ref = nullptr;
  check_cuda(cudaMalloc(&d, d_elems * 2), "cudaMalloc D");
  check_cuda(cudaMalloc(&d_ref, d_elems * 2), "cudaMalloc D_ref");
  check_cuda(cudaDeviceSynchronize(), "fill");
  std::printf("\n== M=%lld N=%lld K=%lld: %d rotating A/B sets (%.0f MB, L2 %d MB)\n", static_cast<long long>(s.m),
              static_cast<long long>(s.n), static_cast<long long>(s.k), sets, sets * pair_bytes / 1e6,
              l2_bytes >> 20);
  const auto problem = [&](int set, __half* out) { return gemm::Problem{s.m, s.n, s.k, a[set], b[set], out}; };

  // 1. Every grid computes step 5's D, bit for bit.
  std::vector<__half> ref(d_elems), got(d_elems);
  check_status(gemm::step05::hopper::run(problem(0, d_ref), nullptr), "step05");
  check_cuda(cudaMemcpy(ref.data(), d_ref, d_elems * 2, cudaMemcpyDeviceToHost), "copy D_ref");
  struct Variant {
    int group_m, ctas;
  };
  std::vector<Variant> variants = {{gemm::step06::hopper::kGroupM, 0}, {1, 0}, {8, 0}, {8, 7}};
  const int64_t tiles = ((s.m + 127) / 128) * ((s.n + 127) / 128);
  if (tiles <= 4096) variants.push_back({4, 1});  // one CTA walks every tile
  if (tiles < 1000) variants.push_back({8, 1000});  // more CTAs than tiles: some have no work
  for (const Variant& v : variants) {
    check_cuda(cudaMemset(d, 0xFF, d_elems * 2), "poison D");  // NaN everywhere
    check_status(gemm::step06::hopper::run_with(problem(0, d), nullptr, v.group_m, v.ctas), "step06");
    check_cuda(cudaMemcpy(got.data(), d, d_elems * 2, cudaMemcpyDeviceToHost), "copy D");
    const bool same = std::memcmp(ref.data(), got.data(), d_elems * 2) == 0;
    std::printf("check  step06 group_m %2d ctas %4d (0: resident): %s\n", v.group_m, v.ctas,
                same ? "D == step05 bit for bit" : "MISMATCH");
    if (!same) std::exit(1);
  }
  check_cuda(cudaMemset(d, 0xFF, d_elems * 2), "poison D");
  check_status(gemm::step06::hopper::run(problem(0, d), nullptr), "step06 run");
  check_cuda(cudaMemcpy(got.data(), d, d_elems * 2, cudaMemcpyDeviceToHost), "copy D");
  if (std::memcmp(ref.data(), got.data(), d_elems * 2) != 0) {
    std::printf("check  step06 run(): MISMATCH\n");
    std::exit(1);
  }

  // 2. Timing, inputs rotating. The configurations take turns, one launch each per round, so that
  // a drift of the clocks (power, temperature) over the run weighs on all of them alike.
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "event");
  check_cuda(cudaEventCreate(&stop), "event");
  const double flops = 2.0 * s.m * s.n * s.k;
  const float one = 1.0f, zero = 0.0f;
  struct Config {
    std::string name;
    std::function<void(int)> launch;
    std::vector<float> ms;
  };
  std::vector<Config> configs;
  configs.push_back({"cuBLAS", [&](int set) {
                       const cublasStatus_t st = cublasGemmEx(
                           handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m),
                           static_cast<int>(s.k), &one, b[set], CUDA_R_16F, static_cast<int>(s.k), a[set], CUDA_R_16F,
                           static_cast<int>(s.k), &zero, d, CUDA_R_16F, static_cast<int>(s.n), CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT);
                       if (st != CUBLAS_STATUS_SUCCESS) {
                         std::fprintf(stderr, "error: cublasGemmEx %d\n", static_cast<int>(st));
                         std::exit(1);
                       }
                     }, {}});
  configs.push_back({"step03", [&](int set) { check_status(gemm::step03::hopper::run(problem(set, d), nullptr), "step03"); }, {}});
  configs.push_back({"step04", [&](int set) { check_status(gemm::step04::hopper::run(problem(set, d), nullptr), "step04"); }, {}});
  configs.push_back({"step05", [&](int set) { check_status(gemm::step05::hopper::run(problem(set, d), nullptr), "step05"); }, {}});
  configs.push_back({"step06 (kGroupM)", [&](int set) { check_status(gemm::step06::hopper::run(problem(set, d), nullptr), "step06"); }, {}});
  for (int g : {1, 2, 4, 8, 16, 32, 64})
    configs.push_back({"step06 group_m " + std::to_string(g), [&, g](int set) {
                         check_status(gemm::step06::hopper::run_with(problem(set, d), nullptr, g, 0), "step06");
                       }, {}});
  int launches = 0;  // every launch takes the next input set
  for (int round = 0; round < kWarmup + kRuns; ++round) {
    for (Config& c : configs) {
      const int set = launches++ % sets;
      if (round < kWarmup) {
        c.launch(set);
        continue;
      }
      check_cuda(cudaEventRecord(start), "record");
      c.launch(set);
      check_cuda(cudaEventRecord(stop), "record");
      check_cuda(cudaEventSynchronize(stop), c.name.c_str());
      float ms = 0;
      check_cuda(cudaEventElapsedTime(&ms, start, stop), "elapsed");
      c.ms.push_back(ms);
    }
  }
  const double cublas_ms = median(configs[0].ms);
  for (const Config& c : configs) {
    const double med = median(c.ms);
    const auto [lo, hi] = std::minmax_element(c.ms.begin(), c.ms.end());
    std::printf("time   %-20s %8.4f ms  %7.1f TFLOPS  ratio %.3f  (median of %d; min %.4f, max %.4f ms)\n",
                c.name.c_str(), med, flops / med / 1e9, cublas_ms / med, kRuns, *lo, *hi);
  }
  check_cuda(cudaGetLastError(), "timing");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (int i = 0; i < sets; ++i) {
    cudaFree(a[i]);
    cudaFree(b[i]);
  }
  cudaFree(d);
  cudaFree(d_ref);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  for (int i = 1; i + 2 < argc; i += 3) shapes.push_back({std::atoll(argv[i]), std::atoll(argv[i + 1]), std::atoll(argv[i + 2])});
  if (shapes.empty()) shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int resident = 0;
  check_status(gemm::resident_ctas(gemm::step06::hopper::kernel, gemm::step06::hopper::kThreads,
                                   gemm::smem_bytes<gemm::step06::hopper::SharedStorage>(), &resident),
               "resident_ctas");
  std::printf("GPU %s, %d SMs, L2 %d MB; step 6: %d resident CTAs (%d per SM), kGroupM %d\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, resident, resident / prop.multiProcessorCount,
              gemm::step06::hopper::kGroupM);
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: cublasCreate\n");
    return 1;
  }
  for (const Shape& s : shapes) run_shape(s, handle, prop.l2CacheSize);
  cublasDestroy(handle);
  return 0;
}
