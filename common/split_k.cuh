// Splitting work along K: the split of the last wave (step 11), on top of the scheduler of
// common/scheduler.cuh. Plain C++ (GEMM_HD): the same code on the GPU, in the emulator and in the
// tests.
#pragma once

#include "common/defs.cuh"
#include "common/scheduler.cuh"

namespace gemm {

// Splitting the last wave along K (step 11). With T work units for C workers, T / C full waves
// keep every worker busy, but the R = T % C units left over make a last wave in which C - R workers
// idle for a whole unit's time: at T / C = 2.18 (3072^3 on 66 clusters of 256x256) a third of the
// run. SplitK cuts each of those R units along K into S parts, S = min(C / R, k_slices /
// min_split_slices, max_splits), so that the last wave runs R x S <= C shorter items at once. The
// S items of a tile each compute a partial sum over their K slices; whichever finishes last adds
// the partial sums and stores the tile (step 11's epilogue).
//
// Items: 0 .. T - R - 1 are the first units whole (item u = unit u, all K slices); then R x S split
// items: item T - R + v is part v % S of unit T - R + v / S, K slices
// [(v % S) k_slices / S, (v % S + 1) k_slices / S) (the parts differ by at most one slice). The
// worker walk is the scheduler's: worker c takes items c, c + C, ... With S = 1 (no leftover wave,
// or too few K slices to split) the items are the units.
struct WorkItem {
  int64_t unit = 0;     // the work unit (TileScheduler::tile)
  int64_t k_begin = 0;  // first K slice
  int64_t k_end = 0;    // one past the last K slice
  int part = 0;         // 0 .. parts - 1
  int parts = 1;        // 1: the whole K, the tile's only item
  int64_t split = -1;   // 0 .. split_units - 1: which split unit (a counter and partial-sum slots); -1: none
};

class SplitK {
 public:
  // num_work units of k_slices K slices each, walked by num_workers workers. max_splits <= 1 turns
  // splitting off; a part gets at least min_split_slices slices (< 1 counts as 1).
  GEMM_HD constexpr SplitK(int64_t num_work, int64_t num_workers, int64_t k_slices, int64_t min_split_slices,
                           int max_splits)
      : num_work_(num_work > 0 ? num_work : 0),
        workers_(num_workers > 0 ? num_workers : 1),
        k_slices_(k_slices > 0 ? k_slices : 0) {
    const int64_t workers = workers_;
    const int64_t leftover = num_work_ % workers;
    int64_t parts = 1;
    if (leftover > 0 && max_splits > 1) {
      parts = workers / leftover;
      const int64_t by_k = k_slices_ / (min_split_slices > 1 ? min_split_slices : 1);
      if (by_k < parts) parts = by_k;
      if (max_splits < parts) parts = max_splits;
    }
    if (parts > 1) {
      parts_ = static_cast<int>(parts);
      split_units_ = leftover;
    }
  }

  GEMM_HD constexpr int parts() const { return parts_; }                  // S (1: nothing is split)
  GEMM_HD constexpr int64_t split_units() const { return split_units_; }  // R when split, else 0
  GEMM_HD constexpr int64_t num_items() const { return num_work_ - split_units_ + split_units_ * parts_; }

  // How many of the num_workers workers to launch (the persistent grid): when the last wave is
  // split, every worker that has an item; otherwise the grid of whole waves (balanced_grid).
  GEMM_HD constexpr int64_t grid() const {
    if (parts_ > 1) return num_items() < workers_ ? num_items() : workers_;
    return balanced_grid(num_items(), workers_);
  }

  GEMM_HD constexpr WorkItem item(int64_t i) const {
    WorkItem w;
    const int64_t whole = num_work_ - split_units_;
    if (i < whole) {
      w.unit = i;
      w.k_end = k_slices_;
      return w;
    }
    const int64_t v = i - whole;
    w.split = v / parts_;
    w.unit = whole + w.split;
    w.part = static_cast<int>(v % parts_);
    w.parts = parts_;
    w.k_begin = w.part * k_slices_ / parts_;
    w.k_end = (w.part + 1) * k_slices_ / parts_;
    return w;
  }

  // The items of worker `worker` of `num_workers`: worker, worker + num_workers, ...
  GEMM_HD constexpr WorkCursor begin(int64_t worker, int64_t num_workers) const {
    return strided_walk(worker, num_workers, num_items());
  }

 private:
  int64_t num_work_;
  int64_t workers_;
  int64_t k_slices_;
  int parts_ = 1;
  int64_t split_units_ = 0;
};

}  // namespace gemm
