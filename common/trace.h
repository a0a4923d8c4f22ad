// The timeline's record format (docs/timeline.md): what a traced kernel records, per role of a
// CTA, and what the harness reads back and turns into a Chrome trace (harness/trace.cpp). The GPU
// side records in common/trace.cuh (a GEMM_TRACE=ON build only), the emulator in emu/trace.cpp
// (every build). Plain C++: host and device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/defs.cuh"

namespace gemm {

// The role a recording thread plays. Steps 4-6 have one, the whole CTA; from step 7 on each role
// function names its own (trace_tile_begin). A single-thread role (the producer, the MMA issuer) is
// recorded by the thread that runs it; the others run on a warpgroup (or the whole CTA) and are
// recorded by its first thread, threadIdx.x % 128 == 0.
enum class TraceRole : uint8_t { none = 0, cta, producer, mma, consumer, epilogue };
GEMM_HD constexpr bool trace_role_single(TraceRole r) { return r == TraceRole::producer || r == TraceRole::mma; }
inline const char* trace_role_name(TraceRole r) {
  switch (r) {
    case TraceRole::cta: return "cta";
    case TraceRole::producer: return "producer";
    case TraceRole::mma: return "mma";
    case TraceRole::consumer: return "consumer";
    case TraceRole::epilogue: return "epilogue";
    case TraceRole::none: break;
  }
  return "none";
}

enum class TraceKind : uint8_t {
  none = 0,
  tile_begin,      // arg: the work unit (the scheduler's; the tile's index in steps 4 and 5)
  tile_end,        //
  epilogue_begin,  //
  epilogue_end,    //
  wait_begin,      // mbarrier wait: name, bar (its shared address), arg = parity
  wait_end,        //
  mma_wait_begin,  // wgmma.wait_group: arg = N (hopper)
  mma_wait_end,    //
  tma_load,        // bar: the mbarrier its bytes complete on; arg: the box's coordinates (trace_coords)
  tma_store,       // arg: the box's coordinates
  mma_commit,      // tcgen05.commit: bar, the mbarrier it arrives on; wgmma.commit_group: bar 0
};

// One event, 32 bytes, written with two 16-byte stores (trace.cuh writes it as 8 little-endian words,
// as the GPU and the emulator's hosts are).
struct alignas(16) TraceEvent {
  uint32_t time;  // the low 32 bits of the time: %globaltimer nanoseconds (GPU) or scheduler steps
                  // (emulator); the CTA's `start` gives the rest (trace_time), as a kernel is short
  char name[12];  // a wait's barrier name, its first 12 characters (trace_name_word), else zeros
  int64_t arg;    // see TraceKind
  uint32_t bar;   // an mbarrier's shared-memory address, 0 for none
  TraceKind kind;
  TraceRole role;
  uint16_t reserved;
};
static_assert(sizeof(TraceEvent) == 32, "two 16-byte stores");

// Per recorded CTA.
struct alignas(16) TraceCta {
  uint32_t block;    // blockIdx.x
  uint32_t sm;       // %smid (the emulator: blockIdx.x % its SMs)
  uint32_t rank;     // %cluster_ctarank
  uint32_t cluster;  // %clusterid.x
  uint64_t start;    // the time (64 bits) its first thread entered the kernel (the emulator: its first event)
  uint64_t reserved;
};

// Warps of a CTA that can record (threads 0..511); the steps use at most 12.
inline constexpr int kTraceWarps = 16;

// The buffer a traced launch records into, as the kernel sees it. One allocation (TraceLayout):
// `claimed`, then ctas[max_ctas], counts[max_ctas][kTraceWarps], events[max_ctas][kTraceWarps][capacity].
// A CTA on an SM of `sms` claims the next slot (atomic), while slots remain; each recording warp
// of it appends to its own array of `capacity` events and counts them (beyond capacity they are
// counted, not kept). All null: nothing is recorded.
struct TraceBuffer {
  uint32_t* claimed = nullptr;  // slots claimed by this launch (may exceed max_ctas)
  TraceCta* ctas = nullptr;
  uint32_t* counts = nullptr;
  TraceEvent* events = nullptr;
  uint64_t sms[4] = {0, 0, 0, 0};  // bit s % 64 of word s / 64: CTAs on SM s record
  uint32_t max_ctas = 0;
  uint32_t capacity = 0;  // events per warp, at most 65535
};

struct TraceLayout {
  size_t ctas, counts, events, bytes;            // offsets and the total size
  size_t reset_bytes() const { return events; }  // what a launch zeroes: claimed, ctas, counts
};
inline TraceLayout trace_layout(uint32_t max_ctas, uint32_t capacity) {
  TraceLayout l{};
  l.ctas = 16;
  l.counts = l.ctas + sizeof(TraceCta) * max_ctas;
  l.events = (l.counts + sizeof(uint32_t) * max_ctas * kTraceWarps + 31) / 32 * 32;
  l.bytes = l.events + sizeof(TraceEvent) * static_cast<size_t>(max_ctas) * kTraceWarps * capacity;
  return l;
}

// Characters 4w .. 4w+3 of a barrier's name (its first 12), packed low byte first (0 for none). Called
// with a string literal from the wrappers' WaitTag: after inlining, the compiler folds it to a constant.
GEMM_HD uint32_t trace_name_word(const char* s, int w) {
  uint32_t v = 0;
  if (s == nullptr) return 0;
  for (int i = 0; i < 12; ++i) {
    if (s[i] == 0) break;
    if (i / 4 == w) v |= static_cast<uint32_t>(static_cast<uint8_t>(s[i])) << (8 * (i % 4));
  }
  return v;
}

// An event's full time: its low 32 bits, after its CTA's start (a kernel lasts less than 2^32 ns).
inline uint64_t trace_time(const TraceEvent& e, uint64_t start) {
  return start + static_cast<uint32_t>(e.time - static_cast<uint32_t>(start));
}

// A TMA box's two coordinates in one arg: c0 (the inner one: K for the loads) low, c1 high.
GEMM_HD constexpr int64_t trace_coords(int32_t c0, int32_t c1) {
  return static_cast<int64_t>(static_cast<uint64_t>(static_cast<uint32_t>(c0)) |
                              (static_cast<uint64_t>(static_cast<uint32_t>(c1)) << 32));
}

// The buffer the next launches record into (host side), set by the harness (harness/trace.cpp). In
// a traced build, launch() (common/launch.cuh) copies it to the kernels' copy whenever `version`
// changes, and zeroes its first `reset_bytes` (the counters) before each launch while it is set.
struct TraceLaunchState {
  TraceBuffer buffer;
  size_t reset_bytes = 0;
  uint64_t version = 0;
};
inline TraceLaunchState& trace_launch_state() {
  static TraceLaunchState state;
  return state;
}

// What a traced run leaves on the host, the same for the GPU and the emulator: the buffer's
// contents, copied back.
struct TraceDump {
  bool emulated = false;  // times are the emulator's scheduler steps, not nanoseconds
  uint32_t max_ctas = 0, capacity = 0;
  uint32_t claimed = 0;
  std::vector<TraceCta> ctas;                   // [max_ctas]
  std::vector<uint32_t> counts;                 // [max_ctas][kTraceWarps]
  std::vector<std::vector<TraceEvent>> events;  // [max_ctas][kTraceWarps]: the events kept, at most capacity
  uint32_t recorded() const { return claimed < max_ctas ? claimed : max_ctas; }
};

}  // namespace gemm
