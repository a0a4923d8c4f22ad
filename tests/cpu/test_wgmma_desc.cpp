// The hopper wgmma shared-memory descriptor (common/hopper/wgmma_desc.cuh) and the accumulator
// fragment mapping (common/hopper/wgmma.cuh) against hand-worked values (docs/hopper.md).
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gemm::hopper {
namespace {

TEST(WgmmaDesc, EncodeKeepsAddressBits4To17) {
  EXPECT_EQ(wgmma_desc_encode(0x400), 0x40u);
  EXPECT_EQ(wgmma_desc_encode(0x3FFF0), 0x3FFFu);  // the largest 14-bit field
  EXPECT_EQ(wgmma_desc_encode(0x40400), 0x40u);    // bit 18 and up are dropped by the & 0x3FFFF
  EXPECT_EQ(wgmma_desc_encode(0x40F), 0x40u);      // the low 4 bits are below the 16-byte unit
}

TEST(WgmmaDesc, HandWorkedSw128KMajor) {
  // Tile at shared address 0x400, LBO 16, SBO 1024, 128-byte swizzle:
  //   start   0x400 >> 4 = 0x40                    -> bits 0-13:  0x0000000000000040
  //   LBO     16 >> 4 = 1, << 16                    -> bits 16-29: 0x0000000000010000
  //   SBO     1024 >> 4 = 64 = 0x40, << 32          -> bits 32-45: 0x0000004000000000
  //   layout  SW128 = 1, << 62                      -> bits 62-63: 0x4000000000000000
  //   sum                                                          0x4000004000010040
  constexpr uint64_t expected = 0x4000004000010040ull;
  EXPECT_EQ(make_wgmma_desc(0x400, 16, 1024, WgmmaLayout::swizzle_128b), expected);
  EXPECT_EQ(make_wgmma_desc_k_sw128(0x400), expected);
  static_assert(make_wgmma_desc_k_sw128(0x400) == expected);
}

TEST(WgmmaDesc, K16StepAddsTwo) {
  // One k16 slice of fp16 is 32 bytes along the row; 32 >> 4 = 2 in the start-address field.
  const uint64_t base = make_wgmma_desc_k_sw128(0x400);
  for (uint32_t j = 0; j < 4; ++j) EXPECT_EQ(make_wgmma_desc_k_sw128(0x400 + 32 * j), base + 2 * j);
}

TEST(WgmmaDesc, LayoutField) {
  EXPECT_EQ(make_wgmma_desc(0, 0, 0, WgmmaLayout::interleave), 0u);
  EXPECT_EQ(make_wgmma_desc(0, 0, 0, WgmmaLayout::swizzle_128b) >> 62, 1u);
  EXPECT_EQ(make_wgmma_desc(0, 0, 0, WgmmaLayout::swizzle_64b) >> 62, 2u);
  EXPECT_EQ(make_wgmma_desc(0, 0, 0, WgmmaLayout::swizzle_32b) >> 62, 3u);
}

TEST(WgmmaFragment, HandWorkedValues) {
  struct Case {
    int t, i, row, col;
  };
  // row = 16*(t/32) + (t%32)/4 + 8*((i>>1)&1),  col = 8*(i>>2) + 2*(t%4) + (i&1)
  const Case cases[] = {
      {0, 0, 0, 0},                       // thread 0: regs 0, 1 are a column pair of row 0
      {0, 1, 0, 1},        {0, 2, 8, 0},  // regs 2, 3: the same columns 8 rows down
      {0, 3, 8, 1},        {5, 0, 1, 2},  // lane 5: row 5/4 = 1, col 2*(5%4) = 2
      {32, 4, 16, 8},                     // warp 1 lane 0 reg 4: row 16*1, col 8*(4>>2) = 8
      {127, 63, 63, 127},                 // the last thread's last register of m64n128: the tile's far corner
      {127, 127, 63, 255},                // ... and of m64n256
  };
  for (const Case& c : cases) {
    EXPECT_EQ(wgmma_acc_row(c.t, c.i), c.row) << "thread " << c.t << " reg " << c.i;
    EXPECT_EQ(wgmma_acc_col(c.t, c.i), c.col) << "thread " << c.t << " reg " << c.i;
  }
  static_assert(wgmma_acc_row(32, 4) == 16 && wgmma_acc_col(32, 4) == 8);
}

template <int N>
void expect_exact_cover() {
  std::vector<int> hits(64 * N, 0);
  static_assert(kWgmmaAccRegs<N> == N / 2);
  for (int t = 0; t < 128; ++t) {
    for (int i = 0; i < kWgmmaAccRegs<N>; ++i) {
      const int r = wgmma_acc_row(t, i), c = wgmma_acc_col(t, i);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, 64);
      ASSERT_GE(c, 0);
      ASSERT_LT(c, N);
      ++hits[r * N + c];
      // Register pairs (2j, 2j+1) are adjacent columns of one row: they pack into one half2.
      if (i % 2 == 1) {
        ASSERT_EQ(r, wgmma_acc_row(t, i - 1));
        ASSERT_EQ(c, wgmma_acc_col(t, i - 1) + 1);
      }
    }
  }
  for (int k = 0; k < 64 * N; ++k) ASSERT_EQ(hits[k], 1) << "element (" << k / N << ", " << k % N << ")";
}

TEST(WgmmaFragment, CoversTheTileExactlyOnce) {
  expect_exact_cover<128>();
  expect_exact_cover<256>();
}

}  // namespace
}  // namespace gemm::hopper
