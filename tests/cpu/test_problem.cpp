// check_shape and check_problem (common/problem.h): every rule of the three shape contracts, the
// pointer rules, and that each failure names the rule it broke (docs/design.md, "The shape contract").
#include <gtest/gtest.h>

#include <ostream>
#include <sstream>
#include <string>

#include "common/problem.h"

namespace gemm {

// How gtest (and so ctest's test names) print a contract.
static void PrintTo(Contract c, std::ostream* os) {
  *os << (c == Contract::single_tile ? "single_tile" : c == Contract::k_loop ? "k_loop" : "general");
}

namespace {

alignas(16) __half buffer[16];

Shape call(int64_t m, int64_t n, int64_t k) { return Shape{m, n, k}; }

// The failure message, or "" when the shape is accepted. check_problem, given good pointers, must
// say the same: a call is refused for its shape with check_shape's message.
std::string error(Contract c, const Shape& s) {
  const std::string message = check_shape(c, s).message();
  EXPECT_EQ(check_problem(c, Problem{s, buffer, buffer, buffer}).message(), message) << shape_string(s);
  return message;
}

// check_problem's message for a call (the pointer rules).
std::string error(Contract c, const Problem& p) { return check_problem(c, p).message(); }

::testing::AssertionResult refused_with(Contract c, const Shape& s, const std::string& rule) {
  const std::string msg = error(c, s);
  if (msg.empty()) return ::testing::AssertionFailure() << shape_string(s) << " was accepted";
  if (msg.find(rule) == std::string::npos)
    return ::testing::AssertionFailure() << "message '" << msg << "' does not name '" << rule << "'";
  return ::testing::AssertionSuccess();
}

TEST(SingleTileContract, AcceptsExactlyOneTile) { EXPECT_EQ(error(Contract::single_tile, call(128, 128, 64)), ""); }

TEST(SingleTileContract, RefusesAnyOtherShape) {
  const std::string rule = "step 1 computes exactly one tile, M = N = 128 and K = 64";
  EXPECT_TRUE(refused_with(Contract::single_tile, call(128, 128, 128), rule));
  EXPECT_TRUE(refused_with(Contract::single_tile, call(256, 128, 64), rule));
  EXPECT_TRUE(refused_with(Contract::single_tile, call(128, 64, 64), rule));
  EXPECT_TRUE(refused_with(Contract::single_tile, call(0, 0, 0), rule));
  EXPECT_TRUE(refused_with(Contract::single_tile, call(128, 128, 64 + 8), "(got M x N x K = 128x128x72)"));
}

TEST(KLoopContract, AcceptsMultiplesOf64) {
  for (int64_t k : {64, 128, 512, 1024, 64 * 1000}) EXPECT_EQ(error(Contract::k_loop, call(128, 128, k)), "") << k;
}

TEST(KLoopContract, RefusesOtherShapes) {
  const std::string rule = "step 2 needs M = N = 128 and K a positive multiple of 64";
  for (int64_t k : {int64_t{0}, int64_t{-64}, int64_t{32}, int64_t{96}, int64_t{1000}, kMaxDim + 1, int64_t{1} << 40})
    EXPECT_TRUE(refused_with(Contract::k_loop, call(128, 128, k), rule)) << k;
  EXPECT_TRUE(refused_with(Contract::k_loop, call(128, 128, kMaxDim + 1), "at most 2^31 - 1"));
  EXPECT_TRUE(refused_with(Contract::k_loop, call(256, 128, 64), rule));
  EXPECT_TRUE(refused_with(Contract::k_loop, call(128, 256, 64), rule));
}

TEST(GeneralContract, AcceptsRaggedAndLargeShapes) {
  for (const Shape& p : {call(1, 8, 8), call(200, 136, 72), call(333, 264, 520), call(4096, 4096, 4096),
                         call(kMaxDim, 8, 8), call(1, kMaxDim - 7, kMaxDim - 7)})
    EXPECT_EQ(error(Contract::general, p), "") << shape_string(p);
}

TEST(GeneralContract, RefusesZeroOrNegative) {
  const std::string rule = "M, N and K must be positive";
  for (const Shape& p : {call(0, 8, 8), call(8, 0, 8), call(8, 8, 0), call(-1, 8, 8), call(8, -8, 8), call(8, 8, -8)})
    EXPECT_TRUE(refused_with(Contract::general, p, rule)) << shape_string(p);
}

TEST(GeneralContract, RefusesDimensionsPast2To31) {
  const std::string rule = "M, N and K must each be at most 2^31 - 1";
  const int64_t too_big = kMaxDim + 1;  // 2^31, a multiple of 8
  for (const Shape& p : {call(too_big, 8, 8), call(8, too_big, 8), call(8, 8, too_big)})
    EXPECT_TRUE(refused_with(Contract::general, p, rule)) << shape_string(p);
}

TEST(GeneralContract, RefusesNOrKNotMultipleOf8) {
  const std::string rule = "N and K must be multiples of 8 (TMA needs 16-byte row strides";
  for (const Shape& p : {call(128, 12, 64), call(128, 130, 64), call(128, 64, 4), call(128, 64, 1001), call(8, 1, 1)})
    EXPECT_TRUE(refused_with(Contract::general, p, rule)) << shape_string(p);
  EXPECT_EQ(error(Contract::general, call(7, 8, 8)), "") << "M has no multiple-of-8 rule";
}

// The pointer rules hold for every contract.
class PointerRules : public ::testing::TestWithParam<Contract> {
 protected:
  Problem good() const {
    const Shape s = GetParam() == Contract::general ? call(200, 136, 72)
                                                    : call(128, 128, GetParam() == Contract::k_loop ? 128 : 64);
    return Problem{s, buffer, buffer, buffer};
  }
};

TEST_P(PointerRules, ShapeIsCheckedFirst) {
  Problem p = good();
  EXPECT_EQ(check_shape(GetParam(), p).message(), "") << "a Problem is checked as a Shape";
  p.n = 130;  // no contract accepts it
  p.a = nullptr;
  p.d = buffer + 1;
  const std::string shape_error = check_shape(GetParam(), p).message();
  ASSERT_NE(shape_error, "");
  EXPECT_EQ(error(GetParam(), p), shape_error);
}

TEST_P(PointerRules, RefusesNullOperands) {
  Problem p = good();
  p.a = nullptr;
  EXPECT_EQ(error(GetParam(), p), "null pointer: A is null");
  p = good();
  p.b = nullptr;
  EXPECT_EQ(error(GetParam(), p), "null pointer: B is null");
  p = good();
  p.d = nullptr;
  EXPECT_EQ(error(GetParam(), p), "null pointer: D is null");
}

TEST_P(PointerRules, RefusesMisalignedOperands) {
  for (int offset = 1; offset < 8; ++offset) {  // 2..14 bytes off a 16-byte boundary
    Problem p = good();
    p.a = buffer + offset;
    EXPECT_EQ(error(GetParam(), p), "alignment: A must be 16-byte aligned") << offset;
    p = good();
    p.b = buffer + offset;
    EXPECT_EQ(error(GetParam(), p), "alignment: B must be 16-byte aligned") << offset;
    p = good();
    p.d = buffer + offset;
    EXPECT_EQ(error(GetParam(), p), "alignment: D must be 16-byte aligned") << offset;
  }
  Problem p = good();
  p.d = buffer + 8;  // 16 bytes on: aligned
  EXPECT_EQ(error(GetParam(), p), "");
}

INSTANTIATE_TEST_SUITE_P(AllContracts, PointerRules,
                         ::testing::Values(Contract::single_tile, Contract::k_loop, Contract::general),
                         [](const ::testing::TestParamInfo<Contract>& info) {
                           std::ostringstream name;
                           PrintTo(info.param, &name);
                           return name.str();
                         });

TEST(ContractForStep, StepsMapToTheirContracts) {
  EXPECT_EQ(contract_for_step(1), Contract::single_tile);
  EXPECT_EQ(contract_for_step(2), Contract::k_loop);
  for (int step = 3; step <= 11; ++step) EXPECT_EQ(contract_for_step(step), Contract::general) << step;
}

}  // namespace
}  // namespace gemm
