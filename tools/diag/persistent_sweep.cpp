// The measurements behind step 6's L2 group size (kGroupM) and the grid of steps 8-10 trimmed to
// whole waves, and a check that step 6's persistent grid computes a correct D whatever the grid.
// Hopper track (an H100 or H200); a target of the build:
//
//   cmake --build build --target persistent_sweep && build/persistent_sweep [M N K]...
//
// (default: 4096^3 and 8192^3). For every shape:
//  1. check: step 6 (run(): kGroupM and the resident grid), and step 6 with group sizes 1 and 8, a
//     grid of 7 CTAs, of 1 CTA (up to 4096 tiles: one CTA walks every tile) and of 1000 CTAs (where
//     there are fewer tiles: some CTAs find no work), each D against cuBLAS's (float tolerance, guard
//     band). Not bit for bit against each other: a CTA walks K backward on its odd turns, so which
//     tiles sum their slices in which order depends on the grid;
//  2. time: cuBLAS, steps 3-6, and step 6 at group_m = 1, 2, 4, 8, 16, 32, 64, each the median of
//     15 launches timed one by one, all in one process, the configurations taking turns, inputs
//     rotating over 3x the L2 (tools/diag/diag.h, Lab::time);
//  3. the grid: steps 8-10 as they are (the resident grid trimmed to whole waves, balanced_grid in
//     common/scheduler.cuh) and with every resident CTA (cluster), the stepNN_full_grid variants of
//     tools/diag/variants.py; each configuration's D checked against cuBLAS first.
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

// Step 6 with its knobs: run_with(group_m, ctas).
Config step06_with(int group_m, int ctas) {
  std::string name = "step06 group_m " + std::to_string(group_m);
  if (ctas > 0) name += " ctas " + std::to_string(ctas);
  return {name, [group_m, ctas](const Problem& p, cudaStream_t s) {
            return diag_step06_knobs::hopper::run_with(p, s, group_m, ctas);
          }};
}

bool run_shape(Lab& lab, const Shape& s) {
  std::printf("\n== M=%lld N=%lld K=%lld: %d rotating input sets (L2 %lld MB)\n", static_cast<long long>(s.m),
              static_cast<long long>(s.n), static_cast<long long>(s.k), lab.set_count(s),
              static_cast<long long>(lab.device().l2_bytes >> 20));

  // 1. Every grid computes a correct D (its float rounding depends on the grid: the K order of a
  //    tile follows the turn its CTA computes it on).
  Config step06 = hopper_step(step06_info());
  step06.name += " (kGroupM, resident)";
  std::vector<Config> grids = {step06, step06_with(1, 0), step06_with(8, 0), step06_with(8, 7)};
  const int64_t tiles = ((s.m + 127) / 128) * ((s.n + 127) / 128);
  if (tiles <= 4096) grids.push_back(step06_with(4, 1));
  if (tiles < 1000) grids.push_back(step06_with(8, 1000));
  if (!lab.check_against_cublas(s, grids)) return false;

  // 2. Timing: inputs rotating, the configurations taking turns.
  std::vector<Config> configs = {hopper_step(step03_info()), hopper_step(step04_info()), hopper_step(step05_info()),
                                 step06};
  for (int g : {1, 2, 4, 8, 16, 32, 64}) configs.push_back(step06_with(g, 0));
  lab.time(s, configs, kWarmup, kRuns);

  // 3. The grid of steps 8-10, trimmed to whole waves, against every resident CTA (cluster).
  std::vector<Config> trimmed_or_full;
  for (const StepInfo* info : {&step08_info(), &step09_info(), &step10_info()}) {
    trimmed_or_full.push_back(hopper_step(*info));
    const std::string full =
        "step" + std::string(info->number < 10 ? "0" : "") + std::to_string(info->number) + "_full_grid";
    trimmed_or_full.push_back(config(full, variant(full).run));
  }
  return lab.check_and_time(s, " (the grid: steps 8-10 trimmed to whole waves, and *_full_grid every resident CTA)",
                            trimmed_or_full, kWarmup, kRuns);
}

int sweep(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "persistent_sweep", {{4096, 4096, 4096}, {8192, 8192, 8192}}, &shapes)) return kExitUsage;

  Lab lab;
  int resident = 0;
  if (Status st = variant("step06_knobs").resident(&resident); !st.ok()) throw Error(st.message());
  const DeviceInfo& d = lab.device();
  std::printf("GPU %s; step 6: %d resident CTAs (%d per SM)\n", describe(d).c_str(), resident, resident / d.sm_count);
  for (const Shape& s : shapes)
    if (!run_shape(lab, s)) return kExitFailure;
  return kExitMatch;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return sweep(argc, argv); });
}
