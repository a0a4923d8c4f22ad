// The persistent tile scheduler: which output tile each CTA of a resident grid computes next.
// Plain C++ (GEMM_HD): the same code on the GPU, in the emulator and in the tests.
//
// Work units. The unit of work is a cluster tile: cluster_m output tiles adjacent along M that
// share one N tile (for cluster_m = 2: tiles (2i, n) and (2i+1, n)). CTA rank r of the cluster
// takes tile (cluster_m * i + r, n), so the CTAs of a cluster need the same B tile (hopper:
// multicast it; blackwell cta_group::2: each loads half of it) and rank 0 has an M index that is a
// multiple of cluster_m (the even CTA leads a blackwell pair). When tiles_m is not a multiple of
// cluster_m the last cluster row hangs past M: its high ranks get a tile with valid = false. Such
// a phantom CTA must still run the whole pipeline with its partner (its loads are zero-filled past
// the edge, its barriers are signalled by the pair) and only skip writing D.
//
// Order (rasterisation). Units are numbered so that units running at the same time touch few
// rows of A and columns of B, which then stay in L2: the cluster rows are cut into groups of
// group_m output-tile rows; inside a group the walk goes down M fastest, then along N; groups follow
// one another along M. The last group is shorter when the cluster rows do not divide evenly.
// With tiles_m = 6, tiles_n = 3, cluster_m = 1, group_m = 4 the units are numbered
//        n=0 n=1 n=2
//   m=0    0   4   8
//   m=1    1   5   9
//   m=2    2   6  10
//   m=3    3   7  11
//   m=4   12  14  16
//   m=5   13  15  17
// group_m is counted in output tiles and is rounded UP to a multiple of cluster_m (so a cluster
// never straddles two groups); a group_m below 1 counts as 1. (pranjalssh's fastest order used
// blocks of 16 x 8 tiles; CUTLASS's swizzle is 1, 2, 4 or 8.)
//
// Persistent walk. Worker c of C (a CTA, or a cluster when cluster_m > 1: c = %clusterid.x,
// C = %nclusterid.x) takes units c, c + C, c + 2C, ...: at any moment the C workers run C
// consecutive units. Inside a group these touch at most R cluster rows of A and about C / R + 1
// tile columns of B (R = group_m / cluster_m), which the workers then share through L2.
#pragma once

#include "common/defs.cuh"

namespace gemm {

// One CTA's output tile, in tile units (multiply by the CTA tile size for elements).
struct Tile {
  int64_t m = 0;       // tile row index along M
  int64_t n = 0;       // tile column index along N
  bool valid = false;  // false: a phantom tile past M (see above); compute nothing into D
};

// The work units of one persistent worker: work, work + stride, ... while below end.
//   for (WorkCursor w = sched.begin(worker, num_workers); w.valid(); w.advance()) {
//     const Tile t = sched.tile(w.unit, cta_rank);
//     ...
//   }
struct WorkCursor {
  int64_t unit = 0;    // the current work unit
  int64_t stride = 1;  // number of workers
  int64_t end = 0;     // number of units

