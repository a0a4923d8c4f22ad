// The step driver's emulator flags: --device, --emu-sms, --emu-seed, --dump-d, and the timeline's
// --trace, --trace-sms, --trace-cap (harness/driver.cpp, docs/timeline.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/driver.h"
#include "harness/trace.h"

namespace gemm {
namespace {

ParseResult parse(int step, std::vector<const char*> args) {
  args.insert(args.begin(), "stepNN");
  return parse_flags(step, static_cast<int>(args.size()), args.data());
}

TEST(EmuFlags, Defaults) {
  const ParseResult r = parse(3, {});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.device, DeviceKind::gpu);
  EXPECT_EQ(r.options.emu_sms, 4);
  EXPECT_FALSE(r.options.emu_seed_given);
  EXPECT_EQ(r.options.dump_d, "");
}

TEST(EmuFlags, EmulatorTakesASmallerDefaultShape) {
  const ParseResult r = parse(3, {"--device", "emu"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.device, DeviceKind::emu);
  EXPECT_EQ(r.options.shape.m, 512);
  EXPECT_EQ(r.options.shape.n, 512);
  EXPECT_EQ(r.options.shape.k, 512);
  const ParseResult given = parse(3, {"--m", "300", "--device=emu"});
  EXPECT_EQ(given.options.shape.m, 300) << "a given dimension stays";
  EXPECT_EQ(given.options.shape.n, 512);
  EXPECT_EQ(parse(2, {"--device", "emu"}).options.shape.k, 1024) << "steps 1-2 keep their shapes";
  EXPECT_TRUE(parse(3, {"--device", "emu", "--exact"}).ok()) << "512 is exact-mode K";
}

TEST(EmuFlags, Values) {
  const ParseResult r = parse(3, {"--device", "emu", "--emu-sms=2", "--emu-seed", "18446744073709551615", "--track",
                                  "hopper", "--dump-d", "/tmp/d.bin"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.emu_sms, 2);
  EXPECT_TRUE(r.options.emu_seed_given);
  EXPECT_EQ(r.options.emu_seed, 18446744073709551615ull);
  EXPECT_EQ(r.options.dump_d, "/tmp/d.bin");
  EXPECT_TRUE(parse(3, {"--dump-d", "gpu.bin"}).ok()) << "the GPU dumps D too";
}

TEST(EmuFlags, Errors) {
  EXPECT_EQ(parse(3, {"--device", "cpu"}).error, "--device: 'cpu' is not one of gpu, emu");
  EXPECT_EQ(parse(3, {"--device", "emu", "--emu-sms", "0"}).error, "--emu-sms must be in 1..1024 (got 0)");
  EXPECT_EQ(parse(3, {"--emu-seed", "3"}).error, "--emu-sms and --emu-seed need --device emu");
  EXPECT_EQ(parse(3, {"--device", "emu", "--dump-d", "x.bin"}).error,
            "--dump-d with --device emu needs --track hopper or --track blackwell (one D per file)");
  EXPECT_EQ(parse(3, {"--dump-d"}).error, "--dump-d needs a value");
}

TEST(EmuFlags, Trace) {
  const ParseResult r =
      parse(7, {"--device", "emu", "--track", "blackwell", "--trace", "t.json", "--trace-sms", "0,2-3,7"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.options.trace, "t.json");
  EXPECT_EQ(r.options.trace_sms, (std::vector<int>{0, 2, 3, 7}));
  EXPECT_EQ(parse(7, {}).options.trace_sms, (std::vector<int>{0, 1}));
  EXPECT_EQ(parse(7, {"--device", "emu", "--trace", "t.json"}).error,
            "--trace with --device emu needs --track hopper or --track blackwell (one timeline per file)");
  EXPECT_EQ(parse(7, {"--trace-sms", "1-"}).error,
            "--trace-sms: '1-' is not a list of SMs in 0..255 such as 0,1 or 0-3");
  EXPECT_EQ(parse(7, {"--trace-cap", "0"}).error, "--trace-cap must be in 1..65535 (got 0)");
  // On a GPU only a traced build records (GEMM_TRACE=ON); the emulator records in every build.
  EXPECT_EQ(parse(7, {"--trace", "t.json"}).ok(), kTraceBuild);
}

TEST(EmuFlags, UsageMentionsThem) {
  const std::string u = usage(3);
  for (const char* flag : {"--device D", "--emu-sms N", "--emu-seed S", "--dump-d FILE", "docs/emulator.md",
                           "--trace FILE", "--trace-sms L"})
    EXPECT_NE(u.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace gemm
