// Tensor Memory (TMEM, sm_100a): where tcgen05.mma accumulates. Allocation, loads into registers,
// and TMEM addresses.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tensor-memory
//
// Geometry: per CTA (per SM) 128 lanes x 512 columns of 32-bit cells. An address is 32 bits:
// lane in bits 31-16, column in bits 15-0. An M=128 fp32 accumulator of N columns occupies lanes
// 0-127 (row i of D is lane i) and N consecutive columns.
//
// The warp -> lane-quarter rule: a warp reaches only a quarter of the lanes with tcgen05.ld/st.
// Warp w of the CTA accesses lanes 32*(w%4) .. 32*(w%4)+31; reading all 128 lanes takes a whole
// warpgroup (4 consecutive warps, the first one's index a multiple of 4). Our addresses carry that
// lane base (tmem_lane_base) in the lane field, the documented form (DeepGEMM reports that the
// hardware ignores those bits and takes the quarter from w%4; either way the values agree).
//
// Allocation: one whole warp executes tcgen05.alloc (.sync.aligned) for a power-of-2 number of
// columns in [32, 512]; the allocated address (lane 0, first column) is written to shared memory,
// where other threads read it after a barrier. The same warp deallocates everything before the CTA
// exits. The CTA relinquishes its alloc permit once it will not allocate again, so that the next
// CTA on the SM is not held back. All tcgen05 instructions of a kernel use the same cta_group.
#pragma once

#include <cstring>

#include "common/defs.cuh"
#include "common/smem.cuh"

namespace gemm::blackwell {

inline constexpr uint32_t kTmemLanes = 128;
inline constexpr uint32_t kTmemColumns = 512;

// A legal tcgen05.alloc column count: a power of 2 in [32, 512].
GEMM_HD constexpr bool tmem_alloc_columns_ok(uint32_t n) { return n >= 32 && n <= 512 && (n & (n - 1)) == 0; }

// Shared memory per SM on the GPUs of the blackwell track (B200, GB200: 228 KB), of which the system
// reserves 1 KB for each resident CTA.
inline constexpr size_t kSmemPerSm = 228 * 1024;
inline constexpr size_t kSmemReservedPerCta = 1024;

// The dynamic shared memory a CTA that allocates `columns` TMEM columns should ask for (at least
// `needed`) so that no more of its CTAs fit on an SM than TMEM has columns for. A CTA that finds
// too few columns free spins in tcgen05.alloc until a CTA before it on the SM frees them.
// 512 / columns CTAs fit, one more does not.
GEMM_HD constexpr size_t tmem_limited_smem_bytes(size_t needed, uint32_t columns) {
  const size_t max_ctas = kTmemColumns / columns;
  const size_t least = kSmemPerSm / (max_ctas + 1) - kSmemReservedPerCta + 1;
  return needed > least ? needed : least;
}

// The TMEM address `lane` lanes and `column` columns past `base` (an address tcgen05.alloc returned).
GEMM_HD constexpr uint32_t tmem_addr(uint32_t base, uint32_t lane, uint32_t column) {
  return base + (lane << 16) + column;
}
GEMM_HD constexpr uint32_t tmem_addr_lane(uint32_t addr) { return addr >> 16; }
GEMM_HD constexpr uint32_t tmem_addr_column(uint32_t addr) { return addr & 0xFFFFu; }

// First of the 32 lanes warp `warp` (its index in the CTA) may access with tcgen05.ld/st.
GEMM_HD constexpr uint32_t tmem_lane_base(int warp) { return 32u * static_cast<uint32_t>(warp % 4); }

// A 32-bit TMEM cell (fp32 accumulator bits, as tcgen05.ld returns them) as a float.
GEMM_HD float tmem_f32(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// The bits of an fp32 value, as a TMEM cell holds them (tmem_f32 the other way round).
GEMM_HD uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
#endif
}

#if defined(__CUDACC__)

// Allocates NumColumns TMEM columns (all 128 lanes) and writes their address to *slot.
// Executed by all 32 threads of one warp. Blocks until the columns are free. cta_group::2: the
// same warp of both CTAs of the pair, with the same slot offset, once a cluster barrier has shown
// that the peer is running.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instructions-tcgen05-alloc-dealloc-relinquish-alloc-permit
template <int CtaGroup, uint32_t NumColumns>
GEMM_DEVICE void tmem_alloc(uint32_t* slot) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  static_assert(tmem_alloc_columns_ok(NumColumns), "tcgen05.alloc: a power of 2 in [32, 512] columns");
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(slot)),
                 "r"(NumColumns)
                 : "memory");
  else
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(slot)),
                 "r"(NumColumns)
                 : "memory");
}

