// compare (harness/compare.h): what it catches, what it lets through, and what it reports.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/compare.h"

namespace gemm {
namespace {

constexpr int64_t kM = 16, kN = 16;
constexpr size_t kGuard = 64;

__half h(float x) { return __float2half(x); }

// A reference D: distinct values in [-8, 8), so a shifted D differs almost everywhere.
std::vector<__half> reference() {
  std::vector<__half> want(kM * kN);
  for (size_t i = 0; i < want.size(); ++i) want[i] = h(8 * __half2float(input_value(99, i, InputMode::float_uniform)));
  return want;
}

// A guarded allocation as a step leaves it: poisoned guards around `d`.
std::vector<__half> guarded(const std::vector<__half>& d) {
  std::vector<__half> out(kGuard, half_from_bits(kGuardBits));
  out.insert(out.end(), d.begin(), d.end());
  out.insert(out.end(), kGuard, half_from_bits(kGuardBits));
  return out;
}

CompareResult check(const std::vector<__half>& got, const std::vector<__half>& want,
                    InputMode mode = InputMode::float_uniform) {
  return compare(got, kGuard, want, kM, kN, mode);
}

TEST(Compare, PassesAnExactCopy) {
  const auto want = reference();
  for (InputMode mode : {InputMode::float_uniform, InputMode::exact_int}) {
    const CompareResult r = check(guarded(want), want, mode);
    EXPECT_TRUE(r.ok) << summary(r);
    EXPECT_EQ(r.bad_count, 0);
    EXPECT_EQ(r.max_abs_err, 0);
    EXPECT_EQ(r.rel_frobenius, 0);
    EXPECT_EQ(verdict(r), "match");
  }
}

TEST(Compare, CatchesNaN) {
  const auto want = reference();
  auto got = guarded(want);
  got[kGuard + 3 * kN + 5] = half_from_bits(0x7FFF);  // the GPU's NaN
  for (InputMode mode : {InputMode::float_uniform, InputMode::exact_int}) {
    const CompareResult r = check(got, want, mode);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.reason, "NaN");
    EXPECT_EQ(r.row, 3);
    EXPECT_EQ(r.col, 5);
    EXPECT_TRUE(std::isnan(r.max_abs_err));
  }
}

TEST(Compare, CatchesAnUnwrittenElement) {
  const auto want = reference();
  auto got = guarded(want);
  got[kGuard + kM * kN - 1] = half_from_bits(kUnwrittenBits);  // the last element
  const CompareResult r = check(got, want);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "unwritten (still poisoned)");
  EXPECT_EQ(r.row, kM - 1);
  EXPECT_EQ(r.col, kN - 1);
  EXPECT_EQ(r.bad_count, 1);
}

TEST(Compare, CatchesAGuardTouchedBeforeD) {
  const auto want = reference();
  auto got = guarded(want);
  got[kGuard - 3] = h(0);
  const CompareResult r = check(got, want);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "guard touched before D at offset -3");
  EXPECT_EQ(r.row, -1);
  EXPECT_EQ(verdict(r), "MISMATCH: guard touched before D at offset -3: got 0 want the guard's NaN (0xffff)");
}

TEST(Compare, CatchesAGuardTouchedAfterD) {
  const auto want = reference();
  auto got = guarded(want);
  got[kGuard + kM * kN + kGuard - 1] = h(1);  // the very last guard element
  const CompareResult r = check(got, want);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "guard touched after D at offset " + std::to_string(kGuard - 1));
}

TEST(Compare, CatchesDWrittenOneElementLate) {
  // Every element lands one place on: D(0,0) is never written, the last spills into the guard.
  const auto want = reference();
  auto got = guarded(want);
  for (size_t i = 0; i < want.size(); ++i) got[kGuard + i + 1] = want[i];
  got[kGuard] = half_from_bits(kUnwrittenBits);
  const CompareResult r = check(got, want);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "unwritten (still poisoned)");
  EXPECT_EQ(r.row, 0);
  EXPECT_EQ(r.col, 0);
  EXPECT_GT(r.bad_count, kM * kN / 2);
}

