// GPU tests of the harness itself: the device fill is the host hash bit for bit, cuBLAS agrees
// with the CPU reference (bit for bit in exact mode), the timers and the device query work, the
// poison and the guard band work end to end, and run_and_check reports what a step did or failed
// to do. Skipped, with the reason, where there is no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"
#include "harness/check.h"
#include "harness/compare.h"
#include "harness/device.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/timer.h"
#include "tests/gpu/gpu_test.h"

namespace gemm {

// How gtest (and so ctest's test names) print a mode.
static void PrintTo(InputMode mode, std::ostream* os) { *os << input_mode_name(mode); }

namespace {

class FillTest : public GpuTest, public ::testing::WithParamInterface<InputMode> {};

TEST_P(FillTest, DeviceFillIsHostHash) {
  const size_t count = (size_t{1} << 21) + 13;  // more than one pass of the grid-stride loop, and a tail
  const uint64_t seed = operand_seed(12345, Operand::b);
  DeviceBuffer<__half> device(*backend_, count);
  backend_->fill(device.get(), count, seed, GetParam());
  const std::vector<__half> got = device.to_host();
  std::vector<__half> want(count);
  fill_host(want.data(), count, seed, GetParam());
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(half_bits(got[i]), half_bits(want[i])) << "element " << i << " differs";
}

INSTANTIATE_TEST_SUITE_P(Modes, FillTest, ::testing::Values(InputMode::float_uniform, InputMode::exact_int),
                         [](const ::testing::TestParamInfo<InputMode>& info) {
                           return info.param == InputMode::exact_int ? "Exact" : "Float";
                         });

// Exact mode's premise: with K <= 512 every sum is exact, so any summation order (cuBLAS's, the
// CPU's) gives the same bits.
TEST_F(GpuTest, CublasEqualsCpuReferenceInExactMode) {
  CublasReference cublas(backend_->stream());
  CpuReference cpu;
  for (const Shape& shape : {Shape{128, 128, 64}, Shape{200, 136, 72}, Shape{333, 264, 512}}) {
    SCOPED_TRACE(shape_string(shape));
    Operands ops(*backend_, shape, 7, InputMode::exact_int);
    const std::vector<__half> want = cpu.expected(*backend_, ops.problem());
    const std::vector<__half> got = cublas.expected(*backend_, ops.problem());
    const CompareResult r = compare(got, 0, want, shape.m, shape.n, InputMode::exact_int);
    EXPECT_TRUE(r.ok) << summary(r);
  }
}

// Float mode: cuBLAS (fp32 sums) and the CPU reference (double sums) round differently now and
// then, and agree within the float tolerance.
TEST_F(GpuTest, CublasIsCloseToCpuReferenceInFloatMode) {
  CublasReference cublas(backend_->stream());
  CpuReference cpu;
  const Shape shape{200, 136, 1000};
  Operands ops(*backend_, shape, 7, InputMode::float_uniform);
  const CompareResult r = compare(cublas.expected(*backend_, ops.problem()), 0, cpu.expected(*backend_, ops.problem()),
                                  shape.m, shape.n, InputMode::float_uniform);
  EXPECT_TRUE(r.ok) << summary(r);
  RecordProperty("max_abs_err", std::to_string(r.max_abs_err));
}

// The diagnostics' timing: every call once per round, the order rotated by one each round, the
// calls numbered in the order made (warm-up included), one time per timed round.
TEST_F(GpuTest, TimeInTurnsRotatesTheOrder) {
  CublasReference cublas(backend_->stream());
  Operands ops(*backend_, Shape{256, 256, 256}, 1, InputMode::float_uniform);
  std::vector<std::pair<int, int64_t>> made;  // (which call, its number)
  std::vector<std::function<void(int64_t)>> calls;
  for (int c = 0; c < 3; ++c)
    calls.push_back([&, c](int64_t call) {
      made.push_back({c, call});
      cublas.run(ops.problem());
    });
  // A 2 ms spin: far longer than enqueueing a cuBLAS call takes, once its first call (which loads
  // its kernel) is done, so no call is late and timed again.
  cublas.run(ops.problem());
  CUDA_CHECK(cudaStreamSynchronize(backend_->stream()));
  const std::vector<std::vector<float>> ms =
      time_in_turns(backend_->stream(), calls, /*warmup=*/1, /*rounds=*/4, /*spin_us=*/2000);
  ASSERT_EQ(ms.size(), 3u);
  for (const std::vector<float>& t : ms) {
    ASSERT_EQ(t.size(), 4u);
    for (float x : t) EXPECT_GT(x, 0.0f);
  }
  // A call that reached the GPU late (another process holding the GPU or the host, as under
  // ctest -j) is made again right away: drop such repeats, then 15 calls remain, in turns.
  std::vector<int> order;
  for (size_t i = 0; i < made.size(); ++i) {
    EXPECT_EQ(made[i].second, static_cast<int64_t>(i)) << "calls are numbered in the order made";
    // Two turns in a row never give the same call (a round ends with the call after the next
    // round's first), so a repeat is a retry.
    if (order.empty() || order.back() != made[i].first) order.push_back(made[i].first);
  }
  ASSERT_EQ(order.size(), 15u);
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t round = i / 3;
    EXPECT_EQ(order[i], static_cast<int>((i % 3 + round) % 3)) << i;
  }
}

// The spin before a timed call lasts its wall-clock time (not SM cycles, which may run slower).
TEST_F(GpuTest, GpuDelayLastsItsWallClockTime) {
  const CudaEvents ev(2);
  const cudaStream_t stream = backend_->stream();
  std::vector<float> ms;
  for (int i = 0; i < 5; ++i) {
    ev.record(0, stream);
    enqueue_gpu_delay(stream, 200);
    ev.record(1, stream);
    ev.synchronize(1);
    ms.push_back(ev.elapsed_ms(0, 1));
  }
  EXPECT_GE(median(ms), 0.2);
  // The shortest spin near what was asked: another process's work (ctest -j) can lengthen one
  // spin, not all five, where a spin counted in cycles at a lower clock lengthens all.
  const float shortest = *std::min_element(ms.begin(), ms.end());
  EXPECT_LT(shortest, 0.3) << "a 200 us spin took at least " << shortest << " ms";
}

// time_alone times a call that the spin outlasts once; a call whose enqueueing outlasts the spin
// is timed again, and after kMaxLateCalls such calls in a row it throws.
TEST_F(GpuTest, TimeAloneRetriesLateCalls) {
  CublasReference cublas(backend_->stream());
  Operands ops(*backend_, Shape{256, 256, 256}, 1, InputMode::float_uniform);
  const CudaEvents ev(2);
  int64_t late = 0;
  int calls = 0;
  auto fast = [&] {
    ++calls;
    cublas.run(ops.problem());
  };
  fast();  // the first call loads cuBLAS's kernel: longer than any spin here
  CUDA_CHECK(cudaStreamSynchronize(backend_->stream()));
  calls = 0;
  // A 2 ms spin outlasts enqueueing a cuBLAS call, so the call is on time, unless another
  // process holds the host or the GPU meanwhile (ctest -j): then it is timed again, and counted.
  // A time_alone that took every call for late would throw here after kMaxLateCalls.
  const float t = time_alone(backend_->stream(), ev, fast, /*spin_us=*/2000, &late);
  EXPECT_GT(t, 0.0f);
  EXPECT_EQ(calls, late + 1);

  calls = 0;
  late = 0;
  auto slow = [&] {
    ++calls;
    // Wait until the GPU has passed event 0 (after the spin): this call is late by construction,
    // whatever else runs on the GPU or the host.
    ev.synchronize(0);
    cublas.run(ops.problem());
  };
  EXPECT_THROW(time_alone(backend_->stream(), ev, slow, /*spin_us=*/20, &late), Error);
  EXPECT_EQ(calls, kMaxLateCalls);
  EXPECT_EQ(late, kMaxLateCalls);
}

TEST_F(GpuTest, DeviceInfoDescribesTheGpu) {
  const DeviceInfo d = query_device();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.clock_mhz, 0);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GT(d.smem_optin_bytes, 48 * 1024);
  EXPECT_GE(d.driver_version, d.runtime_version) << "the runtime needs a driver at least as new";
  const std::string line = describe(d);
  EXPECT_EQ(line.rfind(d.name + ", " + std::to_string(d.sm_count) + " SMs, ", 0), 0u) << line;
  RecordProperty("gpu", line);
}

