// What a call costs after another kernel: the step driver's pairs time step 12 at 1024^3 slower than
// its turns do (steps/12_tile_per_problem/NOTES.md), and the only difference is the kernel that ran
// before each call. Here cuBLAS, step 12 and its variants step12_pdl and
// step12_carveout_max (the most shared memory preferred for the kernel's carveout) are each timed
// alone, as gemm_bench times a call (after its GPU spin), right after an untimed call of cuBLAS,
// step 12, step 11 or step 3 (a small tile with little shared memory). Hopper track (an H100 or
// H200); a target of the build:
//
//   cmake --build build --target call_order && build/call_order [M N K]...
//
// (default: 1024^3 and 2048^3). Each combination the median of 15 rounds, inputs rotating over 3x
// the L2 (tools/diag/diag.h, Lab); each configuration's D is first checked against cuBLAS.
#include <cstdio>
#include <vector>

#include "harness/driver.h"  // the exit codes
#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;

int order(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "call_order", {{1024, 1024, 1024}, {2048, 2048, 2048}}, &shapes)) return kExitUsage;
  Lab lab;
  std::printf("GPU %s\n", describe(lab.device()).c_str());
  const Config step12 = hopper_step(step12_info());
  const std::vector<Config> timed = {step12, config("step12 PDL", variant("step12_pdl").run),
                                     config("step12 carveout", variant("step12_carveout_max").run)};
  const std::vector<Config> before = {lab.cublas(), step12, hopper_step(step11_info()), hopper_step(step03_info())};
  for (const Shape& s : shapes) {
    std::printf("== M=%lld N=%lld K=%lld\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k));
    if (!lab.check_against_cublas(s, timed)) return kExitFailure;
    lab.time_after(s, timed, before, kSweepWarmup, kSweepRounds);
  }
  return kExitMatch;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return order(argc, argv); });
}
