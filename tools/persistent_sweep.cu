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
//     take turns (one launch each per round, the order rotated each round), and every launch reads
//     the next of as many A/B pairs as cover 3x the L2 cache (so that L2 holds no input of the
//     launch before). Inputs: uniform in [-1, 1) from a hash (zeros would run faster).
//     (tools/sweep_common.cuh)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "steps/03_tiling/hopper.cu"
#include "steps/04_tma/hopper.cu"
#include "steps/05_pipeline/hopper.cu"
#include "steps/06_persistent/hopper.cu"
#include "tools/sweep_common.cuh"

namespace {

using namespace gemm::sweep;

constexpr int kRuns = 15;
constexpr int kWarmup = 2;

struct Shape {
  int64_t m, n, k;
};

void run_shape(const Shape& s, cublasHandle_t handle, int l2_bytes) {
  const RotatingInputs in(s.m, s.n, s.k, l2_bytes);
  const int64_t d_elems = in.d_elems();
  __half* d_ref = nullptr;
  check_cuda(cudaMalloc(&d_ref, d_elems * 2), "cudaMalloc D_ref");
  std::printf("\n== M=%lld N=%lld K=%lld: %d rotating A/B sets (%.0f MB, L2 %d MB)\n", static_cast<long long>(s.m),
              static_cast<long long>(s.n), static_cast<long long>(s.k), in.sets,
              in.sets * (s.m + s.n) * s.k * 2 / 1e6, l2_bytes >> 20);

  // 1. Every grid computes step 5's D, bit for bit.
  std::vector<__half> ref(d_elems), got(d_elems);
  check_status(gemm::step05::hopper::run(in.problem(0, d_ref), nullptr), "step05");
  check_cuda(cudaMemcpy(ref.data(), d_ref, d_elems * 2, cudaMemcpyDeviceToHost), "copy D_ref");
  struct Variant {
    int group_m, ctas;
  };
  std::vector<Variant> variants = {{gemm::step06::hopper::kGroupM, 0}, {1, 0}, {8, 0}, {8, 7}};
  const int64_t tiles = ((s.m + 127) / 128) * ((s.n + 127) / 128);
  if (tiles <= 4096) variants.push_back({4, 1});  // one CTA walks every tile
  if (tiles < 1000) variants.push_back({8, 1000});  // more CTAs than tiles: some have no work
  for (const Variant& v : variants) {
    check_cuda(cudaMemset(in.d, 0xFF, d_elems * 2), "poison D");  // NaN everywhere
    check_status(gemm::step06::hopper::run_with(in.problem(0, in.d), nullptr, v.group_m, v.ctas), "step06");
    check_cuda(cudaMemcpy(got.data(), in.d, d_elems * 2, cudaMemcpyDeviceToHost), "copy D");
    const bool same = std::memcmp(ref.data(), got.data(), d_elems * 2) == 0;
    std::printf("check  step06 group_m %2d ctas %4d (0: resident): %s\n", v.group_m, v.ctas,
                same ? "D == step05 bit for bit" : "MISMATCH");
    if (!same) std::exit(1);
  }
  check_cuda(cudaMemset(in.d, 0xFF, d_elems * 2), "poison D");
  check_status(gemm::step06::hopper::run(in.problem(0, in.d), nullptr), "step06 run");
  check_cuda(cudaMemcpy(got.data(), in.d, d_elems * 2, cudaMemcpyDeviceToHost), "copy D");
  if (std::memcmp(ref.data(), got.data(), d_elems * 2) != 0) {
    std::printf("check  step06 run(): MISMATCH\n");
    std::exit(1);
  }
  cudaFree(d_ref);

  // 2. Timing, inputs rotating, the configurations taking turns.
  std::vector<Config> configs;
  configs.push_back({"cuBLAS", [&](int set) { cublas_gemm(handle, in, set, in.d); }, {}});
  configs.push_back({"step03", [&](int set) { check_status(gemm::step03::hopper::run(in.problem(set, in.d), nullptr), "step03"); }, {}});
  configs.push_back({"step04", [&](int set) { check_status(gemm::step04::hopper::run(in.problem(set, in.d), nullptr), "step04"); }, {}});
  configs.push_back({"step05", [&](int set) { check_status(gemm::step05::hopper::run(in.problem(set, in.d), nullptr), "step05"); }, {}});
  configs.push_back({"step06 (kGroupM)", [&](int set) { check_status(gemm::step06::hopper::run(in.problem(set, in.d), nullptr), "step06"); }, {}});
  for (int g : {1, 2, 4, 8, 16, 32, 64})
    configs.push_back({"step06 group_m " + std::to_string(g), [&, g](int set) {
                         check_status(gemm::step06::hopper::run_with(in.problem(set, in.d), nullptr, g, 0), "step06");
                       }, {}});
  time_interleaved(configs, in.sets, kWarmup, kRuns, in.flops());
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
