// Comparing a step's D with the reference D (docs/design.md, "Checking results").
#pragma once

#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "harness/hash.h"

namespace gemm {

// Float mode: every element within |d - r| <= kAbsTol + kRelTol * |r| (the TIRX tolerance) and the
// relative Frobenius error ||D - R|| / ||R|| at most kMaxRelFrobenius.
inline constexpr double kAbsTol = 1e-2;
inline constexpr double kRelTol = 1e-3;
inline constexpr double kMaxRelFrobenius = 1e-3;

struct CompareResult {
  bool ok = false;
  double max_abs_err = 0;    // over D (NaN if any element of D is NaN)
  double rel_frobenius = 0;  // ||D - R||_F / ||R||_F over D
  int64_t bad_count = 0;     // elements of D that fail, plus guard elements touched

  // The first failure in memory order (guard before D, D row by row, guard after D):
  // "NaN", "unwritten (still poisoned)", "guard touched before D at offset -3" (elements from D's
  // start), "guard touched after D at offset 0" (elements past D's end), "mismatch", or, with no
  // bad element, "relative Frobenius error ... > ...". Empty when ok.
  std::string reason;
  int64_t row = -1, col = -1;            // the element of D; -1 for a guard or the Frobenius criterion
  uint16_t got_bits = 0, want_bits = 0;  // fp16 bits; want is the poison for a guard
};

// `got` is the whole guarded allocation: `guard` elements, D (m x n, row-major), `guard` elements.
// `want` is the reference D. Exact mode: bit-for-bit equality. NaN fails everything.
CompareResult compare(std::span<const __half> got, size_t guard, std::span<const __half> want, int64_t m, int64_t n,
                      InputMode mode);

// Whether a guarded allocation is exactly as GuardedOutput::poison left it: no element of D and
// no guard written. What a rejected call must leave behind.
bool is_untouched(std::span<const __half> got, size_t guard);

// "match" or "MISMATCH at (r,c): got x want y (reason)" -- the driver's verdict line.
std::string verdict(const CompareResult& r);
// One line: the verdict, the bad count, the max abs and relative Frobenius errors.
std::string summary(const CompareResult& r);

}  // namespace gemm
