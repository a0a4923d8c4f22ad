// Step 12's tilings on the GPU (hopper track): run() picks one tiling per problem (choose_tiling), so
// the step tests reach only the tilings their shapes pick. Here every tiling of the step's kTilings
// runs, forced through the copy of the step that takes it (run_tiling_at,
// tests/CMakeLists.txt), on shapes where it splits tiles along K and where it does not, against
// cuBLAS (float) or the exact reference, gives the same D from run to run, and runs under
// compute-sanitizer (CpuChecked, tests/sanitize). Label gpu and step12; skips, with the reason,
// without a hopper GPU.
#include <gtest/gtest.h>

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/tile_config.cuh"
#include "harness/backend.h"
#include "harness/compare.h"
#include "harness/hash.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/seed.h"
#include "tests/gpu/same_d.h"

namespace gemm {
const StepInfo& step12_info();
// The GPU build of the copy of steps/12_tile_per_problem/hopper.cu whose run() takes the tiling (an
// index into its kTilings) and which tells its tilings (tests/CMakeLists.txt, cmake/GemmVariant.cmake).
namespace step_copy_step12_hopper_tilings_gpu::step12::hopper {
Status run_tiling_at(const Problem& p, cudaStream_t stream, int index);
int tiling_count();
TileChoice tiling(int index);
}  // namespace step_copy_step12_hopper_tilings_gpu::step12::hopper

namespace {

uint64_t test_seed() {
  static const uint64_t seed = seed_from_env("GEMM_TEST_SEED");
  return seed;
}

namespace step = step_copy_step12_hopper_tilings_gpu::step12::hopper;

// The step at a forced tiling, everything else as run() has it.
template <int kIndex>
Status at_tiling(const Problem& p, cudaStream_t stream) {
  return step::run_tiling_at(p, stream, kIndex);
}
constexpr StepFn kLaunchers[] = {&at_tiling<0>, &at_tiling<1>, &at_tiling<2>, &at_tiling<3>,
                                 &at_tiling<4>, &at_tiling<5>, &at_tiling<6>};

struct Tiling {
  TileChoice tiling;
  StepFn run;
};
const std::vector<Tiling>& tilings() {
  static const std::vector<Tiling> all = [] {
    std::vector<Tiling> v;
    for (int i = 0; i < step::tiling_count() && i < static_cast<int>(std::size(kLaunchers)); ++i)
      v.push_back({step::tiling(i), kLaunchers[i]});
    return v;
  }();
  return all;
}

// Every tiling the step lists has a launcher above, so that none goes untested.
TEST(Step12TilingList, EveryTilingRuns) {
  EXPECT_EQ(step::tiling_count(), static_cast<int>(std::size(kLaunchers))) << "kTilings changed";
}

class Step12Tilings : public ::testing::TestWithParam<Tiling> {
 protected:
  void SetUp() override {
    const StepTarget target = find_step_target(step12_info());
    if (!target.status.ok()) GTEST_SKIP() << target.status.message();
    if (target.track != Track::hopper) GTEST_SKIP() << "the forced tilings are the hopper track's launcher";
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
// tiling splits along K on an H100 or H200 (132 SMs: 66 clusters, or 132 CTAs without).
TEST_P(Step12Tilings, MatchesReference) {
  const Tiling& w = GetParam();
  for (const Shape& shape :
       {Shape{512, 768, 512}, Shape{333, 264, 520}, Shape{1000, 1000, 1000}, Shape{300, 264, 2056}})
    for (InputMode mode : {InputMode::float_uniform, InputMode::exact_int}) {
      if (mode == InputMode::exact_int && shape.k > kExactMaxK) continue;
      SCOPED_TRACE("tiling " + tiling_name(w.tiling) + ", " + input_mode_name(mode) + " " + shape_string(shape) +
                   ", seed " + std::to_string(test_seed()) + " (replay: GEMM_TEST_SEED)");
      Operands ops(*backend_, shape, test_seed(), mode);
      const CheckOutcome out = run_and_check(*backend_, w.run, ops, reference_for(mode, cublas()));
      ASSERT_TRUE(out.status.ok()) << out.status.message();
      EXPECT_TRUE(out.result.ok) << summary(out.result);
    }
}

// Three runs of a split shape (300x264x4096: 64 K slices, each tile in five parts) give the same D
// bit for bit at every tiling: the parts are added in part order, whichever finishes last.
TEST_P(Step12Tilings, SameDEveryRun) {
  const Tiling& w = GetParam();
  SCOPED_TRACE("tiling " + tiling_name(w.tiling) + ", seed " + std::to_string(test_seed()));
  Operands ops(*backend_, Shape{300, 264, 4096}, test_seed(), InputMode::float_uniform);
  ASSERT_NO_FATAL_FAILURE(
      expect_same_d_every_run(*backend_, w.run, ops, reference_for(InputMode::float_uniform, cublas())));
}

// The split shape of the sanitizer tests (tests/sanitize: compute-sanitizer runs this test alone),
// checked against the CPU reference with no cuBLAS handle: 300x264x1536, 24 K slices, each tile in
// two parts at every tiling; at 128 rows with a 2-CTA cluster, one cluster with a phantom CTA.
TEST_P(Step12Tilings, CpuChecked) {
  const Tiling& w = GetParam();
  SCOPED_TRACE("tiling " + tiling_name(w.tiling) + ", seed " + std::to_string(test_seed()));
  Operands ops(*backend_, Shape{300, 264, 1536}, test_seed(), InputMode::float_uniform);
  CpuReference reference;
  const CheckOutcome out = run_and_check(*backend_, w.run, ops, reference);
  ASSERT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_TRUE(out.result.ok) << summary(out.result);
}

INSTANTIATE_TEST_SUITE_P(Hopper, Step12Tilings, ::testing::ValuesIn(tilings()),
                         [](const ::testing::TestParamInfo<Tiling>& info) { return tiling_name(info.param.tiling); });

// A tiling that is not one of the step's is refused, naming the list, and D is left untouched.
TEST(Step12TilingsRefuse, UnknownTiling) {
  const StepTarget target = find_step_target(step12_info());
  if (!target.status.ok()) GTEST_SKIP() << target.status.message();
  if (target.track != Track::hopper) GTEST_SKIP() << "the forced tilings are the hopper track's launcher";
  const std::unique_ptr<Backend> backend = make_cuda_backend(target.device.device);
  Operands ops(*backend, Shape{256, 256, 256}, test_seed(), InputMode::float_uniform);
  const Status s = step::run_tiling_at(ops.problem(), backend->stream(), step::tiling_count());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not one of kTilings"), std::string::npos) << s.message();
  EXPECT_TRUE(is_untouched(ops.d.to_host(), ops.d.guard)) << "a refused call wrote D or its guards";
}

}  // namespace
}  // namespace gemm
