// The timeline's recorder (docs/timeline.md): in a traced build (CMake option GEMM_TRACE, off by
// default) one thread per role of a CTA stamps %globaltimer into the trace buffer at each event:
// its tiles and epilogues (the TraceTile and TraceEpilogue scopes of the step files, from step 4
// on), its mbarrier waits (mbarrier_wait), its TMA copies (tma.cuh), its MMA commits and, on
// hopper, its wgmma waits. The wrappers of common/ call trace_record; in an ordinary build every
// call here is an empty inline function, so the kernels compile to the same PTX as without them.
// The emulator records the same events in its own logical time, in every build (emu/trace.cpp).
// The format: common/trace.h.
#pragma once

#include "common/defs.cuh"
#include "common/trace.h"

#if defined(__CUDACC__) && defined(GEMM_TRACE) && GEMM_TRACE
#define GEMM_TRACE_GPU 1
#include "common/clock.cuh"
#include "common/cluster.cuh"
#include "common/global_memory.cuh"
#else
#define GEMM_TRACE_GPU 0
#endif

namespace gemm {

#if defined(__CUDACC__)
// The index of the SM this CTA runs on (the recorded SMs; tools/diag's per-tile traces).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#special-registers-smid
GEMM_DEVICE uint32_t sm_id() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
#endif

#if GEMM_TRACE_GPU

// The buffer the kernels of this translation unit record into. Internal linkage, one per step
// file; launch() (common/launch.cuh, itself internal in a traced build) copies the harness's
// trace_launch_state() into it whenever that changes.
static __constant__ TraceBuffer gemm_trace_buffer;

// Per CTA, in shared memory: its slot in the buffer (+1; 0: it records nothing) and, per warp, its
// recording thread: bit 31 set, the lane in bits 24-28, the role in bits 16-23, the events it has
// recorded in bits 0-15.
struct TraceSmem {
  uint32_t cta;
  uint32_t warp[kTraceWarps];
};
GEMM_DEVICE TraceSmem& trace_smem() {
  __shared__ TraceSmem s;
  return s;
}

// Called by dynamic_smem (common/smem.cuh), which every kernel calls once, first, before its first
// barrier: thread 0 clears the CTA's trace state and, on a recorded SM, claims a slot.
GEMM_DEVICE void trace_cta_begin() {
  if (threadIdx.x != 0) return;
  TraceSmem& s = trace_smem();
  for (int w = 0; w < kTraceWarps; ++w) s.warp[w] = 0;
  s.cta = 0;
  const TraceBuffer& b = gemm_trace_buffer;
  if (b.claimed == nullptr) return;
  const uint32_t sm = sm_id();
  if (sm >= 256 || ((b.sms[sm / 64] >> (sm % 64)) & 1) == 0) return;
  const uint32_t slot = atomic_add_gpu(b.claimed, 1);
  if (slot >= b.max_ctas) return;
  b.ctas[slot] = TraceCta{blockIdx.x, sm, cluster_ctarank(), cluster_id_x(), globaltimer_ns(), 0};
  s.cta = slot + 1;
}

// Records one event if the calling thread is its warp's recording thread (trace_tile_begin).
GEMM_DEVICE void trace_record(TraceKind kind, const void* bar, int64_t arg, const char* name = nullptr) {
  const uint32_t tid = threadIdx.x;
  if (tid >= kTraceWarps * 32) return;
  TraceSmem& s = trace_smem();
  const uint32_t word = s.warp[tid / 32];
  if ((word >> 31) == 0 || ((word >> 24) & 31) != tid % 32) return;
  const uint64_t now = globaltimer_ns();
  const uint32_t n = word & 0xffff;
  if (n < 0xffff) s.warp[tid / 32] = word + 1;
  const TraceBuffer& b = gemm_trace_buffer;
  const uint32_t slot = (s.cta - 1) * kTraceWarps + tid / 32;
  if (n < b.capacity) {  // the TraceEvent, as two 16-byte stores
    const uint32_t addr = bar != nullptr ? static_cast<uint32_t>(__cvta_generic_to_shared(bar)) : 0;
    uint4* e = reinterpret_cast<uint4*>(b.events + static_cast<size_t>(slot) * b.capacity + n);
    e[0] = make_uint4(static_cast<uint32_t>(now), trace_name_word(name, 0), trace_name_word(name, 1),
                      trace_name_word(name, 2));
    e[1] = make_uint4(static_cast<uint32_t>(arg), static_cast<uint32_t>(static_cast<uint64_t>(arg) >> 32), addr,
                      static_cast<uint32_t>(kind) | (((word >> 16) & 0xff) << 8));
  }
  b.counts[slot] = n + 1;
}

// The start of a work unit (a tile, or a part of one) in a role. Its first call makes the thread
// its warp's recording thread if it records the role (common/trace.h, TraceRole).
GEMM_DEVICE void trace_tile_begin(TraceRole role, int64_t tile) {
  TraceSmem& s = trace_smem();
  const uint32_t tid = threadIdx.x;
  if (s.cta != 0 && tid < kTraceWarps * 32 && (trace_role_single(role) || tid % 128 == 0)) {
    const uint32_t word = s.warp[tid / 32];
    if ((word >> 31) == 0) s.warp[tid / 32] = (1u << 31) | ((tid % 32) << 24) | (static_cast<uint32_t>(role) << 16);
  }
  trace_record(TraceKind::tile_begin, nullptr, tile);
}
GEMM_DEVICE void trace_tile_end() { trace_record(TraceKind::tile_end, nullptr, 0); }
GEMM_DEVICE void trace_epilogue_begin() { trace_record(TraceKind::epilogue_begin, nullptr, 0); }
GEMM_DEVICE void trace_epilogue_end() { trace_record(TraceKind::epilogue_end, nullptr, 0); }

#elif defined(__CUDACC__)

// An ordinary build: nothing is recorded, and nothing of this is compiled.
GEMM_DEVICE void trace_cta_begin() {}
GEMM_DEVICE void trace_record(TraceKind, const void*, int64_t, const char* = nullptr) {}
GEMM_DEVICE void trace_tile_begin(TraceRole, int64_t) {}
GEMM_DEVICE void trace_tile_end() {}
GEMM_DEVICE void trace_epilogue_begin() {}
GEMM_DEVICE void trace_epilogue_end() {}

#elif defined(GEMM_EMULATED)

// The emulator records these (and the wrappers' events) when the harness arms it (emu/trace.cpp).
void trace_tile_begin(TraceRole role, int64_t tile);
void trace_tile_end();
void trace_epilogue_begin();
void trace_epilogue_end();

#endif

#if GEMM_HAS_DEVICE_HELPERS
// What the step files declare: a work unit of a role, and an epilogue, each from where it is
// declared to the end of its scope (a `continue` included).
struct TraceTile {
  GEMM_DEVICE TraceTile(TraceRole role, int64_t tile) { trace_tile_begin(role, tile); }
  GEMM_DEVICE ~TraceTile() { trace_tile_end(); }
  TraceTile(const TraceTile&) = delete;
  TraceTile& operator=(const TraceTile&) = delete;
};
struct TraceEpilogue {
  GEMM_DEVICE TraceEpilogue() { trace_epilogue_begin(); }
  GEMM_DEVICE ~TraceEpilogue() { trace_epilogue_end(); }
  TraceEpilogue(const TraceEpilogue&) = delete;
  TraceEpilogue& operator=(const TraceEpilogue&) = delete;
};
#endif

}  // namespace gemm
