// What programmatic dependent launch would give step 12 (common/grid_dependency.cuh; the variant
// step12_pdl of tools/diag/variants.py): the time of a call run alone and of a call in a chain of
// calls back to back, for cuBLAS, step 12 and step 12 launched with PDL. Hopper track (an H100 or
// H200); a target of the build:
//
//   cmake --build build --target pdl_chain && build/pdl_chain [M N K]...
//
// (default: the small and skinny sizes of gemm_bench's 14). Alone: each call after its own GPU
// spin, as gemm_bench times (nothing runs before it that it could overlap), the configurations
// taking turns and also in pairs with cuBLAS as the step driver times. Chained: 20 calls of
// one configuration back to back after one spin, cuBLAS's likewise, the time per call; there a
// call with PDL may start its prologue while the call before it ends. Turns and chains are the
// median of 15, pairs of 20, inputs rotating over 3x the L2 (tools/diag/diag.h, Lab). Each
// configuration's D is first checked against cuBLAS (float tolerance, guard band).
#include <cstdio>
#include <vector>

#include "harness/driver.h"  // the exit codes
#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;

constexpr int kPairs = 20;               // as the step driver times
constexpr int kChain = 20;               // calls back to back in a chained measurement
constexpr unsigned kChainSpinUs = 2000;  // the host enqueues 20 launches, each with its tensor maps, in this

int chains(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "pdl_chain",
                  {{1024, 1024, 1024}, {4096, 1024, 2048}, {2048, 2048, 2048}, {512, 4096, 4096}, {16384, 128, 4096}},
                  &shapes))
    return kExitUsage;
  Lab lab;
  std::printf("GPU %s\n", describe(lab.device()).c_str());
  const std::vector<Config> configs = {hopper_step(step12_info()), config("step12 PDL", variant("step12_pdl").run)};
  for (const Shape& s : shapes) {
    std::printf("== M=%lld N=%lld K=%lld\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k));
    if (!lab.check_against_cublas(s, configs)) return kExitFailure;
    std::printf("-- alone\n");
    lab.time(s, configs, kSweepWarmup, kSweepRounds);
    std::printf("-- alone, in pairs with cuBLAS (the step driver's timing)\n");
    for (const Config& c : configs) lab.time_pairs(s, c, kPairs);
    std::printf("-- chained\n");
    lab.time_chained(s, configs, kChain, kSweepWarmup, kSweepRounds, kChainSpinUs);
  }
  return kExitMatch;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return chains(argc, argv); });
}
