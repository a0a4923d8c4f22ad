// The persistent tile scheduler (common/scheduler.cuh): every tile exactly once, cluster pairing,
// phantom tiles, the grouped order and the persistent walk; and the persistent grid's size.
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

// The grid sized to whole waves: W = ceil(units / resident) waves, ceil(units / W) workers. Values
// worked out by hand.
TEST(Scheduler, BalancedGridRunsTheSameWavesWithFewerWorkers) {
  EXPECT_EQ(balanced_grid(1024, 132), 128);  // 7.76 -> 8 waves of 128 (4096^3 in 128x128 tiles, one CTA an SM)
  EXPECT_EQ(balanced_grid(1024, 264), 256);  // 3.88 -> 4 waves of 256
  EXPECT_EQ(balanced_grid(256, 66), 64);     // 3.88 -> 4 waves of 64 clusters
  EXPECT_EQ(balanced_grid(144, 66), 48);     // 2.18 -> 3 waves of 48
  EXPECT_EQ(balanced_grid(16, 66), 16);      // one wave: one worker per unit
  EXPECT_EQ(balanced_grid(132, 132), 132);
  EXPECT_EQ(balanced_grid(133, 132), 67);  // 2 waves: 67 + 66
  EXPECT_EQ(balanced_grid(264, 132), 132);
  EXPECT_EQ(balanced_grid(0, 66), 1);
  EXPECT_EQ(balanced_grid(5, 0), 1);
  static_assert(balanced_grid(1024, 132) == 128, "usable in constant expressions");
  // The fewest workers that need no more waves than `resident` workers do.
  for (int64_t units = 1; units <= 300; ++units)
    for (int64_t resident = 1; resident <= 140; ++resident) {
      const int64_t w = balanced_grid(units, resident);
      const int64_t waves = (units + resident - 1) / resident;
      ASSERT_LE(w, std::min(units, resident)) << units << " units, " << resident << " resident";
      ASSERT_EQ((units + w - 1) / w, waves) << units << " units, " << resident << " resident";
      if (w > 1) {
        ASSERT_GT((units + w - 2) / (w - 1), waves) << units << " units, " << resident << " resident";
      }
    }
}

// The K order of a worker's turns: forward on its first unit, backward on its second, and so on;
// every turn loads each slice of its range exactly once. Values worked out by hand.
TEST(Scheduler, KSlicesAlternateDirectionByTurn) {
  WorkCursor w = strided_walk(/*worker=*/3, /*num_workers=*/8, /*count=*/30);
  const int64_t expected_units[] = {3, 11, 19, 27};
  for (int64_t t = 0; t < 4; ++t, w.advance()) {
    ASSERT_TRUE(w.valid());
    EXPECT_EQ(w.unit, expected_units[t]);
    EXPECT_EQ(w.turn(), t) << "turn counts the units taken before this one";
  }
  EXPECT_FALSE(w.valid());
  // Slices [2, 6): turn 0 loads 2 3 4 5, turn 1 loads 5 4 3 2, turn 2 forward again.
  const int64_t forward[] = {2, 3, 4, 5}, backward[] = {5, 4, 3, 2};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(k_slice_in_turn(0, i, 2, 6), forward[i]);
    EXPECT_EQ(k_slice_in_turn(1, i, 2, 6), backward[i]);
    EXPECT_EQ(k_slice_in_turn(2, i, 2, 6), forward[i]);
    EXPECT_EQ(k_slice_in_turn(7, i, 2, 6), backward[i]);
  }
  // Every slice once, at any turn and range (a split part's range included).
  for (int64_t turn = 0; turn < 4; ++turn)
    for (int64_t begin = 0; begin < 5; ++begin)
      for (int64_t end = begin + 1; end < 12; ++end) {
        std::vector<int> seen(static_cast<size_t>(end), 0);
        for (int64_t i = 0; i < end - begin; ++i) {
          const int64_t k = k_slice_in_turn(turn, i, begin, end);
          ASSERT_GE(k, begin);
          ASSERT_LT(k, end);
          ++seen[static_cast<size_t>(k)];
        }
        for (int64_t k = begin; k < end; ++k) ASSERT_EQ(seen[static_cast<size_t>(k)], 1) << "slice " << k;
      }
  static_assert(k_slice_in_turn(1, 0, 0, 64) == 63, "usable in constant expressions");
}

// num_work() is a constant expression; tile() and begin() are not (in a course handout they hold
// step 6's TODO, which must compile).
TEST(Scheduler, NumWorkUsableInConstantExpressions) {
  constexpr TileScheduler s(4, 4, 2, 4);
  static_assert(s.num_work() == 8);
  EXPECT_EQ(s.tile(1, 1).m, 3);
  EXPECT_EQ(s.tile(1, 1).n, 0);
  EXPECT_TRUE(s.tile(1, 1).valid);
  EXPECT_EQ(s.tile(2, 0).m, 0);
  EXPECT_EQ(s.tile(2, 0).n, 1);
}

}  // namespace
}  // namespace gemm
