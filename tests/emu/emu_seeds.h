// The two seeds of the emulator tests (step_emu_test.cpp, step12_tilings_test.cpp), both fresh each
// run unless set, and printed with every failure: the inputs' (GEMM_TEST_SEED replays it) and the
// emulator's schedule (GEMM_EMU_SEED; the driver's --emu-seed takes the same value).
#pragma once

#include <cstdint>

#include "harness/seed.h"

namespace gemm {

inline uint64_t test_seed() {
  static const uint64_t seed = seed_from_env("GEMM_TEST_SEED");
  return seed;
}
inline uint64_t emu_seed() {
  static const uint64_t seed = seed_from_env("GEMM_EMU_SEED");
  return seed;
}

}  // namespace gemm