  GEMM_HD constexpr bool valid() const { return unit < end; }
  GEMM_HD constexpr void advance() { unit += stride; }
  // How many units this worker took before the current one (it started at unit = worker < stride).
  GEMM_HD constexpr int64_t turn() const { return unit / stride; }
};

// The order of a unit's K slices: the i-th slice (i = 0 .. k_end - k_begin - 1) that a worker loads
// on its turn `turn` is k_begin + i on even turns and k_end - 1 - i on odd ones. The workers run in
// waves (all of them on their turn t at once, C consecutive units), and a wave shares the rows of A
// or the columns of B of its units with the wave before it (the next columns of the same L2 group).
// Walking K the other way than that wave did, a worker starts on the slices the GPU loaded last,
// which are still in L2, instead of on the first ones, which the wave's other slices have pushed
// towards eviction. The sum over K is the same in any order (up to the float rounding of the
// additions).
GEMM_HD constexpr int64_t k_slice_in_turn(int64_t turn, int64_t i, int64_t k_begin, int64_t k_end) {
  return turn % 2 == 0 ? k_begin + i : k_end - 1 - i;
}

// Worker `worker` of `num_workers` over `count` units: worker, worker + num_workers, ...
GEMM_HD constexpr WorkCursor strided_walk(int64_t worker, int64_t num_workers, int64_t count) {
  WorkCursor c;
  c.unit = worker;
  c.stride = num_workers;
  c.end = count;
  return c;
}

// The persistent grid, sized to whole waves, for a kernel of one CTA (or cluster) per SM (steps
// 8-10). With `resident` workers, `units` take W = ceil(units / resident) waves, the last one perhaps
// only partly filled; the same W waves need only ceil(units / W) workers, every one busy to the
// end. Launching those and no more leaves the rest of the GPU idle from the start instead of in the
// last wave, which measured faster (step 8's NOTES.md), as if the busy SMs ran faster for sharing
// the GPU's power and L2 among fewer of them. Not for two CTAs per SM (steps 6-7): the hardware
// places a grid's CTAs one per SM before it doubles up, so a trimmed grid leaves some SMs one CTA
// and others two, and measured no better. Never more workers than units; at least 1.
// Example: 1024 tiles on 132 resident CTAs are 8 waves (7.76), which 128 CTAs run as well.
GEMM_HD constexpr int64_t balanced_grid(int64_t units, int64_t resident) {
  if (units < 1 || resident < 1) return 1;
  const int64_t waves = (units + resident - 1) / resident;
  return (units + waves - 1) / waves;
}

class TileScheduler {
 public:
  // tiles_m x tiles_n output tiles; cluster_m CTAs per cluster along M (1 or 2 in the steps);
  // group_m output-tile rows per L2 group (rounded up to a multiple of cluster_m; < 1 counts as 1).
  GEMM_HD constexpr TileScheduler(int64_t tiles_m, int64_t tiles_n, int cluster_m, int group_m)
      : tiles_m_(tiles_m > 0 ? tiles_m : 0),
        tiles_n_(tiles_n > 0 ? tiles_n : 0),
        cluster_m_(cluster_m > 1 ? cluster_m : 1),
        cluster_rows_((tiles_m_ + cluster_m_ - 1) / cluster_m_),
        group_clusters_(((group_m > 1 ? group_m : 1) + cluster_m_ - 1) / cluster_m_) {}

  GEMM_HD constexpr int64_t tiles_m() const { return tiles_m_; }
  GEMM_HD constexpr int64_t tiles_n() const { return tiles_n_; }
  GEMM_HD constexpr int cluster_m() const { return cluster_m_; }
  // The group size in use, in output-tile rows: a multiple of cluster_m.
  GEMM_HD constexpr int64_t group_m() const { return group_clusters_ * cluster_m_; }

  // Number of work units (cluster tiles): ceil(tiles_m / cluster_m) x tiles_n.
  GEMM_HD constexpr int64_t num_work() const { return cluster_rows_ * tiles_n_; }

  // The tile of CTA `cta_rank` (0 .. cluster_m - 1) in work unit `work` (0 .. num_work() - 1).
  GEMM_HD Tile tile(int64_t work, int cta_rank) const {
    Tile t;
    // BEGIN SOLUTION step06: unit `work` is in group g = work / (group_clusters_ * tiles_n_), whose first cluster row is g * group_clusters_ and which has min(group_clusters_, cluster_rows_ - that row) rows; at position p = work - g * group_clusters_ * tiles_n_ in it, M goes first: cluster row = first + p % rows, t.n = p / rows; t.m = cluster row * cluster_m_ + cta_rank, valid while t.m < tiles_m_.
    const int64_t units_per_group = group_clusters_ * tiles_n_;
    const int64_t group = work / units_per_group;
    const int64_t first_row = group * group_clusters_;  // in cluster rows
    const int64_t rows_left = cluster_rows_ - first_row;
    const int64_t rows = rows_left < group_clusters_ ? rows_left : group_clusters_;  // the last group may be short
    const int64_t in_group = work - group * units_per_group;
    t.m = (first_row + in_group % rows) * cluster_m_ + cta_rank;
    t.n = in_group / rows;
    t.valid = t.m < tiles_m_;
    // END SOLUTION step06
    return t;
  }

  // The units of worker `worker` of `num_workers`: worker, worker + num_workers, ...
  GEMM_HD WorkCursor begin(int64_t worker, int64_t num_workers) const {
    WorkCursor c;
    // BEGIN SOLUTION step06: worker w of W takes units w, w + W, w + 2W, ... while below num_work() (strided_walk).
    c = strided_walk(worker, num_workers, num_work());
    // END SOLUTION step06
    return c;
  }

 private:
  int64_t tiles_m_;
  int64_t tiles_n_;
  int cluster_m_;
  int64_t cluster_rows_;    // ceil(tiles_m / cluster_m)
  int64_t group_clusters_;  // cluster rows per group
};

}  // namespace gemm
