// A random-shape sweep of one step (3 and later), compiled once per step and place with
// -DGEMM_STEP_INFO=stepNN_info and -DGEMM_SWEEP_EMU=0 (the GPU: float mode against cuBLAS, exact
// mode against the CPU reference) or 1 (the emulator, both tracks: both modes against the CPU
// reference). Labels sweep and gpu or emu.
//
// Each run draws fresh shapes: a seed from std::random_device, printed on stdout and recorded as
// the test's "sweep_seed" property; GEMM_SWEEP_SEED=<seed> replays it (with the same test name).
// Case i's shape comes from (seed, i), so the test names stay fixed while the shapes change.
//   GPU:      M in [1, 3000], N a multiple of 8 in [8, 3000], K a multiple of 8 in [8, 4096] (float);
//             the same M and N with K in [8, 512] (exact).
//   emulator: M in [1, 600], N and K multiples of 8 in [8, 512] (a CPU runs every thread).
// Plus the degenerate shapes 1x8x8, 1xNx8 and Mx8x8 (N, M drawn too).
#include <gtest/gtest.h>

#include <cstdio>
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

#if GEMM_SWEEP_EMU
constexpr bool kEmu = true;
constexpr int kRandomCases = 3;
constexpr int64_t kMaxM = 600, kMaxN = 512, kMaxK = 512;
#else
constexpr bool kEmu = false;
constexpr int kRandomCases = 6;
constexpr int64_t kMaxM = 3000, kMaxN = 3000, kMaxK = 4096;
#endif

uint64_t sweep_seed() {
  static const uint64_t seed = seed_from_env("GEMM_SWEEP_SEED");
  return seed;
}

// A generator for case `index` of this run: the same (seed, index) gives the same shape.
std::mt19937_64 generator(int index) {
  std::seed_seq seq{static_cast<uint32_t>(sweep_seed()), static_cast<uint32_t>(sweep_seed() >> 32),
                    static_cast<uint32_t>(index), static_cast<uint32_t>(step_info().number)};
  return std::mt19937_64(seq);
}
int64_t uniform(std::mt19937_64& g, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(g);
}
int64_t multiple_of_8(std::mt19937_64& g, int64_t max) { return 8 * uniform(g, 1, max / 8); }

enum class Kind { random_float, random_exact, one_by_8_by_8, one_row, thin };

struct Case {
  Kind kind;
  int index;
};

Shape shape_of(const Case& c) {
  std::mt19937_64 g = generator(c.index);
  const int64_t m = uniform(g, 1, kMaxM), n = multiple_of_8(g, kMaxN), k = multiple_of_8(g, kMaxK);
  switch (c.kind) {
    case Kind::random_float: return {m, n, k};
    case Kind::random_exact: return {m, n, multiple_of_8(g, kExactMaxK < kMaxK ? kExactMaxK : kMaxK)};
    case Kind::one_by_8_by_8: return {1, 8, 8};
    case Kind::one_row: return {1, n, 8};
    case Kind::thin: return {m, 8, 8};
  }
  return {};
}

std::vector<Case> cases() {
  std::vector<Case> out;
  int index = 0;
  for (int i = 0; i < kRandomCases; ++i) out.push_back({Kind::random_float, index++});
  for (int i = 0; i < (kEmu ? kRandomCases : kRandomCases / 2); ++i) out.push_back({Kind::random_exact, index++});
  for (Kind k : {Kind::one_by_8_by_8, Kind::one_row, Kind::thin}) out.push_back({k, index++});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* const names[] = {"RandomFloat", "RandomExact", "Degenerate_1x8x8", "Degenerate_1xNx8",
                                      "Degenerate_Mx8x8"};
  return std::string(names[static_cast<int>(info.param.kind)]) + "_" + std::to_string(info.param.index);
}

class Sweep : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    RecordProperty("sweep_seed", std::to_string(sweep_seed()));
    std::printf("sweep seed %llu (replay: GEMM_SWEEP_SEED=%llu)\n", static_cast<unsigned long long>(sweep_seed()),
                static_cast<unsigned long long>(sweep_seed()));
    if (kEmu) {
      backend_ = make_emu_backend(EmuSettings{2, sweep_seed()});
      for (Track t : {Track::hopper, Track::blackwell}) launchers_.push_back({t, step_info().emulated(t)});
      return;
    }
    const StepTarget target = find_step_target(step_info());
    if (!target.status.ok()) GTEST_SKIP() << target.status.message();
    backend_ = make_cuda_backend(target.device.device);
    cublas_ = std::make_unique<CublasReference>(backend_->stream());
    launchers_.push_back({target.track, target.launcher});
  }

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<CublasReference> cublas_;
  std::vector<std::pair<Track, StepFn>> launchers_;
};

TEST_P(Sweep, MatchesReference) {
  const Case& c = GetParam();
  const Shape shape = shape_of(c);
  // Exact mode where K allows it; the degenerate shapes in both modes.
  std::vector<InputMode> modes;
  if (c.kind != Kind::random_exact) modes.push_back(InputMode::float_uniform);
  if (shape.k <= kExactMaxK && c.kind != Kind::random_float) modes.push_back(InputMode::exact_int);
  std::printf("step %02d, shape %s\n", step_info().number, shape_string(shape).c_str());
  RecordProperty("shape", shape_string(shape));
  const std::string replay = "shape " + shape_string(shape) + ", sweep seed " + std::to_string(sweep_seed()) +
                             " (replay: GEMM_SWEEP_SEED=" + std::to_string(sweep_seed()) + ")";
  for (InputMode mode : modes) {
    Operands ops(*backend_, shape, sweep_seed(), mode);
    CpuReference cpu;
    Reference& reference = cublas_ ? reference_for(mode, *cublas_) : static_cast<Reference&>(cpu);
    for (const auto& [track, launcher] : launchers_) {
      SCOPED_TRACE(std::string(track_name(track)) + " track, " + input_mode_name(mode) + " mode vs " +
                   reference.name() + ", " + replay);
      ASSERT_NE(launcher, nullptr);
      const CheckOutcome out = run_and_check(*backend_, launcher, ops, reference);
      ASSERT_TRUE(out.status.ok()) << out.status.message();
      EXPECT_TRUE(out.result.ok) << summary(out.result);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(, Sweep, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace gemm
