// One problem end to end: allocate, fill, poison, run the step, compare with a reference.
// The step driver and the step tests both check a step through run_and_check, so they agree on
// what "correct" means; the benchmarks reuse Operands.
#pragma once

#include <cstdint>

#include "common/problem.h"
#include "harness/backend.h"
#include "harness/compare.h"
#include "harness/device.h"
#include "harness/reference.h"
#include "harness/step.h"
#include "harness/track.h"

namespace gemm {

// Where a step runs on this machine: the GPU, and the step's track and launcher for it. A failed
// status says why the step cannot run here: "no GPU: ...", "no track for this GPU (sm_XY) ...",
// a track request that does not match, a track not built. The driver exits 3 then; tests skip.
struct StepTarget {
  Status status;
  DeviceInfo device;
  Track track = Track::hopper;
  StepFn launcher = nullptr;
};
StepTarget find_step_target(const StepInfo& info, TrackRequest requested = TrackRequest::automatic);

// A problem's operands on a backend: A and B filled from the hash with operand_seed(seed, ...),
// D inside a poisoned guard band (poisoned again by run_and_check before each run).
struct Operands {
  Operands(Backend& backend, const Shape& shape, uint64_t seed, InputMode mode);

  // The shape and the device pointers of A, B and D.
  Problem problem() const;

  Shape shape;
  uint64_t seed;
  InputMode mode;
  DeviceBuffer<__half> a, b;
  GuardedOutput d;
};

struct CheckOutcome {
  Status status;         // the step's own: a rejected shape, a launch error, a fault while it ran
  CompareResult result;  // compared only when status.ok()
  bool ok() const { return status.ok() && result.ok; }
};

// Poisons D and its guards, runs `step` on the operands to completion, and compares D with
// `reference` (in the operands' mode: bit for bit in exact mode).
CheckOutcome run_and_check(Backend& backend, StepFn step, Operands& operands, Reference& reference);

}  // namespace gemm
