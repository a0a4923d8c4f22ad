// Global memory between CTAs (see broken.h): a flag protocol between the two CTAs of a cluster,
// which the emulator runs together, through the scratch of common/scratch.h. CTA 0 writes 64
// floats and signals; CTA 1 waits for the signal, reads them and resets the flag (scratch counters
// are left zero). Each protocol other than the two working ones lacks one of its halves.
#include "emu/prelude.h"

#include "common/cluster.cuh"
#include "common/global_memory.cuh"
#include "common/launch.cuh"
#include "common/scratch.h"
#include "tests/emu/broken/broken.h"

namespace gemm::broken {
namespace gm {

template <FlagProtocol kP>
__global__ void flag_kernel(uint32_t* flag, float* data, float* sink) {
  const int t = static_cast<int>(threadIdx.x);
  if (cluster_ctarank() == 0) {
    if constexpr (kP != FlagProtocol::never_written) data[t] = static_cast<float>(t);
    __syncthreads();  // orders the CTA's writes before thread 0's release
    if (t == 0) {
      if constexpr (kP == FlagProtocol::release_store || kP == FlagProtocol::never_written) {
        st_release_gpu(flag, 1);
      } else if constexpr (kP == FlagProtocol::plain_store) {
        *flag = 1;
      } else if constexpr (kP == FlagProtocol::atomic_without_release) {
        atomic_add_gpu(flag, 1);
      } else {
        fence_acq_rel_gpu();
        atomic_add_gpu(flag, 1);
      }
    }
  } else {
    if (t == 0) {
      if constexpr (kP == FlagProtocol::fence_atomic || kP == FlagProtocol::atomic_without_release) {
        while (atomic_add_gpu(flag, 0) == 0) {
        }
        fence_acq_rel_gpu();
      } else if constexpr (kP == FlagProtocol::atomic_without_acquire) {
        while (atomic_add_gpu(flag, 0) == 0) {
        }
      } else {
        while (ld_acquire_gpu(flag) == 0) {
        }
      }
    }
    __syncthreads();  // orders thread 0's acquire before every thread's read
    sink[t] = data[t];
    __syncthreads();
    if (t == 0) *flag = 0;  // every reader is done with it
  }
}

}  // namespace gm

Status flag_protocol(FlagProtocol protocol, const Problem&) {
  Scratch scratch;
  if (Status s = stream_scratch(nullptr, 1, 2 * 64 * sizeof(float), &scratch); !s.ok()) return s;
  float* data = static_cast<float*>(scratch.data);
  *scratch.counters = 0;  // a failed launch before this one may have left the flag raised
  LaunchConfig cfg;
  cfg.grid = dim3(2);
  cfg.cluster = dim3(2);
  cfg.block = dim3(64);
  switch (protocol) {
#define GEMM_PROTOCOL(p) \
  case FlagProtocol::p: return launch(gm::flag_kernel<FlagProtocol::p>, cfg, scratch.counters, data, data + 64);
    GEMM_PROTOCOL(release_store)
    GEMM_PROTOCOL(fence_atomic)
    GEMM_PROTOCOL(plain_store)
    GEMM_PROTOCOL(atomic_without_release)
    GEMM_PROTOCOL(atomic_without_acquire)
    GEMM_PROTOCOL(never_written)
#undef GEMM_PROTOCOL
  }
  return Status::failure("no such protocol");
}

namespace gm {
__global__ void counter_left_set(uint32_t* counter) {
  if (threadIdx.x == 0) atomic_add_gpu(counter, 1);
}
}  // namespace gm

Status counter_left_nonzero(const Problem&) {
  Scratch scratch;
  if (Status s = stream_scratch(nullptr, 1, 64, &scratch); !s.ok()) return s;
  LaunchConfig cfg;
  cfg.block = dim3(32);
  const Status s = launch(gm::counter_left_set, cfg, scratch.counters);
  *scratch.counters = 0;  // for the next test
  return s;
}

}  // namespace gemm::broken
