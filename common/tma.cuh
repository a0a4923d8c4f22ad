// TMA, the device side: tensor tile copies between global and shared memory (cp.async.bulk.tensor)
// and the bulk-group bookkeeping of TMA stores. The tensor map itself is built on the host
// (common/tensor_map.h).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
//
// Conventions of every wrapper here:
//  - `map` is the generic address of the CUtensorMap, i.e. `&param` of a
//    `const __grid_constant__ CUtensorMap param` kernel parameter (a copy in a local variable
//    would not be a valid tensor-map address).
//  - Coordinates are in elements, innermost dimension first: {column (k for A and B), row}.
//    Coordinates past the tensor's edge are legal: loads fill zeros there, stores clip.
//  - One thread issues each copy; the others must not.
//  - Loads complete on an mbarrier of the receiving CTA (complete_tx::bytes): the barrier's phase
//    must expect those bytes (mbarrier_arrive_expect_tx) or it completes before the data lands
//    (too few bytes expected) or never (too many).
//  - A traced build records each load and store at its issue (trace.cuh).
#pragma once

#include <cuda.h>  // CUtensorMap (the type only: nothing here links the driver)

#include "common/cluster.cuh"  // mapa_shared, cluster_ctarank: the pair load's leader barrier
#include "common/defs.cuh"
#include "common/smem.cuh"
#include "common/trace.cuh"

// Whether this device pass targets a chip with `.cta_group::2` TMA (the sm_100 family). ptxas
// 13.0 accepts it for sm_100a/f, sm_103a/f and sm_110a/f and rejects it for sm_90a. nvcc 12.8
// defines only __CUDA_ARCH_FEAT_SM1xx_ALL (the "a" targets); 12.9 on also define
// __CUDA_ARCH_FAMILY_SPECIFIC__ (1000, 1030, 1100) for the "a" and "f" targets.
#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL) ||       \
    defined(__CUDA_ARCH_FEAT_SM110_ALL) ||                                              \
    (defined(__CUDA_ARCH_FAMILY_SPECIFIC__) &&                                          \
     (__CUDA_ARCH_FAMILY_SPECIFIC__ == 1000 || __CUDA_ARCH_FAMILY_SPECIFIC__ == 1030 || \
      __CUDA_ARCH_FAMILY_SPECIFIC__ == 1100))
#define GEMM_HAS_TMA_CTA_PAIR 1
#else
#define GEMM_HAS_TMA_CTA_PAIR 0
#endif

namespace gemm {

#if defined(__CUDACC__) || defined(GEMM_EMULATED)

// The barrier a CTA pair's TMA loads credit (cta_group::2, tma_load_2d_cta_pair): `bar`'s offset in
// the pair's leader, the even CTA (rank & ~1), as a shared::cluster address (mapa). Both builds
// compute it here: the emulator credits the barrier this address names, and checks that it is the
// leader's.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-mapa
GEMM_DEVICE uint32_t cta_pair_barrier(uint64_t* bar) { return mapa_shared(smem_addr(bar), cluster_ctarank() & ~1u); }

#endif

#if defined(__CUDACC__)

// Prefetches the tensor map into the TMA unit's descriptor cache; one thread of each CTA, once,
// before the CTA's first copy that uses it.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-prefetch-prefetchu
GEMM_DEVICE void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Loads the 2D box at {c0, c1} into this CTA's shared memory at `smem_dst`, then completes its
// byte count on `bar` (this CTA's barrier). The `.shared::cluster` form with a CTA-local address
// addresses this CTA; it is the form the multicast and cta_group::2 variants share.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
GEMM_DEVICE void tma_load_2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::
          "r"(smem_addr(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1)
      : "memory");
  trace_record(TraceKind::tma_load, bar, trace_coords(c0, c1));
}

// 3D form of tma_load_2d, coordinates {c0, c1, c2} innermost first (e.g. a K slice wider than one
// 128-byte swizzle atom, as a box of 64 x rows x atoms).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
GEMM_DEVICE void tma_load_3d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                             int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
      "[%2];" ::"r"(smem_addr(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
  trace_record(TraceKind::tma_load, bar, trace_coords(c0, c1));
}

// Loads the 2D box at {c0, c1} once from global memory and writes it into every CTA of the
// cluster whose bit is set in `cta_mask` (bit i = %cluster_ctarank i), at the same CTA-relative
// offset as `smem_dst`; each receiving CTA's barrier at `bar`'s offset gets the box's bytes. So
// every receiving CTA must expect them, also for the boxes its peers issue (sm_90a and later).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
GEMM_DEVICE void tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                                       uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%4, %5}], [%2], %3;" ::"r"(smem_addr(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_addr(bar)), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
  trace_record(TraceKind::tma_load, bar, trace_coords(c0, c1));
}

