// The measurement behind step 11's split of the last wave along K (kMinSplitSlices, kMaxSplits).
// Hopper track (an H100 or H200); a target of the build:
//
//   cmake --build build --target split_sweep && build/split_sweep [M N K]...
//
// (default: 1024^3, 2048^3, 3000^3, 3072^3 and 4096^3). For every shape, cuBLAS and step 11 (step 10's
// tile) with no split and with (min_split_slices, max_splits) pairs, run()'s (12, 16) among them (the
// step11_knobs variant of tools/diag/variants.py), take turns, each the median of 15 launches timed
// one by one, inputs rotating over 3x the L2
// (tools/diag/diag.h, Lab::time). Each configuration's D is first checked against cuBLAS (float
// tolerance, guard band): a split tile's parts add up in an order that varies, so D is not compared
// bit for bit across configurations.
#include <string>
#include <utility>
#include <vector>

#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;

// Step 11 with the split's two settings.
Config step11_split(int min_split_slices, int max_splits) {
  const std::string name = max_splits <= 1 ? std::string("step11 no split")
                                           : "step11 min_slices " + std::to_string(min_split_slices) + " max_splits " +
                                                 std::to_string(max_splits);
  return {name, [min_split_slices, max_splits](const Problem& p, cudaStream_t s) {
            return diag_step11_knobs::hopper::run_with(p, s, min_split_slices, max_splits);
          }};
}

}  // namespace

int main(int argc, char** argv) {
  return sweep_main(
      argc, argv, "split_sweep",
      {{1024, 1024, 1024}, {2048, 2048, 2048}, {3000, 3000, 3000}, {3072, 3072, 3072}, {4096, 4096, 4096}}, "", [] {
        std::vector<Config> configs = {step11_split(1, 1)};  // {12, 16} below is run()'s split
        for (const std::pair<int, int>& knobs :
             std::vector<std::pair<int, int>>{{4, 16}, {8, 16}, {12, 16}, {16, 16}, {12, 2}, {12, 3}})
          configs.push_back(step11_split(knobs.first, knobs.second));
        return configs;
      });
}
