// cpu_gemm (harness/reference.h): D = A * B^T on cases small enough to check by hand.
#include <gtest/gtest.h>

#include <vector>

#include "harness/check.h"
#include "harness/hash.h"
#include "harness/reference.h"

namespace gemm {
namespace {

std::vector<__half> halves(std::initializer_list<float> xs) {
  std::vector<__half> out;
  for (float x : xs) out.push_back(__float2half(x));
  return out;
}

std::vector<float> floats(const std::vector<__half>& hs) {
  std::vector<float> out;
  for (__half x : hs) out.push_back(__half2float(x));
  return out;
}

TEST(CpuReference, OneByOne) { EXPECT_EQ(floats(cpu_gemm(halves({2}), halves({3}), 1, 1, 1)), std::vector<float>{6}); }

TEST(CpuReference, BIsTransposed) {
  // A = [1 2; 3 4], B = [5 6; 7 8] (rows of B are columns of B^T):
  // D = A * B^T = [1*5+2*6  1*7+2*8; 3*5+4*6  3*7+4*8] = [17 23; 39 53].
  const auto d = cpu_gemm(halves({1, 2, 3, 4}), halves({5, 6, 7, 8}), 2, 2, 2);
  EXPECT_EQ(floats(d), (std::vector<float>{17, 23, 39, 53}));
}

TEST(CpuReference, NonSquare) {
  // A is 2 x 3, B is 3 x 3 (N = 3, K = 3), D is 2 x 3 row-major.
  // A = [1 0 -1; 2 1 0], B = [1 1 1; 0 2 0; -1 0 3].
  // D(0,:) = [1-1, 0, -1-3] = [0 0 -4]; D(1,:) = [2+1, 2, -2] = [3 2 -2].
  const auto d = cpu_gemm(halves({1, 0, -1, 2, 1, 0}), halves({1, 1, 1, 0, 2, 0, -1, 0, 3}), 2, 3, 3);
  EXPECT_EQ(floats(d), (std::vector<float>{0, 0, -4, 3, 2, -2}));
}

TEST(CpuReference, RoundsToFp16OnceAtTheEnd) {
  // 1 + 2^-11 + 2^-11 = 1 + 2^-10: exact as a sum, then exactly an fp16. Rounding each partial
  // sum to fp16 would lose both halves (1 + 2^-11 is a tie, to even: 1).
  const float tiny = 0x1p-11f;
  EXPECT_EQ(floats(cpu_gemm(halves({1, tiny, tiny}), halves({1, 1, 1}), 1, 1, 3)), std::vector<float>{1 + 0x1p-10f});
  // 2049 is not an fp16: round to nearest even gives 2048.
  EXPECT_EQ(floats(cpu_gemm(halves({2048, 1}), halves({1, 1}), 1, 1, 2)), std::vector<float>{2048});
}

TEST(CpuReference, KLongSumsOfExactInputs) {
  // K = 512 products of 2 * -2: the exact-mode extreme, -2048, still an fp16.
  const std::vector<__half> a(512, __float2half(2)), b(512, __float2half(-2));
  EXPECT_EQ(floats(cpu_gemm(a, b, 1, 1, 512)), std::vector<float>{-2048});
}

TEST(CpuReference, SameResultForAnyThreadCount) {
  const int64_t m = 37, n = 24, k = 40;
  std::vector<__half> a(m * k), b(n * k);
  fill_host(a.data(), a.size(), 1, InputMode::float_uniform);
  fill_host(b.data(), b.size(), 2, InputMode::float_uniform);
  const auto one = floats(cpu_gemm(a, b, m, n, k, 1));
  for (unsigned threads : {2u, 7u, 64u}) EXPECT_EQ(floats(cpu_gemm(a, b, m, n, k, threads)), one) << threads;
}

TEST(CpuReference, RefusesMismatchedSizes) { EXPECT_THROW(cpu_gemm(halves({1, 2}), halves({1, 2}), 2, 1, 2), Error); }

}  // namespace
}  // namespace gemm
