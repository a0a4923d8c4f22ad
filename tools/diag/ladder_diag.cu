// Diagnostic, not part of the build: the comparisons behind steps 5 and 6's READMEs (hopper).
// Times steps 4-6 and the variants written by tools/diag/variants.py in one process (cuBLAS
// interleaved, inputs rotating over more than 3x the L2, the configurations taking turns in a
// rotated order each round, median of 21 launches), and writes per-tile traces (%globaltimer at
// each tile's start and end, %smid) of the *_trace variants as CSV. On an H100 or H200:
//
//   python3 tools/diag/variants.py
//   nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -I. tools/diag/ladder_diag.cu -lcublas -o ladder_diag
//   ./ladder_diag OUT_DIR                  # timing at 4096^3 and 8192^3, traces in OUT_DIR
//   ncu --clock-control none --metrics dram__bytes_read.sum,gpu__time_duration.sum -k regex:kernel \
//       ./ladder_diag --ncu                # one launch of each timed configuration at 8192^3
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tools/sweep_common.cuh"

// Where the *_trace variants write: 8 words per tile (start, -, -, -, end, smid, blockIdx, -).
__device__ unsigned long long* g_trace = nullptr;

__device__ __forceinline__ unsigned long long diag_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned diag_smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
#define DIAG_MARK(slot)                                                                   \
  if (g_trace != nullptr && threadIdx.x == 0) {                                           \
    unsigned long long* r_ = g_trace + ((m0 / 128) + (n0 / 128) * ((M + 127) / 128)) * 8; \
    r_[slot] = diag_globaltimer();                                                        \
    if ((slot) == 0) {                                                                    \
      r_[5] = diag_smid();                                                                \
      r_[6] = blockIdx.x;                                                                 \
    }                                                                                     \
  }

#include "steps/04_tma/hopper.cu"
#include "steps/05_pipeline/hopper.cu"
#include "steps/06_persistent/hopper.cu"
#include "tools/diag/gen/step05_wait1.cu"
#include "tools/diag/gen/step05_g16.cu"
#include "tools/diag/gen/step06_cap3.cu"
#include "tools/diag/gen/step05_g16_trace.cu"
#include "tools/diag/gen/step06_trace.cu"
#include "tools/diag/gen/step06_cap3_trace.cu"

