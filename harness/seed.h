// Seeds for runs that draw fresh inputs each time: printed by the caller so a run can be replayed.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>

namespace gemm {

// A fresh 64-bit seed from the operating system's entropy.
inline uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) | rd();
}

// The value of environment variable `var` when it is set (replaying a printed seed; decimal or
// 0x hex), otherwise a fresh seed.
inline uint64_t seed_from_env(const char* var) {
  if (const char* v = std::getenv(var)) return std::strtoull(v, nullptr, 0);
  return fresh_seed();
}

}  // namespace gemm
