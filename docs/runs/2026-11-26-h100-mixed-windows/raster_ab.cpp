// A diagnostic of the twelfth session (not part of the build): step 8 at a ragged K with its line
// windows for both operands, for A only or for B only (GEMM_LINE_WINDOWS=1, a, b), each at the
// step's L2 group of 16 tile rows and at a group of 1, which walks the tiles along N first. With 132
// CTAs at 3000^3, a group of 16 has each B tile read by about 16 CTAs at once and each A tile by
// about 8; a group of 1 the other way round (A by 24, B by about 6). Built by copying it to
// tools/ and adding it to the tools' foreach in tools/CMakeLists.txt (call 3's run.sh).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/driver.h"  // the exit codes
#include "tools/diag/diag.h"

namespace gemm::step08::hopper {
Status run_with(const Problem& p, cudaStream_t stream, int group_m, int ctas);
}  // namespace gemm::step08::hopper

namespace {

using namespace gemm;
using namespace gemm::diag;

Config step08_windows(const char* windows, int group_m) {
  return {std::string("step08 windows ") + windows + " group_m " + std::to_string(group_m),
          [windows, group_m](const Problem& p, cudaStream_t s) {
            setenv("GEMM_LINE_WINDOWS", windows, 1);
            return step08::hopper::run_with(p, s, group_m, 0);
          }};
}

int sweep(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "raster_ab", {{3000, 3000, 3000}, {4001, 1000, 2056}}, &shapes)) return kExitUsage;
  Lab lab;
  std::printf("GPU %s\n", describe(lab.device()).c_str());
  std::vector<Config> configs;
  for (int g : {16, 1})
    for (const char* w : {"1", "a", "b", "0"}) configs.push_back(step08_windows(w, g));
  for (const Shape& s : shapes)
    if (!lab.check_and_time(s, " (step 8: line windows for both, A, B or none, at group_m 16 and 1)", configs, 2, 15))
      return kExitFailure;
  return kExitMatch;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return sweep(argc, argv); });
}
