// A step as the harness sees it: its number, name, and one host launcher per track.
#pragma once

#include <cuda_runtime.h>

#include "common/problem.h"

namespace gemm {

// A step's host launcher: checks the problem against the step's contract, launches on `stream`
// and returns without synchronising. A failure names the rule it broke; nothing was launched then.
using StepFn = Status (*)(const Problem&, cudaStream_t stream);

enum class Track { hopper, blackwell };

inline const char* track_name(Track t) { return t == Track::hopper ? "hopper" : "blackwell"; }

struct StepInfo {
  int number;             // 1..12
  const char* name;       // folder suffix: "single_tile"
  StepFn hopper;          // nullptr when the track is not built
  StepFn blackwell;       // nullptr when the track is not built
  bool blackwell_sm103a;  // the blackwell track was also built for sm_103a
  // The emulated builds (emu/, docs/emulator.md): the same step files compiled as host C++,
  // their kernels run by the functional emulator on the CPU. Built for both tracks in every build.
  StepFn hopper_emulated = nullptr;
  StepFn blackwell_emulated = nullptr;

  Contract contract() const { return contract_for_step(number); }
  StepFn launcher(Track t) const { return t == Track::hopper ? hopper : blackwell; }
  StepFn emulated(Track t) const { return t == Track::hopper ? hopper_emulated : blackwell_emulated; }
};

}  // namespace gemm
