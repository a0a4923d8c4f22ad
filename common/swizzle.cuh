// The 128-byte swizzle (TMA CU_TENSOR_MAP_SWIZZLE_128B, wgmma layout 1, tcgen05 layout 2).
//
// A K-major SW128 tile is rows x 128 bytes (64 fp16 per row); 8 rows form a 1024-byte atom that
// must start on a 1024-byte boundary. Inside a row the 16-byte chunk index c is XORed with the row
// index mod 8, i.e. address bits [4:6] ^= bits [7:9] (CUTLASS Swizzle<3,4,3>).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#tensor-swizzling-modes
#pragma once

#include "common/defs.cuh"

namespace gemm {

inline constexpr uint32_t kSwizzleBytes = 128;       // one row of the atom
inline constexpr uint32_t kSwizzleAtomBytes = 1024;  // 8 rows

// Byte offset, from the tile start, of 16-byte chunk `chunk` (0..7) of row `row`.
GEMM_HD constexpr uint32_t sw128_offset(uint32_t row, uint32_t chunk) {
  return row * kSwizzleBytes + ((chunk ^ (row % 8)) * 16);
}

}  // namespace gemm
