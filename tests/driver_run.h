// Runs the step driver in-process and captures what it prints: for the driver's tests (CPU and GPU).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "harness/driver.h"

namespace gemm::test {

struct DriverRun {
  int exit_code;
  std::string out, err;
};

// driver_main(info, {"stepNN", args...}) with stdout and stderr captured.
inline DriverRun run_driver(const StepInfo& info, std::vector<const char*> args) {
  args.insert(args.begin(), "stepNN");
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = driver_main(info, static_cast<int>(args.size()), args.data());
  std::string out = ::testing::internal::GetCapturedStdout();
  return {code, std::move(out), ::testing::internal::GetCapturedStderr()};
}

}  // namespace gemm::test
