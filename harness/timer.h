// Timing on the GPU with CUDA events: what a stream spends on one call, call after call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/problem.h"

namespace gemm {

// CUDA events created with their owner and destroyed with it, even when a call throws.
class CudaEvents {
 public:
  explicit CudaEvents(size_t count);
  ~CudaEvents();
  CudaEvents(const CudaEvents&) = delete;
  CudaEvents& operator=(const CudaEvents&) = delete;

  cudaEvent_t operator[](size_t i) const { return events_[i]; }
  size_t size() const { return events_.size(); }
  // Records event i on `stream`.
  void record(size_t i, cudaStream_t stream) const;
  // True once the GPU has passed event i (recorded), without waiting for it.
  bool done(size_t i) const;
  // Waits for event i; then the milliseconds between events `from` and `to` (both recorded).
  void synchronize(size_t i) const;
  float elapsed_ms(size_t from, size_t to) const;

 private:
  std::vector<cudaEvent_t> events_;
};

// Keeps `stream` busy on the GPU for `microseconds` of wall-clock time (one thread waiting on the
// global timer). Enqueued just before a timed region that starts on an idle GPU, it gives the host
// time to enqueue the whole region before the GPU reaches the region's first event, so the host's
// launch latency stays out of the measurement, as it does for calls enqueued back to back.
void enqueue_gpu_delay(cudaStream_t stream, unsigned microseconds);

// The spin before a timed call, in us: longer than the host takes to enqueue any step's launch
// (the launchers query the occupancy and encode tensor maps); at 50 us step 10's calls were
// sometimes late, several in a row (bench/README.md).
constexpr unsigned kSpinUs = 200;

// Times one call alone: a GPU spin of `spin_us` (enqueue_gpu_delay), event 0 of `events`, the call
// (`enqueue`, which only enqueues work on `stream` and throws to report a failure), event 1; then
// waits and returns the call's milliseconds. The spin must outlast the host's work of enqueueing
// the call: if the GPU has already passed event 0 when `enqueue` returns, the time may include the
// GPU waiting for the launch, so it is dropped, one is added to `*late`, and the call is timed
// again; after kMaxLateCalls such calls in a row it throws (the spin is too short for this host).
// `enqueue` is called once per attempt: it should take fresh inputs each time, so that a repeated
// call does not find the dropped call's inputs in L2.
constexpr int kMaxLateCalls = 10;
float time_alone(cudaStream_t stream, const CudaEvents& events, const std::function<void()>& enqueue, unsigned spin_us,
                 int64_t* late);

// Warm-up before timing: untimed iterations, at least kWarmupIterations of them and at least
// kWarmupMs of wall-clock time (so that a call's kernels are loaded and the clocks have left idle
// before the first timed call, however short one iteration is).
constexpr int kWarmupIterations = 2;
constexpr double kWarmupMs = 20;
void warm_up(const std::function<void()>& iteration);

// One pair of PairTimer: the step's call and cuBLAS's, in milliseconds.
struct PairMs {
  float step_ms = 0;
  float cublas_ms = 0;
};

// What a run of pairs says: the median of each side's times and the median of the pairs' ratios
// cublas_ms / step_ms (step TFLOPS / cuBLAS TFLOPS: > 1 is faster than cuBLAS). A pair's two calls
// run one right after the other, in nearly the same clock and power state, so a pair's ratio is
// free of the drift between pairs (a GPU that reaches its power limit slows both calls of a pair
// alike). All zeros for no pairs.
struct PairSummary {
  double step_ms = 0;
  double cublas_ms = 0;
  double ratio = 0;
};
PairSummary summarize_pairs(const std::vector<PairMs>& pairs);

// How gemm_bench and the step driver time a step against cuBLAS (bench/README.md, "How one
// benchmark measures"): per pair, the step's call and then cuBLAS's, each timed alone after a GPU
// spin of `spin_us` (time_alone), so that neither starts under the other and a slowdown of the GPU
// falls on both. A call is given its number (warm-up and late attempts included, starting at
// `first_call`) to pick its input set with, from a rotation (harness/rotation.h): every call then
// finds different inputs from the calls just before it. A late call is timed again on the next set
// and counted (late()). `step` and `cublas` must only enqueue work on `stream`; they throw to report
// a failure.
class PairTimer {
 public:
  using Call = std::function<void(int64_t call)>;
  PairTimer(cudaStream_t stream, Call step, Call cublas, unsigned spin_us = kSpinUs, int64_t first_call = 0);

  // Untimed pairs (warm_up above); their times are not kept.
  void warm_up();
  // Times one pair, keeps it, and returns it.
  PairMs time_pair();

  const std::vector<PairMs>& pairs() const { return pairs_; }
  PairSummary summary() const { return summarize_pairs(pairs_); }
  // Calls timed again because they reached the GPU after their spin had ended, warm-up included.
  int64_t late() const { return late_; }
  // The number the next call will get (a caller that keeps one count across timers resumes there).
  int64_t next_call() const { return next_call_; }

 private:
  PairMs time_one_pair();
  cudaStream_t stream_;
  Call step_, cublas_;
  unsigned spin_us_;
  int64_t next_call_;
  int64_t late_ = 0;
  CudaEvents events_{2};
  std::vector<PairMs> pairs_;
};

// Times `calls` taking turns, as the diagnostics in tools/ compare configurations in one process.
// Each round runs every call once, in an order rotated by one each round (so that no call always
// follows the same one, and clock drift weighs on all alike). Each call runs alone (time_alone,
// after a GPU spin of `spin_us`). The first `warmup` rounds are not timed. A call is given the
// number of calls made before it, warm-up and late attempts included (to pick its input set with:
// each call then finds different inputs from the one before). Returns, per call, the milliseconds
// of each timed round, and says on stderr how many calls were late and timed again. `calls` must
// only enqueue work on `stream`; they throw to report a failure.
std::vector<std::vector<float>> time_in_turns(cudaStream_t stream,
                                              const std::vector<std::function<void(int64_t call)>>& calls, int warmup,
                                              int rounds, unsigned spin_us = kSpinUs);

// The median (mean of the middle two for an even count); 0 for none.
double median(std::vector<float> values);

// A shape's 2 M N K flops in `ms` milliseconds, in TFLOP/s.
inline double tflops(const Shape& shape, double ms) { return shape.flops() / (ms * 1e-3) / 1e12; }

}  // namespace gemm
