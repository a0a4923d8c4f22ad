// The measurement behind step 12's choice of tile width (choose_tile_n, kWidths). Hopper track (an
// H100 or H200); a target of the build:
//
//   cmake --build build --target width_sweep && build/width_sweep [M N K]...
//
// (default: gemm_bench's sizes from 1024^3 up). For every shape, cuBLAS, run() (the width
// choose_tile_n picks, named in its line), steps 9, 10 and 11 (128x128 tiles with one consumer;
// 128x256 with two; the same with the last wave split) and step 12 at each of its widths (the
// step12_knobs variant of tools/diag/variants.py), with run()'s split of the last wave and with
// none, take turns, each the median of 15 launches timed one by one, inputs rotating over 3x
// the L2 (tools/diag/diag.h, Lab::time). Each configuration's D is first checked against cuBLAS
// (float tolerance, guard band).
#include <cstdio>
#include <string>
#include <vector>

#include "harness/driver.h"  // the exit codes
#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;

constexpr int kRuns = 15;
constexpr int kWarmup = 2;
constexpr int kMinSplitSlices = 12;  // step 12's
constexpr int kMaxSplits = 16;       // step 12's

Config step12_width(int tile_n, bool split) {
  const std::string name = "step12 width " + std::to_string(tile_n) + (split ? " split" : " no split");
  return {name, [tile_n, split](const Problem& p, cudaStream_t s) {
            return diag_step12_knobs::hopper::run_with(p, s, tile_n, kMinSplitSlices, split ? kMaxSplits : 1);
          }};
}

int sweep(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "width_sweep",
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
    if (Status st = diag_step12_knobs::hopper::choose_tile_n(p, &chosen); !st.ok()) throw Error(st.message());
    Config run = hopper_step(step12_info());
    run.name += " (run(): width " + std::to_string(chosen) + ")";
    std::vector<Config> configs = {run, hopper_step(step09_info()), hopper_step(step10_info()),
                                   hopper_step(step11_info())};
    for (int width : {256, 192, 128, 64})
      for (bool split : {true, false}) configs.push_back(step12_width(width, split));
    if (!lab.check_and_time(s, "", configs, kWarmup, kRuns)) return kExitFailure;
  }
  return kExitMatch;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return sweep(argc, argv); });
}
