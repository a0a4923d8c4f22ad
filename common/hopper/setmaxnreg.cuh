// setmaxnreg: moves registers between warpgroups of a warp-specialised kernel (sm_90a).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#miscellaneous-instructions-setmaxnreg
// It only takes effect when the kernel has a register cap at entry: __launch_bounds__(threads, 1).
#pragma once

#include "common/defs.cuh"

namespace gemm::hopper {

#if defined(__CUDACC__)

// Raises this warpgroup's per-thread register count to N (blocks until the CTA pool has them).
template <int N>
GEMM_DEVICE void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: 24..256, a multiple of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// Lowers this warpgroup's per-thread register count to N, returning the rest to the CTA pool.
template <int N>
GEMM_DEVICE void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: 24..256, a multiple of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

#elif defined(GEMM_EMULATED)

// The emulator checks that a whole warpgroup executes it with one count (.sync.aligned), and
// models the CTA's register pool: an .inc waits until .decs have returned enough.
void setmaxnreg_n(bool inc, int n, SourceLoc loc = SourceLoc::current());
template <int N>
void setmaxnreg_inc(SourceLoc loc = SourceLoc::current()) {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: 24..256, a multiple of 8");
  setmaxnreg_n(true, N, loc);
}
template <int N>
void setmaxnreg_dec(SourceLoc loc = SourceLoc::current()) {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: 24..256, a multiple of 8");
  setmaxnreg_n(false, N, loc);
}

#endif

}  // namespace gemm::hopper