TEST_F(GpuTest, PoisonAndGuardsRoundTrip) {
  const int64_t m = 200, n = 136;
  GuardedOutput out(*backend_, m * n);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(out.d()) % 16, 0u);
  out.poison();
  EXPECT_TRUE(is_untouched(out.to_host(), out.guard));

  // A whole D written: it matches itself, and the allocation is no longer untouched.
  std::vector<__half> want(m * n);
  fill_host(want.data(), want.size(), 3, InputMode::float_uniform);
  backend_->copy_to_device(out.d(), want.data(), want.size() * sizeof(__half));
  EXPECT_TRUE(compare(out.to_host(), out.guard, want, m, n, InputMode::float_uniform).ok);
  EXPECT_FALSE(is_untouched(out.to_host(), out.guard));

  // One element on either side of D.
  const __half one = __float2half(1.0f);
  backend_->copy_to_device(out.d() + m * n, &one, sizeof one);
  EXPECT_EQ(compare(out.to_host(), out.guard, want, m, n, InputMode::float_uniform).reason,
            "guard touched after D at offset 0");
  backend_->copy_to_device(out.d() - 1, &one, sizeof one);
  EXPECT_EQ(compare(out.to_host(), out.guard, want, m, n, InputMode::float_uniform).reason,
            "guard touched before D at offset -1");

  out.poison();  // and back
  EXPECT_TRUE(is_untouched(out.to_host(), out.guard));
}

TEST_F(GpuTest, StepThatWritesNothingIsUnwritten) {
  const StepFn writes_nothing = [](const Problem&, cudaStream_t) { return Status{}; };
  CublasReference cublas(backend_->stream());
  Operands ops(*backend_, Shape{128, 128, 64}, 1, InputMode::float_uniform);
  const CheckOutcome out = run_and_check(*backend_, writes_nothing, ops, cublas);
  ASSERT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_FALSE(out.result.ok);
  EXPECT_EQ(out.result.reason, "unwritten (still poisoned)");
  EXPECT_EQ(out.result.row, 0);
  EXPECT_EQ(out.result.col, 0);
  EXPECT_EQ(out.result.bad_count, 128 * 128);
}

TEST_F(GpuTest, StepFailureComesBackAsItsStatus) {
  const StepFn refuses = [](const Problem&, cudaStream_t) { return Status::failure("shape: not this one"); };
  CublasReference cublas(backend_->stream());
  Operands ops(*backend_, Shape{128, 128, 64}, 1, InputMode::float_uniform);
  const CheckOutcome out = run_and_check(*backend_, refuses, ops, cublas);
  EXPECT_EQ(out.status.message(), "shape: not this one");
  EXPECT_TRUE(is_untouched(ops.d.to_host(), ops.d.guard));
}

}  // namespace
}  // namespace gemm
