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

// Runs `enqueue` `warmup` times untimed, then `iters` times with an event between calls, and
// returns each call's milliseconds. The calls are enqueued back to back and waited for once at
// the end, so host launch overhead hides behind the GPU work (as it does in a real program).
// `enqueue` must only enqueue work on `stream`; it throws to report a failure.
std::vector<float> time_ms(cudaStream_t stream, const std::function<void()>& enqueue, int warmup, int iters);

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
