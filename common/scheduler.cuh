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
};

// Worker `worker` of `num_workers` over `count` units: worker, worker + num_workers, ...
GEMM_HD constexpr WorkCursor strided_walk(int64_t worker, int64_t num_workers, int64_t count) {
  WorkCursor c;
  c.unit = worker;
  c.stride = num_workers;
  c.end = count;
  return c;
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
  GEMM_HD constexpr Tile tile(int64_t work, int cta_rank) const {
    const int64_t units_per_group = group_clusters_ * tiles_n_;
    const int64_t group = work / units_per_group;
    const int64_t first_row = group * group_clusters_;  // in cluster rows
    const int64_t rows_left = cluster_rows_ - first_row;
    const int64_t rows = rows_left < group_clusters_ ? rows_left : group_clusters_;  // the last group may be short
    const int64_t in_group = work - group * units_per_group;
    Tile t;
    t.m = (first_row + in_group % rows) * cluster_m_ + cta_rank;
    t.n = in_group / rows;
    t.valid = t.m < tiles_m_;
    return t;
  }

  // The units of worker `worker` of `num_workers`: worker, worker + num_workers, ...
  GEMM_HD constexpr WorkCursor begin(int64_t worker, int64_t num_workers) const {
    return strided_walk(worker, num_workers, num_work());
  }

 private:
  int64_t tiles_m_;
  int64_t tiles_n_;
  int cluster_m_;
  int64_t cluster_rows_;    // ceil(tiles_m / cluster_m)
  int64_t group_clusters_;  // cluster rows per group
};

// Splitting the last wave along K (step 10), stream-K style. With T work units of K slices for C
// workers, T / C full waves keep every worker busy, but the R = T % C units left over make a last
// wave in which C - R workers idle for a whole unit's time: at T / C = 2.18 (3072^3 on 66 clusters
// of 256x256) a third of the run, at 3.88 (4096^3) 12 % of the last of four waves. SplitK shares
// the last wave's R x K slices out evenly instead: W = min(C, R K / min_split_slices, R max_splits)
// workers each take a run of about R K / W consecutive slices, counted unit after unit (unit
// T - R's slices 0 .. K - 1, then unit T - R + 1's, ...). When W <= R nothing is split. Otherwise
// a run is shorter than a unit, so it holds at most two items: the end (or a middle) of one unit,
// then maybe the start of the next. A unit cut by runs is split into parts, one per run that
// touches it, part 0 holding its first slices; each part computes a partial sum over its slices,
// and whichever part finishes last adds them up and stores the tile (step 10's epilogue).
//
// Items: 0 .. T - R - 1 are the first units whole (item u = unit u, all K slices); T - R is a
// multiple of C, so the strided walk gives worker c the items c, c + C, ... of the full waves, then
// T - R + c (its run's first item) and T - R + C + c (its second, if its run crosses into the
// next unit). Example, 4096^3 in 256x256 cluster tiles on 66 clusters: T = 256, K = 64, R = 58,
// W = 66 runs of 3712 / 66 = 56.2 slices; worker 1's run is slices [56, 112): unit 198's slices
// [56, 64) (part 1 of 2) and unit 199's [0, 48) (part 0 of 2).
struct WorkItem {
  int64_t unit = 0;     // the work unit (TileScheduler::tile)
  int64_t k_begin = 0;  // first K slice
  int64_t k_end = 0;    // one past the last K slice
  int part = 0;         // 0 .. parts - 1
  int parts = 1;        // 1: the whole K, the tile's only item
  int64_t split = -1;   // 0 .. split_units - 1: which split unit (its ticket); -1: none
  int max_parts = 1;    // partial-sum slots per split unit: the most parts any unit has

  // The partial-sum slot of part p of this item's unit.
  GEMM_HD constexpr int64_t slot(int p) const { return split * max_parts + p; }
};

