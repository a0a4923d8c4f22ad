// Step 10's two CTA tiles behind its README: step 10 (128 x 256) and the step10_tile256x128 variant
// of tools/diag/variants.py, each D checked against cuBLAS, then timed with cuBLAS in one process,
// the configurations taking turns, inputs rotating over 3x the L2 (tools/diag/diag.h, Lab). Hopper
// track (an H100 or H200); a target of the build:
//
//   cmake --build build --target tile_sweep && build/tile_sweep [M N K]...
//
// (default: 4096^3, 8192^3 and 3072^3).
#include <string>
#include <vector>

#include "harness/driver.h"  // the exit codes
#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;

constexpr int kRuns = 15;
constexpr int kWarmup = 2;

int sweep(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "tile_sweep", {{4096, 4096, 4096}, {8192, 8192, 8192}, {3072, 3072, 3072}}, &shapes))
    return kExitUsage;
  Config step10 = hopper_step(step10_info());
  step10.name += " (128 x 256)";
  const std::vector<Config> configs = {step10, config("step10_tile256x128", variant("step10_tile256x128").run)};
  Lab lab;
  for (const Shape& s : shapes)
    if (!lab.check_and_time(s, " (step 10's CTA tile)", configs, kWarmup, kRuns)) return 1;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return sweep(argc, argv); });
}
