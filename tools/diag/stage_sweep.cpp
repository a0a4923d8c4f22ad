// The sweep of step 8's ring depth behind its README: step 8 (5 stages) and the step08_stagesN
// variants of tools/diag/variants.py (2, 3, 4 and 6 stages; 6 is the most that fits beside the
// staging buffer), each D checked against cuBLAS, then timed with cuBLAS in one process, the
// configurations taking turns, inputs rotating over 3x the L2 (tools/diag/diag.h, Lab). Hopper
// track (an H100 or H200); a target of the build:
//
//   cmake --build build --target stage_sweep && build/stage_sweep [M N K]...
//
// (default: 4096^3 and 8192^3).
#include <string>
#include <vector>

#include "tools/diag/diag.h"

using namespace gemm;
using namespace gemm::diag;

int main(int argc, char** argv) {
  return sweep_main(argc, argv, "stage_sweep", {{4096, 4096, 4096}, {8192, 8192, 8192}}, " (step 8's ring depth)", [] {
    std::vector<Config> configs;
    for (int n : {2, 3, 4})
      configs.push_back(config("step08_stages" + std::to_string(n), variant("step08_stages" + std::to_string(n)).run));
    Config step08 = hopper_step(step08_info());
    step08.name += " (5 stages)";
    configs.push_back(step08);
    configs.push_back(config("step08_stages6", variant("step08_stages6").run));
    return configs;
  });
}
