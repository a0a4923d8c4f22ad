// The measurement behind a rule that picks step 12's whole tile configuration per problem: rows per
// CTA (64 or 128), consumer warpgroups (one or two), CTAs per cluster (two: B multicast; one: none)
// and width. Hopper track (an H100 or H200); a target of the build:
//
//   cmake --build build --target config_sweep && build/config_sweep [M N K]...
//
// (default: gemm_bench's 14 sizes). For every shape, cuBLAS, steps 11 and 12 (run(): its width) and
// each configuration of the step12_mR_cC_xX_knobs variants of tools/diag/variants.py (and of
// step12_knobs: 128 rows, two consumers, two CTAs) at each width it builds, with run()'s split of the
// last wave and with none, take turns, each the median of 15 launches timed one by one, inputs
// rotating over 3x the L2 (tools/diag/diag.h, Lab::time). Each configuration's D is first checked
// against cuBLAS (float tolerance, guard band).
#include <string>
#include <vector>

#include "tools/diag/diag.h"

// The variants' launchers: run_with(p, stream, tile_n, min_split_slices, max_splits), as step12_knobs.
#define GEMM_STEP12_CONFIG_VARIANT(ns)                                                                      \
  namespace gemm::ns::hopper {                                                                              \
  Status run_with(const Problem& p, cudaStream_t stream, int tile_n, int min_split_slices, int max_splits); \
  }
GEMM_STEP12_CONFIG_VARIANT(diag_step12_m64_c1_x2_knobs)
GEMM_STEP12_CONFIG_VARIANT(diag_step12_m64_c1_x1_knobs)
GEMM_STEP12_CONFIG_VARIANT(diag_step12_m128_c2_x1_knobs)
GEMM_STEP12_CONFIG_VARIANT(diag_step12_m128_c1_x2_knobs)
#undef GEMM_STEP12_CONFIG_VARIANT

namespace {

using namespace gemm;
using namespace gemm::diag;

constexpr int kMinSplitSlices = 12;  // step 12's
constexpr int kMaxSplits = 16;       // step 12's

using RunWith = Status (*)(const Problem&, cudaStream_t, int, int, int);

struct Family {
  const char* name;  // rows x consumers x CTAs per cluster
  RunWith run_with;
  std::vector<int> widths;
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Family> families = {
      {"m128 c2 x2", &diag_step12_knobs::hopper::run_with, {256, 192, 128, 64}},
      {"m128 c2 x1", &diag_step12_m128_c2_x1_knobs::hopper::run_with, {256, 192, 128, 64}},
      {"m128 c1 x2", &diag_step12_m128_c1_x2_knobs::hopper::run_with, {128, 64}},
      {"m64 c1 x2", &diag_step12_m64_c1_x2_knobs::hopper::run_with, {256, 192, 128, 64}},
      {"m64 c1 x1", &diag_step12_m64_c1_x1_knobs::hopper::run_with, {256, 192, 128, 64}},
  };
  return sweep_main(argc, argv, "config_sweep",
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
                    "", [&] {
                      std::vector<Config> configs = {hopper_step(step11_info()), hopper_step(step12_info())};
                      for (const Family& f : families)
                        for (int width : f.widths)
                          for (bool split : {true, false}) {
                            const std::string name = std::string("step12 ") + f.name + " n" + std::to_string(width) +
                                                     (split ? " split" : " no split");
                            const RunWith run_with = f.run_with;
                            configs.push_back({name, [run_with, width, split](const Problem& p, cudaStream_t s) {
                                                 return run_with(p, s, width, kMinSplitSlices, split ? kMaxSplits : 1);
                                               }});
                          }
                      return configs;
                    });
}
