// Thread roles inside a CTA: warp and lane ids, warpgroups, elect, and the warp shuffle.
#pragma once

#include "common/defs.cuh"

namespace gemm {

inline constexpr int kWarpSize = 32;
inline constexpr int kWarpgroupSize = 128;  // 4 consecutive warps, the first one's index a multiple of 4

#if GEMM_HAS_DEVICE_HELPERS
GEMM_DEVICE int warp_id() { return static_cast<int>(threadIdx.x) / kWarpSize; }
GEMM_DEVICE int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }
GEMM_DEVICE int warpgroup_id() { return static_cast<int>(threadIdx.x) / kWarpgroupSize; }
#endif

#if defined(__CUDACC__)

// One lane of the (fully active) warp gets true. PTX `elect.sync`.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-elect-sync
GEMM_DEVICE bool elect_one_sync() {
  uint32_t pred = 0;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(pred));
  return pred != 0;
}

// Reconverges the warp: every lane waits here for the others. Needed before a `.sync.aligned`
// instruction (tcgen05.ld, wgmma) that follows divergent code such as an mbarrier spin loop.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-bar-warp-sync
GEMM_DEVICE void warp_sync() { asm volatile("bar.warp.sync 0xffffffff;" ::: "memory"); }

// Broadcasts `value` from `src_lane` to the whole warp. PTX `shfl.sync.idx`.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-shfl-sync
GEMM_DEVICE uint32_t shfl_broadcast(uint32_t value, int src_lane) {
  uint32_t out;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(out) : "r"(value), "r"(src_lane));
  return out;
}

#elif defined(GEMM_EMULATED)

bool elect_one_sync(SourceLoc loc = SourceLoc::current());
void warp_sync(SourceLoc loc = SourceLoc::current());
uint32_t shfl_broadcast(uint32_t value, int src_lane, SourceLoc loc = SourceLoc::current());

#endif

}  // namespace gemm
