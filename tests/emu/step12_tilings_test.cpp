// Step 12's tilings on the emulator, both tracks: run() picks one tiling per problem (choose_tiling),
// so the step's emulator tests reach only the tilings their shapes pick. Here every tiling of each
// track's kTilings runs, forced through the copies of the step that take it (run_tiling_at,
// tests/CMakeLists.txt), on an emulated GPU of 20 SMs, at a shape of whole and edge tiles and at one
// whose tiles every tiling splits along K, against the CPU reference. Label emu and step12.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/tile_config.cuh"
#include "harness/backend.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "tests/emu/emu_seeds.h"

// The emulated builds of the copies of steps/12_tile_per_problem/{hopper,blackwell}.cu whose run()
// takes the tiling (tests/CMakeLists.txt): the step file's namespace inside an inline namespace of
// the copy's own (cmake/GemmVariant.cmake).
namespace gemm {
namespace step_copy_step12_hopper_tilings::step12::hopper {
Status run_tiling_at(const Problem& p, cudaStream_t stream, int index);
int tiling_count();
TileChoice tiling(int index);
}  // namespace step_copy_step12_hopper_tilings::step12::hopper
namespace step_copy_step12_blackwell_tilings::step12::blackwell {
Status run_tiling_at(const Problem& p, cudaStream_t stream, int index);
int tiling_count();
TileChoice tiling(int index);
}  // namespace step_copy_step12_blackwell_tilings::step12::blackwell

namespace {

namespace hopper = step_copy_step12_hopper_tilings::step12::hopper;
namespace blackwell = step_copy_step12_blackwell_tilings::step12::blackwell;

// The step at a forced tiling, everything else as run() has it.
template <int kIndex>
Status hopper_at(const Problem& p, cudaStream_t stream) {
  return hopper::run_tiling_at(p, stream, kIndex);
}
template <int kIndex>
Status blackwell_at(const Problem& p, cudaStream_t stream) {
  return blackwell::run_tiling_at(p, stream, kIndex);
}

struct Case {
  const char* track;
  TileChoice tiling;
  StepFn run;
};
void add(std::vector<Case>* all, const char* track, Status (*const* runs)(const Problem&, cudaStream_t),
         TileChoice (*tiling)(int), int count) {
  for (int i = 0; i < count; ++i) all->push_back({track, tiling(i), runs[i]});
}
constexpr StepFn kHopper[] = {&hopper_at<0>, &hopper_at<1>, &hopper_at<2>, &hopper_at<3>,
                              &hopper_at<4>, &hopper_at<5>, &hopper_at<6>};
constexpr StepFn kBlackwell[] = {&blackwell_at<0>, &blackwell_at<1>, &blackwell_at<2>, &blackwell_at<3>};
std::vector<Case> cases() {
  std::vector<Case> all;
  add(&all, "hopper", kHopper, &hopper::tiling, std::min<int>(hopper::tiling_count(), std::size(kHopper)));
  add(&all, "blackwell", kBlackwell, &blackwell::tiling,
      std::min<int>(blackwell::tiling_count(), std::size(kBlackwell)));
  return all;
}

// Every tiling a step lists has a launcher above, so that none goes untested.
TEST(EmuStep12TilingList, EveryTilingRuns) {
  EXPECT_EQ(hopper::tiling_count(), static_cast<int>(std::size(kHopper))) << "hopper: kTilings changed";
  EXPECT_EQ(blackwell::tiling_count(), static_cast<int>(std::size(kBlackwell))) << "blackwell: kTilings changed";
}

class EmuStep12Tilings : public ::testing::TestWithParam<Case> {};

// 136 x 200 x 200: whole and edge tiles, N past a tile edge at every tiling, 4 K slices, exact mode.
// 128 x 264 x 1536: 1 to 10 tiles (by tiling) on 20 SMs, 24 K slices: every tiling splits each tile
// in two parts (float mode: K is past exact mode's limit); at 128 rows with a 2-CTA cluster, the
// second CTA's tile lies past M.
TEST_P(EmuStep12Tilings, MatchesReference) {
  const Case& c = GetParam();
  const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{20, emu_seed()});
  for (const auto& [shape, mode] : {std::pair{Shape{136, 200, 200}, InputMode::exact_int},
                                    std::pair{Shape{128, 264, 1536}, InputMode::float_uniform}}) {
    SCOPED_TRACE(std::string(c.track) + " tiling " + tiling_name(c.tiling) + " " + shape_string(shape) +
                 ": input seed " + std::to_string(test_seed()) + ", emulator seed " + std::to_string(emu_seed()) +
                 " (replay: GEMM_TEST_SEED, GEMM_EMU_SEED)");
    Operands ops(*backend, shape, test_seed(), mode);
    CpuReference reference;
    const CheckOutcome out = run_and_check(*backend, c.run, ops, reference);
    ASSERT_TRUE(out.status.ok()) << out.status.message();
    EXPECT_TRUE(out.result.ok) << summary(out.result);
  }
}

INSTANTIATE_TEST_SUITE_P(Emu, EmuStep12Tilings, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.track) + "_" + tiling_name(info.param.tiling);
                         });

}  // namespace
}  // namespace gemm
