// choose_width (common/tile_width.cuh): step 12's rule for the tile width per problem. Expected
// values worked out by hand from the rule: T tiles of k K slices on C workers; the busiest worker
// runs T / C whole tiles and, if R = T % C > 0, one more tile or, when SplitK splits the last wave
// in S = min(C / R, k / min_split_slices, max_splits) > 1 parts, the larger part, ceil(k / S), plus
// the split's cost in slices.
#include "common/tile_width.cuh"

#include <gtest/gtest.h>

namespace gemm {
namespace {

// Step 12's hopper values: 128-row tiles, 2-CTA clusters along M, 64-deep K slices, 66 clusters
// (an H100 or H200), the widths' slice costs and the rule's knobs.
constexpr TileWidth kWidths[] = {{256, 256}, {192, 190}, {128, 136}, {64, 100}};
constexpr WidthRule kRule = {/*min_split_slices=*/12, /*max_splits=*/16, /*split_cost_slices=*/14,
                             /*narrower_gain_percent=*/5};

int hopper_width(int64_t m, int64_t n, int64_t k) { return choose_width(m, n, k, 128, 64, 2, 66, kWidths, 4, kRule); }

TEST(TileWidth, BusiestWorkerSlices) {
  // 3072^3 at 256 columns: 12 x 12 = 144 cluster tiles of 48 slices. R = 144 - 2 x 66 = 12,
  // S = min(66 / 12 = 5, 48 / 12 = 4, 16) = 4: 2 x 48 + 48 / 4 + 14 = 122.
  EXPECT_EQ(busiest_worker_slices(144, 66, 48, kRule), 122);
  // Whole waves: 132 tiles on 66 workers, 2 x 48 = 96 and nothing left over.
  EXPECT_EQ(busiest_worker_slices(132, 66, 48, kRule), 96);
  // A leftover too short to split: 16 tiles of 16 slices, S = min(4, 16 / 12 = 1, 16) = 1: one tile.
  EXPECT_EQ(busiest_worker_slices(16, 66, 16, kRule), 16);
  // Splitting off (max_splits 1): 144 tiles, the leftover runs whole: 3 x 48 = 144.
  EXPECT_EQ(busiest_worker_slices(144, 66, 48, WidthRule{12, 1, 14, 5}), 144);
}

TEST(TileWidth, SmallSquarePicksTheNarrowest) {
  // 1024^3: 4 cluster rows, 16 slices, nothing splits (16 / 12 = 1). 256: 4 x 4 = 16 tiles,
  // 16 x 256 = 4096. 192: 4 x 6 = 24 tiles, 16 x 190 = 3040 <= 95 % of 4096. 128: 32 tiles,
  // 16 x 136 = 2176 <= 95 % of 3040. 64: 64 tiles, 16 x 100 = 1600 <= 95 % of 2176.
  EXPECT_EQ(hopper_width(1024, 1024, 1024), 64);
}

TEST(TileWidth, RaggedWavesPickTheWidthThatFillsThem) {
  // 3072^3: 12 cluster rows, 48 slices. 256: 122 slices (above) x 256 = 31232. 192: 12 x 16 =
  // 192 tiles, R = 60, S = 1: 3 x 48 = 144 x 190 = 27360 <= 29670. 128: 288 tiles, R = 24, S = 2:
  // 4 x 48 + 24 + 14 = 230 x 136 = 31280, not below. 64: 576 tiles, R = 48, S = 1: 9 x 48 = 432
  // x 100 = 43200.
  EXPECT_EQ(hopper_width(3072, 3072, 3072), 192);
}

TEST(TileWidth, NarrowOutputPicksTheTileThatFitsIt) {
  // 16384 x 128 x 4096: 64 cluster rows, 64 slices. 256, 192 and 128 all make 64 tiles (one column),
  // one tile each: 64 x 256 = 16384, 64 x 190 = 12160, 64 x 136 = 8704. 64: 128 tiles, R = 62,
  // S = 1: 2 x 64 x 100 = 12800.
  EXPECT_EQ(hopper_width(16384, 128, 4096), 128);
}

TEST(TileWidth, LargeSquareKeepsTheWidest) {
  // 4096^3: 16 cluster rows, 64 slices. 256: 256 tiles, R = 58, S = 1: 4 x 64 x 256 = 65536.
  // 192: 16 x 22 = 352 tiles, R = 22, S = 3: 5 x 64 + 22 + 14 = 356 x 190 = 67640. 128: 512 tiles,
  // R = 50, S = 1: 8 x 64 x 136 = 69632. 64: 1024 tiles, R = 34: 16 x 64 x 100 = 102400.
  EXPECT_EQ(hopper_width(4096, 4096, 4096), 256);
}

TEST(TileWidth, ANarrowerWidthMustGainTheMargin) {
  // No split (max_splits 1). 4096 x 256 x 4096 on 66 workers: 16 cluster rows of one tile of 256
  // columns, 64 slices each: 64 x 256 = 16384; or of two tiles of 128: 32 tiles, still one each,
  // 64 x 128 = 8192 at an equal cost per column: taken. At a slice cost of 250 for 128 columns,
  // 64 x 250 = 16000 is less than 16384 but not by 5 % (15565): the wider stays.
  const WidthRule no_split = {12, 1, 14, 5};
  const TileWidth equal[] = {{256, 256}, {128, 128}};
  EXPECT_EQ(choose_width(4096, 256, 4096, 128, 64, 2, 66, equal, 2, no_split), 128);
  const TileWidth close[] = {{256, 256}, {128, 250}};
  EXPECT_EQ(choose_width(4096, 256, 4096, 128, 64, 2, 66, close, 2, no_split), 256);
}

}  // namespace
}  // namespace gemm
