// GPU tests of PairTimer (harness/timer.h), the pair timing that gemm_bench and the step driver
// share: the step's call and cuBLAS's alternate, numbered in the order made, the warm-up untimed.
// Skipped, with the reason, where there is no GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"
#include "harness/check.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/timer.h"
#include "tests/gpu/gpu_test.h"

namespace gemm {
namespace {

// The harness's GPU fixture under this file's name (tests/gpu/gpu_test.h).
class PairTimerGpu : public GpuTest {};

TEST_F(PairTimerGpu, StepThenCublasInEveryPairNumberedInOrder) {
  const cudaStream_t stream = backend_->stream();
  CublasReference cublas(stream);
  Operands ops(*backend_, Shape{256, 256, 256}, 1, InputMode::float_uniform);
  std::vector<std::pair<int, int64_t>> made;  // (0: the step's call, 1: cuBLAS's; its number)
  auto side = [&](int which) {
    return [&, which](int64_t call) {
      made.push_back({which, call});
      cublas.run(ops.problem());
    };
  };
  cublas.run(ops.problem());  // loads cuBLAS's kernel: longer than any spin here
  CUDA_CHECK(cudaStreamSynchronize(stream));

  // A 2 ms spin outlasts enqueueing a cuBLAS call, so calls are late only where another process
  // holds the host or the GPU (ctest -j); those are redone and counted.
  PairTimer timer(stream, side(0), side(1), /*spin_us=*/2000, /*first_call=*/100);
  timer.warm_up();
  const size_t warm_calls = made.size();
  for (int i = 0; i < 5; ++i) {
    const PairMs p = timer.time_pair();
    EXPECT_GT(p.step_ms, 0.0f);
    EXPECT_GT(p.cublas_ms, 0.0f);
  }
  ASSERT_EQ(timer.pairs().size(), 5u) << "the warm-up's pairs are not kept";
  EXPECT_EQ(timer.next_call(), 100 + static_cast<int64_t>(made.size()));

  // Calls are numbered from first_call in the order made; a redone (late) call repeats its side,
  // so dropping repeats leaves the sides alternating, the step's first.
  std::vector<int> order;
  size_t warm_pairs_calls = 0;
  for (size_t i = 0; i < made.size(); ++i) {
    EXPECT_EQ(made[i].second, 100 + static_cast<int64_t>(i)) << "calls are numbered in the order made";
    if (order.empty() || order.back() != made[i].first) {
      order.push_back(made[i].first);
      if (i < warm_calls) ++warm_pairs_calls;
    }
  }
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], static_cast<int>(i % 2)) << i;
  EXPECT_EQ(order.size() % 2, 0u);
  EXPECT_GE(warm_pairs_calls / 2, static_cast<size_t>(kWarmupIterations));
  EXPECT_EQ(order.size() - warm_pairs_calls, 10u) << "five timed pairs";
  EXPECT_EQ(timer.late(), static_cast<int64_t>(made.size() - order.size()));

  // The same call on both sides: the pairs' ratios sit near 1.
  const PairSummary s = timer.summary();
  EXPECT_GT(s.step_ms, 0.0);
  EXPECT_GT(s.cublas_ms, 0.0);
  EXPECT_GT(s.ratio, 0.5);
  EXPECT_LT(s.ratio, 2.0);
}

// A call that throws ends the timing with its error (the driver and gemm_bench report it).
TEST_F(PairTimerGpu, AFailingCallThrows) {
  PairTimer timer(
      backend_->stream(), [](int64_t) {}, [](int64_t) { throw Error("cuBLAS refused"); });
  EXPECT_THROW(timer.time_pair(), Error);
}

}  // namespace
}  // namespace gemm
