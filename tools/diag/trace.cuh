// Per-tile traces for the *_trace variants of tools/diag/variants.py (hopper): DIAG_MARK(slot),
// placed in a variant's kernel, records %globaltimer into the tile's record; slot 0 also records
// %smid and blockIdx.x. A record is 8 words: start, -, -, -, end (slot 4), smid, CTA, -; tile
// (tm, tn) has record tm + tn * ceil(M / 128). Nothing is recorded while g_trace is null, which
// the variant's set_trace() changes. Each variant source has its own g_trace (internal linkage).
#pragma once

#include "common/clock.cuh"
#include "common/trace.cuh"  // sm_id

namespace gemm::diag {

static __device__ unsigned long long* g_trace = nullptr;

__device__ __forceinline__ unsigned smid() { return ::gemm::sm_id(); }

}  // namespace gemm::diag

// In a kernel with the tile's origin in m0, n0 and the problem's rows in M (steps 5 and 6 name them so).
#define DIAG_MARK(slot)                                                                                 \
  if (::gemm::diag::g_trace != nullptr && threadIdx.x == 0) {                                           \
    unsigned long long* r_ = ::gemm::diag::g_trace + ((m0 / 128) + (n0 / 128) * ((M + 127) / 128)) * 8; \
    r_[slot] = ::gemm::globaltimer_ns();                                                                \
    if ((slot) == 0) {                                                                                  \
      r_[5] = ::gemm::diag::smid();                                                                     \
      r_[6] = blockIdx.x;                                                                               \
    }                                                                                                   \
  }
