// tcgen05.mma (sm_100a): the 5th-generation tensor-core MMA, A and B from shared memory, the
// accumulator in TMEM; its completion signal (tcgen05.commit) and the tcgen05 thread-sync fences.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-mma-instructions
//
// One thread issues an MMA (no .sync.aligned); it runs asynchronously. Consecutive MMAs of one
// thread on the same accumulator, shape and kind execute in issue order (they are "pipelined"), so a
// K loop issues back to back and commits once. The only way to learn that MMAs have completed (and
// stopped reading shared memory) is tcgen05.commit -> mbarrier -> wait: a CTA barrier proves only
// that they were issued.
//
// Ordering tcgen05 work across threads (PTX ISA, "Memory consistency model for tcgen05"):
//   thread A: tcgen05 op ...; tcgen05_fence_before_thread_sync(); barrier arrive / __syncthreads
//   thread B: barrier wait / __syncthreads; tcgen05_fence_after_thread_sync(); tcgen05 op ...
// tcgen05.commit implies the "before" fence; an mbarrier wait on a commit still needs "after".
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-memory-consistency-model
#pragma once

#include "common/defs.cuh"
#include "common/smem.cuh"
#include "common/trace.cuh"

namespace gemm::blackwell {

// K of one tcgen05.mma .kind::f16: 16 elements = 32 bytes of a K-major row.
inline constexpr int kMmaK = 16;

#if defined(__CUDACC__)

// Orders this thread's earlier tcgen05 operations before its next thread synchronisation
// (__syncthreads, barrier.cluster, mbarrier arrive): the producing side of a hand-off.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-special-sync-operations-fence
GEMM_DEVICE void tcgen05_fence_before_thread_sync() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }

// Orders this thread's later tcgen05 operations after its last thread synchronisation (a barrier,
// an mbarrier wait): the consuming side of a hand-off.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-special-sync-operations-fence
GEMM_DEVICE void tcgen05_fence_after_thread_sync() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }

// D[d_tmem] (+)= A[a_desc] * B[b_desc]^T, shape and types from idesc (make_idesc_f16). With
// enable_input_d false the old D is ignored (D = A*B): TMEM is not zeroed by allocation, so the
// first MMA of every tile passes false. Issued by one thread. For cta_group::2 only the even CTA of
// the pair issues; its descriptors address its own shared memory and the hardware reads the peer's
// operands at the same offsets.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-mma-instructions-mma
template <int CtaGroup>
GEMM_DEVICE void tcgen05_mma_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                                 bool enable_input_d) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1)
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(static_cast<uint32_t>(enable_input_d))
        : "memory");
  else
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
        " tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(static_cast<uint32_t>(enable_input_d))
        : "memory");
}

// One arrive on the mbarrier `bar` (this CTA's shared memory) once all tcgen05.mma this thread
// issued before have completed. Issued by the thread that issued the MMAs. A traced build records it.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen-async-sync-operations-commit
template <int CtaGroup>
GEMM_DEVICE void tcgen05_commit(uint64_t* bar) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(smem_addr(bar))
                 : "memory");
  else
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(smem_addr(bar))
                 : "memory");
  trace_record(TraceKind::mma_commit, bar, 0);
}

// As tcgen05_commit, but the arrive goes to the mbarrier at the same shared-memory offset as `bar`
// in every CTA of the cluster whose rank bit is set in `cta_mask` (0b11: both CTAs of a pair).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen-async-sync-operations-commit
template <int CtaGroup>
GEMM_DEVICE void tcgen05_commit_multicast(uint64_t* bar, uint16_t cta_mask) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1)
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(
            smem_addr(bar)),
        "h"(cta_mask)
        : "memory");
  else
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" ::"r"(
            smem_addr(bar)),
        "h"(cta_mask)
        : "memory");
  trace_record(TraceKind::mma_commit, bar, 0);
}

#elif defined(GEMM_EMULATED)

void tcgen05_fence_before_thread_sync(SourceLoc loc = SourceLoc::current());
void tcgen05_fence_after_thread_sync(SourceLoc loc = SourceLoc::current());
void tcgen05_mma_f16_n(int cta_group, uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                       bool enable_input_d, SourceLoc loc = SourceLoc::current());
void tcgen05_commit_n(int cta_group, uint64_t* bar, SourceLoc loc = SourceLoc::current());
void tcgen05_commit_multicast_n(int cta_group, uint64_t* bar, uint16_t cta_mask, SourceLoc loc = SourceLoc::current());
template <int CtaGroup>
void tcgen05_mma_f16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc, bool enable_input_d,
                     SourceLoc loc = SourceLoc::current()) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  tcgen05_mma_f16_n(CtaGroup, d_tmem, a_desc, b_desc, idesc, enable_input_d, loc);
}
template <int CtaGroup>
void tcgen05_commit(uint64_t* bar, SourceLoc loc = SourceLoc::current()) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  tcgen05_commit_n(CtaGroup, bar, loc);
}
template <int CtaGroup>
void tcgen05_commit_multicast(uint64_t* bar, uint16_t cta_mask, SourceLoc loc = SourceLoc::current()) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  tcgen05_commit_multicast_n(CtaGroup, bar, cta_mask, loc);
}

#endif

}  // namespace gemm::blackwell
