// The step driver's flags, its track selection, and its exit codes before any GPU work.
#include <gtest/gtest.h>

#include <sstream>
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
  const struct {
    int step;
    int64_t m, n, k;
  } expected[] = {{1, 128, 128, 64}, {2, 128, 128, 1024}, {3, 4096, 4096, 4096}, {10, 4096, 4096, 4096}};
  for (const auto& e : expected) {
    const ParseResult r = parse(e.step, {});
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.options.shape, (Shape{e.m, e.n, e.k})) << e.step;
    EXPECT_EQ(r.options.iters, 20);
    EXPECT_EQ(r.options.seed, 1u);
    EXPECT_EQ(r.options.mode, InputMode::float_uniform);
    EXPECT_EQ(r.options.track, TrackRequest::automatic);
    EXPECT_FALSE(r.options.help);
  }
}

TEST(ParseFlags, BothSyntaxes) {
  const ParseResult r = parse(3, {"--m", "512", "--n=256", "--k", "128", "--iters=5", "--seed", "18446744073709551615",
                                  "--exact", "--track=hopper"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.shape, (Shape{512, 256, 128}));
  EXPECT_EQ(r.options.iters, 5);
  EXPECT_EQ(r.options.seed, 18446744073709551615ull);
  EXPECT_EQ(r.options.mode, InputMode::exact_int);
  EXPECT_EQ(r.options.track, TrackRequest::hopper);
}

TEST(ParseFlags, LaterFlagWins) { EXPECT_EQ(parse(3, {"--m", "8", "--m=16"}).options.shape.m, 16); }

TEST(ParseFlags, NegativeShapeIsLeftToTheContract) {
  const ParseResult r = parse(3, {"--m", "-128"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.shape.m, -128);
}

TEST(ParseFlags, CheckOnly) {
  EXPECT_FALSE(parse(3, {}).options.check_only);
  EXPECT_TRUE(parse(3, {"--check-only", "--exact", "--k", "64"}).options.check_only);
  EXPECT_EQ(parse_error({"--check-only=1"}), "--check-only takes no value");
}

TEST(ParseFlags, CpuCheckNeedsCheckOnly) {
  EXPECT_FALSE(parse(3, {}).options.cpu_check);
  EXPECT_TRUE(parse(3, {"--check-only", "--cpu-check"}).options.cpu_check);
  EXPECT_EQ(parse_error({"--cpu-check"}), "--cpu-check needs --check-only (a timed run is compared with cuBLAS)");
}

TEST(ParseFlags, Help) {
  EXPECT_TRUE(parse(3, {"--help"}).options.help);
  EXPECT_TRUE(parse(3, {"-h"}).options.help);
  EXPECT_TRUE(parse(3, {"--exact", "--help"}).ok()) << "--help is not held to K <= 512";
  EXPECT_EQ(parse_error({"--help=1"}), "--help takes no value");
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
  EXPECT_NE(usage(3).find("  --iters I      timed pairs of calls, the step's then cuBLAS's (default 20)"),
            std::string::npos);
}

// The driver's "to publish:" line: gemm_bench's command for this step and shape, which
// tests/gpu/bench_agreement_test.cpp runs (its flags as tools/compare.sh passes them on).
TEST(PublishLine, NamesTheBenchmarkForThisStepAndShape) {
  EXPECT_EQ(publish_line(10, Shape{8192, 8192, 8192}),
            "gemm_bench, with repetitions: tools/compare.sh --sizes=8192 --benchmark_filter=step10");
  EXPECT_EQ(publish_line(3, Shape{4001, 1000, 2056}),
            "gemm_bench, with repetitions: tools/compare.sh --sizes=4001x1000x2056 --benchmark_filter=step03");
  EXPECT_EQ(publish_line(1, Shape{128, 128, 64}),
            "gemm_bench, with repetitions: tools/compare.sh --sizes=128x128x64 --benchmark_filter=step01");
  EXPECT_EQ(publish_line(2, Shape{128, 128, 2048}),
            "gemm_bench, with repetitions (it times step02 at 128x128x1024 only): tools/compare.sh "
            "--sizes=128x128x1024 --benchmark_filter=step02");
}

// The synopsis and the flag lines come from the parser's table: every flag the synopsis shows is
// one the parser takes (with a value where it shows one), and every one has a line of help.
TEST(Usage, SynopsisShowsExactlyTheFlagsTheParserTakes) {
  const std::string u = usage(3);
  const std::string synopsis = u.substr(0, u.find("\n\n"));
  std::vector<std::string> shown;
  for (size_t at = synopsis.find('['); at != std::string::npos; at = synopsis.find('[', at + 1))
    shown.push_back(synopsis.substr(at + 1, synopsis.find(']', at) - at - 1));
  const std::vector<std::string> expected = {"--m M",
                                             "--n N",
                                             "--k K",
                                             "--iters I",
                                             "--seed S",
                                             "--exact",
                                             "--track auto|hopper|blackwell",
                                             "--device gpu|emu",
                                             "--emu-sms N",
                                             "--emu-seed S",
                                             "--dump-d FILE",
                                             "--check-only",
                                             "--cpu-check",
                                             "--trace FILE",
                                             "--trace-sms LIST",
                                             "--trace-cap N",
                                             "--help"};
  EXPECT_EQ(shown, expected);
  std::string labels;  // the left column of the flags' help lines
  std::istringstream help(u.substr(synopsis.size()));
  for (std::string line; std::getline(help, line);)
    if (line.rfind("  -", 0) == 0) labels += line.substr(0, 15) + "\n";
  for (const std::string& item : shown) {
    const std::string flag = item.substr(0, item.find(' '));
    // Where every flag is allowed (the emulator's flags need --device emu, --dump-d there a track,
    // --cpu-check --check-only).
    std::vector<const char*> args = {"--k", "64", "--device", "emu", "--track", "hopper", "--check-only", flag.c_str()};
    std::string value;
    if (item.find(' ') != std::string::npos) {
      value = item.substr(item.find(' ') + 1);
      value = value.substr(0, value.find('|'));  // the first choice
      if (value == "N" || value == "S" || value == "I" || value == "M" || value == "K") value = "8";
      if (value == "LIST") value = "0";  // --trace-sms
      if (flag == "--device") value = "emu";
      args.push_back(value.c_str());
    }
    EXPECT_TRUE(parse(3, args).ok()) << item << ": " << parse(3, args).error;
    EXPECT_NE(labels.find(flag), std::string::npos) << item << " has no help line";
    if (!value.empty()) {
      EXPECT_FALSE(parse(3, {flag.c_str()}).ok()) << flag << " without its value";
    }
  }
  std::istringstream lines(u);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 110u) << line;
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
  for (const auto& [major, minor] :
       std::vector<std::pair<int, int>>{{8, 0}, {8, 9}, {9, 1}, {10, 1}, {12, 0}, {7, 5}}) {
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
  EXPECT_EQ(
      r.err,
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
    // Says there is no GPU, and how to run the step without one.
    EXPECT_EQ(r.err, "error: " + why +
                         "; --device emu runs the step on the functional emulator instead (no GPU needed, nothing "
                         "timed)\n");
    EXPECT_EQ(r.err.rfind("error: no GPU: ", 0), 0u) << r.err;
  } else {
    EXPECT_TRUE(r.err.find("was built without") != std::string::npos || r.err.find("no track") != std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace gemm
