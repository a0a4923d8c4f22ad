// Bad input, one test per rule (docs/design.md, "The shape contract"), compiled once per step with
// -DGEMM_STEP_INFO=stepNN_info: each rule broken on its own, on the CUDA backend (skips, with the
// reason, where there is no GPU or no track for it) and on the emulator backend (both tracks' emulated
// builds; no GPU needed). Each call must fail with the message of check_problem, which names the
// rule, launch nothing and leave D and its guard band exactly as poisoned. Label bad_input.
//
// tests/cpu/test_problem.cpp checks check_problem itself, rule by rule; here every step's launchers
// are held to it. The track rules (an unsupported GPU, a track not built or not the GPU's) are
// select_track's, checked here on each step's real StepInfo.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/run.h"
#include "harness/track.h"
#include "tests/step_under_test.h"

namespace gemm {
namespace {

Contract contract() { return step_info().contract(); }

enum class Where { cuda, emu };

// A shape the step accepts: its own for steps 1 and 2, a ragged one otherwise.
Shape good_shape() {
  switch (contract()) {
    case Contract::single_tile: return {128, 128, 64};
    case Contract::k_loop: return {128, 128, 128};
    case Contract::general: break;
  }
  return {200, 136, 72};
}

// What a refusal of a bad shape must name: the fixed-shape steps refuse any other shape with their
// own rule; the general contract names the rule that was broken.
std::string shape_rule(const std::string& general_rule) {
  switch (contract()) {
    case Contract::single_tile: return "step 1 computes exactly one tile, M = N = 128 and K = 64";
    case Contract::k_loop:
      return general_rule == "M, N and K must each be at most 2^31 - 1"
                 ? "step 2 needs M = N = 128 and K a positive multiple of 64, at most 2^31 - 1"
                 : "step 2 needs M = N = 128 and K a positive multiple of 64";
    case Contract::general: break;
  }
  return general_rule;
}

class BadInput : public ::testing::TestWithParam<Where> {
 protected:
  void SetUp() override {
    if (GetParam() == Where::cuda) {
      const StepTarget target = find_step_target(step_info());
      if (!target.status.ok()) GTEST_SKIP() << target.status.message();
      backend_ = make_cuda_backend(target.device.device);
      launchers_.push_back({target.track, target.launcher});
    } else {
      backend_ = make_emu_backend(EmuSettings{2, 1});
      for (Track t : {Track::hopper, Track::blackwell}) launchers_.push_back({t, step_info().emulated(t)});
    }
    ops_ = std::make_unique<Operands>(*backend_, good_shape(), 1, InputMode::float_uniform);
  }

  // `call` (the operands' pointers, changed by the test) must be refused by every launcher with
  // check_problem's message, which must contain `rule`; D and its guards must stay poisoned.
  void expect_refused(const Problem& call, const std::string& rule) {
    const std::string want = check_problem(contract(), call).message();
    ASSERT_NE(want, "") << "check_problem accepts " << shape_string(call);
    EXPECT_NE(want.find(rule), std::string::npos) << "'" << want << "' does not name '" << rule << "'";
    for (const auto& [track, launcher] : launchers_) {
      SCOPED_TRACE(std::string(track_name(track)) + " track on " + backend_->name() + ", " + shape_string(call));
      ASSERT_NE(launcher, nullptr);
      ops_->d.poison();
      const Status s = backend_->run(launcher, call);
      ASSERT_FALSE(s.ok()) << "step " << step_info().number << " accepted it";
      EXPECT_EQ(s.message(), want);
      EXPECT_TRUE(is_untouched(ops_->d.to_host(), ops_->d.guard)) << "a refused call wrote D or its guards";
    }
  }

  Problem good() const { return ops_->problem(); }
  Problem with_shape(int64_t m, int64_t n, int64_t k) const {
    Problem p = good();
    p.m = m;
    p.n = n;
    p.k = k;
    return p;
  }

