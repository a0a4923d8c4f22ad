// The host prelude: compiles a step file (`steps/NN_name/{hopper,blackwell}.cu`) as host C++.
//
// A TU that includes this first and then a step file is the emulated build of that step: every
// helper in common/ switches to the declaration the functional emulator implements, and the CUDA
// built-ins become emulator calls. It also enforces the step-file rules of docs/design.md ("Kernels
// that also run without a GPU"): a step file may use the CUDA C++ language itself and go through common/
// for everything else. What would slip through silently on the host is made a compile error here:
//   - `__shared__` (CUDA's host headers turn it into a plain local): use gemm::dynamic_smem;
//   - inline asm, `<<<>>>`, cudaLaunchKernel(Ex) and cooperative_groups: use common/.
#pragma once

#define GEMM_EMULATED 1

// Everything the step files and common/ may include, included before the keywords change.
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace gemm {
// Everything an emulated build defines that the GPU build defines too under the same name (the
// step files' own namespaces, and the few host templates of common/ whose emulated definition
// differs: launch, resident_ctas, make_tensor_map_2d) lives in this inline namespace. A step TU
// declares `namespace gemm { inline namespace emulated { namespace stepNN { namespace hopper {} } } }`
// before it includes the step file, whose `namespace gemm::stepNN::hopper {` then extends
// gemm::emulated::stepNN::hopper ([namespace.def]): the emulated and GPU builds of a step link
// into one program without a clash, and the step file compiles unchanged.
inline namespace emulated {}

// The call site of an emulated instruction: every wrapper of common/ takes one in the emulated build
// (a defaulted last argument, so the step files' calls are unchanged), and the emulator's messages
// name it ("steps/05_pipeline/hopper.cu:182"). The CUDA build's wrappers do not have it.
using SourceLoc = std::source_location;
}  // namespace gemm

namespace gemm::emu {
// The CUDA built-in variables and __syncthreads of the calling emulated thread.
dim3 thread_idx();
dim3 block_idx();
dim3 block_dim();
dim3 grid_dim();
void syncthreads(SourceLoc loc = SourceLoc::current());
}  // namespace gemm::emu

// Execution-space and kernel keywords: meaningless on the host.
#undef __global__
#define __global__
#undef __device__
#define __device__
#undef __host__
#define __host__
#undef __forceinline__
#define __forceinline__ inline
#undef __grid_constant__
#define __grid_constant__
#undef __launch_bounds__
#define __launch_bounds__(...)
#undef __align__
#define __align__(n) alignas(n)

#undef __shared__
#define __shared__ \
  static_assert(false, "__shared__ is not allowed in a step file: use gemm::dynamic_smem<T>() from common/smem.cuh");

#define threadIdx (::gemm::emu::thread_idx())
#define blockIdx (::gemm::emu::block_idx())
#define blockDim (::gemm::emu::block_dim())
#define gridDim (::gemm::emu::grid_dim())
#define __syncthreads() ::gemm::emu::syncthreads()

// Any use after this line is a compile error naming the identifier.
#pragma GCC poison asm cudaLaunchKernel cudaLaunchKernelEx cudaLaunchCooperativeKernel cooperative_groups
