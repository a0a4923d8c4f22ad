// Step 12's tile widths on the emulator, both tracks: run() picks one width per problem
// (choose_tile_n), so the step's emulator tests reach only the widths their shapes pick. Here every
// width runs, forced through the copies of the step that take it (run_at_width, tests/CMakeLists.txt),
// on an emulated GPU of 20 SMs (10 clusters), at a shape of whole and edge tiles and at one whose tiles
// each width splits along K, against the CPU reference. Label emu and step12.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "tests/emu/emu_seeds.h"

// The emulated builds of the copies of steps/12_tile_per_problem/{hopper,blackwell}.cu whose run()
// takes the width (tests/CMakeLists.txt): the step file's namespace inside an inline namespace of the
// copy's own (cmake/GemmVariant.cmake).
namespace gemm {
namespace step_copy_step12_hopper_widths::step12::hopper {
Status run_at_width(const Problem& p, cudaStream_t stream, int tile_n);
}  // namespace step_copy_step12_hopper_widths::step12::hopper
namespace step_copy_step12_blackwell_widths::step12::blackwell {
Status run_at_width(const Problem& p, cudaStream_t stream, int tile_n);
}  // namespace step_copy_step12_blackwell_widths::step12::blackwell

namespace {

// The step at a forced width, everything else as run() has it.
template <int kTileN>
Status hopper_at(const Problem& p, cudaStream_t stream) {
  return step_copy_step12_hopper_widths::step12::hopper::run_at_width(p, stream, kTileN);
}
template <int kTileN>
Status blackwell_at(const Problem& p, cudaStream_t stream) {
  return step_copy_step12_blackwell_widths::step12::blackwell::run_at_width(p, stream, kTileN);
}

struct Case {
  const char* track;
  int columns;
  StepFn run;
};
std::vector<Case> cases() {
  return {{"hopper", 256, &hopper_at<256>},       {"hopper", 192, &hopper_at<192>},
          {"hopper", 128, &hopper_at<128>},       {"hopper", 64, &hopper_at<64>},
          {"blackwell", 128, &blackwell_at<128>}, {"blackwell", 64, &blackwell_at<64>}};
}

class EmuStep12Widths : public ::testing::TestWithParam<Case> {};

// 136 x 200 x 200: one tile row, N past a tile edge at every width, 4 K slices, exact mode. 200 x 264
// x 1536: a row of 2 to 5 tiles (by width) for 10 clusters, 24 K slices: every width splits each
// tile in two parts (float mode: K is past exact mode's limit).
TEST_P(EmuStep12Widths, MatchesReference) {
  const Case& c = GetParam();
  const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{20, emu_seed()});
  for (const auto& [shape, mode] : {std::pair{Shape{136, 200, 200}, InputMode::exact_int},
                                    std::pair{Shape{200, 264, 1536}, InputMode::float_uniform}}) {
    SCOPED_TRACE(std::string(c.track) + " width " + std::to_string(c.columns) + " " + shape_string(shape) +
                 ": input seed " + std::to_string(test_seed()) + ", emulator seed " + std::to_string(emu_seed()) +
                 " (replay: GEMM_TEST_SEED, GEMM_EMU_SEED)");
    Operands ops(*backend, shape, test_seed(), mode);
    CpuReference reference;
    const CheckOutcome out = run_and_check(*backend, c.run, ops, reference);
    ASSERT_TRUE(out.status.ok()) << out.status.message();
    EXPECT_TRUE(out.result.ok) << summary(out.result);
  }
}

INSTANTIATE_TEST_SUITE_P(Emu, EmuStep12Widths, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.track) + "_width" + std::to_string(info.param.columns);
                         });

}  // namespace
}  // namespace gemm
