// The measurement behind docs/shape-performance.md, "An aligned copy of A and B": does copying the
// operands to a row pitch that is a multiple of 128 bytes pay for itself? Hopper track (an H100 or
// H200); a target of the build:
//
//   cmake --build build --target pad_sweep && build/pad_sweep [M N K]...
//
// (default: 3000^3 and 4001x1000x2056, and beside them the aligned 3072^3 and 4096x1024x2048). At a
// K whose row pitch (2 K bytes) is not a multiple of 128, most 128-byte box rows of A and B straddle
// two L2 lines, and the steps that load the most lines per MAC lose the most. The remedy measured
// here: copy A and B into rows of K' = K rounded up to 64 elements (128 bytes), the pad zero so that
// the extra K columns add nothing to D, and run the step on the copies at K'. For every shape,
// cuBLAS, steps 4-10 as they are and, where the pitch is not aligned, steps 4-10 after the copy
// take turns (tools/diag/diag.h, Lab::time: median of 15 launches, inputs rotating over 3x the L2),
// the copy inside the timed call. Each configuration's D is first checked against cuBLAS.
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "common/launch.cuh"  // cuda_failure
#include "harness/driver.h"   // the exit codes
#include "tools/diag/diag.h"

namespace {

using namespace gemm;
using namespace gemm::diag;

constexpr int kRuns = 15;
constexpr int kWarmup = 2;
constexpr int64_t kPitchElems = 64;  // 128 bytes of fp16

int64_t padded_k(int64_t k) { return (k + kPitchElems - 1) / kPitchElems * kPitchElems; }

// The copies of A and B at K' columns, allocated (and their pad zeroed) for the first shape they
// serve; a copy writes only the first K columns of each row, so the pad stays zero.
class PaddedOperands {
 public:
  PaddedOperands() = default;
  PaddedOperands(const PaddedOperands&) = delete;
  PaddedOperands& operator=(const PaddedOperands&) = delete;
  ~PaddedOperands() { release(); }

  // A and B of `p` copied on `stream` to K' columns; the problem to run on them in *out.
  Status copy(const Problem& p, cudaStream_t stream, Problem* out) {
    const int64_t kp = padded_k(p.k);
    if (p.m != shape_.m || p.n != shape_.n || p.k != shape_.k) {
      release();
      if (cudaError_t e = cudaMalloc(&a_, sizeof(__half) * p.m * kp); e != cudaSuccess)
        return cuda_failure(e, "cudaMalloc (A')");
      if (cudaError_t e = cudaMalloc(&b_, sizeof(__half) * p.n * kp); e != cudaSuccess)
        return cuda_failure(e, "cudaMalloc (B')");
      if (cudaError_t e = cudaMemset(a_, 0, sizeof(__half) * p.m * kp); e != cudaSuccess)
        return cuda_failure(e, "cudaMemset (A')");
      if (cudaError_t e = cudaMemset(b_, 0, sizeof(__half) * p.n * kp); e != cudaSuccess)
        return cuda_failure(e, "cudaMemset (B')");
      shape_ = p;
    }
    const size_t row = sizeof(__half) * p.k, pitch = sizeof(__half) * kp;
    if (cudaError_t e = cudaMemcpy2DAsync(a_, pitch, p.a, row, row, p.m, cudaMemcpyDeviceToDevice, stream);
        e != cudaSuccess)
      return cuda_failure(e, "cudaMemcpy2DAsync (A to A')");
    if (cudaError_t e = cudaMemcpy2DAsync(b_, pitch, p.b, row, row, p.n, cudaMemcpyDeviceToDevice, stream);
        e != cudaSuccess)
      return cuda_failure(e, "cudaMemcpy2DAsync (B to B')");
    *out = p;
    out->k = kp;
    out->a = a_;
    out->b = b_;
    return Status();
  }

 private:
  void release() {
    cudaFree(a_);  // null is fine; a failure here has nothing left to report to
    cudaFree(b_);
    a_ = b_ = nullptr;
    shape_ = Shape{};
  }
  Shape shape_;
  __half* a_ = nullptr;
  __half* b_ = nullptr;
};

// `step` after the copy to an aligned pitch, the copy included.
Config padded(const Config& step) {
  auto copies = std::make_shared<PaddedOperands>();
  return {step.name + " + pad copy", [copies, run = step.run](const Problem& p, cudaStream_t s) {
            Problem aligned;
            if (Status st = copies->copy(p, s, &aligned); !st.ok()) return st;
            return run(aligned, s);
          }};
}

int sweep(int argc, char** argv) {
  std::vector<Shape> shapes;
  if (!shape_args(argc, argv, "pad_sweep",
                  {{3000, 3000, 3000}, {3072, 3072, 3072}, {4001, 1000, 2056}, {4096, 1024, 2048}}, &shapes))
    return kExitUsage;

  Lab lab;
  std::printf("GPU %s\n", describe(lab.device()).c_str());
  std::vector<Config> steps;
  for (const StepInfo* info :
       {&step04_info(), &step05_info(), &step06_info(), &step07_info(), &step08_info(), &step09_info(), &step10_info()})
    steps.push_back(hopper_step(*info));
  for (const Shape& s : shapes) {
    std::vector<Config> configs = steps;
    const bool aligned = padded_k(s.k) == s.k;
    if (!aligned)
      for (const Config& c : steps) configs.push_back(padded(c));
    const std::string note =
        " (row pitch " + std::to_string(2 * s.k) + " bytes, " + std::to_string(2 * s.k % 128) + " mod 128; " +
        (aligned ? std::string("no copy needed") : "the copy pads K to " + std::to_string(padded_k(s.k))) + ")";
    if (!lab.check_and_time(s, note, configs, kWarmup, kRuns)) return kExitFailure;
  }
  return kExitMatch;
}

}  // namespace

int main(int argc, char** argv) {
  return tool_main([&] { return sweep(argc, argv); });
}
