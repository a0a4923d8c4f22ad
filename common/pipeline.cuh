// The position in a ring of pipeline stages: which stage buffer is next and which phase parity
// its barriers are in. Plain C++ (GEMM_HD): the same code on the GPU, in the emulator and in tests.
// It arrives with step 5 (pipelining), whose lesson it is; its solution regions are step 5's.
//
// A stage s has two mbarriers: full[s] (its data has landed; the producer's arrive.expect_tx plus
// TMA bytes complete it) and empty[s] (its consumers are done with it). Producer and consumer each
// keep their own PipelineState, both starting at stage 0, phase 0, and advance it once per stage
// they handle, so both walk the same sequence:
//   (stage 0, phase 0), (1, 0), ..., (Stages-1, 0), (0, 1), (1, 1), ... : the phase flips each
//   time the stage index wraps to 0, because by then every barrier of the ring has completed one
//   more phase.
// The parity to wait for:
//   - consumers wait on full[stage] with parity `phase`: the phase-th completion of full[stage];
//   - producers wait on empty[stage] with parity `phase ^ 1`. A fresh barrier is in phase 0, and a
//     wait for parity 1 reads as "the phase before the current one has completed", which passes at
//     once: the first lap of the ring finds every buffer free without anyone arriving on empty[s].
//     From the second lap on it waits for the consumers' release of the previous lap.
// (CUTLASS starts the producer's state at phase 1 instead; DeepGEMM waits on `phase ^ 1`, as here.)
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-mbarrier-test-wait-try-wait
#pragma once

#include "common/defs.cuh"

namespace gemm {

template <int Stages>
struct PipelineState {
  static_assert(Stages >= 1, "a pipeline has at least one stage");
  static constexpr int kStages = Stages;

  int stage = 0;
  uint32_t phase = 0;

  // Moves to the next stage; wrapping to stage 0 flips the phase.
  GEMM_HD void advance() {
    // BEGIN SOLUTION step05: move to the next stage; wrapping to stage 0 flips the phase.
    if (++stage == Stages) {
      stage = 0;
      phase ^= 1u;
    }
    // END SOLUTION step05
  }

  // Parity a consumer waits for on full[stage]: this lap's completion.
  GEMM_HD uint32_t full_parity() const {
    uint32_t parity = 0;
    // BEGIN SOLUTION step05: a consumer waits for this lap's completion of full[stage], the one of the current phase: parity `phase`.
    parity = phase;
    // END SOLUTION step05
    return parity;
  }
  // Parity a producer waits for on empty[stage]: the previous lap's release (passes at once on a
  // fresh barrier).
  GEMM_HD uint32_t empty_parity() const {
    uint32_t parity = 0;
    // BEGIN SOLUTION step05: the producer waits for the phase before the current one, phase ^ 1: on a fresh barrier (phase 0) that wait passes at once, so the first lap finds every stage free.
    parity = phase ^ 1u;
    // END SOLUTION step05
    return parity;
  }
};

}  // namespace gemm
