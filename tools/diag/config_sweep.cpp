// The measurement behind step 12's choice of tiling (choose_tiling, kTilings): rows per CTA, width and
// CTAs per cluster. Hopper track (an H100 or H200); a target of the build:
//
//   cmake --build build --target config_sweep && build/config_sweep [M N K]...
//
// (default: gemm_bench's 14 sizes). For every shape, cuBLAS, run() (the tiling choose_tiling picks,
// named in its line), step 11 and step 12 at each of its tilings (the step12_knobs variant of
// tools/diag/variants.py), with run()'s split of the last wave and with none, take turns, each the
// median of 15 launches timed one by one, inputs rotating over 3x the L2 (tools/diag/diag.h,
// Lab::time). Each configuration's D is first checked against cuBLAS (float tolerance, guard band).
#include <cstdio>
#include <string>
#include <vector>

#include "harness/driver.h"  // the exit codes
#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;
namespace step12 = diag_step12_knobs::hopper;

constexpr int kMinSplitSlices = 12;  // step 12's
constexpr int kMaxSplits = 16;       // step 12's

Config step12_tiling(int index, bool split) {
  return {"step12 " + tiling_name(step12::tiling(index)) + (split ? " split" : " no split"),
          [index, split](const Problem& p, cudaStream_t s) {
            return step12::run_with(p, s, index, kMinSplitSlices, split ? kMaxSplits : 1);
          }};
}

int sweep(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "config_sweep",
                  {{1024, 1024, 1024},
                   {4001, 1000, 2056},
                   {2048, 2048, 2048},
                   {4096, 1024, 2048},
                   {3000, 3000, 3000},
                   {3072, 3072, 3072},
                   {4096, 4096, 4096},
                   {5120, 5120, 5120},
                   {8192, 2048, 4096},
                   {2048, 8192, 8192},
                   {512, 4096, 4096},
                   {256, 8192, 8192},
                   {16384, 128, 4096},
                   {8192, 8192, 8192}},
                  &shapes))
    return kExitUsage;

  Lab lab;
  std::printf("GPU %s\n", describe(lab.device()).c_str());
  for (const Shape& s : shapes) {
    Problem p;
    static_cast<Shape&>(p) = s;
    int chosen = 0;
    if (Status st = step12::choose_tiling(p, &chosen); !st.ok()) throw Error(st.message());
    Config run = hopper_step(step12_info());
    run.name += " (run(): " + tiling_name(step12::tiling(chosen)) + ")";
    std::vector<Config> configs = {run, hopper_step(step11_info())};
    for (int i = 0; i < step12::tiling_count(); ++i)
      for (bool split : {true, false}) configs.push_back(step12_tiling(i, split));
    if (!lab.check_and_time(s, "", configs, kSweepWarmup, kSweepRounds)) return kExitFailure;
  }
  return kExitMatch;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return sweep(argc, argv); });
}
