#include "harness/trace.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "emu/emu.h"
#include "harness/check.h"

namespace gemm {
namespace {

// The order of the roles' tracks inside a CTA: the data flows top to bottom.
int role_order(TraceRole r) {
  switch (r) {
    case TraceRole::producer: return 0;
    case TraceRole::mma: return 1;
    case TraceRole::consumer: return 2;
    case TraceRole::epilogue: return 3;
    case TraceRole::cta: return 4;
    case TraceRole::none: break;
  }
  return 5;
}

std::string unpack_name(const char (&name)[12]) {
  std::string s;
  for (int i = 0; i < 12 && name[i] != 0; ++i) s += name[i];
  return s.empty() ? "?" : s;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string number(double v, bool integral) {
  char buf[40];
  if (integral) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// A barrier as the file names it: "full[1]" (a ring of stages) or "mma2ld".
struct BarrierName {
  std::string name;
  int stage = -1;  // -1: the only barrier of that name
  std::string label() const { return stage < 0 ? name : name + "[" + std::to_string(stage) + "]"; }
};

}  // namespace

std::string parse_sm_list(const std::string& text, std::vector<int>* sms) {
  sms->clear();
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t dash = item.find('-');
    int lo = 0, hi = 0;
    char tail = 0;
    const bool ok = dash == std::string::npos ? std::sscanf(item.c_str(), "%d%c", &lo, &tail) == 1 && (hi = lo, true)
                                              : std::sscanf(item.c_str(), "%d-%d%c", &lo, &hi, &tail) == 2;
    if (!ok || lo < 0 || hi < lo || hi > 255) return "'" + text + "' is not a list of SMs in 0..255 such as 0,1 or 0-3";
    for (int s = lo; s <= hi; ++s) sms->push_back(s);
    at = comma + 1;
  }
  return {};
}

GpuTrace::GpuTrace(const TraceRequest& request) : request_(request) {
  if (!kTraceBuild) return;
  request_.capacity = std::min<uint32_t>(request_.capacity, 0xffff);
  const TraceLayout l = trace_layout(request_.max_ctas, request_.capacity);
  CUDA_CHECK(cudaMalloc(&buffer_, l.bytes));
  CUDA_CHECK(cudaMemset(buffer_, 0, l.reset_bytes()));
  char* base = static_cast<char*>(buffer_);
  TraceLaunchState& state = trace_launch_state();
  state.buffer = TraceBuffer{};
  state.buffer.claimed = reinterpret_cast<uint32_t*>(base);
  state.buffer.ctas = reinterpret_cast<TraceCta*>(base + l.ctas);
  state.buffer.counts = reinterpret_cast<uint32_t*>(base + l.counts);
  state.buffer.events = reinterpret_cast<TraceEvent*>(base + l.events);
  for (int s : request_.sms) state.buffer.sms[s / 64] |= uint64_t{1} << (s % 64);
  if (request_.sms.empty())
    for (uint64_t& w : state.buffer.sms) w = ~uint64_t{0};
  state.buffer.max_ctas = request_.max_ctas;
  state.buffer.capacity = request_.capacity;
  state.reset_bytes = l.reset_bytes();
  ++state.version;
}

GpuTrace::~GpuTrace() {
  if (buffer_ == nullptr) return;
  TraceLaunchState& state = trace_launch_state();
  state.buffer = TraceBuffer{};
  state.reset_bytes = 0;
  ++state.version;
  cudaFree(buffer_);  // a destructor does not throw; a failure here leaves only the allocation behind
}

TraceDump GpuTrace::collect() const {
  TraceDump d;
  d.max_ctas = request_.max_ctas;
  d.capacity = request_.capacity;
  d.ctas.assign(d.max_ctas, TraceCta{});
  d.counts.assign(size_t{d.max_ctas} * kTraceWarps, 0);
  d.events.assign(size_t{d.max_ctas} * kTraceWarps, {});
  if (buffer_ == nullptr) return d;
  CUDA_CHECK(cudaDeviceSynchronize());
  const TraceLayout l = trace_layout(d.max_ctas, d.capacity);
  const char* base = static_cast<const char*>(buffer_);
  CUDA_CHECK(cudaMemcpy(&d.claimed, base, sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(d.ctas.data(), base + l.ctas, sizeof(TraceCta) * d.max_ctas, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(d.counts.data(), base + l.counts, sizeof(uint32_t) * d.counts.size(), cudaMemcpyDeviceToHost));
  for (size_t w = 0; w < d.counts.size(); ++w) {
    const size_t n = std::min<size_t>(d.counts[w], d.capacity);
    d.events[w].resize(n);
    if (n > 0)
      CUDA_CHECK(cudaMemcpy(d.events[w].data(), base + l.events + w * d.capacity * sizeof(TraceEvent),
                            n * sizeof(TraceEvent), cudaMemcpyDeviceToHost));
  }
  return d;
}

void emu_trace_arm(const TraceRequest& request) {
  emu::TraceOptions o;
  o.sms = request.sms;
  o.max_ctas = request.max_ctas;
  o.capacity = request.capacity;
  emu::trace_arm(o);
}

TraceDump emu_trace_take() { return emu::trace_take(); }

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string chrome_trace(const TraceDump& d, const TraceMeta& meta, std::string* summary) {
  const uint32_t ctas = d.recorded();
  auto events_of = [&](uint32_t c, int w) {
    const size_t slot = size_t{c} * kTraceWarps + static_cast<size_t>(w);
    const uint32_t n = std::min(d.counts[slot], d.capacity);
    return std::make_pair(d.events[slot].data(), std::min<uint32_t>(n, static_cast<uint32_t>(d.events[slot].size())));
  };

  // Each barrier's name, from the waits on it; its stage is its rank among the addresses of that
  // name (a ring's barriers are an array, in stage order).
  std::map<std::string, std::set<uint32_t>> addresses;
  for (uint32_t c = 0; c < ctas; ++c)
    for (int w = 0; w < kTraceWarps; ++w) {
      const auto [ev, n] = events_of(c, w);
      for (uint32_t i = 0; i < n; ++i)
        if (ev[i].kind == TraceKind::wait_begin && ev[i].bar != 0) addresses[unpack_name(ev[i].name)].insert(ev[i].bar);
    }
  std::map<uint32_t, BarrierName> barriers;
  for (const auto& [name, set] : addresses) {
    int stage = 0;
    for (uint32_t a : set) barriers[a] = BarrierName{name, set.size() > 1 ? stage++ : -1};
  }
  auto barrier = [&](uint32_t a) {
    if (const auto it = barriers.find(a); it != barriers.end()) return it->second;
    char buf[32];
    std::snprintf(buf, sizeof buf, "mbarrier@0x%x", a);
    return BarrierName{buf, -1};
  };

  // The time origin: the first CTA's start (GPU); on the emulator, which runs one cluster after
  // another, each cluster's own first start, so that every cluster's timeline begins at 0.
  std::map<uint32_t, uint64_t> origin;  // by cluster (the GPU: one origin, key 0)
  for (uint32_t c = 0; c < ctas; ++c) {
    const uint32_t key = d.emulated ? d.ctas[c].cluster : 0;
    uint64_t t = d.ctas[c].start;
    for (int w = 0; w < kTraceWarps; ++w) {
      const auto [ev, n] = events_of(c, w);
      if (n > 0) t = std::min(t, trace_time(ev[0], d.ctas[c].start));
    }
    auto [it, fresh] = origin.emplace(key, t);
    if (!fresh) it->second = std::min(it->second, t);
  }
  auto ts = [&](uint32_t c, uint64_t t) {
    const uint64_t t0 = origin[d.emulated ? d.ctas[c].cluster : 0];
    const double dt = t >= t0 ? static_cast<double>(t - t0) : -static_cast<double>(t0 - t);
    return d.emulated ? dt : dt / 1000.0;  // microseconds: ns / 1000, or one per scheduler step
  };

  std::string out = "{\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [\n";
  bool first = true;
  auto emit = [&](const std::string& e) {
    if (!first) out += ",\n";
    first = false;
    out += e;
  };
  std::string tracks = "[";
  size_t total = 0, dropped = 0, track_count = 0;
  uint64_t step = 0;  // the smallest nonzero step between two events of a track: the clock ticks as finely
  for (uint32_t c = 0; c < ctas; ++c) {
    const TraceCta& cta = d.ctas[c];
    const int pid = static_cast<int>(c) + 1;
    std::string pname = "CTA " + std::to_string(cta.block) + (d.emulated ? " (emulated SM " : " (SM ") +
                        std::to_string(cta.sm) + (cta.rank ? ", cluster rank " + std::to_string(cta.rank) : "") + ")";
    emit("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + std::to_string(pid) +
         ", \"args\": {\"name\": " + json_string(pname) + "}}");
    emit("{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": " + std::to_string(pid) +
         ", \"args\": {\"sort_index\": " + std::to_string(pid) + "}}");
    // The CTA's tracks: a role's name, numbered where the CTA has several of it (step 10's consumers).
    std::map<TraceRole, int> of_role;
    for (int w = 0; w < kTraceWarps; ++w)
      if (events_of(c, w).second > 0) ++of_role[events_of(c, w).first[0].role];
    std::map<TraceRole, int> seen;
    for (int w = 0; w < kTraceWarps; ++w) {
      const auto [ev, n] = events_of(c, w);
      if (n == 0) continue;
      const size_t slot = size_t{c} * kTraceWarps + static_cast<size_t>(w);
      const TraceRole role = ev[0].role;
      std::string tname = trace_role_name(role);
      if (of_role[role] > 1) tname += " " + std::to_string(seen[role]++);
      const std::string ids = "\"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(w);
      emit("{\"name\": \"thread_name\", \"ph\": \"M\", " + ids + ", \"args\": {\"name\": " + json_string(tname) + "}}");
      emit("{\"name\": \"thread_sort_index\", \"ph\": \"M\", " + ids +
           ", \"args\": {\"sort_index\": " + std::to_string(role_order(role) * 100 + w) + "}}");
      const size_t lost = d.counts[slot] > n ? d.counts[slot] - n : 0;
      tracks += std::string(track_count++ ? ", " : "") + "{" + ids + ", \"cta\": " + std::to_string(cta.block) +
                ", \"sm\": " + std::to_string(cta.sm) + ", \"rank\": " + std::to_string(cta.rank) +
                ", \"cluster\": " + std::to_string(cta.cluster) + ", \"warp\": " + std::to_string(w) +
                ", \"role\": " + json_string(trace_role_name(role)) + ", \"name\": " + json_string(tname) +
                ", \"events\": " + std::to_string(n) + ", \"dropped\": " + std::to_string(lost);
      total += n;
      dropped += lost;

      // Begin/end pairs become complete ("X") events; issues and commits instants ("i"). A track's
      // events are written in the order they begin (an enclosing span before what it holds).
      const auto T = [&](const TraceEvent& e) { return trace_time(e, cta.start); };
      uint64_t last = T(ev[0]);
      size_t unordered = 0;  // events recorded with an earlier time than the one before
      for (uint32_t i = 1; i < n; ++i) {
        const uint64_t t = T(ev[i]);
        if (t < last) ++unordered;
        if (t > last && (step == 0 || t - last < step)) step = t - last;
        last = std::max(last, t);
      }
      struct Out {
        double ts, dur;
        std::string json;
      };
      std::vector<Out> outs;
      // Every event's args name the work unit it belongs to ("tile": -1 outside one): the tile open
      // when it was recorded (when it began, for a span).
      const TraceEvent* open[4] = {};  // tile, epilogue, wait, mma wait
      int64_t open_tile[4] = {-1, -1, -1, -1};
      int64_t tile = -1;
      auto complete = [&](const TraceEvent& b, uint64_t end, const std::string& name, const char* cat,
                          const std::string& args) {
        const double t = ts(c, T(b)), dur = ts(c, end) - t;
        const int64_t of = open_tile[&b == open[0] ? 0 : &b == open[1] ? 1 : &b == open[2] ? 2 : 3];
        outs.push_back({t, dur,
                        "{\"name\": " + json_string(name) + ", \"cat\": \"" + cat + "\", \"ph\": \"X\", " + ids +
                            ", \"ts\": " + number(t, d.emulated) + ", \"dur\": " + number(dur, d.emulated) +
                            ", \"args\": {" + args + (args.empty() ? "" : ", ") + "\"tile\": " + std::to_string(of) +
                            "}}"});
      };
      auto span = [&](const TraceEvent& b, uint64_t end) {
        switch (b.kind) {
          case TraceKind::tile_begin: complete(b, end, "tile " + std::to_string(b.arg), "tile", ""); break;
          case TraceKind::epilogue_begin: complete(b, end, "epilogue", "epilogue", ""); break;
          case TraceKind::wait_begin: {
            const BarrierName bn = barrier(b.bar);
            complete(b, end, "wait " + bn.label(), "wait",
                     "\"barrier\": " + json_string(bn.name) + ", \"stage\": " + std::to_string(bn.stage) +
                         ", \"parity\": " + std::to_string(b.arg));
            break;
          }
          case TraceKind::mma_wait_begin:
            complete(b, end, "wgmma.wait_group " + std::to_string(b.arg), "mma_wait",
                     "\"n\": " + std::to_string(b.arg));
            break;
          default: break;
        }
      };
      auto index_of = [](TraceKind k) {
        switch (k) {
          case TraceKind::tile_begin:
          case TraceKind::tile_end: return 0;
          case TraceKind::epilogue_begin:
          case TraceKind::epilogue_end: return 1;
          case TraceKind::wait_begin:
          case TraceKind::wait_end: return 2;
          case TraceKind::mma_wait_begin:
          case TraceKind::mma_wait_end: return 3;
          default: return 0;
        }
      };
      for (uint32_t i = 0; i < n; ++i) {
        const TraceEvent& e = ev[i];
        switch (e.kind) {
          case TraceKind::tile_begin:
          case TraceKind::epilogue_begin:
          case TraceKind::wait_begin:
          case TraceKind::mma_wait_begin: {
            const int k = index_of(e.kind);
            if (open[k] != nullptr) span(*open[k], T(e));  // an end was lost: close it here
            if (e.kind == TraceKind::tile_begin) tile = e.arg;
            open[k] = &e;
            open_tile[k] = tile;
            break;
          }
          case TraceKind::tile_end:
          case TraceKind::epilogue_end:
          case TraceKind::wait_end:
          case TraceKind::mma_wait_end: {
            const int k = index_of(e.kind);
            if (open[k] != nullptr) span(*open[k], T(e));
            open[k] = nullptr;
            if (e.kind == TraceKind::tile_end) tile = -1;
            break;
          }
          case TraceKind::tma_load:
          case TraceKind::tma_store:
          case TraceKind::mma_commit: {
            const int32_t c0 = static_cast<int32_t>(static_cast<uint64_t>(e.arg) & 0xffffffffu);
            const int32_t c1 = static_cast<int32_t>(static_cast<uint64_t>(e.arg) >> 32);
            std::string name, cat, args;
            if (e.kind == TraceKind::mma_commit) {
              name = "MMA commit";
              cat = "mma";
              if (e.bar != 0) {
                const BarrierName bn = barrier(e.bar);
                name += " -> " + bn.label();
                args = "\"barrier\": " + json_string(bn.name) + ", \"stage\": " + std::to_string(bn.stage);
              }
            } else {
              name = e.kind == TraceKind::tma_load ? "TMA load" : "TMA store";
              cat = "tma";
              args = "\"c0\": " + std::to_string(c0) + ", \"c1\": " + std::to_string(c1);
              if (e.kind == TraceKind::tma_load && e.bar != 0) {
                const BarrierName bn = barrier(e.bar);
                name += " -> " + bn.label();
                args += ", \"barrier\": " + json_string(bn.name) + ", \"stage\": " + std::to_string(bn.stage);
              }
            }
            const double t = ts(c, T(e));
            args += std::string(args.empty() ? "" : ", ") + "\"tile\": " + std::to_string(tile);
            outs.push_back({t, -1.0,
                            "{\"name\": " + json_string(name) + ", \"cat\": \"" + cat +
                                "\", \"ph\": \"i\", \"s\": \"t\", " + ids + ", \"ts\": " + number(t, d.emulated) +
                                ", \"args\": {" + args + "}}"});
            break;
          }
          case TraceKind::none: break;
        }
      }
      for (const TraceEvent* o : open)
        if (o != nullptr) span(*o, last);  // still open at the track's last event (its end was not kept)
      std::stable_sort(outs.begin(), outs.end(),
                       [](const Out& a, const Out& b) { return a.ts < b.ts || (a.ts == b.ts && a.dur > b.dur); });
      for (const Out& o : outs) emit(o.json);
      tracks += ", \"unordered\": " + std::to_string(unordered) + "}";
    }
  }
  tracks += "]";

  std::string sms = "[";
  for (size_t i = 0; i < meta.sms.size(); ++i) sms += (i ? ", " : "") + std::to_string(meta.sms[i]);
  sms += "]";
  out +=
      "\n],\n\"otherData\": {\"tool\": \"gemm timeline (docs/timeline.md)\", \"step\": " + std::to_string(meta.step) +
      ", \"step_name\": " + json_string(meta.step_name) + ", \"track\": " + json_string(meta.track) +
      ", \"device\": " + json_string(meta.device) + ", \"shape\": " + json_string(meta.shape) +
      ", \"date\": " + json_string(meta.date) + ", \"emulated\": " + (d.emulated ? "true" : "false") + ", \"time\": " +
      json_string(d.emulated ? "emulated: logical time, 1 us on the axis = 1 scheduler step"
                             : "GPU %globaltimer, microseconds from the first recorded CTA's start") +
      ", \"sms\": " + sms + (d.emulated ? "" : ", \"timer_step_ns\": " + std::to_string(step)) +
      ", \"ctas_claimed\": " + std::to_string(d.claimed) + ", \"ctas_recorded\": " + std::to_string(ctas) +
      ", \"events\": " + std::to_string(total) + ", \"dropped\": " + std::to_string(dropped) +
      ",\n\"tracks\": " + tracks + "}\n}\n";
  if (summary != nullptr)
    *summary =
        std::to_string(track_count) + " tracks of " + std::to_string(ctas) + " CTAs, " + std::to_string(total) +
        " events" + (dropped ? ", " + std::to_string(dropped) + " dropped (raise --trace-cap)" : "") +
        (d.claimed > ctas ? "; " + std::to_string(d.claimed - ctas) + " more CTAs on those SMs not recorded" : "");
  return out;
}

}  // namespace gemm
