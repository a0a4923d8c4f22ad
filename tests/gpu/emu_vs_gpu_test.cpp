// The emulator against the GPU, compiled once per step with -DGEMM_STEP_INFO=stepNN_info: the step
// runs on the GPU (its track: hopper on an H100/H200, blackwell on a B200) and on the functional
// emulator (the same track's emulated build, emu/) on the same inputs, in exact mode, and
// D must be the same bit for bit (and equal to the CPU reference). This is what keeps the emulator
// honest about the instructions it models. Labels gpu and stepNN: it skips, with the reason, where
// there is no GPU or no track for it.
//
// Seeds as in step_test.cpp: fresh each run, printed with every failure; GEMM_TEST_SEED replays the
// inputs, GEMM_EMU_SEED the emulator's schedule. By hand: `stepNN --exact --seed S --dump-d gpu.bin`
// and `stepNN --device emu --track hopper --exact --seed S --dump-d emu.bin`, then `cmp` (docs/emulator.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/seed.h"
#include "tests/step_under_test.h"

namespace gemm {
namespace {

std::vector<Shape> shapes(Contract contract) {
  switch (contract) {
    case Contract::single_tile: return {{128, 128, 64}};
    case Contract::k_loop: return {{128, 128, 64}, {128, 128, 512}};
    case Contract::general: break;
  }
  return {{128, 128, 64}, {200, 136, 72}, {257, 264, 200}, {1, 8, 8}, {333, 264, 512}};
}

TEST(EmuVsGpu, SameDBitForBitInExactMode) {
  const StepInfo& info = step_info();
  const StepTarget target = find_step_target(info);
  if (!target.status.ok()) GTEST_SKIP() << target.status.message();
  const uint64_t seed = seed_from_env("GEMM_TEST_SEED");
  const uint64_t emu_seed = seed_from_env("GEMM_EMU_SEED");
  SCOPED_TRACE("input seed " + std::to_string(seed) + ", emulator seed " + std::to_string(emu_seed) +
               " (replay: GEMM_TEST_SEED=" + std::to_string(seed) + " GEMM_EMU_SEED=" + std::to_string(emu_seed) + ")");
  const std::unique_ptr<Backend> gpu = make_cuda_backend(target.device.device);
  const std::unique_ptr<Backend> emu = make_emu_backend(EmuSettings{4, emu_seed});
  CpuReference reference;
  for (const Shape& shape : shapes(info.contract())) {
    SCOPED_TRACE(std::string(track_name(target.track)) + " " + shape_string(shape));
    Operands on_gpu(*gpu, shape, seed, InputMode::exact_int);
    const CheckOutcome g = run_and_check(*gpu, target.launcher, on_gpu, reference);
    ASSERT_TRUE(g.status.ok()) << g.status.message();
    EXPECT_TRUE(g.result.ok) << "GPU: " << summary(g.result);
    Operands on_emu(*emu, shape, seed, InputMode::exact_int);
    const CheckOutcome e = run_and_check(*emu, info.emulated(target.track), on_emu, reference);
    ASSERT_TRUE(e.status.ok()) << e.status.message();
    EXPECT_TRUE(e.result.ok) << "emulator: " << summary(e.result);
    const std::vector<__half> dg = on_gpu.d.to_host(), de = on_emu.d.to_host();
    ASSERT_EQ(dg.size(), de.size());
    size_t differ = 0, first = dg.size();
    for (size_t i = 0; i < dg.size(); ++i)
      if (half_bits(dg[i]) != half_bits(de[i])) {
        ++differ;
        if (first == dg.size()) first = i;
      }
    EXPECT_EQ(differ, 0u) << "D (with its guard band) differs in " << differ << " elements; first at offset "
                          << static_cast<int64_t>(first) - static_cast<int64_t>(on_gpu.d.guard) << " from D's start";
  }
}

}  // namespace
}  // namespace gemm
