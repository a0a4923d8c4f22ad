// The emulator tests of one step, compiled once per step with -DGEMM_STEP_INFO=stepNN_info
// (tests/emu/CMakeLists.txt): both tracks' kernels run on the functional emulator (emu/)
// and are checked against the CPU reference, on small square and ragged shapes that cover several
// tiles and the edges (and, for persistent steps, more tiles than the emulated grid has CTAs), in
// float and exact mode. No GPU is needed. Label emu.
//
// Two seeds, both fresh each run and printed with every failure: the inputs' (GEMM_TEST_SEED
// replays it) and the emulator's schedule, the order in which threads run and asynchronous work
// completes (GEMM_EMU_SEED replays it; the driver's --emu-seed takes the same value).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/seed.h"
#include "tests/driver_run.h"
#include "tests/emu/emu_seeds.h"
#include "tests/step_under_test.h"

namespace gemm {
namespace {

// The emulated device of these tests: 2 SMs, so a persistent step's grid is small and its CTAs
// walk several tiles each at the shapes below.
constexpr int kEmuSms = 2;

std::string seed_note() {
  return "input seed " + std::to_string(test_seed()) + ", emulator seed " + std::to_string(emu_seed()) +
         " (replay: GEMM_TEST_SEED=" + std::to_string(test_seed()) + " GEMM_EMU_SEED=" + std::to_string(emu_seed()) +
         ")";
}

std::vector<Problem> shapes_for(Contract contract, int step) {
  switch (contract) {
    case Contract::single_tile: return {{128, 128, 64}};
    case Contract::k_loop: return {{128, 128, 64}, {128, 128, 192}};
    case Contract::general: break;
  }
  std::vector<Problem> shapes = {
      {128, 128, 64},   // one tile
      {200, 136, 72},   // ragged in M, N and K: edge tiles, a partial K slice
      {257, 264, 200},  // 3 x 3 tiles, one row and one column past a tile edge; 9 tiles > the grid of
                        // a persistent step on kEmuSms SMs
      {1, 8, 8},        // the smallest legal problem
  };
  // Persistent steps (6 on): every CTA of the grid on kEmuSms SMs runs several tiles (5 x 4 = 20
  // tiles for at most 6 CTAs), each with an odd number of K slices (3), so that the barriers'
  // phases and the ring's positions run across tiles out of step with each other.
  if (step >= 6) shapes.insert(shapes.end() - 1, Problem{520, 392, 136});
  return shapes;
}

struct Case {
  Track track;
  Problem shape;
  InputMode mode;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << track_name(c.track) << " " << input_mode_name(c.mode) << " " << shape_string(c.shape);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (Track t : {Track::hopper, Track::blackwell})
    for (InputMode mode : {InputMode::float_uniform, InputMode::exact_int})
      for (const Problem& s : shapes_for(step_info().contract(), step_info().number))
        if (mode == InputMode::float_uniform || s.k <= kExactMaxK) out.push_back({t, s, mode});
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(track_name(info.param.track)) + "_" + input_mode_name(info.param.mode) + "_" +
         shape_string(info.param.shape);
}

class EmuStep : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    backend_ = make_emu_backend(EmuSettings{kEmuSms, emu_seed()});
    RecordProperty("seed", std::to_string(test_seed()));
    RecordProperty("emu_seed", std::to_string(emu_seed()));
  }
  std::unique_ptr<Backend> backend_;
};

TEST_P(EmuStep, MatchesReference) {
  const Case& c = GetParam();
  SCOPED_TRACE(seed_note());
  const StepFn step = step_info().emulated(c.track);
  ASSERT_NE(step, nullptr) << "no emulated build of the " << track_name(c.track) << " track";
  Operands ops(*backend_, c.shape, test_seed(), c.mode);
  CpuReference reference;
  const CheckOutcome out = run_and_check(*backend_, step, ops, reference);
  ASSERT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_TRUE(out.result.ok) << summary(out.result);
}

INSTANTIATE_TEST_SUITE_P(Emu, EmuStep, ::testing::ValuesIn(cases()), case_name);

// From step 11 on the last wave is split along K, and state is kept between launches: the split
// tiles meet in a per-stream scratch whose tickets each launch must leave zero. On 8 SMs (4 clusters
// of 2), a 200x64 problem is one cluster tile on either track at every width (on blackwell the
// second CTA a phantom past M), left over for four clusters: at K = 3072 (48 slices) it is split in
// four parts of 12 slices, then at K = 1536 in two, on the same backend (one stream), with half as
// many partial sums (so a ticket placed after the sums would land on the first launch's). Float
// mode: K is past exact mode's limit. One test per track, and none before step 11 (the suite is
// instantiated empty there).
class EmuStepSplit : public ::testing::TestWithParam<Track> {};