#if !defined(__CUDA_ARCH__) || GEMM_HAS_TMA_CTA_PAIR

// Blackwell CTA pair (cta_group::2, sm_100 family only): loads the 2D box at {c0, c1} into THIS
// CTA's shared memory at `smem_dst`, but completes the bytes on the LEADER's (even CTA's, rank & ~1)
// barrier at `bar`'s offset, addressed through `mapa` (cta_pair_barrier). So the leader's barrier
// sees both CTAs' bytes and is the only one the MMA issuer waits on; the leader expects the bytes
// of the pair, never of the whole cluster (docs/blackwell.md, "CTA pairs").
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
GEMM_DEVICE void tma_load_2d_cta_pair(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::2"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_addr(smem_dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(cta_pair_barrier(bar)), "r"(c0), "r"(c1)
      : "memory");
  trace_record(TraceKind::tma_load, bar, trace_coords(c0, c1));
}

#else

// A device pass for a chip without cta_group::2 (sm_90a): calling the pair load there is a
// compile error that says why, while merely including this header stays legal.
template <class Unsupported = void>
GEMM_DEVICE void tma_load_2d_cta_pair(void*, const CUtensorMap*, uint64_t*, int32_t, int32_t) {
  static_assert(sizeof(Unsupported*) == 0,
                "tma_load_2d_cta_pair (cp.async.bulk.tensor .cta_group::2) needs an sm_100 family target "
                "(sm_100a, sm_103a)");
}

#endif

// Stores this CTA's shared-memory box at `smem_src` to the 2D box at {c0, c1} of the tensor
// (clipped at the edges) and adds it to this thread's current bulk group. Every thread that wrote
// `smem_src` must first run fence_proxy_async_shared() and then a barrier with the issuing thread.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-tensor
GEMM_DEVICE void tma_store_2d(const CUtensorMap* map, const void* smem_src, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(smem_addr(smem_src)), "r"(c0), "r"(c1)
               : "memory");
  trace_record(TraceKind::tma_store, nullptr, trace_coords(c0, c1));
}

// Closes this thread's stores issued since the last commit into one bulk group, the unit that
// tma_store_wait_group{_read} counts.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-commit-group
GEMM_DEVICE void tma_store_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most N of this thread's bulk groups are still READING shared memory: their
// source buffers may be overwritten (the writes to global memory may still be in flight). The
// wait an epilogue needs before reusing its staging buffer.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-wait-group
template <int N>
GEMM_DEVICE void tma_store_wait_group_read() {
  static_assert(N >= 0, "cp.async.bulk.wait_group.read takes a non-negative immediate");
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Waits until at most N of this thread's bulk groups are pending at all, i.e. the older groups'
// writes to global memory are complete (visible to this thread). Needed only when this thread
// reads D back in the same kernel; a kernel's exit waits for its stores anyway.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cp-async-bulk-wait-group
template <int N>
GEMM_DEVICE void tma_store_wait_group() {
  static_assert(N >= 0, "cp.async.bulk.wait_group takes a non-negative immediate");
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

#elif defined(GEMM_EMULATED)

void tma_prefetch_descriptor(const CUtensorMap* map, SourceLoc loc = SourceLoc::current());
void tma_load_2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                 SourceLoc loc = SourceLoc::current());
void tma_load_3d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1, int32_t c2,
                 SourceLoc loc = SourceLoc::current());
void tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                           uint16_t cta_mask, SourceLoc loc = SourceLoc::current());
// The instruction itself takes the barrier's shared::cluster address, as the PTX does: the wrapper
// computes it as the CUDA build does (cta_pair_barrier).
void tma_load_2d_cta_pair_at(void* smem_dst, const CUtensorMap* map, uint32_t bar_addr, int32_t c0, int32_t c1,
                             SourceLoc loc);
inline void tma_load_2d_cta_pair(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                                 SourceLoc loc = SourceLoc::current()) {
  tma_load_2d_cta_pair_at(smem_dst, map, cta_pair_barrier(bar), c0, c1, loc);
}
void tma_store_2d(const CUtensorMap* map, const void* smem_src, int32_t c0, int32_t c1,
                  SourceLoc loc = SourceLoc::current());
void tma_store_commit_group(SourceLoc loc = SourceLoc::current());
void tma_store_wait_group_read_n(int n, SourceLoc loc = SourceLoc::current());
void tma_store_wait_group_n(int n, SourceLoc loc = SourceLoc::current());
template <int N>
void tma_store_wait_group_read(SourceLoc loc = SourceLoc::current()) {
  tma_store_wait_group_read_n(N, loc);
}
template <int N>
void tma_store_wait_group(SourceLoc loc = SourceLoc::current()) {
  tma_store_wait_group_n(N, loc);
}

#endif

}  // namespace gemm
