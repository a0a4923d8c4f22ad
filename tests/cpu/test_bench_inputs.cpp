// The benchmarks' pure pieces (harness/shapes.h, harness/rotation.h): the --sizes list and how
// many rotating input sets a shape gets. The sets themselves need a GPU (tests/gpu).
#include <gtest/gtest.h>

#include "harness/rotation.h"
#include "harness/shapes.h"

namespace gemm {
namespace {

TEST(ShapeList, CubesAndTriples) {
  const ShapeList r = parse_shape_list("1024,4096x2048x1024,8");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.shapes.size(), 3u);
  EXPECT_EQ(shape_string(r.shapes[0]), "1024x1024x1024");
  EXPECT_EQ(shape_string(r.shapes[1]), "4096x2048x1024");
  EXPECT_EQ(shape_string(r.shapes[2]), "8x8x8");
}

TEST(ShapeList, DuplicatesKeptOnceInOrder) {
  const ShapeList r = parse_shape_list("2048,1024,2048x2048x2048");
  ASSERT_TRUE(r.ok()) << r.error;
  ASSERT_EQ(r.shapes.size(), 2u);
  EXPECT_EQ(r.shapes[0].m, 2048);
  EXPECT_EQ(r.shapes[1].m, 1024);
}

TEST(ShapeList, RejectsMalformedEntries) {
  for (const char* bad : {"", "1024,", ",1024", "12x", "1x2", "1x2x3x4", "0", "-8", "abc", "8x8x8 ", "2147483648"})
    EXPECT_FALSE(parse_shape_list(bad).ok()) << "'" << bad << "'";
  EXPECT_NE(parse_shape_list("12x").error.find("'12x'"), std::string::npos) << "the error names the entry";
}

TEST(RotatingSets, CoverThreeTimesTheL2) {
  const int64_t l2 = 50 << 20;
  // 1024^3: 2 MiB each for A, B, D = 6 MiB a set; 3 x 50 MiB needs 25 sets.
  const size_t set = rotating_set_bytes(Shape{1024, 1024, 1024});
  EXPECT_EQ(set, size_t{6} << 20);
  EXPECT_EQ(rotating_set_count(set, l2, size_t{1} << 40), 25);
  // 8192^3: 384 MiB a set, larger than 3 x L2 alone: still the minimum of 3 sets.
  EXPECT_EQ(rotating_set_count(rotating_set_bytes(Shape{8192, 8192, 8192}), l2, size_t{1} << 40), 3);
}

TEST(RotatingSets, MemoryCapWinsButNeverBelowOne) {
  const size_t set = size_t{384} << 20;
  EXPECT_EQ(rotating_set_count(set, 50 << 20, 2 * set), 2);
  EXPECT_EQ(rotating_set_count(set, 50 << 20, set / 2), 1);
  EXPECT_EQ(rotating_set_count(0, 50 << 20, 1), 1);
}

TEST(RotatingSets, EverySetStartsAligned) {
  // 4001 x 1000 x 2056 and step 1's 128 x 128 x 64: strides are multiples of 128 elements (256 B).
  for (const Shape& p : {Shape{4001, 1000, 2056}, Shape{128, 128, 64}, Shape{1, 8, 8}}) {
    EXPECT_EQ(set_stride(p.m, p.k) % kSetAlignElems, 0u);
    EXPECT_EQ(set_stride(p.n, p.k) % kSetAlignElems, 0u);
    EXPECT_EQ(set_stride(p.m, p.n) % kSetAlignElems, 0u);
    EXPECT_GE(set_stride(p.m, p.n), static_cast<size_t>(p.m * p.n));
  }
}

}  // namespace
}  // namespace gemm