TEST(Compare, CatchesDWrittenOneElementEarly) {
  const auto want = reference();
  auto got = guarded(want);
  for (size_t i = 0; i < want.size(); ++i) got[kGuard + i - 1] = want[i];
  const CompareResult r = check(got, want);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "guard touched before D at offset -1");
}

// |d - r| <= 1e-2 + 1e-3 |r|: at r = 1 the bound is 0.011, between 11 and 12 fp16 ulps of 1.
TEST(Compare, FloatToleranceBoundary) {
  const std::vector<__half> want(kM * kN, h(1));
  auto got = guarded(want);
  got[kGuard + 2 * kN + 7] = h(1 + 11 * 0x1p-10f);  // 0.0107: inside
  CompareResult r = check(got, want);
  EXPECT_TRUE(r.ok) << summary(r);
  EXPECT_NEAR(r.max_abs_err, 11 * 0x1p-10, 1e-9);

  got[kGuard + 2 * kN + 7] = h(1 + 12 * 0x1p-10f);  // 0.0117: outside
  r = check(got, want);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "mismatch");
  EXPECT_EQ(r.row, 2);
  EXPECT_EQ(r.col, 7);
  EXPECT_EQ(verdict(r), "MISMATCH at (2,7): got 1.01172 want 1 (mismatch)");
}

TEST(Compare, FloatToleranceScalesWithTheReference) {
  const std::vector<__half> want(kM * kN, h(1000));  // bound 1.01; fp16 ulp at 1000 is 0.5
  auto got = guarded(want);
  got[kGuard] = h(1001);
  EXPECT_TRUE(check(got, want).ok);
  got[kGuard] = h(1001.5);
  EXPECT_FALSE(check(got, want).ok);
}

TEST(Compare, RelativeFrobeniusErrorFailsAlone) {
  // Every element 5 ulps (0.0049) off: each inside the elementwise bound, the whole 4.9e-3 off.
  const std::vector<__half> want(kM * kN, h(1));
  auto got = guarded(std::vector<__half>(kM * kN, h(1 + 5 * 0x1p-10f)));
  const CompareResult r = check(got, want);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.bad_count, 0);
  EXPECT_EQ(r.reason.rfind("relative Frobenius error", 0), 0u) << r.reason;
  EXPECT_NEAR(r.rel_frobenius, 5 * 0x1p-10, 1e-6);
}

TEST(Compare, ExactModeRejectsOneUlp) {
  const std::vector<__half> want(kM * kN, h(3));  // 0x4200
  auto got = guarded(want);
  got[kGuard + 40] = half_from_bits(0x4201);
  EXPECT_TRUE(check(got, want, InputMode::float_uniform).ok);
  const CompareResult r = check(got, want, InputMode::exact_int);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "mismatch");
  EXPECT_EQ(r.row, 40 / kN);
  EXPECT_EQ(r.col, 40 % kN);
}

TEST(Compare, ReportsTheFirstBadElementAndCountsAll) {
  const auto want = reference();
  auto got = guarded(want);
  got[kGuard + 3 * kN + 1] = h(__half2float(want[3 * kN + 1]) + 1);
  got[kGuard + 2 * kN + 5] = h(__half2float(want[2 * kN + 5]) + 1);
  const CompareResult r = check(got, want);
  EXPECT_EQ(r.row, 2);
  EXPECT_EQ(r.col, 5);
  EXPECT_EQ(r.bad_count, 2);
}

TEST(Compare, SizesMustMatch) {
  const auto want = reference();
  EXPECT_THROW(compare(guarded(want), kGuard + 1, want, kM, kN, InputMode::float_uniform), Error);
  EXPECT_THROW(compare(guarded(want), kGuard, want, kM + 1, kN, InputMode::float_uniform), Error);
}

TEST(IsUntouched, OnlyAsPoisoned) {
  std::vector<__half> d(kM * kN, half_from_bits(kUnwrittenBits));
  auto got = guarded(d);
  EXPECT_TRUE(is_untouched(got, kGuard));
  got[kGuard + 7] = h(0);
  EXPECT_FALSE(is_untouched(got, kGuard));
  got = guarded(d);
  got[0] = half_from_bits(kUnwrittenBits);  // D's poison in a guard
  EXPECT_FALSE(is_untouched(got, kGuard));
}

}  // namespace
}  // namespace gemm
