// Timing on the GPU with CUDA events: what a stream spends on one call, call after call.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace gemm {

// Runs `enqueue` `warmup` times untimed, then `iters` times with an event between calls, and
// returns each call's milliseconds. The calls are enqueued back to back and waited for once at
// the end, so host launch overhead hides behind the GPU work (as it does in a real program).
// `enqueue` must only enqueue work on `stream`; it throws to report a failure.
std::vector<float> time_ms(cudaStream_t stream, const std::function<void()>& enqueue, int warmup, int iters);

// The median (mean of the middle two for an even count); 0 for none.
double median(std::vector<float> values);

// 2 M N K flops in `ms` milliseconds, in TFLOP/s.
inline double tflops(double m, double n, double k, double ms) { return 2.0 * m * n * k / (ms * 1e-3) / 1e12; }

}  // namespace gemm