  std::unique_ptr<Backend> backend_;
  std::vector<std::pair<Track, StepFn>> launchers_;
  std::unique_ptr<Operands> ops_;
};

TEST_P(BadInput, NullPointer) {
  Problem p = good();
  p.a = nullptr;
  expect_refused(p, "null pointer: A is null");
  p = good();
  p.b = nullptr;
  expect_refused(p, "null pointer: B is null");
  p = good();
  p.d = nullptr;
  expect_refused(p, "null pointer: D is null");
}

// 8 bytes past the allocation's start: inside it, so a step that ignored the rule would run.
TEST_P(BadInput, MisalignedPointer) {
  Problem p = good();
  p.a += 4;
  expect_refused(p, "alignment: A must be 16-byte aligned");
  p = good();
  p.b += 4;
  expect_refused(p, "alignment: B must be 16-byte aligned");
  p = good();
  p.d += 4;
  expect_refused(p, "alignment: D must be 16-byte aligned");
}

TEST_P(BadInput, NNotMultipleOf8) {
  const Problem g = good();
  expect_refused(with_shape(g.m, g.n - 4, g.k), shape_rule("N and K must be multiples of 8"));
  expect_refused(with_shape(g.m, g.n + 1, g.k), shape_rule("N and K must be multiples of 8"));
}

TEST_P(BadInput, KNotMultipleOf8) {
  const Problem g = good();
  expect_refused(with_shape(g.m, g.n, g.k - 4), shape_rule("N and K must be multiples of 8"));
  expect_refused(with_shape(g.m, g.n, g.k + 1), shape_rule("N and K must be multiples of 8"));
}

TEST_P(BadInput, ZeroSize) {
  const Problem g = good();
  expect_refused(with_shape(0, g.n, g.k), shape_rule("M, N and K must be positive"));
  expect_refused(with_shape(g.m, 0, g.k), shape_rule("M, N and K must be positive"));
  expect_refused(with_shape(g.m, g.n, 0), shape_rule("M, N and K must be positive"));
}

TEST_P(BadInput, NegativeSize) {
  const Problem g = good();
  expect_refused(with_shape(-g.m, g.n, g.k), shape_rule("M, N and K must be positive"));
  expect_refused(with_shape(g.m, -g.n, g.k), shape_rule("M, N and K must be positive"));
  expect_refused(with_shape(g.m, g.n, -g.k), shape_rule("M, N and K must be positive"));
}

// 2^31 (a multiple of 8, so only this rule is broken) and far beyond; the buffers are the small
// ones, so a step that accepted it would fault.
TEST_P(BadInput, SizeAbove2To31) {
  const Problem g = good();
  const int64_t too_big = kMaxDim + 1;
  for (const int64_t big : {too_big, int64_t{1} << 40}) {
    expect_refused(with_shape(big, g.n, g.k), shape_rule("M, N and K must each be at most 2^31 - 1"));
    expect_refused(with_shape(g.m, big, g.k), shape_rule("M, N and K must each be at most 2^31 - 1"));
    expect_refused(with_shape(g.m, g.n, big), shape_rule("M, N and K must each be at most 2^31 - 1"));
  }
}

// Steps 1 and 2 compute fixed shapes: any other (here legal from step 3 on) is refused. The steps of
// the general contract have no such rule, and no such test (its suite is instantiated empty there).
class FixedShape : public BadInput {};

TEST_P(FixedShape, ShapeOutsideFixedShapeStep) {
  expect_refused(with_shape(256, 128, 64), shape_rule(""));
  expect_refused(with_shape(128, 256, 64), shape_rule(""));
  expect_refused(with_shape(200, 136, 72), shape_rule(""));
  if (contract() == Contract::single_tile) expect_refused(with_shape(128, 128, 128), shape_rule(""));
  else expect_refused(with_shape(128, 128, 96), shape_rule(""));
}

std::string where_name(const ::testing::TestParamInfo<Where>& info) {
  return info.param == Where::cuda ? "Cuda" : "Emu";
}

std::vector<Where> fixed_shape_backends() {
  if (contract() == Contract::general) return {};
  return {Where::cuda, Where::emu};
}

INSTANTIATE_TEST_SUITE_P(, BadInput, ::testing::Values(Where::cuda, Where::emu), where_name);
INSTANTIATE_TEST_SUITE_P(, FixedShape, ::testing::ValuesIn(fixed_shape_backends()), where_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FixedShape);

// The track rules, on this step's real StepInfo (no GPU needed: select_track is pure).
TEST(BadTrack, UnsupportedGpu) {
  for (const auto& [major, minor] : std::vector<std::pair<int, int>>{{8, 0}, {8, 9}, {12, 0}}) {
    const TrackSelection s = select_track(major, minor, TrackRequest::automatic, step_info());
    EXPECT_FALSE(s.status.ok());
    EXPECT_EQ(s.launcher, nullptr);
    EXPECT_NE(
        s.status.message().find("no track for this GPU (sm_" + std::to_string(major) + std::to_string(minor) + ")"),
        std::string::npos)
        << s.status.message();
  }
}

TEST(BadTrack, WrongTrackForTheGpu) {
  TrackSelection s = select_track(9, 0, TrackRequest::blackwell, step_info());
  EXPECT_EQ(s.status.message(), "track blackwell was requested, but this GPU (sm_90) runs the hopper track");
  EXPECT_EQ(s.launcher, nullptr);
  s = select_track(10, 0, TrackRequest::hopper, step_info());
  EXPECT_EQ(s.status.message(), "track hopper was requested, but this GPU (sm_100) runs the blackwell track");
  EXPECT_EQ(s.launcher, nullptr);
}

TEST(BadTrack, TrackNotBuilt) {
  for (Track t : {Track::hopper, Track::blackwell}) {
    StepInfo info = step_info();
    (t == Track::hopper ? info.hopper : info.blackwell) = nullptr;
    const TrackSelection s = select_track(t == Track::hopper ? 9 : 10, 0, TrackRequest::automatic, info);
    EXPECT_EQ(s.launcher, nullptr);
    EXPECT_NE(s.status.message().find("was built without the " + std::string(track_name(t)) + " track"),
              std::string::npos)
        << s.status.message();
  }
}

}  // namespace
}  // namespace gemm
