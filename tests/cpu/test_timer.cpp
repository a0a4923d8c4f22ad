// The timing arithmetic (harness/timer.h); time_ms itself needs a GPU (tests/gpu).
#include <gtest/gtest.h>

#include "harness/timer.h"

namespace gemm {
namespace {

TEST(Median, OddEvenAndEmpty) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({5}), 5);
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({1, 100, 2, 3, 2}), 2) << "an outlier does not move it";
}

TEST(Tflops, TwoFlopsPerMultiplyAdd) {
  // 4096^3: 2 * 2^36 flops = 137.4 GFLOP; in 1 ms that is 137.4 TFLOP/s.
  EXPECT_NEAR(tflops(Shape{4096, 4096, 4096}, 1.0), 137.438953472, 1e-9);
  EXPECT_NEAR(tflops(Shape{128, 128, 64}, 0.001), 2.097152, 1e-9);
}

}  // namespace
}  // namespace gemm
