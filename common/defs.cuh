// Macros shared by every helper in common/.
//
// A helper is compiled in one of three ways:
//  - by nvcc for the GPU (__CUDACC__): PTX wrappers are inline asm;
//  - as host C++ for the functional emulator (GEMM_EMULATED, set by emu/prelude.h): every
//    PTX wrapper is a declaration that the emulator implements, so a step file compiles unchanged;
//  - as plain host C++ (tests, harness): only the __host__ __device__ parts (descriptor encoders,
//    swizzle, pipeline state, scheduler) are usable.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GEMM_HD __host__ __device__ __forceinline__
#define GEMM_DEVICE __device__ __forceinline__
#else
#define GEMM_HD inline
#define GEMM_DEVICE inline
#endif

// True in a TU that may call PTX wrappers (a GPU build or the emulator build).
#if defined(__CUDACC__) || defined(GEMM_EMULATED)
#define GEMM_HAS_DEVICE_HELPERS 1
#else
#define GEMM_HAS_DEVICE_HELPERS 0
#endif
