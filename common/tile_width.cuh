// Choosing the tile's width per problem (step 12): the rule that fits the work to the machine.
// Plain C++ (GEMM_HD): the same code on the host, in the emulator and in the tests.
#pragma once

#include "common/defs.cuh"
#include "common/scheduler.cuh"
#include "common/split_k.cuh"

namespace gemm {

// One width a kernel can run at: its columns, and what one K slice of its tile costs relative to
// the other widths (a measured time, in any unit common to all of them).
struct TileWidth {
  int columns = 0;
  int slice_cost = 0;
};

// The split of the last wave the kernel makes (SplitK's knobs), what a split part's round trip
// through global memory costs, in K slices, and how much less work (in percent) a narrower width
// must promise before it replaces a wider one.
struct WidthRule {
  int min_split_slices = 1;
  int max_splits = 1;
  int split_cost_slices = 0;
  int narrower_gain_percent = 0;
};

// The work of the busiest worker when `units` tiles of `k_slices` K slices each are walked by
// `workers` workers and the last wave is split as SplitK splits it: every worker runs units /
// workers whole tiles; if units % workers are left, some worker also runs one more, a whole tile or
// (when split) one part of one, the larger part (parts differ by at most one slice) plus the
// round trip. In K slices.
GEMM_HD constexpr int64_t busiest_worker_slices(int64_t units, int64_t workers, int64_t k_slices,
                                                const WidthRule& rule) {
  if (workers < 1) workers = 1;
  int64_t slices = 0;
  // BEGIN SOLUTION step12: every worker runs units / workers whole tiles of k_slices; if units % workers != 0, add one more whole tile, or, where SplitK(units, workers, k_slices, rule.min_split_slices, rule.max_splits) splits (parts() > 1), the larger part, ceil(k_slices / parts), plus rule.split_cost_slices.
  const SplitK split(units, workers, k_slices, rule.min_split_slices, rule.max_splits);
  slices = units / workers * k_slices;
  if (units % workers != 0)
    slices += split.parts() > 1 ? (k_slices + split.parts() - 1) / split.parts() + rule.split_cost_slices : k_slices;
  // END SOLUTION step12
  return slices;
}

// The width for an M x N x K problem cut into tile_m-row tiles (of k_slice-deep K slices), cluster_m
// CTAs per cluster along M, `clusters` clusters resident at once: from the first (widest) of
// `widths` on, a width replaces the best so far where its busiest cluster's weighted slices
// (busiest_worker_slices x slice_cost) are at least rule.narrower_gain_percent lower. A rule on the
// shape and the GPU's cluster count, not a timing: the same problem gets the same width every run.
GEMM_HD constexpr int choose_width(int64_t m, int64_t n, int64_t k, int tile_m, int k_slice, int cluster_m,
                                   int64_t clusters, const TileWidth* widths, int count, const WidthRule& rule) {
  int chosen = 0;
  int64_t best = 0;
  for (int i = 0; i < count; ++i) {
    const TileScheduler sched((m + tile_m - 1) / tile_m, (n + widths[i].columns - 1) / widths[i].columns, cluster_m, 1);
    const int64_t cost =
        busiest_worker_slices(sched.num_work(), clusters, (k + k_slice - 1) / k_slice, rule) * widths[i].slice_cost;
    if (i == 0 || cost * 100 <= best * (100 - rule.narrower_gain_percent)) {
      best = cost;
      chosen = widths[i].columns;
    }
  }
  return chosen;
}

}  // namespace gemm
