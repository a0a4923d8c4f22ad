// SplitK (common/split_k.cuh): the last, partial wave split along K.
#include "common/split_k.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace gemm {
namespace {

// SplitK: the last, partial wave split along K. Expected values worked out by hand from the rule
// in common/split_k.cuh: R = units % workers left over, S = min(workers / R, k_slices /
// min_split_slices, max_splits), part p of S gets slices [p k / S, (p + 1) k / S).
TEST(SplitK, ThreeThousandCubedOnSixtySixClusters) {
  // 3072^3 in 256 x 256 cluster tiles: 12 x 12 = 144 units, 48 K slices, 66 clusters.
  // R = 144 - 2 x 66 = 12, S = min(66 / 12 = 5, 48 / 4 = 12, 16) = 5: 132 whole + 60 parts.
  const SplitK s(144, 66, 48, 4, 16);
  EXPECT_EQ(s.parts(), 5);
  EXPECT_EQ(s.split_units(), 12);
  EXPECT_EQ(s.num_items(), 192);
  const WorkItem whole = s.item(131);
  EXPECT_EQ(whole.unit, 131);
  EXPECT_EQ(whole.k_begin, 0);
  EXPECT_EQ(whole.k_end, 48);
  EXPECT_EQ(whole.parts, 1);
  EXPECT_EQ(whole.split, -1);
  const WorkItem first = s.item(132);  // unit 132, part 0: slices [0, 48 / 5 = 9)
  EXPECT_EQ(first.unit, 132);
  EXPECT_EQ(first.part, 0);
  EXPECT_EQ(first.parts, 5);
  EXPECT_EQ(first.split, 0);
  EXPECT_EQ(first.k_begin, 0);
  EXPECT_EQ(first.k_end, 9);
  const WorkItem last = s.item(136);  // unit 132, part 4: slices [4 x 48 / 5 = 38, 48)
  EXPECT_EQ(last.unit, 132);
  EXPECT_EQ(last.part, 4);
  EXPECT_EQ(last.k_begin, 38);
  EXPECT_EQ(last.k_end, 48);
  const WorkItem next = s.item(137);  // unit 133, part 0, split unit 1
  EXPECT_EQ(next.unit, 133);
  EXPECT_EQ(next.part, 0);
  EXPECT_EQ(next.split, 1);
  EXPECT_EQ(s.item(191).unit, 143);
  EXPECT_EQ(s.item(191).part, 4);
}

TEST(SplitK, FewerUnitsThanWorkers) {
  // 1024^3: 4 x 4 = 16 units, 16 K slices, 66 clusters: R = 16, S = min(4, 16 / 4 = 4, 16) = 4.
  const SplitK s(16, 66, 16, 4, 16);
  EXPECT_EQ(s.parts(), 4);
  EXPECT_EQ(s.num_items(), 64);
  EXPECT_EQ(s.item(5).unit, 1);  // 5 = 1 x 4 + 1
  EXPECT_EQ(s.item(5).part, 1);
  EXPECT_EQ(s.item(5).k_begin, 4);
  EXPECT_EQ(s.item(5).k_end, 8);
}

TEST(SplitK, NoSplitWhenTheLastWaveIsFullOrTooWideOrKTooShort) {
  const SplitK full(132, 66, 48, 4, 16);  // R = 0
  EXPECT_EQ(full.parts(), 1);
  EXPECT_EQ(full.num_items(), 132);
  const SplitK wide(256, 66, 64, 4, 16);  // 4096^3: R = 58, 66 / 58 = 1
  EXPECT_EQ(wide.parts(), 1);
  EXPECT_EQ(wide.num_items(), 256);
  EXPECT_EQ(wide.item(255).k_end, 64);
  EXPECT_EQ(wide.item(255).split, -1);
  const SplitK short_k(144, 66, 7, 4, 16);  // 7 / 4 = 1
  EXPECT_EQ(short_k.parts(), 1);
  const SplitK off(144, 66, 48, 4, 1);  // max_splits 1: off
  EXPECT_EQ(off.parts(), 1);
  EXPECT_EQ(off.num_items(), 144);
  const SplitK capped(144, 66, 48, 4, 3);
  EXPECT_EQ(capped.parts(), 3);
  const SplitK by_k(144, 66, 8, 4, 16);  // 8 / 4 = 2
  EXPECT_EQ(by_k.parts(), 2);
  EXPECT_EQ(by_k.num_items(), 132 + 24);
  const SplitK one_worker(7, 1, 48, 4, 16);  // R = 0 with one worker
  EXPECT_EQ(one_worker.parts(), 1);
  const SplitK zero_min(3, 8, 5, 0, 16);  // min < 1 counts as 1: S = min(8 / 3 = 2, 5)
  EXPECT_EQ(zero_min.parts(), 2);
}

// The grid a split asks for: every worker with an item when the last wave is split, else whole waves.
TEST(SplitK, GridFillsTheSplitWaveOrTrimsToWholeWaves) {
  // 4096^3: 256 units on 66 clusters, not split (66 / 58 = 1): 4 waves, balanced_grid -> 64.
  EXPECT_EQ(SplitK(256, 66, 64, 12, 16).grid(), 64);
  // 3072^3: split in 4 parts (min(66 / 12, 48 / 12, 16)): 132 + 48 = 180 items, every cluster busy.
  EXPECT_EQ(SplitK(144, 66, 48, 12, 16).grid(), 66);
  // 1024^3 at 12 slices a part: not split (16 / 12 = 1): one wave of 16.
  EXPECT_EQ(SplitK(16, 66, 16, 12, 16).grid(), 16);
  // 1024^3 at 4 slices a part: 4 parts, 64 items: the 64 clusters that have one.
  EXPECT_EQ(SplitK(16, 66, 16, 4, 16).grid(), 64);
  static_assert(SplitK(256, 66, 64, 12, 16).grid() == 64, "usable in constant expressions");
}

// For many shapes: every (unit, K slice) is computed by exactly one item, the parts of a unit are
// contiguous and non-empty, and each worker of the walk runs at most one part (the last wave).
TEST(SplitK, EverySliceOnceAndOnePartPerWorker) {
  for (int64_t units : {1, 5, 16, 66, 67, 100, 144, 256})
    for (int64_t workers : {1, 2, 3, 4, 66})
      for (int64_t k : {1, 3, 8, 9, 48, 64})
        for (int max_splits : {1, 2, 16}) {
          const SplitK s(units, workers, k, 4, max_splits);
          const std::string at = "units " + std::to_string(units) + ", workers " + std::to_string(workers) + ", k " +
                                 std::to_string(k) + ", max_splits " + std::to_string(max_splits);
          ASSERT_LE(s.parts(), std::max(1, max_splits)) << at;
          if (s.parts() > 1) {
            ASSERT_LE(s.split_units() * s.parts(), workers) << at;
          }
          std::vector<int> seen(static_cast<size_t>(units * k), 0);
          for (int64_t w = 0; w < workers; ++w) {
            int parts_run = 0;
            for (WorkCursor c = s.begin(w, workers); c.valid(); c.advance()) {
              const WorkItem it = s.item(c.unit);
              ASSERT_GE(it.unit, 0) << at;
              ASSERT_LT(it.unit, units) << at;
              ASSERT_LT(it.k_begin, it.k_end) << at << ", item " << c.unit;
              for (int64_t ks = it.k_begin; ks < it.k_end; ++ks) ++seen[static_cast<size_t>(it.unit * k + ks)];
              if (it.parts > 1) {
                ++parts_run;
                EXPECT_EQ(it.split, it.unit - (units - s.split_units())) << at;
                EXPECT_EQ(it.k_begin, it.part * k / it.parts) << at;
              }
            }
            EXPECT_LE(parts_run, 1) << at << ", worker " << w;
          }
          for (size_t i = 0; i < seen.size(); ++i)
            ASSERT_EQ(seen[i], 1) << at << ", unit " << i / k << " slice " << i % k;
        }
}

}  // namespace
}  // namespace gemm
