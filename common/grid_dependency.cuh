// Programmatic dependent launch: a kernel launched with LaunchConfig::programmatic set may start
// while the kernel before it in the stream is still running, so that its prologue (barrier
// inits, descriptor prefetches) overlaps the other's tail. It must then wait before it touches
// memory the earlier kernel may write or read. No step launches this way; tools/diag/pdl_chain.cpp
// measures what it would give step 12.
// https://docs.nvidia.com/cuda/cuda-c-programming-guide/#programmatic-dependent-launch-and-synchronization
#pragma once

#include "common/defs.cuh"

namespace gemm {

#if defined(__CUDACC__)

// Waits until every grid this one depends on has completed and its memory is visible to this
// thread; returns at once in a launch without a programmatic dependency.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-griddepcontrol
GEMM_DEVICE void griddepcontrol_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Lets the dependent grid be scheduled once every CTA of this grid has executed it or exited.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#parallel-synchronization-and-communication-instructions-griddepcontrol
GEMM_DEVICE void griddepcontrol_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

#elif defined(GEMM_EMULATED)

// The emulator starts a launch only after the one before it has finished: nothing to wait for.
inline void griddepcontrol_wait() {}
inline void griddepcontrol_launch_dependents() {}

#endif

}  // namespace gemm
