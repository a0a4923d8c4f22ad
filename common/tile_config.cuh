// Choosing the tile's configuration per problem (step 12): the rule that fits the work to the machine.
// Plain C++ (GEMM_HD): the same code on the host, in the emulator and in the tests.
#pragma once

#include <string>

#include "common/defs.cuh"
#include "common/scheduler.cuh"
#include "common/split_k.cuh"

namespace gemm {

// One tile configuration a kernel can run: its CTA tile's rows and columns, the CTAs of a cluster
// along M (they share each B tile; 1: no cluster), and what one K slice of its CTA tile costs
// relative to the other configurations (a measured time, in any unit common to all of them).
struct TileChoice {
  int rows = 0;
  int columns = 0;
  int cluster_ctas = 1;
  int slice_cost = 0;
};

#if !defined(__CUDA_ARCH__)
// A tiling's name in the tests and tools, "128x256_cluster2": rows x columns, CTAs per cluster (a
// test name's characters only).
inline std::string tiling_name(const TileChoice& t) {
  return std::to_string(t.rows) + "x" + std::to_string(t.columns) + "_cluster" + std::to_string(t.cluster_ctas);
}
#endif

// The split of the last wave the kernel makes (SplitK's knobs), what a split part's round trip
// through global memory costs, in K slices, and how much less work (in percent) a later
// configuration must promise before it replaces an earlier one.
struct TileRule {
  int min_split_slices = 1;
  int max_splits = 1;
  int split_cost_slices = 0;
  int gain_percent = 0;
};

// The work of the busiest worker when `units` tiles of `k_slices` K slices each are walked by
// `workers` workers and the last wave is split as SplitK splits it: every worker runs units /
// workers whole tiles; if units % workers are left, some worker also runs one more, a whole tile or
// (when split) one part of one, the larger part (parts differ by at most one slice) plus the
// round trip. In K slices.
GEMM_HD constexpr int64_t busiest_worker_slices(int64_t units, int64_t workers, int64_t k_slices,
                                                const TileRule& rule) {
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

// The configuration (an index into `choices`) for an M x N x K problem cut into K slices of
// `k_slice`, on a GPU that holds `ctas` CTAs at once (one per SM: every configuration fills an SM's
// shared memory), so ctas / cluster_ctas workers of each configuration: from the first of `choices`
// on, a configuration replaces the best so far where its busiest worker's weighted slices
// (busiest_worker_slices x slice_cost) are at least rule.gain_percent lower. A rule on the shape and
// the GPU's SM count, not a timing: the same problem gets the same configuration every run.
GEMM_HD constexpr int choose_tile(int64_t m, int64_t n, int64_t k, int k_slice, int64_t ctas, const TileChoice* choices,
                                  int count, const TileRule& rule) {
  int chosen = 0;
  int64_t best = 0;
  for (int i = 0; i < count; ++i) {
    const TileChoice& c = choices[i];
    const TileScheduler sched((m + c.rows - 1) / c.rows, (n + c.columns - 1) / c.columns, c.cluster_ctas, 1);
    const int64_t cost =
        busiest_worker_slices(sched.num_work(), ctas / c.cluster_ctas, (k + k_slice - 1) / k_slice, rule) *
        c.slice_cost;
    if (i == 0 || cost * 100 <= best * (100 - rule.gain_percent)) {
      best = cost;
      chosen = i;
    }
  }
  return chosen;
}

}  // namespace gemm