class SplitK {
 public:
  // num_work units of k_slices K slices each, walked by num_workers workers. max_splits <= 1 turns
  // splitting off; a run has at least min_split_slices slices (< 1 counts as 1).
  GEMM_HD constexpr SplitK(int64_t num_work, int64_t num_workers, int64_t k_slices, int64_t min_split_slices,
                           int max_splits)
      : num_work_(num_work > 0 ? num_work : 0),
        workers_(num_workers > 0 ? num_workers : 1),
        k_slices_(k_slices > 0 ? k_slices : 0),
        whole_(num_work_) {
    const int64_t leftover = num_work_ % workers_;
    const int64_t slices = leftover * k_slices_;
    int64_t runs = workers_;
    const int64_t by_length = slices / (min_split_slices > 1 ? min_split_slices : 1);
    if (by_length < runs) runs = by_length;
    if (leftover * max_splits < runs) runs = leftover * max_splits;
    if (runs > leftover) {  // more runs than units: each run is shorter than a unit
      whole_ = num_work_ - leftover;
      runs_ = runs;
      slices_ = slices;
      for (int64_t u = 0; u < leftover; ++u) {
        const int p = parts_of(u);
        if (p > max_parts_) max_parts_ = p;
      }
    }
  }

  GEMM_HD constexpr int max_parts() const { return max_parts_; }                     // 1: nothing is split
  GEMM_HD constexpr int64_t split_units() const { return num_work_ - whole_; }        // R when split, else 0
  GEMM_HD constexpr int64_t runs() const { return runs_; }                            // W when split, else 0
  // The workers that get any item: launching more only adds workers that exit at once.
  GEMM_HD constexpr int64_t busy_workers() const {
    const int64_t full = whole_ < workers_ ? whole_ : workers_;
    const int64_t busy = full > runs_ ? full : runs_;
    return busy > 0 ? busy : 1;
  }

  GEMM_HD constexpr WorkItem item(int64_t i) const {
    WorkItem w;
    if (i < whole_) {
      w.unit = i;
      w.k_end = k_slices_;
      return w;
    }
    const int64_t c = (i - whole_) % workers_;  // the worker whose run this is
    const int64_t begin = run_begin(c);
    const int64_t end = run_begin(c + 1);
    const int64_t boundary = (begin / k_slices_ + 1) * k_slices_;  // the next unit's first slice
    const bool second = i - whole_ >= workers_;                     // the run's item in that next unit
    const int64_t first_slice = second ? boundary : begin;
    const int64_t last_slice = second || end < boundary ? end : boundary;  // one past
    const int64_t u = first_slice / k_slices_;                             // 0 .. R - 1
    w.unit = whole_ + u;
    w.k_begin = first_slice - u * k_slices_;
    w.k_end = last_slice - u * k_slices_;
    w.parts = parts_of(u);
    if (w.parts > 1) {
      w.part = static_cast<int>(c - run_of(u * k_slices_));
      w.split = u;
      w.max_parts = max_parts_;
    }
    return w;
  }

  // The items of worker `worker`: its full-wave items, then its run's one or two.
  GEMM_HD constexpr WorkCursor begin(int64_t worker) const {
    const int64_t run_items = worker < runs_ ? (crosses_unit(worker) ? 2 : 1) : 0;
    return strided_walk(worker, workers_, whole_ + (run_items > 0 ? worker + (run_items - 1) * workers_ + 1 : 0));
  }

 private:
  // First slice of run c (slices counted over the split units, unit after unit).
  GEMM_HD constexpr int64_t run_begin(int64_t c) const { return c * slices_ / runs_; }
  // The run that holds slice x: the largest c with run_begin(c) <= x.
  GEMM_HD constexpr int64_t run_of(int64_t x) const { return ((x + 1) * runs_ - 1) / slices_; }
  // Whether run c ends in the unit after the one it starts in.
  GEMM_HD constexpr bool crosses_unit(int64_t c) const {
    return run_begin(c + 1) > (run_begin(c) / k_slices_ + 1) * k_slices_;
  }
  // How many runs touch split unit u.
  GEMM_HD constexpr int parts_of(int64_t u) const {
    return static_cast<int>(run_of((u + 1) * k_slices_ - 1) - run_of(u * k_slices_) + 1);
  }

  int64_t num_work_;
  int64_t workers_;
  int64_t k_slices_;
  int64_t whole_;      // units run whole: T - R when split, else T
  int64_t runs_ = 0;   // W, the runs of the last wave (0: no split)
  int64_t slices_ = 0; // R x K, the slices the runs share
  int max_parts_ = 1;
};

}  // namespace gemm
