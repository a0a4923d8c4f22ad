// choose_tile (common/tile_config.cuh): step 12's rule for the tiling per problem. Expected values
// worked out by hand from the rule: T work units of k K slices on C workers (CTAs / cluster size;
// a unit, called a tile below, is a cluster's tile, or a CTA's where there is no cluster); the
// busiest worker runs T / C whole units and, if R = T % C > 0, one more unit or, when SplitK splits
// the last wave in S = min(C / R, k / min_split_slices, max_splits) > 1 parts, the larger part,
// ceil(k / S), plus the split's cost in slices; times the tiling's slice cost.
#include "common/tile_config.cuh"

#include <gtest/gtest.h>

#include <string>

namespace gemm {
namespace {

// Step 12's hopper values: 64-deep K slices, 132 CTAs (an H100 or H200), the tilings (rows,
// columns, CTAs per cluster, slice cost) and the rule's knobs.
constexpr TileChoice kTilings[] = {{128, 256, 2, 256}, {128, 192, 2, 190}, {128, 128, 2, 136}, {128, 64, 2, 101},
                                   {64, 256, 1, 134},  {64, 128, 1, 80},   {64, 64, 1, 64}};
constexpr TileRule kRule = {/*min_split_slices=*/12, /*max_splits=*/16, /*split_cost_slices=*/14,
                            /*gain_percent=*/5};

// The chosen tiling as "rows x columns / CTAs".
std::string hopper_tiling(int64_t m, int64_t n, int64_t k) {
  const TileChoice& t = kTilings[choose_tile(m, n, k, 64, 132, kTilings, 7, kRule)];
  return std::to_string(t.rows) + "x" + std::to_string(t.columns) + "/" + std::to_string(t.cluster_ctas);
}

TEST(TileConfig, BusiestWorkerSlices) {
  // 3072^3 at 256 columns: 12 x 12 = 144 cluster tiles of 48 slices. R = 144 - 2 x 66 = 12,
  // S = min(66 / 12 = 5, 48 / 12 = 4, 16) = 4: 2 x 48 + 48 / 4 + 14 = 122.
  EXPECT_EQ(busiest_worker_slices(144, 66, 48, kRule), 122);
  // Whole waves: 132 tiles on 66 workers, 2 x 48 = 96 and nothing left over.
  EXPECT_EQ(busiest_worker_slices(132, 66, 48, kRule), 96);
  // A leftover too short to split: 16 tiles of 16 slices, S = min(4, 16 / 12 = 1, 16) = 1: one tile.
  EXPECT_EQ(busiest_worker_slices(16, 66, 16, kRule), 16);
  // Splitting off (max_splits 1): 144 tiles, the leftover runs whole: 3 x 48 = 144.
  EXPECT_EQ(busiest_worker_slices(144, 66, 48, TileRule{12, 1, 14, 5}), 144);
}

TEST(TileConfig, SmallSquarePicks64RowTiles) {
  // 1024^3: 16 slices, nothing splits (16 / 12 = 1). 128 rows on 66 clusters: 4 cluster rows;
  // 256 wide: 16 tiles, 16 x 256 = 4096. 192: 24 tiles, 16 x 190 = 3040 <= 95 % of 4096. 128: 32
  // tiles, 16 x 136 = 2176 <= 95 % of 3040. 64: 64 tiles, 16 x 101 = 1616 <= 95 % of 2176. 64 rows
  // on 132 CTAs: 16 tile rows. 256: 64 tiles, 16 x 134 = 2144, not below 1535. 128: 128 tiles,
  // 16 x 80 = 1280 <= 1535: taken. 64: 256 tiles, R = 124, S = 1: 2 x 16 x 64 = 2048.
  EXPECT_EQ(hopper_tiling(1024, 1024, 1024), "64x128/1");
}

TEST(TileConfig, RaggedWavesPickTheWidthThatFillsThem) {
  // 3072^3: 48 slices. 128 rows: 12 cluster rows. 256: 144 tiles, R = 12, S = min(5, 4, 16) = 4:
  // 2 x 48 + 12 + 14 = 122 x 256 = 31232. 192: 192 tiles, R = 60, S = 1: 3 x 48 = 144 x 190 = 27360
  // <= 29670: taken. 128: 288 tiles, R = 24, S = 2: 4 x 48 + 24 + 14 = 230 x 136 = 31280. 64: 576
  // tiles, R = 48, S = 1: 9 x 48 = 432 x 101 = 43632. 64 rows: 48 tile rows on 132 CTAs. 256: 576
  // tiles, R = 48, S = min(2, 4, 16) = 2: 4 x 48 + 24 + 14 = 230 x 134 = 30820. 128: 1152 tiles,
  // R = 96, S = 1: 9 x 48 = 432 x 80 = 34560. 64: 2304 tiles, R = 60, S = 2: 17 x 48 + 24 + 14 = 854
  // x 64 = 54656.
  EXPECT_EQ(hopper_tiling(3072, 3072, 3072), "128x192/2");
}

TEST(TileConfig, NarrowOutputPicksTheTileThatFitsIt) {
  // 16384 x 128 x 4096: 64 slices. 128 rows: 64 cluster rows. 256, 192 and 128 all make 64 tiles
  // (one column), one each: 64 x 256 = 16384, 64 x 190 = 12160, 64 x 136 = 8704. 64: 128 tiles,
  // R = 62, S = 1: 2 x 64 x 101 = 12928. 64 rows: 256 tile rows on 132 CTAs. 256 and 128: 256
  // tiles, R = 124, S = 1: 2 x 64 = 128 x 134 = 17152, x 80 = 10240 (not below 8268). 64: 512 tiles,
  // R = 116: 4 x 64 x 64 = 16384.
  EXPECT_EQ(hopper_tiling(16384, 128, 4096), "128x128/2");
}

TEST(TileConfig, LargeSquareKeepsTheWidest) {
  // 4096^3: 64 slices. 128 rows: 16 cluster rows. 256: 256 tiles, R = 58, S = 1: 4 x 64 x 256 =
  // 65536. 192: 352 tiles, R = 22, S = 3: 5 x 64 + 22 + 14 = 356 x 190 = 67640. 128: 512 tiles,
  // R = 50, S = 1: 8 x 64 x 136 = 69632. 64: 1024 tiles, R = 34: 16 x 64 x 101 = 103424. 64 rows:
  // 64 tile rows. 256: 1024 tiles, R = 100, S = 1: 8 x 64 x 134 = 68608. 128: 2048 tiles, R = 68:
  // 16 x 64 x 80 = 81920. 64: 4096 tiles, R = 4, S = min(33, 5, 16) = 5: 31 x 64 + 13 + 14 = 2011
  // x 64 = 128704.
  EXPECT_EQ(hopper_tiling(4096, 4096, 4096), "128x256/2");
}

TEST(TileConfig, FewRowsPick64RowTiles) {
  // 64 x 8192 x 8192: 128 slices. 128 rows: one cluster row, three quarters of whose rows lie past
  // M. 256: 32 tiles on 66 clusters, S = min(2, 10, 16) = 2: 64 + 14 = 78 x 256 = 19968. 192: 43
  // tiles, S = 1: 128 x 190 = 24320. 128: 64 tiles, S = 1: 128 x 136 = 17408 <= 18970: taken. 64:
  // 128 tiles, R = 62, S = 1: 2 x 128 x 101 = 25856. 64 rows: one tile row
  // on 132 CTAs. 256: 32 tiles, R = 32, S = min(4, 10, 16) = 4: 32 + 14 = 46 x 134 = 6164 <= 95 % of
  // 17408: taken. 128: 64 tiles, S = 2: 64 + 14 = 78 x 80 = 6240, not below 5855. 64: 128 tiles,
  // S = 1: 128 x 64 = 8192.
  EXPECT_EQ(hopper_tiling(64, 8192, 8192), "64x256/1");
}

TEST(TileConfig, ALaterTilingMustGainTheMargin) {
  // No split (max_splits 1). 4096 x 256 x 4096 on 132 CTAs: 16 cluster rows of one tile of 256
  // columns, 64 slices each: 64 x 256 = 16384; or of two tiles of 128: 32 tiles, still one each,
  // 64 x 128 = 8192 at an equal cost per column: taken. At a slice cost of 250 for 128 columns,
  // 64 x 250 = 16000 is less than 16384 but not by 5 % (15565): the first stays.
  const TileRule no_split = {12, 1, 14, 5};
  const TileChoice equal[] = {{128, 256, 2, 256}, {128, 128, 2, 128}};
  EXPECT_EQ(choose_tile(4096, 256, 4096, 64, 132, equal, 2, no_split), 1);
  const TileChoice close[] = {{128, 256, 2, 256}, {128, 128, 2, 250}};
  EXPECT_EQ(choose_tile(4096, 256, 4096, 64, 132, close, 2, no_split), 0);
}

TEST(TileConfig, ClusterSizeSetsTheWorkers) {
  // The same tiles, 128 x 128 at 4096 x 512 x 4096 (32 x 4 = 128 tiles, 64 slices, no split), on
  // 132 CTAs: with a 2-CTA cluster, 64 units of two tiles on 66 workers, one each: 64 slices; without,
  // 128 tiles on 132 workers, one each: 64 too. At 8192 x 512: 128 units on 66 (R = 62): 128; 256
  // tiles on 132 (R = 124): 128 as well. At 4224 x 512 (33 tile rows): 17 x 4 = 68 units on 66, R = 2:
  // 2 x 64 = 128; 132 tiles on 132 workers: 64. Equal costs: the second (no cluster) is taken there only.
  const TileRule no_split = {12, 1, 14, 5};
  const TileChoice pair_then_single[] = {{128, 128, 2, 100}, {128, 128, 1, 100}};
  EXPECT_EQ(choose_tile(4096, 512, 4096, 64, 132, pair_then_single, 2, no_split), 0);
  EXPECT_EQ(choose_tile(8192, 512, 4096, 64, 132, pair_then_single, 2, no_split), 0);
  EXPECT_EQ(choose_tile(4224, 512, 4096, 64, 132, pair_then_single, 2, no_split), 1);
}

}  // namespace
}  // namespace gemm
