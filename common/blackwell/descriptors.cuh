// The two descriptors a tcgen05.mma takes besides its TMEM address (sm_100a): the 32-bit
// instruction descriptor (idesc: types, majors, shape) and the 64-bit shared-memory matrix
// descriptor of each operand. Plain constexpr bit packing, usable on the host (tests) and the device.
#pragma once

#include <cstdlib>

#include "common/defs.cuh"

namespace gemm::blackwell {

// ---------------------------------------------------------------------------------------------
// Instruction descriptor, .kind::f16 (PTX ISA "Instruction descriptor" table):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-instruction-descriptor
//
//   bits  0-1  sparsity selector          0
//   bit   2    sparsity (0 dense)         0
//   bit   3    saturate (integer only)    0
//   bits  4-5  dtype (D): F16 0, F32 1    1  (we accumulate in fp32)
//   bits  7-9  atype: F16 0, BF16 1
//   bits 10-12 btype: F16 0, BF16 1
//   bit  13/14 negate A / B               0
//   bit  15/16 transpose A / B            0  (0 = K-major: A is M x K, B is N x K, both row-major)
//   bits 17-22 N >> 3
//   bits 24-28 M >> 4
//   bits 30-31 max shift (.ws only)       0
//   bits 6, 23, 29 reserved               0
//
// Legal shapes, .kind::f16, dense, A and B in shared memory, K = 16 per instruction (PTX ISA
// "Various combinations of .kind and shapes", #tcgen05-kind-shapes):
//   cta_group::1: M in {64, 128}, N in {8, 16, ..., 256} (steps of 8);
//   cta_group::2: M in {128, 256} (the pair's M: 2 CTAs x M/2 rows), N in {16, 32, ..., 256}.
// We enforce one rule stricter than the PTX table: cta_group::1 with M = 128 needs N a multiple of
// 16, as DeepGEMM asserts (CUTLASS asserts it for its TMEM-A "_TS" variants). Every shape the steps use
// (N = 128 or 256) is legal under both; a rejected legal shape costs nothing, an accepted illegal
// one would be an illegal-instruction fault on hardware we cannot test on.
// An illegal shape in a constant expression (`constexpr uint32_t kIdesc = make_idesc_f16(...)`)
// is a compile error; evaluated at run time it traps (device) or aborts (host).
// ---------------------------------------------------------------------------------------------

// Element type of A and B for .kind::f16 (the atype/btype codes).
enum class MmaInput : uint32_t { f16 = 0, bf16 = 1 };

// Bit positions of the idesc fields we set.
inline constexpr int kIdescDtypeShift = 4;
inline constexpr int kIdescAtypeShift = 7;
inline constexpr int kIdescBtypeShift = 10;
inline constexpr int kIdescNShift = 17;
inline constexpr int kIdescMShift = 24;
inline constexpr uint32_t kIdescDtypeF32 = 1;

// True when M x N is a legal .kind::f16 MMA shape for `cta_group` (see the rules above).
GEMM_HD constexpr bool idesc_n_ok(int n, int step) { return n % step == 0 && n >= step && n <= 256; }
GEMM_HD constexpr bool idesc_f16_shape_ok(int cta_group, int m, int n) {
  if (cta_group == 1) return (m == 64 && idesc_n_ok(n, 8)) || (m == 128 && idesc_n_ok(n, 16));
  if (cta_group == 2) return (m == 128 || m == 256) && idesc_n_ok(n, 16);
  return false;
}

// Not constexpr on purpose: reaching it while evaluating a constant expression makes that
// expression ill-formed, so an illegal shape (or LBO/SBO) bound to a constexpr variable does not
// compile.
GEMM_HD void invalid_tcgen05_descriptor() {
#if defined(__CUDA_ARCH__)
  __trap();
#else
  std::abort();
#endif
}

// idesc for D (fp32, TMEM) = A (M x 16, K-major, smem) * B (N x 16, K-major, smem)^T.
// For cta_group::2, M and N are the pair's (e.g. 256 x 256), not one CTA's share.
GEMM_HD constexpr uint32_t make_idesc_f16(int cta_group, int m, int n, MmaInput ab = MmaInput::f16) {
  if (!idesc_f16_shape_ok(cta_group, m, n)) invalid_tcgen05_descriptor();
  const uint32_t t = static_cast<uint32_t>(ab);
  return (kIdescDtypeF32 << kIdescDtypeShift) | (t << kIdescAtypeShift) | (t << kIdescBtypeShift) |
         (static_cast<uint32_t>(n >> 3) << kIdescNShift) | (static_cast<uint32_t>(m >> 4) << kIdescMShift);
}

// ---------------------------------------------------------------------------------------------
// Shared-memory matrix descriptor, sm100 (PTX ISA "Shared memory descriptor"):
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tcgen05-shared-memory-descriptor
//
//   bits  0-13  start address, (addr & 0x3FFFF) >> 4
//   bits 16-29  leading-dimension byte offset (LBO) >> 4
//   bits 32-45  stride-dimension byte offset (SBO) >> 4
//   bits 46-48  fixed constant 0b001 (absent from the sm90 wgmma descriptor: forgetting it is
//               the classic port bug)
//   bits 49-51  matrix base offset: 0, our swizzle atoms start on 1024-byte boundaries
//   bit  52     LBO mode: 0, LBO is a relative byte offset
//   bits 61-63  layout: 0 none, 1 128B with 32B atom, 2 128B, 4 64B, 6 32B (3, 5, 7 invalid).
//               Not the sm90 encoding: sm90's "1 = 128B" at bit 62 is 2 at bit 61 here.
//
// For our K-major SW128 fp16 tiles (rows x 64, 1024-byte aligned): SBO = 1024 (8 rows x 128 B
// between 8-row core-matrix groups); LBO unused for swizzled K-major layouts ("assumed 1": we
// write 1, i.e. 16 bytes, like CUTLASS); layout 2. One k16 step is +32 bytes of start address,
// i.e. +2 in the start field: the hardware applies the swizzle to the absolute address, which is
// why the atom must be 1024-byte aligned and why stepping inside it works.
// ---------------------------------------------------------------------------------------------

enum class SmemLayout : uint64_t {
  none = 0,
  swizzle_128b_base32b = 1,
  swizzle_128b = 2,
  swizzle_64b = 4,
  swizzle_32b = 6,
};

inline constexpr int kSmemDescStartShift = 0;
inline constexpr int kSmemDescLboShift = 16;
inline constexpr int kSmemDescSboShift = 32;
inline constexpr int kSmemDescVersionShift = 46;
inline constexpr int kSmemDescBaseOffsetShift = 49;
inline constexpr int kSmemDescLboModeShift = 52;
inline constexpr int kSmemDescLayoutShift = 61;
inline constexpr uint64_t kSmemDescVersion = 1;  // bits 46-48 = 0b001

// The 14-bit "matrix-descriptor-encode" of a 16-byte aligned byte address or offset.
GEMM_HD constexpr uint64_t smem_desc_encode(uint32_t x) { return (x & 0x3FFFFu) >> 4; }

// Descriptor of a shared-memory operand starting at shared-window address `smem_addr`.
// LBO and SBO must be 16-byte multiples below 256 KiB (a constant-expression error otherwise).
GEMM_HD constexpr uint64_t make_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                          SmemLayout layout) {
  if (lbo_bytes % 16 != 0 || sbo_bytes % 16 != 0 || lbo_bytes >= (1u << 18) || sbo_bytes >= (1u << 18))
    invalid_tcgen05_descriptor();
  return (smem_desc_encode(smem_addr) << kSmemDescStartShift) | (smem_desc_encode(lbo_bytes) << kSmemDescLboShift) |
         (smem_desc_encode(sbo_bytes) << kSmemDescSboShift) | (kSmemDescVersion << kSmemDescVersionShift) |
         (static_cast<uint64_t>(layout) << kSmemDescLayoutShift);
}

// Descriptor of a K-major SW128 fp16 tile starting at shared address `smem_addr` (the 1024-aligned
// atom start, or +32*j for the j-th k16 slice inside it).
GEMM_HD constexpr uint64_t make_smem_desc_k_sw128(uint32_t smem_addr) {
  return make_smem_desc(smem_addr, 16, 1024, SmemLayout::swizzle_128b);
}

}  // namespace gemm::blackwell
