// The inputs' hash (harness/hash.h): deterministic, in range, A and B different.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "harness/hash.h"

namespace gemm {
namespace {

constexpr size_t kCount = 1 << 16;

std::vector<float> values(uint64_t seed, InputMode mode, size_t count = kCount) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = __half2float(input_value(seed, i, mode));
  return out;
}

// The finalizer is splitmix64's: its first output for state 0 is a published constant
// (Vigna's splitmix64.c), which pins the hash so that a seed means the same inputs in every version.
TEST(Hash, IsSplitmix64) {
  EXPECT_EQ(mix64(0), 0u);
  EXPECT_EQ(hash64(0, 0), 0xE220A8397B1DCDAFull);  // mix64(0) = 0, so this is splitmix64(0)'s first output
}

TEST(Hash, IsDeterministic) {
  for (InputMode mode : {InputMode::float_uniform, InputMode::exact_int}) {
    EXPECT_EQ(values(42, mode), values(42, mode));
    std::vector<__half> a(1000), b(1000);
    fill_host(a.data(), a.size(), 42, mode);
    fill_host(b.data(), b.size(), 42, mode);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(half_bits(a[i]), half_bits(b[i]));
    EXPECT_EQ(half_bits(a[17]), half_bits(input_value(42, 17, mode))) << "fill_host is input_value";
  }
}

TEST(Hash, FloatModeIsUniformInMinusOneToOne) {
  const std::vector<float> v = values(7, InputMode::float_uniform);
  float lo = 1, hi = -1;
  double sum = 0;
  size_t zeros = 0;
  for (float x : v) {
    ASSERT_GE(x, -1.0f);
    ASSERT_LT(x, 1.0f);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
    zeros += x == 0;
  }
  EXPECT_LT(lo, -0.99f);
  EXPECT_GT(hi, 0.99f);
  EXPECT_NEAR(sum / v.size(), 0.0, 0.02);  // mean of U[-1, 1): 0, standard error ~0.002
  EXPECT_LT(zeros, v.size() / 100);
}

TEST(Hash, FloatModeNeverRoundsUpToOne) {
  // The largest value before rounding is 1 - 2^-23, which rounds to nearest up to 1.0 in fp16.
  // An index whose top 24 hash bits are all ones is too rare to search for: check the rounding.
  EXPECT_LT(__half2float(__float2half_rz(1.0f - 0x1p-23f)), 1.0f);
  EXPECT_EQ(__half2float(__float2half_rz(-1.0f)), -1.0f);
}

TEST(Hash, ExactModeGivesEachIntegerInMinusTwoToTwo) {
  std::set<float> seen;
  for (float x : values(7, InputMode::exact_int)) {
    ASSERT_EQ(x, std::round(x));
    ASSERT_GE(x, -2.0f);
    ASSERT_LE(x, 2.0f);
    seen.insert(x);
  }
  EXPECT_EQ(seen, (std::set<float>{-2, -1, 0, 1, 2}));
}

TEST(Hash, OperandSeedsDiffer) {
  for (uint64_t seed : {0ull, 1ull, 42ull, ~0ull}) {
    const uint64_t a = operand_seed(seed, Operand::a), b = operand_seed(seed, Operand::b);
    EXPECT_NE(a, b) << seed;
    EXPECT_NE(a, seed);
    EXPECT_NE(values(a, InputMode::float_uniform, 256), values(b, InputMode::float_uniform, 256)) << seed;
    EXPECT_NE(values(a, InputMode::exact_int, 256), values(b, InputMode::exact_int, 256)) << seed;
  }
  EXPECT_NE(operand_seed(1, Operand::a), operand_seed(2, Operand::a));
}

TEST(Hash, SeedsGiveDifferentInputs) {
  EXPECT_NE(values(1, InputMode::float_uniform, 256), values(2, InputMode::float_uniform, 256));
}

TEST(Hash, NotAllZeros) {
  for (InputMode mode : {InputMode::float_uniform, InputMode::exact_int}) {
    size_t nonzero = 0;
    for (float x : values(0, mode, 1024)) nonzero += x != 0;
    EXPECT_GT(nonzero, 512u);
  }
}

}  // namespace
}  // namespace gemm
