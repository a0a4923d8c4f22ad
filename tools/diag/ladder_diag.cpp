// The comparisons behind steps 5 and 6's READMEs (hopper track, an H100 or H200): times steps 4-6
// and the variants of tools/diag/variants.py in one process (cuBLAS interleaved, inputs rotating
// over 3x the L2, the configurations taking turns, median of 21 launches; tools/diag/diag.h), and
// writes per-tile traces (%globaltimer at each tile's start and once its TMA store has read shared
// memory, %smid) of the *_trace variants as CSV. A target of the build:
//
//   cmake --build build --target ladder_diag
//   build/ladder_diag OUT_DIR              # timing at 4096^3 and 8192^3, traces in OUT_DIR
//
// and under Nsight Compute, one launch of each timed configuration at 8192^3:
//
//   ncu --clock-control none --metrics dram__bytes_read.sum,gpu__time_duration.sum -k regex:kernel build/ladder_diag --ncu
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "harness/driver.h"  // the exit codes
#include "harness/run.h"
#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;

constexpr int kRuns = 21;
constexpr int kWarmup = 2;
constexpr int kTraceWords = 8;  // per tile (tools/diag/trace.cuh)

std::vector<Config> timed_configs() {
  std::vector<Config> c = {hopper_step(step04_info()), hopper_step(step05_info())};
  for (const char* name : {"step05_wait1", "step05_g16"}) c.push_back(config(name, variant(name).run));
  c.push_back(hopper_step(step06_info()));
  c.push_back(config("step06_cap3", variant("step06_cap3").run));
  for (int g : {1, 2, 4, 8, 16, 32, 64})
    c.push_back({"step06_g" + std::to_string(g), [g](const Problem& p, cudaStream_t s) {
                   return diag_step06_knobs::hopper::run_with(p, s, g, /*ctas=*/0);
                 }});
  return c;
}

const std::vector<const char*> kTraced = {"step05_g16_trace", "step06_trace", "step06_cap3_trace"};

// A warm launch of each traced variant, then a traced one on another input set; one CSV each.
void write_traces(Lab& lab, const Shape& s, const std::string& out_dir) {
  const int64_t tiles_m = (s.m + 127) / 128, tiles = tiles_m * ((s.n + 127) / 128);
  Operands warm(lab.backend(), s, 1, InputMode::float_uniform), traced(lab.backend(), s, 2, InputMode::float_uniform);
  DeviceBuffer<unsigned long long> records(lab.backend(), static_cast<size_t>(tiles * kTraceWords));
  for (const char* name : kTraced) {
    const Variant& v = variant(name);
    const Config c = config(name, v.run);
    lab.run(c, warm.problem());
    records.from_host(std::vector<unsigned long long>(records.size(), 0));
    if (cudaError_t e = v.set_trace(records.get()); e != cudaSuccess) throw Error(std::string(name) + ": set_trace");
    lab.run(c, traced.problem());
    if (cudaError_t e = v.set_trace(nullptr); e != cudaSuccess) throw Error(std::string(name) + ": set_trace");
    const std::vector<unsigned long long> host = records.to_host();
    const std::string path = out_dir + "/trace_" + name + "_" + std::to_string(s.m) + ".csv";
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) throw Error("cannot write " + path);
    std::fprintf(f, "tile_m,tile_n,start_ns,end_ns,smid,cta\n");
    for (int64_t t = 0; t < tiles; ++t) {
      const unsigned long long* r = &host[static_cast<size_t>(t * kTraceWords)];
      std::fprintf(f, "%lld,%lld,%llu,%llu,%llu,%llu\n", static_cast<long long>(t % tiles_m),
                   static_cast<long long>(t / tiles_m), r[0], r[4], r[5], r[6]);
    }
    std::fclose(f);
  }
}

bool run_shape(Lab& lab, const Shape& s, const std::string& out_dir, bool ncu) {
  const std::vector<Config> timed = timed_configs();
  if (ncu) {  // one launch each, for Nsight Compute
    Operands ops(lab.backend(), s, 1, InputMode::float_uniform);
    for (const Config& c : timed) lab.run(c, ops.problem());
    return true;
  }
  std::printf("\n== %lldx%lldx%lld: %d rotating input sets\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
              static_cast<long long>(s.k), lab.set_count(s));
  // Steps 4 and 5 and their variants compute step 5's D bit for bit: the same wgmmas on the same
  // data per tile. Step 6 and its variants are checked against cuBLAS: a CTA walks K backward on its
  // odd turns, so a tile's float sums depend on which turn computes it.
  std::vector<Config> same_as_step05, step06_and_after;
  auto add = [&](const Config& c) {
    (c.name.rfind("step06", 0) == 0 ? step06_and_after : same_as_step05).push_back(c);
  };
  for (const Config& c : timed) add(c);
  for (const char* name : kTraced) add(config(name, variant(name).run));
  if (!lab.check_same_d(s, hopper_step(step05_info()), same_as_step05)) return false;
  if (!lab.check_against_cublas(s, step06_and_after)) return false;
  lab.time(s, timed, kWarmup, kRuns);
  write_traces(lab, s, out_dir);
  return true;
}

int diagnose(int argc, char** argv) {
  const bool ncu = argc > 1 && std::strcmp(argv[1], "--ncu") == 0;
  const std::string out = (!ncu && argc > 1) ? argv[1] : ".";
  Lab lab;
  int resident = 0, resident_cap3 = 0;
  if (Status st = variant("step06_knobs").resident(&resident); !st.ok()) throw Error(st.message());
  if (Status st = variant("step06_cap3").resident(&resident_cap3); !st.ok()) throw Error(st.message());
  std::printf("GPU %s; resident CTAs: step06 %d, step06_cap3 %d\n", describe(lab.device()).c_str(), resident,
              resident_cap3);
  if (!ncu && !run_shape(lab, {4096, 4096, 4096}, out, false)) return kExitFailure;
  return run_shape(lab, {8192, 8192, 8192}, out, ncu) ? kExitMatch : kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return diagnose(argc, argv); });
}
