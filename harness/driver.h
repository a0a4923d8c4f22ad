// The step driver: the main() of every step executable (cmake/GemmStep.cmake generates it).
//
//   step03 [--m M] [--n N] [--k K] [--iters I] [--seed S] [--exact] [--track auto|hopper|blackwell]
//
// runs the step once on A[M,K], B[N,K] filled from the hash, checks D (float mode against cuBLAS,
// --exact against the CPU reference, bit for bit), times the step and cuBLAS, and prints one block.
#pragma once

#include <cstdint>
#include <string>

#include "harness/hash.h"
#include "harness/step.h"
#include "harness/track.h"

namespace gemm {

// The exit codes, stable: scripts and tests rely on them.
enum ExitCode : int {
  kExitMatch = 0,     // D matched the reference
  kExitFailure = 1,   // D did not match, or the step or the harness failed
  kExitUsage = 2,     // a bad flag or a shape outside the step's contract: nothing ran
  kExitNoDevice = 3,  // no GPU, or no track of this step for it: nothing ran
};

struct DriverOptions {
  int64_t m = 0, n = 0, k = 0;  // defaults from the step's contract: see default_shape
  int iters = 20;               // timed runs (after 2 warm-ups)
  uint64_t seed = 1;
  InputMode mode = InputMode::float_uniform;
  TrackRequest track = TrackRequest::automatic;
  bool help = false;
};

struct ParseResult {
  DriverOptions options;
  std::string error;  // empty: parsed
  bool ok() const { return error.empty(); }
};

// The default shape of a step: 128x128x64 (step 1), 128x128x1024 (step 2), 4096^3 otherwise.
Problem default_shape(Contract contract);

// Parses the flags (argv[0] is the program). Accepts "--m 4096" and "--m=4096". Checks the flags
// themselves, not the shape: that is the step contract's job (check_problem).
ParseResult parse_flags(int step, int argc, const char* const* argv);

std::string usage(int step);

// Runs the step executable: returns one of ExitCode.
int driver_main(const StepInfo& info, int argc, const char* const* argv);

}  // namespace gemm
