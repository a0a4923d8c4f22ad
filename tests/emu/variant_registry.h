// The single-bug variants of real steps (cmake/GemmVariant.cmake, listed in tests/emu/variants.cmake):
// each generated variant source registers itself here, and variant_test.cpp runs them all.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "common/problem.h"

namespace gemm::test {

struct VariantInfo {
  const char* name;  // the test's name
  const char* file;  // the step file it is a variant of
  Status (*run)(const Problem&, cudaStream_t);
  int64_t m, n, k;              // the shape it runs at
  int sms;                      // emulated SMs
  std::vector<uint64_t> seeds;  // emulator seeds: every run must fail as expected
  const char* expect;           // a regex the failure message must match (line breaks read as " | ")
};

bool register_variant(VariantInfo info);
const std::vector<VariantInfo>& variants();

}  // namespace gemm::test
