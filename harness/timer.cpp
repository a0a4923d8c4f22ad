#include "harness/timer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#include "harness/check.h"

namespace gemm {

CudaEvents::CudaEvents(size_t count) : events_(count, nullptr) {
  for (auto& e : events_) CUDA_CHECK(cudaEventCreate(&e));
}

CudaEvents::~CudaEvents() {
  for (auto e : events_)
    if (e) cudaEventDestroy(e);
}

void CudaEvents::record(size_t i, cudaStream_t stream) const { CUDA_CHECK(cudaEventRecord(events_.at(i), stream)); }

void CudaEvents::synchronize(size_t i) const { CUDA_CHECK(cudaEventSynchronize(events_.at(i))); }

bool CudaEvents::done(size_t i) const {
  const cudaError_t e = cudaEventQuery(events_.at(i));
  if (e == cudaErrorNotReady) return false;
  CUDA_CHECK(e);
  return true;
}

float CudaEvents::elapsed_ms(size_t from, size_t to) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, events_.at(from), events_.at(to)));
  return ms;
}

float time_alone(cudaStream_t stream, const CudaEvents& events, const std::function<void()>& enqueue, unsigned spin_us,
                 int64_t* late) {
  for (int attempt = 1;; ++attempt) {
    enqueue_gpu_delay(stream, spin_us);
    events.record(0, stream);
    enqueue();
    const bool on_time = !events.done(0);  // the GPU is still in the spin: the call waits for nothing
    events.record(1, stream);
    events.synchronize(1);
    CUDA_CHECK(cudaGetLastError());
    if (on_time) return events.elapsed_ms(0, 1);
    ++*late;
    if (attempt == kMaxLateCalls)
      throw Error("timing: " + std::to_string(kMaxLateCalls) + " calls in a row reached the GPU after their " +
                  std::to_string(spin_us) + " us spin had ended (the host took longer to enqueue them): " +
                  "their times would include launch latency; lengthen the spin");
  }
}

std::vector<std::vector<float>> time_in_turns(cudaStream_t stream,
                                              const std::vector<std::function<void(int64_t call)>>& calls, int warmup,
                                              int rounds, unsigned spin_us) {
  std::vector<std::vector<float>> ms(calls.size());
  const CudaEvents events(2);
  int64_t made = 0, late = 0;
  for (int round = 0; round < warmup + rounds; ++round) {
    for (size_t i = 0; i < calls.size(); ++i) {
      const size_t c = (i + static_cast<size_t>(round)) % calls.size();
      const float t = time_alone(
          stream, events, [&] { calls[c](made++); }, spin_us, &late);
      if (round >= warmup) ms[c].push_back(t);
    }
  }
  if (late > 0)
    std::fprintf(stderr, "timing: %lld call(s) reached the GPU after their %u us spin and were timed again\n",
                 static_cast<long long>(late), spin_us);
  return ms;
}

void warm_up(const std::function<void()>& iteration) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    iteration();
    const std::chrono::duration<double, std::milli> spent = std::chrono::steady_clock::now() - start;
    if (i + 1 >= kWarmupIterations && spent.count() >= kWarmupMs) break;
  }
}

PairSummary summarize_pairs(const std::vector<PairMs>& pairs) {
  if (pairs.empty()) return {};
  std::vector<float> step, cublas, ratio;
  for (const PairMs& p : pairs) {
    step.push_back(p.step_ms);
    cublas.push_back(p.cublas_ms);
    ratio.push_back(p.cublas_ms / p.step_ms);
  }
  return PairSummary{median(step), median(cublas), median(ratio)};
}

PairTimer::PairTimer(cudaStream_t stream, Call step, Call cublas, unsigned spin_us, int64_t first_call)
    : stream_(stream), step_(std::move(step)), cublas_(std::move(cublas)), spin_us_(spin_us), next_call_(first_call) {}

PairMs PairTimer::time_one_pair() {
  PairMs p;
  p.step_ms = time_alone(
      stream_, events_, [&] { step_(next_call_++); }, spin_us_, &late_);
  p.cublas_ms = time_alone(
      stream_, events_, [&] { cublas_(next_call_++); }, spin_us_, &late_);
  return p;
}

void PairTimer::warm_up() {
  gemm::warm_up([&] { time_one_pair(); });
}

PairMs PairTimer::time_pair() { return pairs_.emplace_back(time_one_pair()); }

double median(std::vector<float> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2) return values[mid];
  const float upper = values[mid];
  const float lower = *std::max_element(values.begin(), values.begin() + mid);
  return (static_cast<double>(lower) + upper) / 2;
}

}  // namespace gemm
