// The wgmma shared-memory matrix descriptor (64 bits), PTX ISA "Matrix Descriptor Format":
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor
//
//   bits  0-13  start address, (addr & 0x3FFFF) >> 4
//   bits 16-29  leading-dimension byte offset (LBO) >> 4
//   bits 32-45  stride-dimension byte offset (SBO) >> 4
//   bits 49-51  matrix base offset (0: the swizzle pattern starts on its natural boundary)
//   bits 62-63  layout: 0 interleave (none), 1 = 128B swizzle, 2 = 64B, 3 = 32B
//
// For our K-major SW128 fp16 tiles (rows x 64, TMA SWIZZLE_128B, 1024-byte aligned): SBO = 1024
// (8 rows x 128 B between 8-row core-matrix groups), LBO unused for swizzled K-major layouts
// ("assumed 1": we write 1), base offset 0. One k16 step is +32 bytes of start address.
#pragma once

#include "common/defs.cuh"

namespace gemm::hopper {

enum class WgmmaLayout : uint64_t { interleave = 0, swizzle_128b = 1, swizzle_64b = 2, swizzle_32b = 3 };

// The 14-bit "matrix-descriptor-encode" of a byte address or offset.
GEMM_HD constexpr uint64_t wgmma_desc_encode(uint32_t x) { return (x & 0x3FFFFu) >> 4; }

GEMM_HD constexpr uint64_t make_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                           WgmmaLayout layout) {
  return wgmma_desc_encode(smem_addr) | (wgmma_desc_encode(lbo_bytes) << 16) | (wgmma_desc_encode(sbo_bytes) << 32) |
         (static_cast<uint64_t>(layout) << 62);
}

// Descriptor of a K-major SW128 fp16 tile starting at shared address `smem_addr` (1024-aligned,
// or +32*j for the j-th k16 slice inside the atom).
GEMM_HD constexpr uint64_t make_wgmma_desc_k_sw128(uint32_t smem_addr) {
  return make_wgmma_desc(smem_addr, 16, 1024, WgmmaLayout::swizzle_128b);
}

}  // namespace gemm::hopper
