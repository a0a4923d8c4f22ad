// The timing arithmetic (harness/timer.h); the timers themselves need a GPU (tests/gpu).
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

// The driver's ratio is the median of the pairs' ratios, not the ratio of the medians: a pair's
// two calls share their moment (clock, power), so a slow stretch that holds back both calls of
// some pairs does not move it.
TEST(SummarizePairs, RatioIsTheMedianOfThePairsRatios) {
  // cuBLAS 10 % slower in every pair, whatever the GPU's state: the ratio says 1.1 however the
  // pairs' times drift.
  const PairSummary drift = summarize_pairs({{1.0f, 1.1f}, {2.0f, 2.2f}, {1.5f, 1.65f}, {4.0f, 4.4f}});
  EXPECT_NEAR(drift.ratio, 1.1, 1e-6);
  EXPECT_NEAR(drift.step_ms, 1.75, 1e-6);
  EXPECT_NEAR(drift.cublas_ms, 1.925, 1e-6);
  // Three pairs at ratios 1.1, 0.95 and 1.1: the median is 1.1; the ratio of the medians would
  // be 1.9 / 2.0 = 0.95.
  const PairSummary s = summarize_pairs({{1.0f, 1.1f}, {2.0f, 1.9f}, {3.0f, 3.3f}});
  EXPECT_NEAR(s.ratio, 1.1, 1e-6);
  EXPECT_NEAR(s.step_ms, 2.0, 1e-6);
  EXPECT_NEAR(s.cublas_ms, 1.9, 1e-6);
  // An even count: the mean of the middle two ratios (1.0 and 1.2).
  EXPECT_NEAR(summarize_pairs({{1, 0.5f}, {1, 1.0f}, {1, 1.2f}, {1, 3.0f}}).ratio, 1.1, 1e-6);
  const PairSummary none = summarize_pairs({});
  EXPECT_EQ(none.ratio, 0);
  EXPECT_EQ(none.step_ms, 0);
  EXPECT_EQ(none.cublas_ms, 0);
}

TEST(Tflops, TwoFlopsPerMultiplyAdd) {
  // 4096^3: 2 * 2^36 flops = 137.4 GFLOP; in 1 ms that is 137.4 TFLOP/s.
  EXPECT_NEAR(tflops(Shape{4096, 4096, 4096}, 1.0), 137.438953472, 1e-9);
  EXPECT_NEAR(tflops(Shape{128, 128, 64}, 0.001), 2.097152, 1e-9);
}

}  // namespace
}  // namespace gemm
