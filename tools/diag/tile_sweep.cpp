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

#include "tools/diag/diag.h"

using namespace gemm;
using namespace gemm::diag;

int main(int argc, char** argv) {
  return sweep_main(
      argc, argv, "tile_sweep", {{4096, 4096, 4096}, {8192, 8192, 8192}, {3072, 3072, 3072}}, " (step 10's CTA tile)",
      [] {
        Config step10 = hopper_step(step10_info());
        step10.name += " (128 x 256)";
        return std::vector<Config>{step10, config("step10_tile256x128", variant("step10_tile256x128").run)};
      });
}
