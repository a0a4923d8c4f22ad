// The persistent tile scheduler (common/scheduler.cuh): every tile exactly once, cluster pairing,
// phantom tiles, the grouped order and the persistent walk.
#include "common/scheduler.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gemm {
namespace {

struct Shape {
  int64_t tiles_m, tiles_n;
};

const Shape kShapes[] = {{1, 1}, {1, 7}, {7, 1}, {2, 2}, {3, 5}, {5, 3}, {6, 3}, {9, 11}, {16, 16}, {33, 17}, {64, 2}};
const int kClusters[] = {1, 2};
const int kGroups[] = {1, 2, 4, 8, 16};
const int64_t kWorkers[] = {1, 3, 132};

std::string where(const Shape& s, int cluster_m, int group_m) {
  return "tiles " + std::to_string(s.tiles_m) + "x" + std::to_string(s.tiles_n) + ", cluster_m " +
         std::to_string(cluster_m) + ", group_m " + std::to_string(group_m);
}

TEST(Scheduler, NumWorkCountsClusterTiles) {
  EXPECT_EQ(TileScheduler(1, 1, 1, 8).num_work(), 1);
  EXPECT_EQ(TileScheduler(33, 17, 1, 8).num_work(), 33 * 17);
  EXPECT_EQ(TileScheduler(33, 17, 2, 8).num_work(), 17 * 17);  // ceil(33 / 2) = 17 cluster rows
  EXPECT_EQ(TileScheduler(1, 5, 2, 8).num_work(), 5);          // one cluster row, rank 1 all phantom
  EXPECT_EQ(TileScheduler(0, 5, 1, 8).num_work(), 0);
  EXPECT_EQ(TileScheduler(5, 0, 1, 8).num_work(), 0);
}

TEST(Scheduler, GroupRoundsUpToClusterAndClipsBelowOne) {
  EXPECT_EQ(TileScheduler(8, 8, 1, 1).group_m(), 1);
  EXPECT_EQ(TileScheduler(8, 8, 1, 3).group_m(), 3);
  EXPECT_EQ(TileScheduler(8, 8, 2, 1).group_m(), 2);
  EXPECT_EQ(TileScheduler(8, 8, 2, 3).group_m(), 4);
  EXPECT_EQ(TileScheduler(8, 8, 2, 16).group_m(), 16);
  EXPECT_EQ(TileScheduler(8, 8, 1, 0).group_m(), 1);
  EXPECT_EQ(TileScheduler(8, 8, 2, 0).group_m(), 2);
  EXPECT_EQ(TileScheduler(8, 8, 2, -4).group_m(), 2);
  EXPECT_EQ(TileScheduler(8, 8, 0, 4).cluster_m(), 1);
}

// The worked example in the header comment: tiles 6 x 3, no cluster, group_m 4.
TEST(Scheduler, DocumentedOrder) {
  const TileScheduler s(6, 3, 1, 4);
  const int expected[6][3] = {{0, 4, 8}, {1, 5, 9}, {2, 6, 10}, {3, 7, 11}, {12, 14, 16}, {13, 15, 17}};
  ASSERT_EQ(s.num_work(), 18);
  for (int64_t w = 0; w < s.num_work(); ++w) {
    const Tile t = s.tile(w, 0);
    ASSERT_TRUE(t.valid);
    EXPECT_EQ(expected[t.m][t.n], w) << "unit " << w << " -> (" << t.m << ", " << t.n << ")";
  }
}

// Cluster 2 on 5 x 2 tiles, group 2: each unit is a pair (2i, n), (2i+1, n); the last cluster row
// (m = 4, 5) has its rank 1 past M.
TEST(Scheduler, DocumentedClusterOrderWithPhantom) {
  const TileScheduler s(5, 2, 2, 2);
  ASSERT_EQ(s.num_work(), 6);
  const int64_t m0[6] = {0, 0, 2, 2, 4, 4};
  const int64_t n[6] = {0, 1, 0, 1, 0, 1};
  for (int64_t w = 0; w < 6; ++w) {
    const Tile r0 = s.tile(w, 0), r1 = s.tile(w, 1);
    EXPECT_EQ(r0.m, m0[w]);
    EXPECT_EQ(r1.m, m0[w] + 1);
    EXPECT_EQ(r0.n, n[w]);
    EXPECT_EQ(r1.n, n[w]);
    EXPECT_TRUE(r0.valid);
    EXPECT_EQ(r1.valid, w < 4) << "unit " << w;
  }
}

// Every real tile exactly once over all workers and ranks; phantoms only in the last cluster row
// past M; the CTAs of a cluster share n and are adjacent in m, rank 0 on a multiple of cluster_m.
TEST(Scheduler, EveryTileOnceAcrossPersistentWorkers) {
  for (const Shape& shape : kShapes) {
    for (int cluster_m : kClusters) {
      for (int group_m : kGroups) {
        const TileScheduler s(shape.tiles_m, shape.tiles_n, cluster_m, group_m);
        std::vector<int64_t> workers(std::begin(kWorkers), std::end(kWorkers));
        workers.push_back(s.num_work() + 5);  // more workers than units: some get none
        for (int64_t num_workers : workers) {
          SCOPED_TRACE(where(shape, cluster_m, group_m) + ", workers " + std::to_string(num_workers));
          std::vector<int> seen(static_cast<size_t>(shape.tiles_m * shape.tiles_n), 0);
          std::vector<int> unit_seen(static_cast<size_t>(s.num_work()), 0);
          int64_t phantoms = 0;
          for (int64_t c = 0; c < num_workers; ++c) {
            int64_t count = 0;
            for (WorkCursor w = s.begin(c, num_workers); w.valid(); w.advance()) {
              ASSERT_GE(w.unit, 0);
              ASSERT_LT(w.unit, s.num_work());
              ASSERT_EQ(w.unit % num_workers, c) << "worker " << c << " got a unit of another worker";
              ++unit_seen[static_cast<size_t>(w.unit)];
              ++count;
              const Tile lead = s.tile(w.unit, 0);
              ASSERT_EQ(lead.m % cluster_m, 0) << "rank 0 must start the cluster's M pair";
              ASSERT_TRUE(lead.valid) << "rank 0 of a cluster tile is always inside M";
              for (int rank = 0; rank < cluster_m; ++rank) {
                const Tile t = s.tile(w.unit, rank);
                ASSERT_EQ(t.n, lead.n) << "the CTAs of a cluster share the N tile";
                ASSERT_EQ(t.m, lead.m + rank) << "the CTAs of a cluster are adjacent along M";
                ASSERT_GE(t.n, 0);
                ASSERT_LT(t.n, shape.tiles_n);
                ASSERT_EQ(t.valid, t.m < shape.tiles_m);
                if (t.valid) {
                  ++seen[static_cast<size_t>(t.m * shape.tiles_n + t.n)];
                } else {
                  // A phantom only in the last cluster row, hanging past M.
                  ASSERT_GE(t.m, shape.tiles_m);
                  ASSERT_LT(t.m, (shape.tiles_m + cluster_m - 1) / cluster_m * cluster_m);
                  ++phantoms;
                }
              }
            }
            // Worker c gets units c, c + C, ...: ceil((num_work - c) / C) of them, or none.
            const int64_t expected = c < s.num_work() ? (s.num_work() - c + num_workers - 1) / num_workers : 0;
            ASSERT_EQ(count, expected) << "worker " << c;
          }
          for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "tile " << i;
          for (size_t i = 0; i < unit_seen.size(); ++i) ASSERT_EQ(unit_seen[i], 1) << "unit " << i;
          const int64_t padded_m = (shape.tiles_m + cluster_m - 1) / cluster_m * cluster_m;
          ASSERT_EQ(phantoms, (padded_m - shape.tiles_m) * shape.tiles_n);
        }
      }
    }
  }
}

// L2 locality: the units of group g are one contiguous range of unit numbers, cover exactly the
// tile rows [g * group_m, (g + 1) * group_m) (clipped at the last cluster row), and inside a group
// the next unit is the next cluster row of the same N tile, or the group's first row of the next
// N tile. So consecutive units, which run at the same time on neighbouring workers, stay inside a
// band of group_m tile rows.
TEST(Scheduler, ConsecutiveUnitsStayInsideAGroup) {
  for (const Shape& shape : kShapes) {
    for (int cluster_m : kClusters) {
      for (int group_m : kGroups) {
        SCOPED_TRACE(where(shape, cluster_m, group_m));
        const TileScheduler s(shape.tiles_m, shape.tiles_n, cluster_m, group_m);
        const int64_t g_m = s.group_m();
        ASSERT_EQ(g_m % cluster_m, 0);
        ASSERT_GE(g_m, group_m);
        ASSERT_LT(g_m, group_m + cluster_m);
        const int64_t padded_m = (shape.tiles_m + cluster_m - 1) / cluster_m * cluster_m;
        for (int64_t w = 0; w < s.num_work(); ++w) {
          const Tile t = s.tile(w, 0);
          const int64_t group = t.m / g_m;
          const int64_t group_first = group * g_m;
          const int64_t group_rows = (padded_m - group_first < g_m ? padded_m - group_first : g_m);
          // Units before this group: every full group before it holds g_m / cluster_m x tiles_n units.
          const int64_t group_begin = group * (g_m / cluster_m) * shape.tiles_n;
          const int64_t group_end = group_begin + group_rows / cluster_m * shape.tiles_n;
          ASSERT_GE(w, group_begin) << "unit " << w;
          ASSERT_LT(w, group_end) << "unit " << w;
          // Inside the group: M fastest, then N.
          const int64_t in_group = w - group_begin;
          ASSERT_EQ(t.m, group_first + in_group % (group_rows / cluster_m) * cluster_m) << "unit " << w;
          ASSERT_EQ(t.n, in_group / (group_rows / cluster_m)) << "unit " << w;
          if (w + 1 < group_end) {
            const Tile next = s.tile(w + 1, 0);
            ASSERT_EQ(next.m / g_m, group) << "unit " << w + 1 << " left the group early";
            const bool down = next.n == t.n && next.m == t.m + cluster_m;
            const bool wrap = next.n == t.n + 1 && next.m == group_first;
            ASSERT_TRUE(down || wrap) << "unit " << w << " -> " << w + 1;
          }
        }
      }
    }
  }
}

// The last group is shorter when the cluster rows do not divide into whole groups.
TEST(Scheduler, LastGroupMayBeShort) {
  const TileScheduler s(9, 4, 2, 4);  // cluster rows: 5 -> groups of 2 cluster rows: 2, 2, 1
  EXPECT_EQ(s.num_work(), 20);
  // The last group: cluster row 4 (tiles m = 8 and the phantom 9), n = 0..3, units 16..19.
  for (int64_t w = 16; w < 20; ++w) {
    EXPECT_EQ(s.tile(w, 0).m, 8);
    EXPECT_EQ(s.tile(w, 0).n, w - 16);
    EXPECT_TRUE(s.tile(w, 0).valid);
    EXPECT_EQ(s.tile(w, 1).m, 9);
    EXPECT_FALSE(s.tile(w, 1).valid);
  }
}

TEST(Scheduler, UsableInConstantExpressions) {
  constexpr TileScheduler s(4, 4, 2, 4);
  static_assert(s.num_work() == 8);
  static_assert(s.tile(1, 1).m == 3 && s.tile(1, 1).n == 0 && s.tile(1, 1).valid);
  static_assert(s.tile(2, 0).m == 0 && s.tile(2, 0).n == 1);
  SUCCEED();
}

// SplitK: the last, partial wave shared out along K. Expected values worked out by hand from the
// rule in common/scheduler.cuh: R = units % workers left over, W = min(workers, R k /
// min_split_slices, R max_splits) runs (none if W <= R), run c = slices [c R k / W, (c + 1) R k / W)
// (rounded down) of the leftover units' slices counted unit after unit; a unit's parts are the runs
// that touch it, part 0 holding its slice 0.

void expect_item(const WorkItem& w, int64_t unit, int64_t k_begin, int64_t k_end, int part, int parts, int64_t split) {
  EXPECT_EQ(w.unit, unit);
  EXPECT_EQ(w.k_begin, k_begin);
  EXPECT_EQ(w.k_end, k_end);
  EXPECT_EQ(w.part, part);
  EXPECT_EQ(w.parts, parts);
  EXPECT_EQ(w.split, split);
}

// The items of worker `worker`, in walk order.
std::vector<WorkItem> items_of(const SplitK& s, int64_t worker) {
  std::vector<WorkItem> items;
  for (WorkCursor c = s.begin(worker); c.valid(); c.advance()) items.push_back(s.item(c.unit));
  return items;
}

TEST(SplitK, ThreeThousandSeventyTwoCubedOnSixtySixClusters) {
  // 3072^3 in 256 x 256 cluster tiles: 12 x 12 = 144 units of 48 K slices, 66 clusters.
  // R = 144 - 2 x 66 = 12, 576 slices; W = min(66, 576 / 12 = 48, 12 x 16) = 48 runs of 12 slices:
  // every leftover unit in 4 parts of 12, as the runs meet the unit boundaries.
  const SplitK s(144, 66, 48, 12, 16);
  EXPECT_EQ(s.runs(), 48);
  EXPECT_EQ(s.split_units(), 12);
  EXPECT_EQ(s.max_parts(), 4);
  EXPECT_EQ(s.busy_workers(), 66);
  const std::vector<WorkItem> w0 = items_of(s, 0);  // items 0, 66, then run 0: slices [0, 12)
  ASSERT_EQ(w0.size(), 3u);
  expect_item(w0[0], 0, 0, 48, 0, 1, -1);
  expect_item(w0[1], 66, 0, 48, 0, 1, -1);
  expect_item(w0[2], 132, 0, 12, 0, 4, 0);
  const std::vector<WorkItem> w5 = items_of(s, 5);  // run 5: slices [60, 72) = unit 133's [12, 24)
  ASSERT_EQ(w5.size(), 3u);
  expect_item(w5[2], 133, 12, 24, 1, 4, 1);
  const std::vector<WorkItem> w47 = items_of(s, 47);  // run 47: [564, 576) = unit 143's [36, 48)
  ASSERT_EQ(w47.size(), 3u);
  expect_item(w47[2], 143, 36, 48, 3, 4, 11);
  EXPECT_EQ(items_of(s, 48).size(), 2u);  // runs 0 .. 47 only: worker 48 has the full waves
  EXPECT_EQ(w47[2].slot(3), 11 * 4 + 3);
}

TEST(SplitK, FortyNinetySixCubedRunsCrossUnits) {
  // 4096^3: 16 x 16 = 256 units of 64 slices, 66 clusters: R = 256 - 3 x 66 = 58, 3712 slices;
  // W = min(66, 3712 / 12 = 309, 58 x 16) = 66 runs of 56 or 57 slices. Run c starts at
  // c x 3712 / 66: run 1 at 56, run 2 at 112, run 6 at 337, run 7 at 393, run 8 at 449, run 9 at 506.
  const SplitK s(256, 66, 64, 12, 16);
  EXPECT_EQ(s.runs(), 66);
  EXPECT_EQ(s.split_units(), 58);
  EXPECT_EQ(s.max_parts(), 3);
  // Worker 1: items 1, 67, 133, then run 1 = [56, 112): unit 198's [56, 64) (runs 0 and 1 touch
  // unit 0 of the split: part 1 of 2), then unit 199's [0, 48) (runs 1 and 2: part 0 of 2).
  const std::vector<WorkItem> w1 = items_of(s, 1);
  ASSERT_EQ(w1.size(), 5u);
  expect_item(w1[2], 133, 0, 64, 0, 1, -1);
  expect_item(w1[3], 198, 56, 64, 1, 2, 0);
  expect_item(w1[4], 199, 0, 48, 0, 2, 1);
  // Worker 7: run [393, 449): unit 204's [9, 64) (split unit 6 = [384, 448), touched by runs 6 and 7),
  // then unit 205's [0, 1) (split unit 7 = [448, 512), touched by runs 7, 8 and 9: 3 parts).
  const std::vector<WorkItem> w7 = items_of(s, 7);
  ASSERT_EQ(w7.size(), 5u);
  expect_item(w7[3], 204, 9, 64, 1, 2, 6);
  expect_item(w7[4], 205, 0, 1, 0, 3, 7);
  const std::vector<WorkItem> w8 = items_of(s, 8);  // run 8 = [449, 506), inside split unit 7
  ASSERT_EQ(w8.size(), 4u);
  expect_item(w8[3], 205, 1, 58, 1, 3, 7);
  EXPECT_EQ(w8[3].slot(1), 7 * 3 + 1);
  const std::vector<WorkItem> w9 = items_of(s, 9);  // run 9 = [506, 562): [58, 64) of unit 205, [0, 50) of 206
  ASSERT_EQ(w9.size(), 5u);
  expect_item(w9[3], 205, 58, 64, 2, 3, 7);
  expect_item(w9[4], 206, 0, 50, 0, 2, 8);
}

TEST(SplitK, FewerUnitsThanWorkers) {
  // 1024^3: 4 x 4 = 16 units of 16 slices, 66 clusters: R = 16, 256 slices; W = min(66,
  // 256 / 12 = 21, 256) = 21 runs; run 1 = [256 / 21 = 12, 512 / 21 = 24).
  const SplitK s(16, 66, 16, 12, 16);
  EXPECT_EQ(s.runs(), 21);
  EXPECT_EQ(s.busy_workers(), 21);  // no full wave: only the runs' workers have work
  const std::vector<WorkItem> w1 = items_of(s, 1);
  ASSERT_EQ(w1.size(), 2u);
  expect_item(w1[0], 0, 12, 16, 1, 2, 0);
  expect_item(w1[1], 1, 0, 8, 0, 2, 1);
  EXPECT_TRUE(items_of(s, 21).empty());
}

TEST(SplitK, NoSplitWhenTheLastWaveIsFullOrRunsWouldBeTooShortOrTurnedOff) {
  const SplitK full(132, 66, 48, 12, 16);  // R = 0
  EXPECT_EQ(full.runs(), 0);
  EXPECT_EQ(full.max_parts(), 1);
  EXPECT_EQ(full.busy_workers(), 66);
  EXPECT_EQ(items_of(full, 65).size(), 2u);
  const SplitK short_k(144, 66, 8, 48, 16);  // R = 12, 96 slices / 48 = 2 runs <= 12
  EXPECT_EQ(short_k.runs(), 0);
  EXPECT_EQ(short_k.split_units(), 0);
  EXPECT_EQ(items_of(short_k, 11).size(), 3u);  // 11, 77, 143: the leftover units whole
  EXPECT_EQ(items_of(short_k, 12).size(), 2u);
  const SplitK off(144, 66, 48, 12, 1);  // max_splits 1: at most R runs
  EXPECT_EQ(off.runs(), 0);
  EXPECT_EQ(off.max_parts(), 1);
  const SplitK few(10, 66, 48, 12, 16);  // R = 10: W = min(66, 480 / 12 = 40, 160) = 40 runs of 12
  EXPECT_EQ(few.runs(), 40);
  const SplitK one_worker(7, 1, 48, 12, 16);  // R = 0 with one worker
  EXPECT_EQ(one_worker.runs(), 0);
  const SplitK capped(144, 66, 48, 12, 2);  // W = min(66, 48, 12 x 2 = 24): runs of 24, 2 parts a unit
  EXPECT_EQ(capped.runs(), 24);
  EXPECT_EQ(capped.max_parts(), 2);
  const SplitK zero_min(3, 8, 5, 0, 16);  // min < 1 counts as 1: W = min(8, 15, 48) = 8 runs of 15 / 8
  EXPECT_EQ(zero_min.runs(), 8);
  EXPECT_EQ(zero_min.busy_workers(), 8);
  const SplitK few_workers_than_units(3, 8, 5, 3, 16);  // W = min(8, 15 / 3 = 5, 48) = 5 > R = 3
  EXPECT_EQ(few_workers_than_units.runs(), 5);
  const SplitK not_more_than_units(3, 8, 5, 5, 16);  // W = min(8, 15 / 5 = 3, 48) = 3 = R: no split
  EXPECT_EQ(not_more_than_units.runs(), 0);
  EXPECT_EQ(not_more_than_units.busy_workers(), 3);
}

// For many shapes: every (unit, K slice) is computed by exactly one item; the parts of a split unit
// are its runs' items in part order, contiguous, part 0 at slice 0, all agreeing on parts and the
// split index; each worker runs the same number of full-wave items and at most two of the last
// wave, which together hold at least min_split_slices slices.
TEST(SplitK, EverySliceOnceAndEvenRuns) {
  for (int64_t units : {1, 5, 16, 66, 67, 100, 144, 256})
    for (int64_t workers : {1, 2, 3, 4, 66})
      for (int64_t k : {1, 3, 8, 9, 48, 64})
        for (int min_slices : {1, 4, 12})
          for (int max_splits : {1, 2, 16}) {
            const SplitK s(units, workers, k, min_slices, max_splits);
            const std::string at = "units " + std::to_string(units) + ", workers " + std::to_string(workers) +
                                   ", k " + std::to_string(k) + ", min " + std::to_string(min_slices) +
                                   ", max_splits " + std::to_string(max_splits);
            const int64_t leftover = units % workers;
            const int64_t whole = units - s.split_units();
            ASSERT_TRUE(s.split_units() == 0 || s.split_units() == leftover) << at;
            ASSERT_LE(s.runs(), workers) << at;
            ASSERT_LE(s.runs(), leftover * std::max(1, max_splits)) << at;
            if (s.runs() > 0) {
              ASSERT_GT(s.runs(), leftover) << at;
            }
            std::vector<int> seen(static_cast<size_t>(units * k), 0);
            // For each split unit: the parts seen, by part index: [k_begin, k_end).
            std::vector<std::vector<std::pair<int64_t, int64_t>>> parts(static_cast<size_t>(s.split_units()));
            int64_t busy = 0;
            for (int64_t w = 0; w < workers; ++w) {
              int64_t full_items = 0, run_slices = 0, run_items = 0;
              for (const WorkItem& it : items_of(s, w)) {
                ASSERT_GE(it.unit, 0) << at;
                ASSERT_LT(it.unit, units) << at;
                ASSERT_LT(it.k_begin, it.k_end) << at << ", worker " << w;
                for (int64_t ks = it.k_begin; ks < it.k_end; ++ks) ++seen[static_cast<size_t>(it.unit * k + ks)];
                if (it.unit < whole) {
                  ASSERT_EQ(run_items, 0) << at << ": a full-wave item after the run";
                  ++full_items;
                  continue;
                }
                ++run_items;
                run_slices += it.k_end - it.k_begin;
                ASSERT_LE(it.parts, s.max_parts()) << at;
                if (it.parts == 1) {
                  ASSERT_EQ(it.split, -1) << at;
                  continue;
                }
                ASSERT_EQ(it.split, it.unit - whole) << at;
                ASSERT_EQ(it.max_parts, s.max_parts()) << at;
                auto& p = parts[static_cast<size_t>(it.split)];
                if (p.empty()) p.resize(static_cast<size_t>(it.parts), {-1, -1});
                ASSERT_EQ(p.size(), static_cast<size_t>(it.parts)) << at << ": parts disagree";
                ASSERT_EQ(p[static_cast<size_t>(it.part)].first, -1) << at << ": part seen twice";
                p[static_cast<size_t>(it.part)] = {it.k_begin, it.k_end};
              }
              if (full_items + run_items > 0) busy = w + 1;
              ASSERT_EQ(full_items, whole / workers + (whole % workers > w ? 1 : 0)) << at << ", worker " << w;
              ASSERT_LE(run_items, 2) << at << ", worker " << w;
              if (run_items > 0) {
                ASSERT_GE(run_slices, min_slices) << at << ", worker " << w;
              }
            }
            EXPECT_EQ(s.busy_workers(), std::max<int64_t>(busy, 1)) << at;
            for (const auto& p : parts) {
              if (p.empty()) continue;
              ASSERT_EQ(p.front().first, 0) << at;
              ASSERT_EQ(p.back().second, k) << at;
              for (size_t i = 1; i < p.size(); ++i) ASSERT_EQ(p[i].first, p[i - 1].second) << at;
            }
            for (size_t i = 0; i < seen.size(); ++i)
              ASSERT_EQ(seen[i], 1) << at << ", unit " << i / k << " slice " << i % k;
          }
}

}  // namespace
}  // namespace gemm
