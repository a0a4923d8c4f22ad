// The step a per-step test executable checks. gemm_add_step_tests() (tests/CMakeLists.txt) builds
// each such source once per step with -DGEMM_STEP_INFO=stepNN_info, linked against that step.
#pragma once

#include "harness/step.h"

#ifndef GEMM_STEP_INFO
#error "build this test with gemm_add_step_tests() in tests/CMakeLists.txt (it defines GEMM_STEP_INFO)"
#endif

namespace gemm {

const StepInfo& GEMM_STEP_INFO();  // generated per step from cmake/step_registry.cpp.in

inline const StepInfo& step_info() { return GEMM_STEP_INFO(); }

}  // namespace gemm
