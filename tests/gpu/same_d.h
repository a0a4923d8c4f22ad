// The GPU tests' check that a step's D does not depend on the order in which its CTAs finish
// (step_test.cpp, step12_tilings_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "harness/backend.h"
#include "harness/hash.h"
#include "harness/reference.h"
#include "harness/run.h"

namespace gemm {

// Runs `step` on `ops` three times, each checked against `reference`, and asserts that the three
// D are the same bit for bit. Call it with ASSERT_NO_FATAL_FAILURE.
inline void expect_same_d_every_run(Backend& backend, StepFn step, Operands& ops, Reference& reference) {
  std::vector<__half> first;
  for (int run = 0; run < 3; ++run) {
    const CheckOutcome out = run_and_check(backend, step, ops, reference);
    ASSERT_TRUE(out.status.ok()) << out.status.message();
    ASSERT_TRUE(out.result.ok) << summary(out.result);
    const std::vector<__half> d = ops.d.to_host();
    if (run == 0) {
      first = d;
      continue;
    }
    ASSERT_EQ(d.size(), first.size());
    for (size_t i = 0; i < d.size(); ++i)
      ASSERT_EQ(half_bits(d[i]), half_bits(first[i])) << "run " << run << ", element " << i;
  }
}

}  // namespace gemm
