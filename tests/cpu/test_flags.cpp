// The step driver's flags, its track selection, and its exit codes before any GPU work.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "harness/backend.h"
#include "harness/driver.h"
#include "harness/track.h"
#include "tests/driver_run.h"

namespace gemm {
namespace {

ParseResult parse(int step, std::vector<const char*> args) {
  args.insert(args.begin(), "stepNN");
  return parse_flags(step, static_cast<int>(args.size()), args.data());
}

std::string parse_error(std::vector<const char*> args) { return parse(3, std::move(args)).error; }

TEST(ParseFlags, DefaultsFollowTheStepContract) {
  const struct { int step; int64_t m, n, k; } expected[] = {
      {1, 128, 128, 64}, {2, 128, 128, 1024}, {3, 4096, 4096, 4096}, {10, 4096, 4096, 4096}};
  for (const auto& e : expected) {
    const ParseResult r = parse(e.step, {});
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.options.m, e.m) << e.step;
    EXPECT_EQ(r.options.n, e.n) << e.step;
    EXPECT_EQ(r.options.k, e.k) << e.step;
    EXPECT_EQ(r.options.iters, 20);
    EXPECT_EQ(r.options.seed, 1u);
    EXPECT_EQ(r.options.mode, InputMode::float_uniform);
    EXPECT_EQ(r.options.track, TrackRequest::automatic);
    EXPECT_FALSE(r.options.help);
  }
}

TEST(ParseFlags, BothSyntaxes) {
  const ParseResult r =
      parse(3, {"--m", "512", "--n=256", "--k", "128", "--iters=5", "--seed", "18446744073709551615", "--exact",
                "--track=hopper"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.m, 512);
  EXPECT_EQ(r.options.n, 256);
  EXPECT_EQ(r.options.k, 128);
  EXPECT_EQ(r.options.iters, 5);
  EXPECT_EQ(r.options.seed, 18446744073709551615ull);
  EXPECT_EQ(r.options.mode, InputMode::exact_int);
  EXPECT_EQ(r.options.track, TrackRequest::hopper);
}

TEST(ParseFlags, LaterFlagWins) { EXPECT_EQ(parse(3, {"--m", "8", "--m=16"}).options.m, 16); }

TEST(ParseFlags, NegativeShapeIsLeftToTheContract) {
  const ParseResult r = parse(3, {"--m", "-128"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.m, -128);
}

TEST(ParseFlags, CheckOnly) {
  EXPECT_FALSE(parse(3, {}).options.check_only);
  EXPECT_TRUE(parse(3, {"--check-only", "--exact", "--k", "64"}).options.check_only);
  EXPECT_EQ(parse_error({"--check-only=1"}), "--check-only takes no value");
}

TEST(ParseFlags, Help) {
  EXPECT_TRUE(parse(3, {"--help"}).options.help);
  EXPECT_TRUE(parse(3, {"-h"}).options.help);
}

TEST(ParseFlags, Errors) {
  EXPECT_EQ(parse_error({"--q", "1"}), "unknown flag '--q' (see --help)");
  EXPECT_EQ(parse_error({"--mm=4"}), "unknown flag '--mm' (see --help)");
  EXPECT_EQ(parse_error({"4096"}), "unexpected argument '4096' (see --help)");
  EXPECT_EQ(parse_error({"--m"}), "--m needs a value");
  EXPECT_EQ(parse_error({"--m="}), "--m needs a value");
  EXPECT_EQ(parse_error({"--m", "--n", "8"}), "--m needs a value");
  EXPECT_EQ(parse_error({"--m", "abc"}), "--m: 'abc' is not an integer");
  EXPECT_EQ(parse_error({"--k=12x"}), "--k: '12x' is not an integer");
  EXPECT_EQ(parse_error({"--n", "1.5"}), "--n: '1.5' is not an integer");
  EXPECT_EQ(parse_error({"--m", "99999999999999999999"}), "--m: '99999999999999999999' is out of range");
  EXPECT_EQ(parse_error({"--seed", "-1"}), "--seed: '-1' is not a non-negative integer");
  EXPECT_EQ(parse_error({"--iters", "-3"}), "--iters must be at least 1 (got -3)");
  EXPECT_EQ(parse_error({"--iters=0"}), "--iters must be at least 1 (got 0)");
  EXPECT_EQ(parse_error({"--iters", "ten"}), "--iters: 'ten' is not an integer");
  EXPECT_EQ(parse_error({"--track", "volta"}), "--track: 'volta' is not one of auto, hopper, blackwell");
  EXPECT_EQ(parse_error({"--exact=1"}), "--exact takes no value");
}

TEST(ParseFlags, ExactNeedsSmallK) {
  EXPECT_EQ(parse_error({"--exact"}),
            "--exact needs K <= 512 (got K = 4096): beyond it sums are no longer exact in fp16; add --k 512");
  EXPECT_TRUE(parse(3, {"--exact", "--k", "512"}).ok());
  EXPECT_TRUE(parse(1, {"--exact"}).ok()) << "step 1's K is 64";
  EXPECT_FALSE(parse(2, {"--exact"}).ok()) << "step 2's default K is 1024";
}

TEST(Usage, NamesTheStepAndItsDefaults) {
  EXPECT_NE(usage(1).find("usage: step01 "), std::string::npos);
  EXPECT_NE(usage(1).find("(default 128x128x64)"), std::string::npos);
  EXPECT_NE(usage(7).find("(default 4096x4096x4096)"), std::string::npos);
}

// --- select_track ---------------------------------------------------------------------------

Status fake_launcher(const Problem&, cudaStream_t) { return {}; }

constexpr StepInfo kBoth{3, "tiling", &fake_launcher, &fake_launcher, false};
constexpr StepInfo kBothWith103{3, "tiling", &fake_launcher, &fake_launcher, true};
constexpr StepInfo kHopperOnly{3, "tiling", &fake_launcher, nullptr, false};
constexpr StepInfo kBlackwellOnly{3, "tiling", nullptr, &fake_launcher, false};

TEST(SelectTrack, ComputeCapabilityPicksTheTrack) {
  TrackSelection s = select_track(9, 0, TrackRequest::automatic, kBoth);
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  EXPECT_EQ(s.track, Track::hopper);
  EXPECT_EQ(s.launcher, &fake_launcher);

  s = select_track(10, 0, TrackRequest::automatic, kBoth);
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  EXPECT_EQ(s.track, Track::blackwell);

  s = select_track(10, 3, TrackRequest::automatic, kBothWith103);
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  EXPECT_EQ(s.track, Track::blackwell);
}

TEST(SelectTrack, Sm103NeedsTheSm103aBuild) {
  EXPECT_EQ(select_track(10, 3, TrackRequest::automatic, kBoth).status.message(),
            "no track for this GPU (sm_103): the blackwell track was not built for sm_103a (configure with "
            "-DGEMM_SM103A=ON)");
}

TEST(SelectTrack, OtherGpusHaveNoTrack) {
  for (const auto& [major, minor] : std::vector<std::pair<int, int>>{{8, 0}, {8, 9}, {9, 1}, {10, 1}, {12, 0}, {7, 5}}) {
    const std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
    EXPECT_EQ(select_track(major, minor, TrackRequest::automatic, kBoth).status.message(),
              "no track for this GPU (" + sm + "): this project builds hopper (sm_90a) and blackwell (sm_100a)");
  }
}

TEST(SelectTrack, RequestMustMatchTheGpu) {
  EXPECT_TRUE(select_track(9, 0, TrackRequest::hopper, kBoth).status.ok());
  EXPECT_TRUE(select_track(10, 0, TrackRequest::blackwell, kBoth).status.ok());
  EXPECT_EQ(select_track(9, 0, TrackRequest::blackwell, kBoth).status.message(),
            "track blackwell was requested, but this GPU (sm_90) runs the hopper track");
  EXPECT_EQ(select_track(10, 0, TrackRequest::hopper, kBoth).status.message(),
            "track hopper was requested, but this GPU (sm_100) runs the blackwell track");
}

TEST(SelectTrack, TrackMustBeBuilt) {
  EXPECT_EQ(select_track(9, 0, TrackRequest::automatic, kBlackwellOnly).status.message(),
            "step 3 was built without the hopper track, which this GPU (sm_90) needs: add hopper to GEMM_TRACKS and "
            "rebuild");
  EXPECT_EQ(select_track(10, 0, TrackRequest::automatic, kHopperOnly).status.message(),
            "step 3 was built without the blackwell track, which this GPU (sm_100) needs: add blackwell to "
            "GEMM_TRACKS and rebuild");
  EXPECT_EQ(select_track(10, 0, TrackRequest::blackwell, kHopperOnly).launcher, nullptr);
}

TEST(ParseTrackRequest, Names) {
  EXPECT_EQ(parse_track_request("auto"), TrackRequest::automatic);
  EXPECT_EQ(parse_track_request("hopper"), TrackRequest::hopper);
  EXPECT_EQ(parse_track_request("blackwell"), TrackRequest::blackwell);
  EXPECT_EQ(parse_track_request("Hopper"), std::nullopt);
}

// --- driver_main: what happens before any GPU work --------------------------------------------

// A step with no launcher built: the driver can never run a kernel of it, on any machine.
constexpr StepInfo kUnbuilt{3, "tiling", nullptr, nullptr, false};
constexpr StepInfo kUnbuiltStep1{1, "single_tile", nullptr, nullptr, false};

using test::DriverRun;
using test::run_driver;

TEST(DriverMain, BadShapeExitsTwoBeforeLookingForAGpu) {
  // Exit 2, not 3: on a machine without a GPU this shows the shape was checked first.
  DriverRun r = run_driver(kUnbuilt, {"--n", "130"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err,
            "error: shape: N and K must be multiples of 8 (TMA needs 16-byte row strides for A, B and D) (got M x N x K "
            "= 4096x130x4096)\n");
  EXPECT_EQ(r.out, "");

  r = run_driver(kUnbuiltStep1, {"--k=128"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_NE(r.err.find("error: shape: step 1 computes exactly one tile"), std::string::npos) << r.err;

  r = run_driver(kUnbuilt, {"--m", "0"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_NE(r.err.find("must be positive"), std::string::npos) << r.err;
}

TEST(DriverMain, BadFlagExitsTwo) {
  const DriverRun r = run_driver(kUnbuilt, {"--iters", "-1"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "error: --iters must be at least 1 (got -1)\n");
}

TEST(DriverMain, HelpExitsZero) {
  const DriverRun r = run_driver(kUnbuilt, {"--help"});
  EXPECT_EQ(r.exit_code, kExitMatch);
  EXPECT_EQ(r.out, usage(3));
}

TEST(DriverMain, GoodShapeWithNothingToRunExitsThree) {
  // Without a GPU: "no GPU". With one: this step has no launcher built, so "no track" for it
  // either way; nothing is ever launched.
  const DriverRun r = run_driver(kUnbuilt, {"--m", "256", "--n", "256", "--k", "256"});
  EXPECT_EQ(r.exit_code, kExitNoDevice) << r.err;
  std::string why;
  if (!gpu_available(&why)) {
    EXPECT_EQ(r.err, "error: " + why + "\n");
    EXPECT_EQ(r.err.rfind("error: no GPU: ", 0), 0u) << r.err;
  } else {
    EXPECT_TRUE(r.err.find("was built without") != std::string::npos || r.err.find("no track") != std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace gemm
