// The timeline on the emulator (docs/timeline.md): the events a traced GPU build records
// (common/trace.cuh), recorded by the same rule (one thread per role of a CTA, chosen by
// trace_tile_begin) into the same layout (common/trace.h), in logical time: the scheduler's steps
// since the launch began (fiber switches plus completed asynchronous operations). Recording reads
// the emulator's state and never changes it, so an armed run is scheduled as an unarmed one.
#include "emu/trace.h"

#include <unordered_map>

#include "common/trace.cuh"
#include "emu/core.h"
#include "emu/emu.h"

namespace gemm::emu {
namespace {

struct TraceState {
  bool armed = false;
  TraceOptions options;
  TraceDump dump;
  std::unordered_map<int64_t, int64_t> slot_of;  // by the CTA's linear index: its slot, -1 not recorded
  std::vector<uint32_t> words;                   // per slot and warp: the recording thread, as trace.cuh
};
thread_local TraceState g_trace;

uint64_t now() {
  const LaunchStats& s = emu().stats;
  return s.switches + s.async_ops;
}

// The calling thread's CTA's slot, claimed at the CTA's first event; -1: not recorded.
int64_t slot_of(const Fiber* f) {
  TraceState& t = g_trace;
  const Emu& e = emu();
  const Cta& c = *f->cta;
  const int64_t block = c.idx.x + int64_t{e.cfg.grid.x} * (c.idx.y + int64_t{e.cfg.grid.y} * c.idx.z);
  if (auto it = t.slot_of.find(block); it != t.slot_of.end()) return it->second;
  const int sms = std::max(1, options().sm_count);
  const int sm = static_cast<int>(block % sms);
  int64_t slot = -1;
  if (t.options.sms.empty() || std::find(t.options.sms.begin(), t.options.sms.end(), sm) != t.options.sms.end()) {
    const uint32_t claimed = t.dump.claimed++;
    if (claimed < t.dump.max_ctas) {
      slot = claimed;
      const int64_t cluster_size = int64_t{e.cfg.cluster.x} * e.cfg.cluster.y * e.cfg.cluster.z;
      t.dump.ctas[claimed] = TraceCta{static_cast<uint32_t>(c.idx.x),
                                      static_cast<uint32_t>(sm),
                                      static_cast<uint32_t>(c.rank),
                                      static_cast<uint32_t>(block / cluster_size),
                                      now(),
                                      0};
    }
  }
  t.slot_of[block] = slot;
  return slot;
}

}  // namespace

void trace_arm(const TraceOptions& options) {
  TraceState& t = g_trace;
  t = TraceState{};
  t.armed = true;
  t.options = options;
  t.options.capacity = std::min<uint32_t>(options.capacity, 0xffff);
  t.dump.emulated = true;
  t.dump.max_ctas = options.max_ctas;
  t.dump.capacity = t.options.capacity;
  t.dump.ctas.assign(options.max_ctas, TraceCta{});
  t.dump.counts.assign(size_t{options.max_ctas} * kTraceWarps, 0);
  t.dump.events.assign(size_t{options.max_ctas} * kTraceWarps, {});
  t.words.assign(size_t{options.max_ctas} * kTraceWarps, 0);
}

TraceDump trace_take() {
  TraceState& t = g_trace;
  TraceDump d = std::move(t.dump);
  t = TraceState{};
  return d;
}

void trace_event(TraceKind kind, const void* bar, int64_t arg, const char* name) {
  TraceState& t = g_trace;
  if (!t.armed) return;
  const Fiber* f = self();
  if (f->tid >= kTraceWarps * 32) return;
  const int64_t slot = slot_of(f);
  if (slot < 0) return;
  const size_t w = static_cast<size_t>(slot) * kTraceWarps + static_cast<size_t>(f->warp);
  const uint32_t word = t.words[w];
  if ((word >> 31) == 0 || ((word >> 24) & 31) != static_cast<uint32_t>(f->lane)) return;
  const uint32_t n = t.dump.counts[w];
  if (n < t.dump.capacity) {
    TraceEvent& e = t.dump.events[w].emplace_back();
    e.time = static_cast<uint32_t>(now());
    for (int i = 0; i < 12 && name != nullptr && name[i] != 0; ++i) e.name[i] = name[i];
    e.arg = arg;
    e.bar = bar != nullptr ? smem_addr(bar) : 0;
    e.kind = kind;
    e.role = static_cast<TraceRole>((word >> 16) & 0xff);
  }
  if (n < 0xffff) t.dump.counts[w] = n + 1;
}

}  // namespace gemm::emu

// The step files' calls (common/trace.cuh).
namespace gemm {

void trace_tile_begin(TraceRole role, int64_t tile) {
  emu::TraceState& t = emu::g_trace;
  if (!t.armed) return;
  const emu::Fiber* f = emu::self();
  const int64_t slot = emu::slot_of(f);
  if (slot >= 0 && f->tid < kTraceWarps * 32 && (trace_role_single(role) || f->tid % 128 == 0)) {
    uint32_t& word = t.words[static_cast<size_t>(slot) * kTraceWarps + static_cast<size_t>(f->warp)];
    if ((word >> 31) == 0)
      word = (1u << 31) | (static_cast<uint32_t>(f->lane) << 24) | (static_cast<uint32_t>(role) << 16);
  }
  emu::trace_event(TraceKind::tile_begin, nullptr, tile);
}
void trace_tile_end() { emu::trace_event(TraceKind::tile_end, nullptr, 0); }
void trace_epilogue_begin() { emu::trace_event(TraceKind::epilogue_begin, nullptr, 0); }
void trace_epilogue_end() { emu::trace_event(TraceKind::epilogue_end, nullptr, 0); }

}  // namespace gemm
