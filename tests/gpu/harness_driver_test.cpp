// The step driver end to end on a GPU, with stand-in steps so that it does not depend on any real
// step: cuBLAS itself (must match), a step that writes nothing (must be caught), a step that
// refuses (its message must come through). Checks the exit codes and the printed block.
// Skipped, with the reason, where there is no GPU or the GPU has no track.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/driver.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "tests/driver_run.h"

namespace gemm {
namespace {

// cuBLAS as the "step", with one handle per driver run (the driver makes a stream per run; TearDown
// drops the handle): a handle made per call would take the host longer than the spin before a timed
// call, and the driver's timing would redo every such late call until it gave up.
std::unique_ptr<CublasReference> stand_in_cublas;
cudaStream_t stand_in_stream = nullptr;
Status cublas_step(const Problem& p, cudaStream_t stream) {
  if (!stand_in_cublas || stand_in_stream != stream) {
    stand_in_cublas = std::make_unique<CublasReference>(stream);
    stand_in_stream = stream;
  }
  stand_in_cublas->run(p);
  return {};
}
Status writes_nothing(const Problem&, cudaStream_t) { return {}; }
Status refuses(const Problem&, cudaStream_t) { return Status::failure("shape: this stand-in refuses everything"); }

// Stands in for step 3 on both tracks (and sm_103a), so any GPU with a track runs it.
StepInfo stand_in(StepFn fn) { return StepInfo{3, "stand_in", fn, fn, true}; }

using test::DriverRun;
using test::run_driver;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class DriverGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const StepTarget target = find_step_target(stand_in(&writes_nothing));
    if (!target.status.ok()) GTEST_SKIP() << target.status.message();
  }
  void TearDown() override {
    stand_in_cublas.reset();
    stand_in_stream = nullptr;
  }
};

TEST_F(DriverGpu, CublasAsTheStepMatchesAndIsTimed) {
  const DriverRun r = run_driver(stand_in(&cublas_step), {"--m", "256", "--n", "136", "--k", "72", "--iters=3"});
  EXPECT_EQ(r.exit_code, kExitMatch) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("step 03 (stand_in), ", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "\nshape:          M=256 N=136 K=72\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\ninputs:         float mode, seed 1\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "(vs cuBLAS)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nverdict:        match\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nstep time:      ")) << r.out;
  EXPECT_TRUE(contains(r.out, " TFLOPS (median of 3 calls)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\ncuBLAS time:    ")) << r.out;
  EXPECT_TRUE(contains(r.out, "(step TFLOPS / cuBLAS TFLOPS, the median of the 3 pairs' ratios)\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\ntiming:         each call alone after a 200 us GPU spin; ")) << r.out;
  EXPECT_TRUE(contains(r.out, " rotating input sets; ")) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "\nto publish:     gemm_bench, with repetitions: tools/compare.sh "
                       "--sizes=256x136x72 --benchmark_filter=step03\n"))
      << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(DriverGpu, ExactModeChecksAgainstTheCpuReference) {
  const DriverRun r =
      run_driver(stand_in(&cublas_step), {"--m=64", "--n=64", "--k=512", "--exact", "--seed=9", "--iters=1"});
  EXPECT_EQ(r.exit_code, kExitMatch) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "\ninputs:         exact mode, seed 9\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "max abs err:    0.000e+00 (vs CPU reference)\n")) << r.out;
}

// --check-only: checked, not timed (what the sanitizer tests run, tests/sanitize/).
TEST_F(DriverGpu, CheckOnlyChecksAndDoesNotTime) {
  for (const char* mode : {"--exact", "--seed=2"}) {
    const DriverRun r = run_driver(stand_in(&cublas_step), {"--m=64", "--n=64", "--k=64", mode, "--check-only"});
    EXPECT_EQ(r.exit_code, kExitMatch) << r.out << r.err;
    EXPECT_TRUE(contains(r.out, "\nverdict:        match\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "\ntiming:         skipped (--check-only)\n")) << r.out;
    EXPECT_FALSE(contains(r.out, "TFLOPS")) << r.out;
  }
}

TEST_F(DriverGpu, UnwrittenDIsAMismatch) {
  const DriverRun r = run_driver(stand_in(&writes_nothing), {"--m", "128", "--n", "128", "--k", "64"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_TRUE(contains(r.out, "\nverdict:        MISMATCH at (0,0): got NaN (0x7d5a) want ")) << r.out;
  EXPECT_TRUE(contains(r.out, " (unwritten (still poisoned))\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\ntiming:         skipped (D does not match)\n")) << r.out;
}

TEST_F(DriverGpu, RefusalIsAnError) {
  const DriverRun r = run_driver(stand_in(&refuses), {"--m", "128", "--n", "128", "--k", "64"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.err, "error: shape: this stand-in refuses everything\n");
}

TEST_F(DriverGpu, MismatchedTrackRequestExitsThree) {
  const StepTarget target = find_step_target(stand_in(&writes_nothing));
  const char* other = target.track == Track::hopper ? "--track=blackwell" : "--track=hopper";
  const DriverRun r = run_driver(stand_in(&writes_nothing), {"--m", "128", "--n", "128", "--k", "64", other});
  EXPECT_EQ(r.exit_code, kExitNoDevice);
  EXPECT_TRUE(contains(r.err, "was requested, but this GPU")) << r.err;
}

}  // namespace
}  // namespace gemm
