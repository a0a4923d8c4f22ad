// The fixture of the harness's GPU tests (harness_*.cpp): a CUDA backend, or the test skipped with
// the reason where there is no GPU.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "harness/backend.h"

namespace gemm {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu_available(&why)) GTEST_SKIP() << why;
    backend_ = make_cuda_backend();
  }
  std::unique_ptr<Backend> backend_;
};

}  // namespace gemm
