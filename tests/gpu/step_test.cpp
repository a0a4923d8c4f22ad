// The GPU tests of one step, compiled once per step with -DGEMM_STEP_INFO=stepNN_info
// (tests/CMakeLists.txt): the step against the reference on square, non-square and ragged shapes
// in both input modes, and its refusal of calls outside its contract. Each test skips, with the
// reason, where there is no GPU or no track of this step for it.
//
// The inputs' seed is fresh each run and printed with every failure; GEMM_TEST_SEED=<seed>
// replays a run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/seed.h"
#include "tests/gpu/same_d.h"
#include "tests/step_under_test.h"

namespace gemm {
namespace {

uint64_t test_seed() {
  static const uint64_t seed = seed_from_env("GEMM_TEST_SEED");
  return seed;
}

std::string seed_note() {
  return "seed " + std::to_string(test_seed()) + " (replay: GEMM_TEST_SEED=" + std::to_string(test_seed()) + ")";
}

// The shapes each contract is tested on (docs/design.md, "The shape contract").
std::vector<Shape> shapes_for(Contract contract) {
  switch (contract) {
    case Contract::single_tile: return {{128, 128, 64}};
    case Contract::k_loop: return {{128, 128, 64}, {128, 128, 512}, {128, 128, 1024}};
    case Contract::general: break;
  }
  return {
      {256, 256, 256},  {512, 512, 512},                      // square
      {384, 128, 512},  {128, 640, 192},    {1024, 256, 64},  // non-square, whole tiles
      {200, 136, 72},   {1, 8, 8},          {333, 264, 520},  // ragged: M not a multiple of 128, N and K
      {130, 392, 1000}, {1000, 1000, 1000},                   // multiples of 8 but not of the tile
      {300, 264, 2056},  // few tiles, long K: steps 11-12 split each tile along K (and run a phantom CTA)
  };
}

struct Case {
  Shape shape;
  InputMode mode;
};

// How gtest (and so ctest's test names) print a case: "float 200x136x72".
void PrintTo(const Case& c, std::ostream* os) { *os << input_mode_name(c.mode) << " " << shape_string(c.shape); }

// Float mode on every shape; exact mode where K allows exact sums.
std::vector<Case> cases(InputMode mode) {
  std::vector<Case> out;
  for (const Shape& s : shapes_for(step_info().contract()))
    if (mode == InputMode::float_uniform || s.k <= kExactMaxK) out.push_back({s, mode});
  return out;
}

// A GPU, this step's launcher for it, and cuBLAS; or the reason the test is skipped.
class StepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const StepTarget target = find_step_target(step_info());
    if (!target.status.ok()) GTEST_SKIP() << target.status.message();
    step_ = target.launcher;
    backend_ = make_cuda_backend(target.device.device);
    cublas_ = std::make_unique<CublasReference>(backend_->stream());
    RecordProperty("seed", std::to_string(test_seed()));
    RecordProperty("track", track_name(target.track));
  }

  // A call the step must refuse: it fails with its contract's message and leaves D as poisoned.
  void expect_refused(const Problem& call, const Operands& ops) {
    const Status s = backend_->run(step_, call);
    ASSERT_FALSE(s.ok()) << "step " << step_info().number << " accepted " << shape_string(call);
    EXPECT_EQ(s.message(), check_problem(step_info().contract(), call).message());
    EXPECT_TRUE(is_untouched(ops.d.to_host(), ops.d.guard)) << "a refused call wrote D or its guards";
  }

  StepFn step_ = nullptr;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<CublasReference> cublas_;
};

class StepCheck : public StepTest, public ::testing::WithParamInterface<Case> {};

TEST_P(StepCheck, MatchesReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(seed_note());
  Operands ops(*backend_, c.shape, test_seed(), c.mode);
  const CheckOutcome out = run_and_check(*backend_, step_, ops, reference_for(c.mode, *cublas_));
  ASSERT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_TRUE(out.result.ok) << summary(out.result);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return shape_string(info.param.shape); }

INSTANTIATE_TEST_SUITE_P(Float, StepCheck, ::testing::ValuesIn(cases(InputMode::float_uniform)), case_name);
INSTANTIATE_TEST_SUITE_P(Exact, StepCheck, ::testing::ValuesIn(cases(InputMode::exact_int)), case_name);

// The same call three times gives the same D, bit for bit: no step's result depends on the order in
// which its CTAs (or, in steps 1-2, its warps) finish. Steps 11-12 add a split tile's parts up in
// part order, whichever finishes last; at 300x264x4096 (64 K slices) it splits each tile in five
// parts on an H100 or H200 (with two, the order could not show: a + b and b + a round alike). Steps
// 1-2 run at their longest fixed shape.
TEST_F(StepTest, SameDEveryRun) {
  SCOPED_TRACE(seed_note());
  const Shape shape =
      step_info().contract() == Contract::general ? Shape{300, 264, 4096} : shapes_for(step_info().contract()).back();
  Operands ops(*backend_, shape, test_seed(), InputMode::float_uniform);
  ASSERT_NO_FATAL_FAILURE(
      expect_same_d_every_run(*backend_, step_, ops, reference_for(InputMode::float_uniform, *cublas_)));
}

// A shape just outside the contract: one rule broken, everything else valid.
Shape bad_shape(Contract contract) {
  switch (contract) {
    case Contract::single_tile: return {128, 128, 128};  // K must be 64
    case Contract::k_loop: return {128, 128, 96};        // K must be a multiple of 64
    case Contract::general: break;
  }
  return {200, 130, 72};  // N must be a multiple of 8
}

TEST_F(StepTest, RefusesShapeOutsideContract) {
  SCOPED_TRACE(seed_note());
  Operands ops(*backend_, bad_shape(step_info().contract()), test_seed(), InputMode::float_uniform);
  expect_refused(ops.problem(), ops);
}

TEST_F(StepTest, RefusesMisalignedD) {
  SCOPED_TRACE(seed_note());
  Operands ops(*backend_, shapes_for(step_info().contract()).front(), test_seed(), InputMode::float_uniform);
  Problem call = ops.problem();
  call.d += 1;  // 2 bytes off: inside the allocation, so a step that ignored the rule would write
  expect_refused(call, ops);
}

TEST_F(StepTest, RefusesNullA) {
  SCOPED_TRACE(seed_note());
  Operands ops(*backend_, shapes_for(step_info().contract()).front(), test_seed(), InputMode::float_uniform);
  Problem call = ops.problem();
  call.a = nullptr;
  expect_refused(call, ops);
}

}  // namespace
}  // namespace gemm