TEST_P(EmuStepSplit, SecondLaunchOnTheStreamStillMatches) {
  SCOPED_TRACE(seed_note());
  const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{8, emu_seed()});
  const Track t = GetParam();
  for (const Problem& shape : {Problem{200, 64, 3072}, Problem{200, 64, 1536}}) {
    Operands ops(*backend, shape, test_seed(), InputMode::float_uniform);
    CpuReference reference;
    const CheckOutcome out = run_and_check(*backend, step_info().emulated(t), ops, reference);
    const std::string what = std::string(track_name(t)) + " at " + shape_string(shape);
    ASSERT_TRUE(out.status.ok()) << what << ": " << out.status.message();
    EXPECT_TRUE(out.result.ok) << what << ": " << summary(out.result);
  }
}

std::vector<Track> split_tracks() {
  if (step_info().number < 11) return {};
  return {Track::hopper, Track::blackwell};
}

INSTANTIATE_TEST_SUITE_P(, EmuStepSplit, ::testing::ValuesIn(split_tracks()),
                         [](const ::testing::TestParamInfo<Track>& info) {
                           return std::string(track_name(info.param));
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EmuStepSplit);

// A shape just outside the contract is refused by the emulated build as by the GPU build.
TEST(EmuStepContract, RefusesShapeOutsideContract) {
  const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{kEmuSms, emu_seed()});
  const Problem bad = step_info().contract() == Contract::single_tile ? Problem{128, 128, 128}
                      : step_info().contract() == Contract::k_loop    ? Problem{128, 128, 96}
                                                                      : Problem{200, 130, 72};
  Operands ops(*backend, bad, test_seed(), InputMode::float_uniform);
  for (Track t : {Track::hopper, Track::blackwell}) {
    const Status s = backend->run(step_info().emulated(t), ops.problem());
    ASSERT_FALSE(s.ok()) << track_name(t);
    EXPECT_EQ(s.message(), check_problem(step_info().contract(), ops.problem()).message());
    EXPECT_TRUE(is_untouched(ops.d.to_host(), ops.d.guard)) << "a refused call wrote D or its guards";
  }
}

// The step executable on the emulator: `stepNN --device emu --exact ...` runs both tracks.
TEST(EmuStepDriver, RunsBothTracksOnTheEmulator) {
  const std::string seed = std::to_string(emu_seed());
  const Problem shape = shapes_for(step_info().contract(), step_info().number).back();
  const std::string m = std::to_string(shape.m), n = std::to_string(shape.n), k = std::to_string(shape.k);
  const test::DriverRun r =
      test::run_driver(step_info(), {"--device", "emu", "--exact", "--m", m.c_str(), "--n", n.c_str(), "--k", k.c_str(),
                                     "--emu-seed", seed.c_str(), "--emu-sms", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("hopper track, emulated\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blackwell track, emulated\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device:         emulator, 2 SMs, seed " + seed + " (replay: --emu-seed " + seed + ")\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("max abs err:    0.000e+00 (vs CPU reference)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

// --dump-d writes D raw: M x N fp16, row-major (what tools/emu_vs_gpu.sh compares with cmp).
TEST(EmuStepDriver, DumpsD) {
  const Problem shape = shapes_for(step_info().contract(), step_info().number).front();
  const std::string m = std::to_string(shape.m), n = std::to_string(shape.n), k = std::to_string(shape.k);
  const std::string path = ::testing::TempDir() + "emu_dump_d.bin";
  const test::DriverRun r =
      test::run_driver(step_info(), {"--device", "emu", "--track", "blackwell", "--exact", "--m", m.c_str(), "--n",
                                     n.c_str(), "--k", k.c_str(), "--dump-d", path.c_str()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::vector<__half> d(static_cast<size_t>(shape.m * shape.n));
  const size_t got = std::fread(d.data(), sizeof(__half), d.size() + 1, f);
  std::fclose(f);
  std::remove(path.c_str());
  ASSERT_EQ(got, d.size());
  const std::unique_ptr<Backend> host = make_emu_backend();
  Operands ops(*host, shape, 1, InputMode::exact_int);  // the driver's default input seed
  const std::vector<__half> want = CpuReference().expected(*host, ops.problem());
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(half_bits(d[i]), half_bits(want[i])) << i;
}

}  // namespace
}  // namespace gemm
