// stmatrix: a warp stores four 8x8 matrices of 16-bit elements from its registers to shared memory
// in one instruction, each lane supplying one row's address. An epilogue uses it to stage an MMA's
// fp16 results with a quarter of the instructions of 4-byte stores.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-stmatrix
#pragma once

#include "common/defs.cuh"

namespace gemm {

#if defined(__CUDACC__)

// Matrix j (0-3) comes from register j of every lane: lane 4 r + w holds word w (elements 2 w and
// 2 w + 1) of row r. Lane 8 j + r gives the shared-window address of row r of matrix j: 16
// contiguous bytes, 16-byte aligned. Every lane of the warp executes it (.sync.aligned). sm_90+.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#warp-level-matrix-instructions-stmatrix
GEMM_DEVICE void stmatrix_x4(uint32_t row_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row_addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

#elif defined(GEMM_EMULATED)

void stmatrix_x4(uint32_t row_addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3,
                 SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
