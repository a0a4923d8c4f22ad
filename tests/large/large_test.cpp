// Large indices: one step (3 and later) where A or D has more than 2^31 elements, so any 32-bit
// element offset would wrap; float mode against cuBLAS, through the harness (Operands,
// run_and_check). Compiled once per step with -DGEMM_STEP_INFO=stepNN_info. GPU only: skips, with
// the reason, without a GPU, a track for it, or 16 GiB of free GPU memory (and 16 GiB of host
// memory for the two copies of D the comparison holds). Label large.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "harness/backend.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "tests/step_under_test.h"

namespace gemm {
namespace {

constexpr size_t kGiB = size_t{1} << 30;
constexpr size_t kNeedGpuBytes = 16 * kGiB;
constexpr size_t kNeedHostBytes = 16 * kGiB;
constexpr int64_t k2To31 = int64_t{1} << 31;

class Large : public ::testing::Test {
 protected:
  void SetUp() override {
    const StepTarget target = find_step_target(step_info());
    if (!target.status.ok()) GTEST_SKIP() << target.status.message();
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (free_bytes < kNeedGpuBytes)
      GTEST_SKIP() << "needs " << kNeedGpuBytes / kGiB << " GiB of free GPU memory, " << free_bytes / kGiB
                   << " GiB free";
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && static_cast<size_t>(pages) * static_cast<size_t>(page) < kNeedHostBytes)
      GTEST_SKIP() << "needs " << kNeedHostBytes / kGiB << " GiB of free host memory";
    step_ = target.launcher;
    backend_ = make_cuda_backend(target.device.device);
    cublas_ = std::make_unique<CublasReference>(backend_->stream());
  }

  void check(const Shape& shape) {
    std::printf("step %02d at %s: A %lld elements, D %lld elements\n", step_info().number, shape_string(shape).c_str(),
                static_cast<long long>(shape.m * shape.k), static_cast<long long>(shape.m * shape.n));
    Operands ops(*backend_, shape, 1, InputMode::float_uniform);
    const CheckOutcome out = run_and_check(*backend_, step_, ops, *cublas_);
    ASSERT_TRUE(out.status.ok()) << out.status.message();
    EXPECT_TRUE(out.result.ok) << shape_string(shape) << ": " << summary(out.result);
  }

  StepFn step_ = nullptr;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<CublasReference> cublas_;
};

// D: 46400 x 46400 = 2,152,960,000 elements > 2^31 (A and B are small).
TEST_F(Large, DPast2To31Elements) {
  const Shape shape{46400, 46400, 64};
  ASSERT_GT(shape.m * shape.n, k2To31);
  check(shape);
}

// A: (2^21 + 8) x 1032 = 2,164,269,312 elements > 2^31; M is not a multiple of the tile.
TEST_F(Large, APast2To31Elements) {
  const Shape shape{(int64_t{1} << 21) + 8, 128, 1032};
  ASSERT_GT(shape.m * shape.k, k2To31);
  check(shape);
}

}  // namespace
}  // namespace gemm
