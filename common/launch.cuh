// Launching a kernel: grid, block, cluster shape and dynamic shared bytes in one place.
// Step files launch only through `launch`, never with <<<>>> or cudaLaunchKernelEx, so that the
// emulator can run the same launcher.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "common/defs.cuh"
#include "common/problem.h"
#include "common/trace.cuh"

namespace gemm {

struct LaunchConfig {
  dim3 grid{1, 1, 1};
  dim3 block{128, 1, 1};
  dim3 cluster{1, 1, 1};  // CTAs per cluster; the grid must be a multiple of it
  size_t smem_bytes = 0;  // dynamic shared memory per CTA
  cudaStream_t stream = nullptr;
  // Programmatic dependent launch (common/grid_dependency.cuh): the kernel may start before the one
  // before it in the stream has finished, and waits for it with griddepcontrol_wait.
  bool programmatic = false;
};

inline Status cuda_failure(cudaError_t err, const char* what) {
  return Status::failure(std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

// The launch attributes of `cfg` (at most kMaxLaunchAttributes) into `attr`; returns how many: the
// cluster shape, when a cluster has more than one CTA, and programmatic stream serialization when
// `cfg.programmatic`. Both builds launch with them: the emulator takes the cluster shape from the
// attribute, as the driver does.
inline constexpr int kMaxLaunchAttributes = 2;
inline int launch_attributes(const LaunchConfig& cfg, cudaLaunchAttribute* attr) {
  int n = 0;
  if (cfg.cluster.x * cfg.cluster.y * cfg.cluster.z > 1) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = cfg.cluster.x;
    attr[n].val.clusterDim.y = cfg.cluster.y;
    attr[n].val.clusterDim.z = cfg.cluster.z;
    ++n;
  }
  if (cfg.programmatic) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  return n;
}

#if defined(__CUDACC__)

#if GEMM_TRACE_GPU
// A traced build (common/trace.cuh): the trace buffer the harness set, copied into this translation
// unit's gemm_trace_buffer when it changed, and its counters zeroed for this launch. `launch` is
// then internal to each translation unit (GEMM_LAUNCH_LINKAGE), so that it is this file's copy
// that it updates: step files with the same kernel signature would otherwise share one `launch`.
static inline Status trace_before_launch(cudaStream_t stream) {
  static uint64_t copied = 0;  // the version gemm_trace_buffer holds
  const TraceLaunchState& state = trace_launch_state();
  if (copied != state.version) {
    if (cudaError_t e = cudaMemcpyToSymbolAsync(gemm_trace_buffer, &state.buffer, sizeof(TraceBuffer), 0,
                                                cudaMemcpyHostToDevice, stream);
        e != cudaSuccess)
      return cuda_failure(e, "trace: cudaMemcpyToSymbolAsync");
    copied = state.version;
  }
  if (state.buffer.claimed != nullptr)
    if (cudaError_t e = cudaMemsetAsync(state.buffer.claimed, 0, state.reset_bytes, stream); e != cudaSuccess)
      return cuda_failure(e, "trace: cudaMemsetAsync");
  return {};
}
#define GEMM_LAUNCH_LINKAGE static
#else
#define GEMM_LAUNCH_LINKAGE
#endif

// Dynamic shared memory above 48 KB needs the kernel's attribute raised first, for a launch and for
// the occupancy calculator alike (it counts only what the kernel is allowed).
template <class... KernelArgs>
Status allow_dynamic_smem(void (*kernel)(KernelArgs...), size_t smem_bytes) {
  if (smem_bytes <= 48 * 1024) return {};
  if (cudaError_t e =
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem_bytes));
      e != cudaSuccess)
    return cuda_failure(e, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  return {};
}

// Launches `kernel` with `cfg`. Dynamic shared memory above 48 KB needs the kernel's attribute
// raised first; a request above the device's opt-in limit is refused with the two numbers.
template <class... KernelArgs, class... Args>
GEMM_LAUNCH_LINKAGE Status launch(void (*kernel)(KernelArgs...), const LaunchConfig& cfg, Args&&... args) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return cuda_failure(e, "cudaGetDevice");
  int optin = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device); e != cudaSuccess)
    return cuda_failure(e, "cudaDeviceGetAttribute(MaxSharedMemoryPerBlockOptin)");
  if (cfg.smem_bytes > static_cast<size_t>(optin))
    return Status::failure("shared-memory limit: the kernel needs " + std::to_string(cfg.smem_bytes) +
                           " bytes of shared memory per CTA, the device allows " + std::to_string(optin));
  if (Status s = allow_dynamic_smem(kernel, cfg.smem_bytes); !s.ok()) return s;
