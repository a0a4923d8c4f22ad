// The step executable's ratio to cuBLAS against gemm_bench's, at 8192^3, where the GPU runs at its
// power limit: both time with PairTimer (harness/timer.h), so the ratio the driver prints must
// agree with the one the benchmark publishes. Runs the built programs themselves: the step
// executable (GEMM_AGREEMENT_STEP_EXE) three times, and gemm_bench between, with the flags the
// driver's "to publish:" line gives, as tools/compare.sh runs it. Skipped, with the driver's
// reason, where there is no GPU or no track for it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/driver.h"

namespace gemm {
namespace {

// How far the driver's ratio may be from gemm_bench's. Timing the step's calls in one block and
// cuBLAS's in another, the driver was off by several times this at 8192^3: the GPU reached its
// power limit during the first block and slowed the second.
constexpr double kTolerance = 0.03;

struct Ran {
  int exit_code;
  std::string output;  // stdout and stderr
};

Ran run(const std::string& command) {
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed: " + command};
  std::string output;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

// The rest of the line that starts with `label` in `text` ("" if none).
std::string line_after(const std::string& text, const std::string& label) {
  size_t at = text.rfind("\n" + label);
  if (at == std::string::npos) return "";
  at += 1 + label.size();
  return text.substr(at, text.find('\n', at) - at);
}

// The number that follows `key` after `from` in `text` (NaN if none).
double number_after(const std::string& text, size_t from, const std::string& key) {
  const size_t at = from == std::string::npos ? from : text.find(key, from);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + key.size(), nullptr);
}

TEST(DriverVsBench, RatioToCublasAgreesAt8192) {
  const std::string step_exe = GEMM_AGREEMENT_STEP_EXE;
  char name[16];
  std::snprintf(name, sizeof name, "step%02d", GEMM_AGREEMENT_STEP);
  const std::string driver = quoted(step_exe) + " --m 8192 --n 8192 --k 8192";

  std::vector<double> driver_ratios;
  Ran first = run(driver);
  if (first.exit_code == kExitNoDevice) GTEST_SKIP() << first.output;
  ASSERT_EQ(first.exit_code, kExitMatch) << first.output;
  driver_ratios.push_back(std::strtod(line_after(first.output, "ratio:").c_str(), nullptr));

  // gemm_bench as the driver says to publish it: the flags after tools/compare.sh, and those
  // compare.sh adds (5 repetitions, median aggregates, the JSON).
  const std::string publish = line_after(first.output, "to publish:");
  const std::string script = "tools/compare.sh ";
  ASSERT_NE(publish.find(script), std::string::npos) << first.output;
  const std::string bench_flags = publish.substr(publish.find(script) + script.size());
  EXPECT_EQ(bench_flags, std::string("--sizes=8192 --benchmark_filter=") + name);
  const std::string json = ::testing::TempDir() + "bench_agreement_" + std::to_string(getpid()) + ".json";
  const Ran bench =
      run(quoted(GEMM_BENCH_EXE) +
          " --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_out=" + quoted(json) +
          " --benchmark_out_format=json " + bench_flags);
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  std::stringstream text;
  text << std::ifstream(json).rdbuf();
  std::remove(json.c_str());
  const std::string results = text.str();
  const std::string median_name = std::string("\"name\": \"") + name + "/8192x8192x8192/manual_time_median\"";
  const double bench_ratio = number_after(results, results.find(median_name), "\"ratio_to_cublas\": ");
  ASSERT_GT(bench_ratio, 0.0) << median_name << " with ratio_to_cublas not found in\n" << results;

  for (int i = 0; i < 2; ++i) {
    const Ran again = run(driver);
    ASSERT_EQ(again.exit_code, kExitMatch) << again.output;
    driver_ratios.push_back(std::strtod(line_after(again.output, "ratio:").c_str(), nullptr));
  }
  for (size_t i = 0; i < driver_ratios.size(); ++i) {
    EXPECT_NEAR(driver_ratios[i] / bench_ratio, 1.0, kTolerance)
        << name << " run " << i + 1 << " printed ratio " << driver_ratios[i] << ", gemm_bench " << bench_ratio;
    RecordProperty("driver_ratio_" + std::to_string(i + 1), std::to_string(driver_ratios[i]));
  }
  RecordProperty("bench_ratio", std::to_string(bench_ratio));
}

}  // namespace
}  // namespace gemm
