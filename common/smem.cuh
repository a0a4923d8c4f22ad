// Shared memory: the kernel's dynamic allocation and the 32-bit shared-window address that PTX
// instructions take. The only `extern __shared__` of the project lives here.
#pragma once

#include "common/defs.cuh"
#include "common/trace.cuh"

namespace gemm {

// Bytes to request at launch for a shared-storage struct T: sizeof(T) plus room to round the
// dynamic base up to alignof(T) (1024 for SW128 tiles; the base itself is only 16-byte aligned
// by the language, and static __shared__ variables would shift it).
template <class T>
constexpr size_t smem_bytes() {
  return sizeof(T) + alignof(T);
}

#if defined(__CUDACC__)

extern __shared__ __align__(16) unsigned char gemm_dynamic_smem[];

// Converts a generic pointer into shared memory to its shared-window address (PTX `cvta`).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#data-movement-and-conversion-instructions-cvta
GEMM_DEVICE uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// The dynamic shared memory of this CTA viewed as a T, its shared-window address rounded up to
// alignof(T). The same offset in every CTA, which cluster features (multicast, cta_group::2) rely on.
// Every kernel calls it once, first: in a traced build it also starts the CTA's trace (trace.cuh).
template <class T>
GEMM_DEVICE T& dynamic_smem() {
  trace_cta_begin();
  const uint32_t base = smem_addr(gemm_dynamic_smem);
  const uint32_t pad = (alignof(T) - base % alignof(T)) % alignof(T);
  return *reinterpret_cast<T*>(gemm_dynamic_smem + pad);
}

#elif defined(GEMM_EMULATED)

uint32_t smem_addr(const void* p);
// This CTA's dynamic shared memory rounded up to `alignment`; `bytes` must fit behind the padding.
void* dynamic_smem_base(size_t alignment, size_t bytes);
template <class T>
T& dynamic_smem() {
  return *static_cast<T*>(dynamic_smem_base(alignof(T), sizeof(T)));
}

#endif

}  // namespace gemm
