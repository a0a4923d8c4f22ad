// Kernels that exercise one modelled instruction each (tests/emu/instr_kernels.cpp, an emulated
// TU), run synchronously on the emulator; tests/emu/test_instructions.cpp checks what they return.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "common/problem.h"

namespace gemm::emu_cases {

// tcgen05.mma M128 N32 of A[i][0] = i, A[i][1] = 1 and B[j][0] = 1000, B[j][1] = j (so D[i][j] =
// 1000 i + j), then two tcgen05.ld.32x32b.x16 per warp: out[t * 32 + c] = thread t's register for
// column c (fp32 bits). 128 threads.
Status tmem_ld_case(uint32_t* out);

// wgmma m64n128k16 of the same operands (A 64 rows): out[t * 64 + i] = thread t's register i.
Status wgmma_case(float* out);

// A 64 x 64 SW128 TMA box at {c0, c1} of the rows x cols fp16 tensor `src`: the box's 8 KB of
// shared memory, byte for byte, into out.
Status tma_load_case(const __half* src, uint64_t rows, uint64_t cols, int32_t c0, int32_t c1, uint8_t* out);

// A 64 x 64 SW128 box holding element value r * 64 + c (at box row r, column c), TMA-stored at
// {c0, c1} of the rows x cols tensor `dst`.
Status tma_store_case(__half* dst, uint64_t rows, uint64_t cols, int32_t c0, int32_t c1);

// Cluster of 2: rank 0 multicasts the box at {0, 0} to both; out gets both CTAs' 8 KB boxes. Rank
// 1 then arrives remotely on a barrier of rank 0, which waits for it.
Status multicast_case(const __half* src, uint64_t rows, uint64_t cols, uint8_t* out);

// A one-slot producer/consumer ring over full/empty mbarriers, 4 rounds: log[it] = 10 + it.
Status ring_case(int* log);

// Warp specialisation: an elected producer lane streams 24 TMA boxes (64 x 64 of the 1536 x 64
// tensor `src`, box i at row 64 i) through a ring of 8 stages while the other lanes of its warp
// exit; two consumer warps take each box: log[i] = the box's element (0, 0).
Status specialized_case(const __half* src, float* log);

// A count-1 mbarrier that gets two unordered arrivals in its phase 1: must fail (more arrivals
// than the init count).
Status extra_arrival_case();

// Grid 4, clusters of 2, 256 threads: per thread 8 words: elect, shfl from lane 3 of
// (lane * 10 + warp), cluster rank, CTAs per cluster, cluster id x, clusters along x, the word
// thread t ^ 1 wrote before a named barrier of its warpgroup, and the rank bits of mapa(rank ^ 1).
Status collectives_case(uint32_t* out);

}  // namespace gemm::emu_cases
