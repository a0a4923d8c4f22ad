// The 128-byte swizzle (common/swizzle.cuh) against values worked by hand from its one rule:
// row r of a K-major SW128 tile is 128 bytes at r * 128; its 16-byte chunk c is stored at chunk
// slot (c ^ (r % 8)) of that row. Eight rows make a 1024-byte atom; the pattern repeats per atom.
#include "common/swizzle.cuh"

#include <gtest/gtest.h>

#include <cstdint>

namespace gemm {
namespace {

TEST(Swizzle, Constants) {
  EXPECT_EQ(kSwizzleBytes, 128u);
  EXPECT_EQ(kSwizzleAtomBytes, 8 * kSwizzleBytes);
}

TEST(Swizzle, RowZeroIsTheIdentity) {
  // r = 0: c ^ 0 = c, so chunk c sits at c * 16.
  for (uint32_t c = 0; c < 8; ++c) EXPECT_EQ(sw128_offset(0, c), c * 16) << "chunk " << c;
}

TEST(Swizzle, HandWorkedValues) {
  // r = 1, c = 0: slot 0 ^ 1 = 1 -> 1 * 128 + 1 * 16 = 144.
  EXPECT_EQ(sw128_offset(1, 0), 128u + 16u);
  // r = 1, c = 1: slot 1 ^ 1 = 0 -> 128 + 0 = 128.
  EXPECT_EQ(sw128_offset(1, 1), 128u);
  // r = 3, c = 5: slot 5 ^ 3 = 6 -> 3 * 128 + 6 * 16 = 480.
  EXPECT_EQ(sw128_offset(3, 5), 480u);
  // r = 7, c = 7: slot 7 ^ 7 = 0 -> 7 * 128 + 0 = 896.
  EXPECT_EQ(sw128_offset(7, 7), 7u * 128u + 0u);
  // r = 7, c = 0: slot 0 ^ 7 = 7 -> 896 + 112 = 1008, the last chunk of the atom.
  EXPECT_EQ(sw128_offset(7, 0), 1008u);
  // r = 8: 8 % 8 = 0, the identity again in the second atom: chunk 3 -> 1024 + 48.
  EXPECT_EQ(sw128_offset(8, 3), 1024u + 48u);
  // r = 9: 9 % 8 = 1, row 1's pattern one atom further: chunk 0 -> 1024 + 144.
  EXPECT_EQ(sw128_offset(9, 0), 1024u + 128u + 16u);
  // r = 127 (last row of a 128-row tile), c = 2: 127 % 8 = 7, slot 2 ^ 7 = 5 -> 127 * 128 + 80.
  EXPECT_EQ(sw128_offset(127, 2), 127u * 128u + 80u);
}

TEST(Swizzle, PatternRepeatsEveryAtom) {
  for (uint32_t r = 0; r < 8; ++r)
    for (uint32_t atom = 1; atom < 16; ++atom)
      for (uint32_t c = 0; c < 8; ++c)
        EXPECT_EQ(sw128_offset(r + 8 * atom, c), sw128_offset(r, c) + atom * kSwizzleAtomBytes);
}

TEST(Swizzle, EachRowsChunksArePermutedInsideTheRow) {
  for (uint32_t r = 0; r < 64; ++r) {
    uint32_t slots_hit = 0;
    for (uint32_t c = 0; c < 8; ++c) {
      const uint32_t off = sw128_offset(r, c);
      ASSERT_GE(off, r * 128) << "row " << r << " chunk " << c << " left its row";
      ASSERT_LT(off, r * 128 + 128) << "row " << r << " chunk " << c << " left its row";
      ASSERT_EQ(off % 16, 0u);
      slots_hit |= 1u << ((off - r * 128) / 16);
    }
    EXPECT_EQ(slots_hit, 0xFFu) << "row " << r << ": the 8 chunks must fill the 8 slots";
  }
}

// The same rule read on byte addresses, as the hardware applies it (CUTLASS Swizzle<3,4,3>):
// bits [4:6] of the unswizzled offset are XORed with bits [7:9].
TEST(Swizzle, MatchesTheAddressBitForm) {
  for (uint32_t r = 0; r < 32; ++r)
    for (uint32_t c = 0; c < 8; ++c)
      for (uint32_t byte = 0; byte < 16; byte += 5) {
        const uint32_t linear = r * 128 + c * 16 + byte;
        const uint32_t swizzled = linear ^ (((linear >> 7) & 7u) << 4);
        EXPECT_EQ(sw128_offset(r, c) + byte, swizzled) << "row " << r << " chunk " << c;
      }
}

}  // namespace
}  // namespace gemm