namespace {

using namespace gemm::sweep;

constexpr int kRuns = 21;
constexpr int kWarmup = 2;

struct Variant {
  std::string name;
  std::function<gemm::Status(const gemm::Problem&)> run;
};

std::vector<Variant> timed_variants() {
  using namespace gemm;
  std::vector<Variant> v = {
      {"step04", [](const Problem& p) { return step04::hopper::run(p, nullptr); }},
      {"step05", [](const Problem& p) { return step05::hopper::run(p, nullptr); }},
      {"step05_wait1", [](const Problem& p) { return diag_step05_wait1::hopper::run(p, nullptr); }},
      {"step05_g16", [](const Problem& p) { return diag_step05_g16::hopper::run(p, nullptr); }},
      {"step06", [](const Problem& p) { return step06::hopper::run(p, nullptr); }},
      {"step06_cap3", [](const Problem& p) { return diag_step06_cap3::hopper::run(p, nullptr); }},
  };
  for (int g : {1, 2, 4, 8, 16, 32, 64})
    v.push_back({"step06_g" + std::to_string(g),
                 [g](const Problem& p) { return step06::hopper::run_with(p, nullptr, g, /*ctas=*/0); }});
  return v;
}

std::vector<Variant> traced_variants() {
  using namespace gemm;
  return {
      {"step05_g16_trace", [](const Problem& p) { return diag_step05_g16_trace::hopper::run(p, nullptr); }},
      {"step06_trace", [](const Problem& p) { return diag_step06_trace::hopper::run(p, nullptr); }},
      {"step06_cap3_trace", [](const Problem& p) { return diag_step06_cap3_trace::hopper::run(p, nullptr); }},
  };
}

void run_shape(int64_t m, int64_t n, int64_t k, cublasHandle_t handle, int l2_bytes, const char* out_dir, bool ncu) {
  const RotatingInputs in(m, n, k, l2_bytes, ncu ? 1 : 0);
  const int64_t d_elems = in.d_elems();
  const std::vector<Variant> timed = timed_variants(), traced = traced_variants();
  std::printf("\n== %lldx%lldx%lld: %d rotating A/B sets\n", static_cast<long long>(m), static_cast<long long>(n),
              static_cast<long long>(k), in.sets);

  if (ncu) {  // one launch each, for Nsight Compute
    for (const Variant& v : timed) check_status(v.run(in.problem(0, in.d)), v.name.c_str());
    check_cuda(cudaDeviceSynchronize(), "ncu launches");
    return;
  }

  // Every variant computes step 5's D bit for bit: the same wgmmas on the same data per tile.
  __half* d_ref = nullptr;
  check_cuda(cudaMalloc(&d_ref, d_elems * 2), "cudaMalloc D_ref");
  std::vector<__half> ref(d_elems), got(d_elems);
  check_status(gemm::step05::hopper::run(in.problem(0, d_ref), nullptr), "step05");
  check_cuda(cudaMemcpy(ref.data(), d_ref, d_elems * 2, cudaMemcpyDeviceToHost), "copy D_ref");
  cudaFree(d_ref);
  std::vector<Variant> all = timed;
  all.insert(all.end(), traced.begin(), traced.end());
  for (const Variant& v : all) {
    check_cuda(cudaMemset(in.d, 0xFF, d_elems * 2), "poison D");
    check_status(v.run(in.problem(0, in.d)), v.name.c_str());
    check_cuda(cudaMemcpy(got.data(), in.d, d_elems * 2, cudaMemcpyDeviceToHost), "copy D");
    if (std::memcmp(ref.data(), got.data(), d_elems * 2) != 0) {
      std::printf("check %s: MISMATCH with step05\n", v.name.c_str());
      std::exit(1);
    }
  }
  std::printf("check: every variant == step05 bit for bit\n");

  std::vector<Config> configs;
  configs.push_back({"cuBLAS", [&](int set) { cublas_gemm(handle, in, set, in.d); }, {}});
  for (const Variant& v : timed)
    configs.push_back({v.name, [&, v](int set) { check_status(v.run(in.problem(set, in.d)), v.name.c_str()); }, {}});
  time_interleaved(configs, in.sets, kWarmup, kRuns, in.flops());

  // Traces: a warm launch, then a traced one on the other input set.
  const int64_t tiles_m = (m + 127) / 128, tiles = tiles_m * ((n + 127) / 128);
  unsigned long long* trace = nullptr;
  check_cuda(cudaMalloc(&trace, tiles * 8 * sizeof(unsigned long long)), "cudaMalloc trace");
  std::vector<unsigned long long> host(tiles * 8);
  for (const Variant& v : traced) {
    check_status(v.run(in.problem(0, in.d)), v.name.c_str());
    check_cuda(cudaMemset(trace, 0, tiles * 8 * sizeof(unsigned long long)), "clear trace");
    check_cuda(cudaMemcpyToSymbol(g_trace, &trace, sizeof(trace)), "g_trace");
    check_status(v.run(in.problem(1 % in.sets, in.d)), v.name.c_str());
    check_cuda(cudaDeviceSynchronize(), v.name.c_str());
    unsigned long long* none = nullptr;
    check_cuda(cudaMemcpyToSymbol(g_trace, &none, sizeof(none)), "g_trace");
    check_cuda(cudaMemcpy(host.data(), trace, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost), "trace");
    const std::string path = std::string(out_dir) + "/trace_" + v.name + "_" + std::to_string(m) + ".csv";
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
      std::exit(1);
    }
    std::fprintf(f, "tile_m,tile_n,start_ns,end_ns,smid,cta\n");
    for (int64_t t = 0; t < tiles; ++t) {
      const unsigned long long* r = &host[t * 8];
      std::fprintf(f, "%lld,%lld,%llu,%llu,%llu,%llu\n", static_cast<long long>(t % tiles_m),
                   static_cast<long long>(t / tiles_m), r[0], r[4], r[5], r[6]);
    }
    std::fclose(f);
  }
  cudaFree(trace);
}

}  // namespace

int main(int argc, char** argv) {
  const bool ncu = argc > 1 && std::strcmp(argv[1], "--ncu") == 0;
  const char* out = (!ncu && argc > 1) ? argv[1] : ".";
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int resident = 0, resident_cap3 = 0;
  check_status(gemm::resident_ctas(gemm::step06::hopper::kernel, 128, gemm::smem_bytes<gemm::step06::hopper::SharedStorage>(),
                                   &resident), "resident_ctas");
  check_status(gemm::resident_ctas(gemm::diag_step06_cap3::hopper::kernel, 128,
                                   gemm::smem_bytes<gemm::diag_step06_cap3::hopper::SharedStorage>(), &resident_cap3),
               "resident_ctas");
  std::printf("GPU %s, %d SMs, L2 %d MB; resident CTAs: step06 %d, step06_cap3 %d\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, resident, resident_cap3);
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: cublasCreate\n");
    return 1;
  }
  if (!ncu) run_shape(4096, 4096, 4096, handle, prop.l2CacheSize, out, false);
  run_shape(8192, 8192, 8192, handle, prop.l2CacheSize, out, ncu);
  cublasDestroy(handle);
  return 0;
}
