// Step 12's tile widths on the GPU (hopper track): run() picks one width per problem
// (choose_tile_n), so the step tests reach only the widths their shapes pick. Here every width of
// the step runs, forced through the copy of the step that takes it (run_at_width,
// tests/CMakeLists.txt), on shapes where it splits tiles along K and where it does not, against
// cuBLAS (float) or the exact reference, gives the same D from run to run, and runs under
// compute-sanitizer (CpuChecked, tests/sanitize). Label gpu and step12; skips, with the reason,
// without a hopper GPU.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/compare.h"
#include "harness/hash.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/seed.h"
#include "tests/gpu/same_d.h"

namespace gemm {
const StepInfo& step12_info();
// The GPU build of the copy of steps/12_tile_per_problem/hopper.cu whose run() takes the width
// (tests/CMakeLists.txt, cmake/GemmVariant.cmake).
namespace step_copy_step12_hopper_widths_gpu::step12::hopper {
Status run_at_width(const Problem& p, cudaStream_t stream, int tile_n);
}  // namespace step_copy_step12_hopper_widths_gpu::step12::hopper

namespace {

uint64_t test_seed() {
  static const uint64_t seed = seed_from_env("GEMM_TEST_SEED");
  return seed;
}

// The step at a forced width, everything else as run() has it.
Status at(const Problem& p, cudaStream_t stream, int tile_n) {
  return step_copy_step12_hopper_widths_gpu::step12::hopper::run_at_width(p, stream, tile_n);
}
template <int kTileN>
Status at_width(const Problem& p, cudaStream_t stream) {
  return at(p, stream, kTileN);
}

struct Width {
  int columns;
  StepFn run;
};
const std::vector<Width>& widths() {
  static const std::vector<Width> all = {
      {256, &at_width<256>}, {192, &at_width<192>}, {128, &at_width<128>}, {64, &at_width<64>}};
  return all;
}

class Step12Widths : public ::testing::TestWithParam<Width> {
 protected:
  void SetUp() override {
    const StepTarget target = find_step_target(step12_info());
    if (!target.status.ok()) GTEST_SKIP() << target.status.message();
    if (target.track != Track::hopper) GTEST_SKIP() << "the forced widths are the hopper track's launcher";
    backend_ = make_cuda_backend(target.device.device);
  }
  // cuBLAS only where a test asks for it: CpuChecked runs under compute-sanitizer, whose racecheck
  // stops with an internal error when cuBLAS is in the process.
  CublasReference& cublas() {
    if (!cublas_) cublas_ = std::make_unique<CublasReference>(backend_->stream());
    return *cublas_;
  }
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<CublasReference> cublas_;
};

// Whole tiles and ragged edges (exact mode where K allows), and few tiles with a long K, which every
// width splits along K on an H100 or H200 (66 clusters).
TEST_P(Step12Widths, MatchesReference) {
  const Width& w = GetParam();
  for (const Shape& shape :
       {Shape{512, 768, 512}, Shape{333, 264, 520}, Shape{1000, 1000, 1000}, Shape{300, 264, 2056}})
    for (InputMode mode : {InputMode::float_uniform, InputMode::exact_int}) {
      if (mode == InputMode::exact_int && shape.k > kExactMaxK) continue;
      SCOPED_TRACE("width " + std::to_string(w.columns) + ", " + input_mode_name(mode) + " " + shape_string(shape) +
                   ", seed " + std::to_string(test_seed()) + " (replay: GEMM_TEST_SEED)");
      Operands ops(*backend_, shape, test_seed(), mode);
      const CheckOutcome out = run_and_check(*backend_, w.run, ops, reference_for(mode, cublas()));
      ASSERT_TRUE(out.status.ok()) << out.status.message();
      EXPECT_TRUE(out.result.ok) << summary(out.result);
    }
}

// Three runs of a split shape (300x264x4096: 64 K slices, each tile in five parts) give the same D
// bit for bit at every width: the parts are added in part order, whichever finishes last.
TEST_P(Step12Widths, SameDEveryRun) {
  const Width& w = GetParam();
  SCOPED_TRACE("width " + std::to_string(w.columns) + ", seed " + std::to_string(test_seed()));
  Operands ops(*backend_, Shape{300, 264, 4096}, test_seed(), InputMode::float_uniform);
  ASSERT_NO_FATAL_FAILURE(
      expect_same_d_every_run(*backend_, w.run, ops, reference_for(InputMode::float_uniform, cublas())));
}

// The split shape of the sanitizer tests (tests/sanitize: compute-sanitizer runs this test alone),
// checked against the CPU reference with no cuBLAS handle: 300x264x1536, 24 K slices, each tile in
// two parts at every width, one cluster with a phantom CTA.
TEST_P(Step12Widths, CpuChecked) {
  const Width& w = GetParam();
  SCOPED_TRACE("width " + std::to_string(w.columns) + ", seed " + std::to_string(test_seed()));
  Operands ops(*backend_, Shape{300, 264, 1536}, test_seed(), InputMode::float_uniform);
  CpuReference reference;
  const CheckOutcome out = run_and_check(*backend_, w.run, ops, reference);
  ASSERT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_TRUE(out.result.ok) << summary(out.result);
}

INSTANTIATE_TEST_SUITE_P(Hopper, Step12Widths, ::testing::ValuesIn(widths()),
                         [](const ::testing::TestParamInfo<Width>& info) {
                           return "width" + std::to_string(info.param.columns);
                         });

// A width that is not one of the step's is refused, naming the widths, and D is left untouched.
TEST(Step12WidthsRefuse, UnknownWidth) {
  const StepTarget target = find_step_target(step12_info());
  if (!target.status.ok()) GTEST_SKIP() << target.status.message();
  if (target.track != Track::hopper) GTEST_SKIP() << "the forced widths are the hopper track's launcher";
  const std::unique_ptr<Backend> backend = make_cuda_backend(target.device.device);
  Operands ops(*backend, Shape{256, 256, 256}, test_seed(), InputMode::float_uniform);
  const Status s = at(ops.problem(), backend->stream(), 96);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("256, 192, 128, 64"), std::string::npos) << s.message();
  EXPECT_TRUE(is_untouched(ops.d.to_host(), ops.d.guard)) << "a refused call wrote D or its guards";
}

}  // namespace
}  // namespace gemm