// Frees NumColumns columns at `taddr` (as allocated). Executed by all 32 threads of one warp, the
// warp that allocated; every tcgen05.ld of them must have completed (wait::ld, then a barrier).
// cta_group::2: both CTAs of the pair, after a cluster barrier.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instructions-tcgen05-alloc-dealloc-relinquish-alloc-permit
template <int CtaGroup, uint32_t NumColumns>
GEMM_DEVICE void tmem_dealloc(uint32_t taddr) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  static_assert(tmem_alloc_columns_ok(NumColumns), "tcgen05.dealloc: a power of 2 in [32, 512] columns");
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(NumColumns) : "memory");
  else asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(NumColumns) : "memory");
}

// The CTA promises not to allocate again, so that another CTA waiting to allocate on this SM may
// proceed. Executed by all 32 threads of one warp.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instructions-tcgen05-alloc-dealloc-relinquish-alloc-permit
template <int CtaGroup>
GEMM_DEVICE void tmem_relinquish_alloc_permit() {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1) asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  else asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}

// tcgen05.ld.32x32b.x16: lane tmem_addr_lane(taddr) + t -> thread t of the warp, 16 consecutive
// 32-bit columns from tmem_addr_column(taddr) -> v[0..15]. All 32 threads, the same taddr; the
// lanes must be the warp's quarter (see above). Asynchronous: v is valid only after tmem_wait_ld.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instructions-tcgen05-ld
GEMM_DEVICE void tmem_ld_32x32b_x16(uint32_t taddr, uint32_t (&v)[16]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x16.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15}, [%16];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
        "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15])
      : "r"(taddr)
      : "memory");
}

// tcgen05.ld.32x32b.x32: as above with 32 consecutive columns -> v[0..31].
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instructions-tcgen05-ld
GEMM_DEVICE void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&v)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7]), "=r"(v[8]),
        "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]), "=r"(v[16]),
        "=r"(v[17]), "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]), "=r"(v[24]),
        "=r"(v[25]), "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
      : "r"(taddr)
      : "memory");
}

// Waits until all of this thread's earlier tcgen05.ld have completed (their registers are valid).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instructions-tcgen05-wait
GEMM_DEVICE void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }

// Compiler-only fence on registers a tcgen05.ld wrote: ties their first use to a point after the
// wait, so the compiler cannot hoist a read of them above tmem_wait_ld (it sees no dependency
// between the wait and the registers otherwise).
template <int N>
GEMM_DEVICE void tmem_fence_operands(uint32_t (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(v[i])::"memory");
}

#elif defined(GEMM_EMULATED)

void tmem_alloc_n(int cta_group, uint32_t* slot, uint32_t num_columns, SourceLoc loc = SourceLoc::current());
void tmem_dealloc_n(int cta_group, uint32_t taddr, uint32_t num_columns, SourceLoc loc = SourceLoc::current());
void tmem_relinquish_alloc_permit_n(int cta_group, SourceLoc loc = SourceLoc::current());
template <int CtaGroup, uint32_t NumColumns>
void tmem_alloc(uint32_t* slot, SourceLoc loc = SourceLoc::current()) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  static_assert(tmem_alloc_columns_ok(NumColumns), "tcgen05.alloc: a power of 2 in [32, 512] columns");
  tmem_alloc_n(CtaGroup, slot, NumColumns, loc);
}
template <int CtaGroup, uint32_t NumColumns>
void tmem_dealloc(uint32_t taddr, SourceLoc loc = SourceLoc::current()) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  static_assert(tmem_alloc_columns_ok(NumColumns), "tcgen05.dealloc: a power of 2 in [32, 512] columns");
  tmem_dealloc_n(CtaGroup, taddr, NumColumns, loc);
}
template <int CtaGroup>
void tmem_relinquish_alloc_permit(SourceLoc loc = SourceLoc::current()) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  tmem_relinquish_alloc_permit_n(CtaGroup, loc);
}
void tmem_ld_32x32b_x16(uint32_t taddr, uint32_t (&v)[16], SourceLoc loc = SourceLoc::current());
void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&v)[32], SourceLoc loc = SourceLoc::current());
void tmem_wait_ld(SourceLoc loc = SourceLoc::current());
template <int N>
void tmem_fence_operands(uint32_t (&)[N]) {}

#endif

}  // namespace gemm::blackwell