#if GEMM_TRACE_GPU
  if (Status s = trace_before_launch(cfg.stream); !s.ok()) return s;
#endif
  cudaLaunchConfig_t lc{};
  lc.gridDim = cfg.grid;
  lc.blockDim = cfg.block;
  lc.dynamicSmemBytes = cfg.smem_bytes;
  lc.stream = cfg.stream;
  cudaLaunchAttribute attr[kMaxLaunchAttributes]{};
  lc.numAttrs = static_cast<unsigned>(launch_attributes(cfg, attr));
  if (lc.numAttrs > 0) lc.attrs = attr;
  if (cudaError_t e = cudaLaunchKernelEx(&lc, kernel, std::forward<Args>(args)...); e != cudaSuccess)
    return cuda_failure(e, "kernel launch");
  return {};
}

#elif defined(GEMM_EMULATED)

}  // namespace gemm

#include <tuple>  // already included by the prelude, before it poisons `asm`
#include <type_traits>

namespace gemm {

namespace emu {
// The functional emulator (emu/): runs the grid of `cfg` on the CPU and returns when it is
// done, one fiber per thread, the CTAs of a cluster together, cluster after cluster (in an order
// drawn from the emulator's seed). body(ctx) is
// one thread's kernel call. A failure names the rule the kernel broke, or is the deadlock report.
Status launch_grid(const LaunchConfig& cfg, void (*body)(void*), void* ctx);
}  // namespace emu

// In gemm::emulated (emu/prelude.h): the GPU build instantiates a `launch` of the same
// signature for the same kernel type, which must not be merged with this one at link time.
inline namespace emulated {

// The emulated launch: the arguments are converted to the kernel's parameter types now, as
// cudaLaunchKernelEx does, and every emulated thread calls the kernel with its own copy of them.
template <class... KernelArgs, class... Args>
Status launch(void (*kernel)(KernelArgs...), const LaunchConfig& cfg, Args&&... args) {
  static_assert(sizeof...(KernelArgs) == sizeof...(Args), "launch: the kernel takes a different number of arguments");
  struct Call {
    void (*kernel)(KernelArgs...);
    std::tuple<std::decay_t<KernelArgs>...> params;
  };
  Call call{kernel, std::tuple<std::decay_t<KernelArgs>...>(std::forward<Args>(args)...)};
  // The cluster shape as the launch attributes give it (as cudaLaunchKernelEx takes it).
  LaunchConfig run = cfg;
  run.cluster = dim3(1, 1, 1);
  cudaLaunchAttribute attr[kMaxLaunchAttributes]{};
  const int attrs = launch_attributes(cfg, attr);
  for (int i = 0; i < attrs; ++i)
    if (attr[i].id == cudaLaunchAttributeClusterDimension)
      run.cluster = dim3(attr[i].val.clusterDim.x, attr[i].val.clusterDim.y, attr[i].val.clusterDim.z);
  return emu::launch_grid(
      run,
      [](void* p) {
        Call* c = static_cast<Call*>(p);
        std::apply(c->kernel, c->params);
      },
      &call);
}

}  // namespace emulated

#endif

}  // namespace gemm
