// The emulator's runtime: options, the launch, fibers and their scheduler, the CUDA built-ins,
// shared-memory tracking, CTA and cluster barriers, warp collectives, exit checks and the
// deadlock report; and the machinery of the rules that hold whatever the schedule: the
// happens-before clocks, the convergence of a warp's lanes, the asynchronous readers of shared
// memory and the unfenced tcgen05 work a synchronisation hands over (core.h).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>

#include "emu/core.h"

namespace gemm::emu {

namespace {

// Per OS thread: a launch runs on the thread that calls it (its fibers too), so launches on
// different threads are independent.
thread_local Options g_options;
thread_local LaunchStats g_last;
thread_local Emu* g_emu = nullptr;

// The shared-window address of the first byte of dynamic shared memory: 16-byte aligned but no
// more (as the language guarantees), so a kernel that assumes a stronger alignment of the dynamic
// base breaks here as it may on hardware. Bits 24-27 of a shared address carry the CTA's rank in
// its cluster (the shared::cta window of a CTA inside the shared::cluster window).
constexpr uint32_t kSmemBase = 0x410;
constexpr uint8_t kSmemPoison = 0xFF;  // fp16 0xFFFF: NaN

struct OutputWatch {
  bool active = false;
  uint8_t* alloc = nullptr;
  size_t bytes = 0;
  uint8_t* d = nullptr;
  int64_t rows = 0, cols = 0;
  size_t elem = 0;
  std::vector<uint8_t> snapshot;  // the allocation before the launch
  std::vector<uint8_t> result;    // what the launch wrote, restored at its end
  std::vector<int64_t> writer;    // per element of D: the cluster that wrote it, -1 none
};
thread_local OutputWatch g_watch;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Options and host API.
// ---------------------------------------------------------------------------------------------
void set_options(const Options& o) { g_options = o; }
const Options& options() { return g_options; }
const LaunchStats& last_launch() { return g_last; }

std::string describe(const Options& o) {
  return "emulator: " + std::to_string(o.sm_count) + " SMs, seed " + std::to_string(o.seed) + " (replay: --emu-seed " +
         std::to_string(o.seed) + ")";
}

void watch_output(void* alloc, size_t alloc_bytes, void* d, int64_t rows, int64_t cols, size_t elem_bytes) {
  g_watch = OutputWatch{};
  g_watch.active = true;
  g_watch.alloc = static_cast<uint8_t*>(alloc);
  g_watch.bytes = alloc_bytes;
  g_watch.d = static_cast<uint8_t*>(d);
  g_watch.rows = rows;
  g_watch.cols = cols;
  g_watch.elem = elem_bytes;
}
void clear_output_watch() { g_watch = OutputWatch{}; }

int ctas_per_sm(int threads, size_t smem_bytes) {
  // Each CTA also takes 1 KB of system shared memory; 2048 threads and 32 CTAs per SM at most.
  const int by_smem = static_cast<int>(kSmemPerSm / (smem_bytes + 1024));
  const int by_threads = 2048 / std::max(1, threads);
  return std::min({by_smem, by_threads, 32});
}

int regs_at_launch(int threads, int per_sm) {
  // 64K registers per SM, allocated per warp in units of 8 per thread, at most 256 (the most
  // setmaxnreg may ask for): what ptxas gives under __launch_bounds__(threads, per_sm).
  const int warps_threads = (threads + 31) / 32 * 32;
  const int r = 65536 / (warps_threads * std::max(1, per_sm)) / 8 * 8;
  return std::min(256, r);
}

Status resident_ctas(int threads, size_t smem_bytes, int* ctas) {
  if (threads < 1 || threads > 1024)
    return Status::failure("occupancy: a CTA has 1 to 1024 threads (got " + std::to_string(threads) + ")");
  if (smem_bytes > kMaxSmemPerCta)
    return Status::failure("occupancy: not one CTA of " + std::to_string(threads) + " threads and " +
                           std::to_string(smem_bytes) + " bytes of shared memory fits on an SM");
  const int per_sm = ctas_per_sm(threads, smem_bytes);
  if (per_sm < 1)
    return Status::failure("occupancy: not one CTA of " + std::to_string(threads) + " threads and " +
                           std::to_string(smem_bytes) + " bytes of shared memory fits on an SM");
  *ctas = g_options.sm_count * per_sm;
  return {};
}

// ---------------------------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------------------------
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string Cta::name() const {
  return "CTA (" + std::to_string(idx.x) + "," + std::to_string(idx.y) + "," + std::to_string(idx.z) + ")" +
         (cluster && cluster->ctas.size() > 1 ? " [cluster rank " + std::to_string(rank) + "]" : "");
}

std::string thread_name(const Fiber* f) {
  if (!f) return "the asynchronous proxy";
  std::string s = f->cta->name() + " thread " + std::to_string(f->tid) + " (warp " + std::to_string(f->warp) +
                  ", lane " + std::to_string(f->lane) + (f->role ? ", role " + std::string(f->role) : "") + ")";
  return s;
}

#ifndef GEMM_EMU_SOURCE_ROOT
#define GEMM_EMU_SOURCE_ROOT ""
#endif

bool known(const SourceLoc& l) { return l.line() != 0; }

std::string where(const SourceLoc& l) {
  if (!known(l)) return "(unknown location)";
  std::string f = l.file_name();
  const std::string root = GEMM_EMU_SOURCE_ROOT;
  if (!root.empty() && f.rfind(root, 0) == 0) f = f.substr(root.size());
  return f + ":" + std::to_string(l.line());
}

void fail(const std::string& rule, const std::string& detail) {
  const Fiber* f = g_emu ? g_emu->current : nullptr;
  fail_loc(f ? f->loc : SourceLoc{}, f, rule, detail);
}

void fail_at(const Fiber* who, const std::string& rule, const std::string& detail) {
  fail_loc(who ? who->loc : SourceLoc{}, who, rule, detail);
}

void fail_loc(const SourceLoc& loc, const Fiber* who, const std::string& rule, const std::string& detail) {
  std::string m = rule + ": " + (known(loc) ? where(loc) + ": " : std::string()) + detail;
  if (who) m += "\n  at " + thread_name(who);
  throw Failure{m};
}

Fiber* enter(const SourceLoc& loc, const char* op) {
  Fiber* f = self();
  if (f->gfail) raise_global_failure(f);  // a read of global memory since its last instruction broke a rule
  f->loc = loc;
  f->op = op;
  f->tracked = false;  // kernel code ran since the last emulated instruction
  g_emu->polls = 0;
  return f;
}

Emu* emu_if_any() { return g_emu; }

// ---------------------------------------------------------------------------------------------
// Happens-before.
// ---------------------------------------------------------------------------------------------
uint64_t tick(Fiber* f) {
  const uint64_t e = g_emu->next_epoch();
  f->vc.raise(f->slot, e);
  f->xc.raise(f->slot, e);
  return e;
}

void join_all(const std::vector<Fiber*>& members, bool memory) {
  if (members.size() < 2) return;
  Clock x = members.front()->xc;
  for (size_t i = 1; i < members.size(); ++i) x.join(members[i]->xc);
  for (Fiber* m : members) m->xc.v = x.v;
  if (!memory) return;
  Clock j = members.front()->vc;
  for (size_t i = 1; i < members.size(); ++i) j.join(members[i]->vc);
  for (Fiber* m : members) m->vc.v = j.v;
}

size_t cluster_slot(const Cta& c, int tid) { return static_cast<size_t>(c.rank) * c.nthreads + tid; }

bool knows_write(const Clock& vc, const Cta& c, uint32_t w) {
  const int32_t t = c.writer[w];
  return t < 0 || vc.at(cluster_slot(c, t)) >= c.wepoch[w];
}

// ---------------------------------------------------------------------------------------------
// Convergence of a warp's lanes (the rule of .sync.aligned instructions).
// ---------------------------------------------------------------------------------------------
void converge(const std::vector<Fiber*>& members) {
  // A warp converges when all its live lanes took part.
  std::map<std::pair<const Cta*, int>, int> count;
  for (const Fiber* m : members) ++count[{m->cta, m->warp}];
  for (const auto& [key, n] : count) {
    Cta& c = *const_cast<Cta*>(key.first);
    int live = 0;
    for (int t = key.second * 32; t < std::min(c.nthreads, key.second * 32 + 32); ++t)
      if (c.threads[t]->state != Fiber::State::done) ++live;
    if (n < live) continue;
    c.warps[key.second].conv_epoch = g_emu->epoch;
    for (int t = key.second * 32; t < std::min(c.nthreads, key.second * 32 + 32); ++t) {
      Fiber* f = c.threads[t];
      f->async_wait = false;
      f->spun = false;
    }
  }
}

std::string lanes_string(const std::vector<int>& lanes) {
  std::string s;
  for (size_t i = 0; i < lanes.size();) {
    size_t j = i;
    while (j + 1 < lanes.size() && lanes[j + 1] == lanes[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(lanes[i]);
    if (j > i) s += "-" + std::to_string(lanes[j]);
    i = j + 1;
  }
  return (lanes.size() == 1 ? "lane " : "lanes ") + s;
}

void check_converged(const std::vector<Fiber*>& members, const char* what) {
  for (const Fiber* m : members)
    if (m->spun) {
      std::vector<int> lanes;
      for (const Fiber* o : members)
        if (o->cta == m->cta && o->warp == m->warp && o->spun) lanes.push_back(o->lane);
      fail_at(m, "lanes not converged at a .sync.aligned instruction",
              std::string(what) + " is reached by " + lanes_string(lanes) + " of warp " + std::to_string(m->warp) +
                  " " + m->spun_what +
                  ": the lanes ran apart and nothing reconverged them, so they do not execute this "
                  ".sync.aligned instruction together: a warp_sync() (bar.warp.sync) is needed before it");
    }
}

// ---------------------------------------------------------------------------------------------
// Asynchronous shared-memory readers.
// ---------------------------------------------------------------------------------------------
uint32_t new_reader(std::unique_ptr<AsyncReader> r) {
  g_emu->readers.push_back(std::move(r));
  return static_cast<uint32_t>(g_emu->readers.size());
}

AsyncReader& reader(uint32_t id) { return *g_emu->readers.at(id - 1); }

void add_reader(Cta& c, const std::vector<uint32_t>& words, int col, uint32_t id) {
  if (c.readers.empty()) {
    c.reader_cols = static_cast<int>(c.warp_coll.size()) + 1;
    c.readers.assign((c.size / 4) * static_cast<size_t>(c.reader_cols), 0);
  }
  for (uint32_t w : words) c.readers[static_cast<size_t>(w) * c.reader_cols + col] = id;
}

namespace {

std::string reader_name(const AsyncReader& r) {
  if (r.store)
    return "the TMA store group committed at " + where(r.commit_loc) + " by thread " + std::to_string(r.warp);
  return "warp " + std::to_string(r.warp) + "'s share of the wgmma group committed at " + where(r.loc);
}

}  // namespace

void check_overwrite(Cta& c, uint32_t w, const Clock& vc, const Fiber* writer, const char* op) {
  if (c.readers.empty()) return;
  for (int col = 0; col < c.reader_cols; ++col) {
    const uint32_t id = c.readers[static_cast<size_t>(w) * c.reader_cols + col];
    if (!id) continue;
    const AsyncReader& r = reader(id);
    bool ordered = false, seen = false;
    const int lanes = r.store ? 1 : 32;
    for (int l = 0; l < lanes; ++l) {
      if (!r.seen[l]) continue;
      seen = true;
      const int tid = r.store ? r.warp : r.warp * 32 + l;
      if (vc.at(cluster_slot(*r.cta, tid)) >= r.seen[l]) ordered = true;
    }
    if (ordered) continue;
    if (r.store && vc.at(r.issue_slot) < r.issue_time)
      // Not even ordered after the store's issue: the stores and the TMA store race, and most
      // likely the stores were meant for it (an epilogue without its barrier).
      fail_loc(r.loc, writer, "asynchronous read not ordered after the stores",
               "the TMA store issued here (committed at " + where(r.commit_loc) + " by thread " +
                   std::to_string(r.warp) + ") reads shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
                   ") which " + op +
                   " write, and no synchronisation orders those stores before the TMA store, or "
                   "after it: a barrier between the stores and the TMA store (__syncthreads after the writers' "
                   "fence.proxy.async) is missing");
    if (!r.store && writer && writer->last_wait_cta == &c) {
      // The release analysis: the writer was let through by the last phase of an mbarrier that had
      // its init count of arrivals, none of them from this reader's warp, while the warpgroup has
      // more warps reading the buffer than the count: the count is too low for one release per
      // reading warp (or the warp releases another barrier).
      const auto it = c.mbar.find(writer->last_wait_off);
      if (it != c.mbar.end() && it->second.init && writer->last_wait_phase + 1 == it->second.phase &&
          it->second.count < 4) {
        const MBarrier& b = it->second;
        // Only a barrier the threads release with plain arrivals (not a TMA or commit barrier).
        bool from_reader = false, plain = !b.contrib_done.empty();
        for (const Contrib& k : b.contrib_done) {
          if (k.who && k.who->cta == &c && k.who->warp == r.warp) from_reader = true;
          if (std::strncmp(k.what, "mbarrier.arrive", 15) != 0 || std::strstr(k.what, "expect_tx")) plain = false;
        }
        if (plain && !from_reader)
          fail_at(writer, "more arrivals than the init count",
                  std::string(op) + " writes shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
                      ") after its wait at " + where(writer->last_wait_loc) + " on mbarrier " +
                      barrier_name(c, writer->last_wait_off) + " (init count " + std::to_string(b.count) +
                      ", initialised at " + where(b.init_loc) + ") returned on phase " +
                      std::to_string(writer->last_wait_phase) + ", which completed with " + std::to_string(b.count) +
                      " arrival(s) (the last: " + b.last_arrival + "), none from warp " + std::to_string(r.warp) +
                      ", whose share of the wgmma group committed at " + where(r.loc) +
                      (r.done ? " read" : " still reads") +
                      " this buffer: the 4 warps that read it release it, so "
                      "their arrivals will be more than the init count of " +
                      std::to_string(b.count) + " allows: the init count is too low (one arrival per releasing warp)");
      }
    }
    std::string state;
    if (r.store)
      state = seen ? "its issuer passed cp.async.bulk.wait_group.read at " + where(r.seen_loc) +
                         ", but nothing orders that wait before this write"
                   : "its issuer has not passed a cp.async.bulk.wait_group.read covering it";
    else
      state = seen ? "warp " + std::to_string(r.warp) + " passed the wgmma.wait_group covering it at " +
                         where(r.seen_loc) + ", but nothing orders that wait before this write"
                   : "warp " + std::to_string(r.warp) + " has not passed a wgmma.wait_group covering it";
    // The reading warp's arrival before its wait: the one on the barrier whose phase let the
    // writer through, if it made one there, else its first.
    std::string early = r.early.empty() ? std::string() : r.early.front().second;
    if (writer && writer->last_wait_cta == &c)
      for (const auto& [off, text] : r.early)
        if (off == writer->last_wait_off) early = text;
    if (writer)
      if (const WaitMemo* e = early_wait(writer))
        fail_early(writer, *e,
                   "its " + std::string(op) + " at " + where(writer->loc) + " wrote shared memory at " +
                       hex(c.addr_of(4 * w)) + " (" + c.name() + ") while " + reader_name(r) +
                       (r.done ? " had read it" : " still read it") + ": " + state);
    fail_at(writer, "shared memory overwritten while an asynchronous operation reads it",
            "shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() + ") is written by " + op + ", while " +
                reader_name(r) + (r.done ? " read it" : " still reads it") + "; " + state +
                (early.empty() ? "" : " (" + early + ")") +
                ": a buffer an asynchronous operation reads may be written again only after a wait for that "
                "operation's completion which the writer is ordered after (for wgmma: the warp's own "
                "wgmma.wait_group, then its release of the stage)");
  }
}

// ---------------------------------------------------------------------------------------------
// The unfenced tcgen05 rule.
// ---------------------------------------------------------------------------------------------
void check_tc_unfenced(Fiber* f, const char* what) {
  const uint64_t known_e[2] = {f->tc_known.w, f->tc_known.r};
  for (int k = 0; k < 2; ++k) {
    const TcUnfenced& u = f->tc_unf;
    if (u.e[k] == 0 || u.e[k] <= known_e[k] || u.e[k] <= f->tc_own_ever[k]) continue;
    fail_at(f, "missing tcgen05.fence::before_thread_sync",
            std::string(what) + " follows a thread synchronisation that orders it after the " +
                (u.op_name[k] ? u.op_name[k] : "tcgen05 operation") + " at " + where(u.op[k]) + " of " +
                thread_name(u.who[k]) + " (" + (k == 0 ? "TMEM written" : "TMEM read") +
                "), but that thread ran no tcgen05.fence::before_thread_sync between the operation and its " +
                (u.sync_what[k] ? u.sync_what[k] : "synchronisation") + " at " + where(u.sync[k]) +
                ": without it the tcgen05 operation is not ordered before the synchronisation (a tcgen05.commit "
                "implies the fence; a barrier or an mbarrier arrive does not)");
  }
}

Emu& emu() {
  if (!g_emu) throw Failure{"emulator: an emulated device function was called outside a kernel launch"};
  return *g_emu;
}

Fiber* self() {
  Emu& e = emu();
  if (!e.current) throw Failure{"emulator: an emulated device function was called outside an emulated thread"};
  return e.current;
}

uint64_t Emu::rand() {
  // splitmix64
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint32_t Cta::addr_of(uint32_t offset) const { return (static_cast<uint32_t>(rank) << 24) | (kSmemBase + offset); }

bool Tmem::allocated(uint32_t col, uint32_t ncols) const {
  for (uint32_t c = col; c < col + ncols; ++c) {
    bool in = false;
    for (const Alloc& a : allocs)
      if (c >= a.col && c < a.col + a.ncols) in = true;
    if (!in) return false;
  }
  return true;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign << 31;
    } else {  // subnormal: normalise
      int e = -1;
      uint32_t m = mant;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400) == 0);
      bits = (sign << 31) | ((127 - 15 - e) << 23) | ((m & 0x3FF) << 13);
    }
  } else if (exp == 0x1F) {
    bits = (sign << 31) | 0x7F800000u | (mant << 13);
  } else {
    bits = (sign << 31) | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Scheduling.
// ---------------------------------------------------------------------------------------------
namespace {

void fiber_main();

void start_fiber(Emu& e, Fiber* f) {
  getcontext(&f->ctx);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  f->ctx.uc_stack.ss_sp = f->stack + page;
  f->ctx.uc_stack.ss_size = f->mapping - page;
  f->ctx.uc_link = nullptr;
  makecontext(&f->ctx, fiber_main, 0);
  (void)e;
}

Fiber* new_fiber(Emu& e) {
  auto f = std::make_unique<Fiber>();
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = ((g_options.stack_bytes + page - 1) / page) * page + page;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw Failure{"emulator: cannot map a fiber stack of " + std::to_string(bytes) + " bytes"};
  mprotect(p, page, PROT_NONE);  // guard page: a stack overflow faults instead of corrupting
  f->stack = static_cast<char*>(p);
  f->mapping = bytes;
  e.pool.push_back(std::move(f));
  return e.pool.back().get();
}

void free_pool(Emu& e) {
  for (auto& f : e.pool)
    if (f->stack) munmap(f->stack, f->mapping);
  e.pool.clear();
}

void switch_to_scheduler(Fiber* f) {
  Emu& e = *g_emu;
  swapcontext(&f->ctx, &e.sched);
}

void thread_exit(Fiber* f);

void fiber_main() {
  Emu& e = *g_emu;
  Fiber* f = e.current;
  try {
    e.body(e.body_ctx);
    thread_exit(f);
  } catch (const Failure& x) {
    if (e.failure.empty()) e.failure = x.message;
  } catch (const Abort&) {
  } catch (const std::exception& x) {
    if (e.failure.empty())
      e.failure = std::string("an emulated thread threw: ") + x.what() + "\n  at " + thread_name(f);
  }
  f->state = Fiber::State::done;
  switch_to_scheduler(f);
  std::abort();  // a finished fiber is never resumed
}

}  // namespace

void block(const Wait& w) {
  Emu& e = emu();
  Fiber* f = self();
  track_writes(f);
  f->wait = w;
  f->wait.loc = f->loc;
  f->state = Fiber::State::blocked;
  ++e.stats.switches;
  switch_to_scheduler(f);
  if (e.aborting) throw Abort{};
  f->wait = Wait{};
}

void yield_fiber(Fiber* f) {
  Emu& e = emu();
  if (e.runnable.empty() && e.active.empty()) return;  // nothing else could run
  track_writes(f);
  f->state = Fiber::State::runnable;
  e.runnable.push_back(f);
  ++e.stats.switches;
  switch_to_scheduler(f);
  if (e.aborting) throw Abort{};
}

void wake(Fiber* f) {
  if (f->state != Fiber::State::blocked) return;
  f->state = Fiber::State::runnable;
  g_emu->runnable.push_back(f);
}

void wake_all(WaitList& list) {
  WaitList l;
  l.swap(list);
  for (Fiber* f : l) wake(f);
}

void enqueue(Queue& q, std::function<void()> op) {
  q.ops.push_back(std::move(op));
  if (!q.listed) {
    q.listed = true;
    g_emu->active.push_back(&q);
  }
}

namespace {

// Completes the front operation of the i-th active queue.
void complete_async(Emu& e, size_t i) {
  Queue* q = e.active[i];
  std::function<void()> op = std::move(q->ops.front());
  q->ops.pop_front();
  if (q->ops.empty()) {
    e.active[i] = e.active.back();
    e.active.pop_back();
    q->listed = false;
  }
  const bool transient = q->transient && q->ops.empty();
  ++e.stats.async_ops;
  e.next_epoch();
  op();
  if (transient) delete q;
}

}  // namespace

void collective(Collective& c, int members, const char* name, const Wait& w,
                const std::function<void(std::vector<Fiber*>&)>& exec, bool aligned, bool memory) {
  Fiber* f = self();
  if (!c.arrived.empty() && std::strcmp(c.name, name) != 0)
    fail("divergent .sync.aligned instruction", std::string(name) + " while " + std::to_string(c.arrived.size()) +
                                                    " other thread(s) of the same " +
                                                    (members == 32    ? "warp"
                                                     : members == 128 ? "warpgroup"
                                                                      : "group") +
                                                    " wait at " + c.name + " (" + where(c.loc) +
                                                    "): every thread must execute the same instruction, convergently");
  if (c.arrived.empty()) c.loc = f->loc;
  c.name = name;
  c.members = members;
  c.arrived.push_back(f);
  if (static_cast<int>(c.arrived.size()) < members) {
    const uint64_t gen = c.generation;
    Wait wait = w;
    wait.kind = WaitKind::collective;
    wait.obj = &c;
    while (c.generation == gen) {
      c.waiters.push_back(f);
      block(wait);
    }
    return;
  }
  track_writes(f);  // the others did when they blocked
  std::vector<Fiber*> all;
  all.swap(c.arrived);
  c.name = nullptr;
  std::sort(all.begin(), all.end(), [](const Fiber* x, const Fiber* y) { return x->tid < y->tid; });
  join_all(all, memory);
  if (aligned) check_converged(all, name);
  converge(all);
  c.executing = true;
  exec(all);
  c.executing = false;
  ++c.generation;
  wake_all(c.waiters);
}

void TcTop::add(const Fiber* f, const TcKnow& k) {
  const uint64_t v[3] = {k.w, k.r, k.s};
  for (int c = 0; c < 3; ++c) {
    if (v[c] > v1[c]) {
      if (who[c] != f) v2[c] = v1[c];
      v1[c] = v[c];
      who[c] = f;
    } else if (who[c] != f && v[c] > v2[c]) {
      v2[c] = v[c];
    }
  }
}

TcKnow TcTop::without(const Fiber* f) const {
  TcKnow k;
  k.w = who[0] == f ? v2[0] : v1[0];
  k.r = who[1] == f ? v2[1] : v1[1];
  k.s = who[2] == f ? v2[2] : v1[2];
  return k;
}

void learn(Fiber* f, const TcKnow& k) {
  const uint64_t v[3] = {k.w, k.r, k.s}, was[3] = {f->tc_known.w, f->tc_known.r, f->tc_known.s};
  for (int i = 0; i < 3; ++i)
    if (v[i] > was[i]) {
      f->tc_learned_at[i] = f->loc;
      f->tc_learned_op[i] = f->op;
    }
  f->tc_known.merge(k);
  f->tc_pub.merge(f->tc_known);
}

// ---------------------------------------------------------------------------------------------
// The CUDA built-ins.
// ---------------------------------------------------------------------------------------------
dim3 thread_idx() { return self()->tidx; }
dim3 block_idx() { return self()->cta->idx; }
dim3 block_dim() { return emu().cfg.block; }
dim3 grid_dim() { return emu().cfg.grid; }

namespace {}  // namespace

// Hands each thread the unfenced tcgen05 work of the others (see TcUnfenced): `sync_of(q)` is the
// synchronisation q took part in (its location and instruction).
void hand_unfenced(const std::vector<Fiber*>& members, const char* what) {
  // The two latest per kind, by different threads, so each member gets the latest that is not its own.
  for (int k = 0; k < 2; ++k) {
    const Fiber* top[2] = {};
    for (const Fiber* q : members) {
      if (!q->tc_own.e[k]) continue;
      if (!top[0] || q->tc_own.e[k] > top[0]->tc_own.e[k]) {
        top[1] = top[0];
        top[0] = q;
      } else if (!top[1] || q->tc_own.e[k] > top[1]->tc_own.e[k]) {
        top[1] = q;
      }
    }
    if (!top[0]) continue;
    for (Fiber* p : members) {
      const Fiber* q = top[0] != p ? top[0] : top[1];
      if (!q || q->tc_own.e[k] <= p->tc_unf.e[k]) continue;
      p->tc_unf.e[k] = q->tc_own.e[k];
      p->tc_unf.who[k] = q;
      p->tc_unf.op[k] = q->tc_own.op[k];
      p->tc_unf.op_name[k] = q->tc_own.op_name[k];
      p->tc_unf.sync[k] = q->loc;
      p->tc_unf.sync_what[k] = what;
    }
  }
}

namespace {

// Completes an instance of a CTA barrier: its participants learn each other's tcgen05 work and
// are ordered after each other's arrivals.
void release_cta_barrier(NamedBar& b, const char* what) {
  TcTop top;
  for (Fiber* p : b.participants) top.add(p, p->tc_pub);
  for (Fiber* p : b.participants) learn(p, top.without(p));
  hand_unfenced(b.participants, what);
  join_all(b.participants, true);
  converge(b.participants);
  b.participants.clear();
  b.arrived = 0;
  b.expected = 0;
  ++b.generation;
  wake_all(b.waiters);
}

void cta_barrier(Fiber* f, uint32_t id, int n, const char* what) {
  Cta& c = *f->cta;
  NamedBar& b = c.bars[id];
  if (b.arrived == 0) {
    b.expected = n;
  } else if (b.expected != n) {
    fail("named barrier", std::string(what) + " on barrier " + std::to_string(id) + " with " +
                              (n < 0 ? std::string("all threads") : std::to_string(n) + " threads") +
                              " while the threads already there (the first at " + where(b.loc) + ") expect " +
                              (b.expected < 0 ? std::string("all threads") : std::to_string(b.expected)));
  }
  if (b.arrived == 0) b.loc = f->loc;
  ++b.arrived;
  b.participants.push_back(f);
  const bool complete = n < 0 ? b.arrived + c.exited >= c.nthreads : b.arrived >= n;
  if (!complete) {
    const uint64_t gen = b.generation;
    Wait w;
    w.kind = WaitKind::cta_barrier;
    w.what = what;
    w.obj = &b;
    w.cta = &c;
    w.id = id;
    while (b.generation == gen) {
      b.waiters.push_back(f);
      block(w);
    }
  } else {
    // The waiters' stores were attributed (and their clocks advanced past them) when they blocked.
    track_writes(f);
    tick(f);
    release_cta_barrier(b, what);
  }
}

}  // namespace

void syncthreads(SourceLoc loc) { cta_barrier(enter(loc, "__syncthreads"), 0, -1, "__syncthreads"); }

// ---------------------------------------------------------------------------------------------
// Shared memory.
// ---------------------------------------------------------------------------------------------
uint32_t smem_offset(Cta& c, const void* p, size_t bytes, const char* what) {
  const uint8_t* q = static_cast<const uint8_t*>(p);
  if (q < c.smem || q + bytes > c.smem + c.size)
    fail("shared memory", std::string(what) + ": the pointer is not inside this CTA's " + std::to_string(c.size) +
                              " bytes of dynamic shared memory");
  return static_cast<uint32_t>(q - c.smem);
}

uint32_t addr_offset(Cta& c, uint32_t addr, size_t bytes, const char* what) {
  const uint32_t low = addr & 0xFFFFFFu;
  if (low < kSmemBase || low - kSmemBase + bytes > c.size)
    fail("shared memory", std::string(what) + ": shared address " + hex(addr) + " (+" + std::to_string(bytes) +
                              " bytes) is outside the CTA's dynamic shared memory [" + hex(kSmemBase) + ", " +
                              hex(kSmemBase + c.size) + ")");
  return low - kSmemBase;
}

Cta& cta_of_rank(uint32_t rank) {
  Cluster& cl = *emu().cluster;
  if (rank >= cl.ctas.size())
    fail("cluster rank", "CTA rank " + std::to_string(rank) + " does not exist in a cluster of " +
                             std::to_string(cl.ctas.size()) + " CTAs");
  return *cl.ctas[rank];
}

uint32_t smem_addr(const void* p) {
  Fiber* f = self();
  return f->cta->addr_of(smem_offset(*f->cta, p, 0, "smem_addr"));
}

void* dynamic_smem_base(size_t alignment, size_t bytes) {
  Fiber* f = self();
  Cta& c = *f->cta;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) fail("dynamic_smem", "alignment must be a power of 2");
  const size_t pad = (alignment - kSmemBase % alignment) % alignment;
  if (pad + bytes > c.size)
    fail("dynamic shared memory too small", "dynamic_smem<T>() needs " + std::to_string(bytes) + " bytes after " +
                                                std::to_string(pad) + " bytes of padding to its " +
                                                std::to_string(alignment) + "-byte alignment, but the launch gave " +
                                                std::to_string(c.size) + " bytes (request smem_bytes<T>())");
  return c.smem + pad;
}

void track_writes(Fiber* f) {
  if (f->tracked) return;
  f->tracked = true;
  if (!f->gopen.empty() || f->gwrote) track_global(f);
  Cta& c = *f->cta;
  if (std::memcmp(c.smem, c.shadow.data(), c.size) == 0) return;
  const uint64_t ep = tick(f);
  std::string what;  // for the overwrite rule's message
  constexpr size_t kBlock = 256;
  for (size_t blk = 0; blk < c.size; blk += kBlock) {
    const size_t len = std::min(kBlock, c.size - blk);
    if (std::memcmp(c.smem + blk, c.shadow.data() + blk, len) == 0) continue;
    for (size_t w = blk / 4; w < (blk + len) / 4; ++w) {
      if (std::memcmp(c.smem + 4 * w, c.shadow.data() + 4 * w, 4) == 0) continue;
      if (!c.readers.empty()) {
        // Found now, made since the thread last ran into the emulator: ordered as its clock was then.
        if (what.empty())
          what = "ordinary stores by " + thread_name(f) + " (found at its " + f->op + " at " + where(f->loc) + ")";
        check_overwrite(c, static_cast<uint32_t>(w), f->xc, f, what.c_str());
      }
      std::memcpy(c.shadow.data() + 4 * w, c.smem + 4 * w, 4);
      if (c.unfenced[w] != f->tid) f->unfenced.push_back(static_cast<uint32_t>(w));
      c.unfenced[w] = f->tid;
      c.writer_prev[w] = c.writer[w];
      c.wepoch_prev[w] = c.wepoch[w];
      c.prev_unread[w] = !c.read_since[w];
      c.read_since[w] = 0;
      c.writer[w] = f->tid;
      c.wepoch[w] = ep;
      c.swizzle[w] = 0;
    }
  }
  f->tc_pub.s = ep;
  if (f->last_passed.early) {
    f->early_stores = f->last_passed;
    f->early_stores_epoch = ep;
  }
}

void async_write(Cta& c, uint32_t off, const void* src, size_t bytes, uint8_t swizzle) {
  std::memcpy(c.smem + off, src, bytes);
  std::memcpy(c.shadow.data() + off, src, bytes);
  const uint64_t ep = g_emu->next_epoch();
  for (size_t w = off / 4; w < (off + bytes + 3) / 4; ++w) {
    c.unfenced[w] = -1;
    c.writer_prev[w] = c.writer[w];
    c.wepoch_prev[w] = c.wepoch[w];
    c.prev_unread[w] = !c.read_since[w];
    c.read_since[w] = 0;
    c.writer[w] = -1;
    c.wepoch[w] = ep;
    c.swizzle[w] = swizzle;
  }
}

void check_async_read(Cta& c, const std::vector<uint32_t>& words, const char* op, const Fiber* reader,
                      const model::Layout* layout) {
  for (uint32_t w : words) {
    if (reader && c.writer[w] >= 0 && !(reader->cta == &c && c.writer[w] == reader->tid) &&
        !knows_write(reader->vc, c, w)) {
      // The word's previous contents, stored by a thread, were ordered before this operation and read
      // by no MMA or TMA store yet: the new stores refilled the buffer for its next use before this
      // operation read them. (Contents that some operation has read were done with: new stores not
      // ordered before this one are stores meant for it, and a barrier is missing.)
      const int32_t prev = c.writer_prev[w];
      if (prev >= 0 && c.wepoch_prev[w] != 0 && c.prev_unread[w] &&
          reader->vc.at(cluster_slot(c, prev)) >= c.wepoch_prev[w]) {
        const Fiber* t = c.threads[static_cast<size_t>(c.writer[w])];
        const std::string then = "stores to shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
                                 ") refilled it before the " + op + " at " + where(reader->loc) +
                                 ", which reads its previous contents, was issued (nothing orders them after it)";
        if (t->early_stores.early && t->early_stores_epoch == c.wepoch[w])
          fail_early(t, t->early_stores, "its " + then);
        fail_at(reader, "shared memory overwritten while an asynchronous operation reads it",
                std::string(op) + " (async proxy) reads shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
                    ") whose previous contents (stored by thread " + std::to_string(prev) +
                    ") a synchronisation ordered before this operation, but which " + thread_name(t) +
                    " has stored to again since, ordered neither before nor after it: the buffer was refilled for "
                    "its next use before this operation read it (that thread's wait for the operation's completion, "
                    "before it reuses the buffer, is missing)");
      }
      fail_at(reader, "asynchronous read not ordered after the stores",
              std::string(op) + " (async proxy) reads shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
                  ") that thread " + std::to_string(c.writer[w]) +
                  " wrote with ordinary stores, and no synchronisation orders those stores before this operation: "
                  "a barrier (__syncthreads, or an mbarrier arrive and wait) between the stores and the operation "
                  "is missing");
    }
    if (layout && c.swizzle[w] != 0 && c.swizzle[w] != 1 + static_cast<int>(*layout))
      fail_at(reader, "MMA descriptor swizzle differs from the TMA load's",
              std::string(op) + " reads shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() + ") as " +
                  model::layout_name(*layout) +
                  " (its matrix descriptor's layout), but the TMA load that wrote it "
                  "used " +
                  model::layout_name(static_cast<model::Layout>(c.swizzle[w] - 1)) +
                  " (its tensor map's swizzle): the tensor map and the descriptor must describe the same layout");
    if (c.inflight[w]) {
      const Cta::TmaLoadSite& site = c.tma_load_site[c.inflight_box[w]];
      Cta& bc = site.bar_cta ? *site.bar_cta : c;
      const std::string load = "the load at " + where(site.loc) + ", completing on mbarrier " +
                               barrier_name(bc, site.bar) + (&bc != &c ? " of " + bc.name() : "") + ", its " +
                               phase_name(static_cast<int64_t>(site.phase));
      // The reader's wait on that barrier (for a wgmma, any thread of the warpgroup's): one that passed
      // early is the cause; else which wait the reader made tells a missing wait from a wrong one.
      const WaitMemo* last = nullptr;
      const Fiber* waiter = reader;
      if (reader && bc.mbar.count(site.bar)) {
        const size_t slot = bc.mbar.at(site.bar).slot;
        std::vector<const Fiber*> mates{reader};
        if (std::strncmp(op, "wgmma", 5) == 0)
          for (int t = reader->tid / 128 * 128; t < std::min(c.nthreads, reader->tid / 128 * 128 + 128); ++t)
            mates.push_back(c.threads[t]);
        for (const Fiber* m : mates) {
          if (const WaitMemo* e = early_wait_on(m, slot))
            fail_early(m, *e,
                       "its " + std::string(op) + " at " + where(reader->loc) + " read shared memory at " +
                           hex(c.addr_of(4 * w)) + " (" + c.name() + ") that a TMA load still in flight was writing (" +
                           load + ")");
          if (auto it = m->waits.find(slot); it != m->waits.end() && (!last || it->second.epoch > last->epoch)) {
            last = &it->second;
            waiter = m;
          }
        }
      }
      fail("shared memory read while a TMA load writes it",
           std::string(op) + " reads shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
               ") that a TMA load still in flight is writing (" + load + "): " +
               (!reader ? std::string("the wait on that mbarrier is missing, or waits for the wrong phase parity")
                : !last ? "the wait on that mbarrier is missing: " + thread_name(reader) + " never waited on it"
                        : "the wait on that mbarrier is missing, or waits for the wrong phase parity: the last wait on "
                          "it by " +
                              thread_name(waiter) + ", at " + where(last->loc) + ", was for " +
                              phase_name(last->target) + " (parity " + std::to_string(last->parity) + ")"));
    }
    if (c.unfenced[w] >= 0)
      fail("missing fence.proxy.async",
           std::string(op) + " (async proxy) reads shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
               ") that thread " + std::to_string(c.unfenced[w]) +
               " wrote with ordinary stores and has not fenced: the writer must run fence.proxy.async.shared::cta "
               "(fence_proxy_async_shared) before the barrier that orders its stores before this operation");
  }
  for (uint32_t w : words) c.read_since[w] = 1;
}

void check_unchanged(Cta& c, const std::vector<uint32_t>& words, uint64_t since, const char* op,
                     const std::string& issuer) {
  for (uint32_t w : words)
    if (c.wepoch[w] > since) {
      // A TMA load, or ordinary stores, whose thread's wait before passed early (WaitMemo): that
      // wait is the cause.
      if (c.writer[w] >= 0) {
        const Fiber* t = c.threads[static_cast<size_t>(c.writer[w])];
        if (t->early_stores.early && t->early_stores_epoch == c.wepoch[w])
          fail_early(t, t->early_stores,
                     "its stores overwrote shared memory at " + hex(c.addr_of(4 * w)) + " (" + c.name() +
                         ") that the " + op + " issued by " + issuer +
                         " still read (issued before the stores, completed after them)");
      } else {
        const auto it = c.tma_load_site.find(c.inflight_box[w]);
        if (it != c.tma_load_site.end() && it->second.wait.early && it->second.by)
          fail_early(it->second.by, it->second.wait,
                     "its TMA load at " + where(it->second.loc) + " overwrote shared memory at " +
                         hex(c.addr_of(4 * w)) + " (" + c.name() + ") that the " + op + " issued by " + issuer +
                         " still read (issued before the load, completed after it)");
      }
      fail("shared memory overwritten while an asynchronous operation reads it",
           std::string(op) + " issued by " + issuer + " reads shared memory at " + hex(c.addr_of(4 * w)) + " (" +
               c.name() + "), which was written after the operation was issued and before it completed" +
               (c.unfenced[w] >= 0 ? " (by thread " + std::to_string(c.unfenced[w]) + ")" : " (by a TMA load)") +
               ": a wait for its completion (wait_group, or the mbarrier its commit arrives on) is missing before "
               "the buffer is reused");
    }
}

// ---------------------------------------------------------------------------------------------
// Named barriers, elect, shuffle.
// ---------------------------------------------------------------------------------------------
void named_barrier_sync(uint32_t id, uint32_t num_threads, SourceLoc loc) {
  Fiber* f = enter(loc, "bar.sync");
  if (id > 15) fail("named barrier", "bar.sync id " + std::to_string(id) + ": ids are 0..15");
  if (num_threads == 0 || num_threads % 32 != 0)
    fail("named barrier",
         "bar.sync thread count " + std::to_string(num_threads) + " must be a positive multiple of 32");
  if (static_cast<int>(num_threads) > ((f->cta->nthreads + 31) / 32) * 32)
    fail("named barrier", "bar.sync thread count " + std::to_string(num_threads) + " exceeds the CTA's " +
                              std::to_string(f->cta->nthreads) + " threads");
  const int n = static_cast<int>(num_threads) >= f->cta->nthreads ? -1 : static_cast<int>(num_threads);
  cta_barrier(f, id, n, "bar.sync");
}

namespace {
int warp_members(const Fiber* f) { return std::min(32, f->cta->nthreads - 32 * f->warp); }
}  // namespace

bool elect_one_sync(SourceLoc loc) {
  Fiber* f = enter(loc, "elect.sync");
  Wait w;
  w.what = "elect.sync";
  collective(
      f->cta->warp_coll[f->warp], warp_members(f), "elect.sync", w,
      [](std::vector<Fiber*>& all) {
        for (Fiber* m : all) m->cresult = 0;
        all.front()->cresult = 1;  // the lowest lane
      },
      false);
  return f->cresult != 0;
}

// bar.warp.sync: every lane of the warp waits for the others. It reconverges a warp; it is not
// counted as a thread synchronisation by the tcgen05.fence::after_thread_sync rule.
void warp_sync(SourceLoc loc) {
  Fiber* f = enter(loc, "bar.warp.sync");
  Wait w;
  w.what = "bar.warp.sync";
  collective(
      f->cta->warp_coll[f->warp], warp_members(f), "bar.warp.sync", w, [](std::vector<Fiber*>&) {}, false, true);
}

uint32_t shfl_broadcast(uint32_t value, int src_lane, SourceLoc loc) {
  Fiber* f = enter(loc, "shfl.sync.idx");
  f->carg[0] = value;
  f->carg[1] = static_cast<uint64_t>(src_lane & 31);
  Wait w;
  w.what = "shfl.sync.idx";
  collective(
      f->cta->warp_coll[f->warp], warp_members(f), "shfl.sync.idx", w,
      [](std::vector<Fiber*>& all) {
        for (Fiber* m : all) {
          const uint64_t src = m->carg[1];
          if (src >= all.size()) fail("shfl.sync", "source lane " + std::to_string(src) + " is not in the warp");
          m->cresult = all[src]->carg[0];
        }
      },
      false);
  return static_cast<uint32_t>(f->cresult);
}

// ---------------------------------------------------------------------------------------------
// Clusters.
// ---------------------------------------------------------------------------------------------
uint32_t cluster_ctarank() { return static_cast<uint32_t>(self()->cta->rank); }
uint32_t cluster_nctarank() { return static_cast<uint32_t>(emu().cluster->ctas.size()); }
uint32_t cluster_id_x() { return self()->cta->idx.x / emu().cfg.cluster.x; }
uint32_t cluster_count_x() { return emu().cfg.grid.x / emu().cfg.cluster.x; }

namespace {

void cluster_barrier_check(Cluster& cl) {
  if (cl.barrier_count < cl.threads) return;
  ++cl.barrier_phase;
  cl.barrier_count = cl.exited;
  cl.barrier_epoch = g_emu->next_epoch();
  cl.tc_done = cl.tc_phase;
  cl.tc_phase = TcTop{};
  cl.vc_done = std::move(cl.vc_phase);
  cl.vc_phase = Clock{};
  cl.xc_done = std::move(cl.xc_phase);
  cl.xc_phase = Clock{};
  cl.unf_done.swap(cl.unf_phase);
  cl.unf_phase.clear();
  wake_all(cl.barrier_waiters);
}

// barrier.cluster.{arrive,wait}.aligned: every thread of the warp executes it, convergently. A lane
// that ran apart from the others (spun, see Fiber::spun) breaks it, and so does a warp whose lanes
// reach it, one having waited on asynchronous progress since the warp's last convergence point
// (left an mbarrier's spin loop on its own) and another not: they took different paths, and
// nothing (a warp_sync) brought them back together.
void check_aligned_cluster(Fiber* f, Cluster& cl, int kind, uint64_t phase, const char* what) {
  check_converged({f}, what);
  Cluster::AlignedVisit& v = cl.aligned[{f->cta->rank, f->warp, kind}];
  if (v.phase != phase) {
    v.phase = phase;
    v.first = f;
    v.waited = f->async_wait;
    return;
  }
  if (v.waited == f->async_wait) return;
  const Fiber* waited = v.waited ? v.first : f;
  const Fiber* other = v.waited ? f : v.first;
  fail_at(f, "lanes not converged at a .sync.aligned instruction",
          std::string(what) + " is reached by lane " + std::to_string(waited->lane) + " of warp " +
              std::to_string(f->warp) + " after waiting on " + waited->async_wait_what +
              " since the warp's last convergence point, and by lane " + std::to_string(other->lane) +
              ", which did not wait there: the lanes took different paths and nothing reconverged them, so they "
              "do not execute this .aligned instruction together: a warp_sync() (bar.warp.sync) is needed before it");
}

void cluster_arrive_impl(Fiber* f, const char* what) {
  Cluster& cl = *emu().cluster;
  if (f->cluster_arrived_phase >= 0)
    fail("cluster barrier", std::string(what) + " twice without barrier.cluster.wait in between");
  check_aligned_cluster(f, cl, 0, cl.barrier_phase, what);
  track_writes(f);
  tick(f);
  f->cluster_arrived_phase = static_cast<int64_t>(cl.barrier_phase);
  cl.tc_phase.add(f, f->tc_pub);
  cl.vc_phase.join(f->vc);
  cl.xc_phase.join(f->xc);
  if (f->tc_own.e[0] || f->tc_own.e[1]) {
    TcUnfenced u = f->tc_own;
    for (int k = 0; k < 2; ++k) {
      u.sync[k] = f->loc;
      u.sync_what[k] = what;
    }
    cl.unf_phase.push_back(u);
  }
  ++cl.barrier_count;
  cluster_barrier_check(cl);
}

}  // namespace

void cluster_arrive(SourceLoc loc) {
  cluster_arrive_impl(enter(loc, "barrier.cluster.arrive"), "barrier.cluster.arrive.release.aligned");
}
void cluster_arrive_relaxed(SourceLoc loc) {
  cluster_arrive_impl(enter(loc, "barrier.cluster.arrive.relaxed"), "barrier.cluster.arrive.relaxed.aligned");
}

void cluster_wait(SourceLoc loc) {
  Fiber* f = enter(loc, "barrier.cluster.wait");
  Cluster& cl = *emu().cluster;
  if (f->cluster_arrived_phase < 0)
    fail("cluster barrier", "barrier.cluster.wait without a barrier.cluster.arrive before it");
  check_aligned_cluster(f, cl, 1, static_cast<uint64_t>(f->cluster_arrived_phase),
                        "barrier.cluster.wait.acquire.aligned");
  Wait w;
  w.kind = WaitKind::cluster;
  w.what = "barrier.cluster.wait";
  w.obj = &cl;
  while (static_cast<int64_t>(cl.barrier_phase) <= f->cluster_arrived_phase) {
    cl.barrier_waiters.push_back(f);
    block(w);
  }
  f->cluster_arrived_phase = -1;
  learn(f, cl.tc_done.without(f));
  f->vc.join(cl.vc_done);
  f->xc.join(cl.xc_done);
  tick(f);
  // The unfenced tcgen05 work the other arrivers carried.
  for (const TcUnfenced& u : cl.unf_done)
    for (int k = 0; k < 2; ++k)
      if (u.who[k] != f && u.e[k] > f->tc_unf.e[k]) {
        f->tc_unf.e[k] = u.e[k];
        f->tc_unf.who[k] = u.who[k];
        f->tc_unf.op[k] = u.op[k];
        f->tc_unf.op_name[k] = u.op_name[k];
        f->tc_unf.sync[k] = u.sync[k];
        f->tc_unf.sync_what[k] = u.sync_what[k];
      }
}

void cluster_sync(SourceLoc loc) {
  cluster_arrive(loc);
  cluster_wait(loc);
}

uint32_t mapa_shared(uint32_t addr, uint32_t cta_rank) {
  (void)self();
  cta_of_rank(cta_rank);
  return (cta_rank << 24) | (addr & 0xFFFFFFu);
}

// ---------------------------------------------------------------------------------------------
// Exits.
// ---------------------------------------------------------------------------------------------
void check_thread_exit(Fiber* f) {
  for (const auto& s : f->acc)
    fail("wgmma accumulators not waited for",
         "the thread exits while " + std::to_string(s->count) + " accumulator registers of a wgmma" +
             (s->pending ? " still in flight" : "") +
             " were never handed back by wgmma.wait_group: a wait that covers the last wgmma group is missing");
  WarpgroupState& wg = f->cta->wg[f->tid / 128];
  if (!wg.uncommitted.empty())
    fail("wgmma not committed", "the thread exits with wgmma operations never committed (wgmma.commit_group)");
  if (!f->lds.empty())
    fail("tcgen05.ld not waited for", "the thread exits with " + std::to_string(f->lds.size()) +
                                          " tcgen05.ld whose registers were never completed by tcgen05.wait::ld");
  if (!f->open_stores.empty())
    fail("TMA store not committed",
         "the thread exits with TMA stores never committed to a bulk group (cp.async.bulk.commit_group)");
  if (f->cluster_arrived_phase >= 0)
    fail("cluster barrier", "the thread exits between barrier.cluster.arrive and barrier.cluster.wait");
}

namespace {

void thread_exit(Fiber* f) {
  f->tracked = false;  // the kernel body just returned
  f->op = "exit";
  track_writes(f);
  if (f->gfail) raise_global_failure(f);
  check_thread_exit(f);
  Cta& c = *f->cta;
  Cluster& cl = *c.cluster;
  ++c.exited;
  // __syncthreads counts exited threads as arrived.
  NamedBar& b0 = c.bars[0];
  if (b0.arrived > 0 && b0.arrived + c.exited >= c.nthreads) release_cta_barrier(b0, "__syncthreads");
  ++cl.exited;
  ++cl.barrier_count;
  cluster_barrier_check(cl);
  if (c.exited == c.nthreads) {
    check_cta_exit(c);
    c.done = true;
  }
}

}  // namespace

void check_cta_exit(Cta& c) {
  for (const Fiber* f : c.threads)
    if (f->store_groups > 0)
      fail("TMA store still reading shared memory at exit",
           "the CTA exits while " + std::to_string(f->store_groups) + " bulk group(s) of TMA stores issued by " +
               thread_name(f) +
               " may still read its shared memory: cp.async.bulk.wait_group.read 0 is missing before the exit");
  for (size_t w = 0; w < c.inflight.size(); ++w)
    if (c.inflight[w])
      fail("CTA exiting with peer traffic in flight",
           "the CTA exits while a TMA load (its own, or a peer's multicast) still writes its shared memory at " +
               hex(c.addr_of(4 * w)) + ": the CTA must wait for the loads that target it before it exits");
  if (c.tmem) {
    for (int col = 0; col < Tmem::kCols; ++col)
      if (c.tmem->pending[col])
        fail("CTA exiting with peer traffic in flight",
             "the CTA exits while a tcgen05.mma (its own, or the pair leader's) still writes its TMEM column " +
                 std::to_string(col));
    for (const Tmem::Alloc& a : c.tmem->allocs)
      fail("TMEM not deallocated", "the CTA exits with " + std::to_string(a.ncols) + " TMEM columns at column " +
                                       std::to_string(a.col) +
                                       " still allocated: the allocating warp must run "
                                       "tcgen05.dealloc before the CTA exits");
  }
}

// ---------------------------------------------------------------------------------------------
// The deadlock report.
// ---------------------------------------------------------------------------------------------
namespace {

// "1 of 4 arrivals came", and the tx bytes of the phase when it has any.
std::string arrivals_state(const MBarrier& b) {
  std::string s =
      std::to_string(static_cast<int64_t>(b.count) - b.pending) + " of " + std::to_string(b.count) + " arrivals came";
  if (b.expected || b.delivered || b.tx)
    s += ", " + std::to_string(b.delivered) + " of the " + std::to_string(b.expected) + " tx bytes announced arrived";
  int inflight = 0;
  for (const auto& [ph, n] : b.inflight) inflight += n;
  if (inflight) s += ", " + std::to_string(inflight) + " TMA load(s) crediting it in flight";
  return s;
}

std::string describe_wait(const Fiber* f) {
  const Wait& w = f->wait;
  Cta* c = w.cta ? w.cta : f->cta;
  switch (w.kind) {
    case WaitKind::cta_barrier: {
      const auto* b = static_cast<const NamedBar*>(w.obj);
      if (w.id == 0 && b->expected < 0)
        return std::string(w.what) + " (barrier 0): " + std::to_string(b->arrived) + " of " +
               std::to_string(c->nthreads - c->exited) + " live threads arrived";
      return std::string(w.what) + " " + std::to_string(w.id) + ": " + std::to_string(b->arrived) + " of " +
             (b->expected < 0 ? std::to_string(c->nthreads) : std::to_string(b->expected)) + " threads arrived";
    }
    case WaitKind::mbarrier: {
      const auto* b = static_cast<const MBarrier*>(w.obj);
      return std::string(w.what) + " on mbarrier " + barrier_name(*c, w.id) + (c != f->cta ? " of " + c->name() : "") +
             ": waits for the phase of parity " + std::to_string(w.a) + "; the barrier has completed " +
             std::to_string(b->phase) + " phase(s) (current phase parity " + std::to_string(b->phase & 1) + "), " +
             arrivals_state(*b);
    }
    case WaitKind::cluster: {
      const auto* cl = static_cast<const Cluster*>(w.obj);
      return std::string(w.what) + ": " + std::to_string(cl->barrier_count - cl->exited) + " of " +
             std::to_string(cl->threads - cl->exited) + " live threads of the cluster arrived";
    }
    case WaitKind::collective: {
      const auto* co = static_cast<const Collective*>(w.obj);
      if (co->executing)
        return std::string(w.what) + " (.sync.aligned): every thread arrived; the instruction waits (below)";
      return std::string(w.what) + " (.sync.aligned): " + std::to_string(co->arrived.size()) + " of " +
             std::to_string(co->members) + " threads arrived";
    }
    case WaitKind::registers: {
      std::string held;
      for (size_t g = 0; g < c->wg_regs.size(); ++g)
        held += (g ? ", " : "") + std::string("warpgroup ") + std::to_string(g) + " " + std::to_string(c->wg_regs[g]);
      const int64_t total = int64_t{c->nthreads} * g_emu->regs_per_thread;
      return std::string(w.what) + " " + std::to_string(w.a) + " (warpgroup " + std::to_string(w.id) + "): waits for " +
             std::to_string(w.b) + " registers (128 threads x (" + std::to_string(w.a) + " - " +
             std::to_string(c->wg_regs[w.id]) + ")), the CTA's pool has " + std::to_string(c->regs_free) +
             " free; the launch gave its " + std::to_string(c->nthreads) + " threads " +
             std::to_string(g_emu->regs_per_thread) + " registers each (" + std::to_string(total) +
             "), held now per thread: " + held;
    }
    case WaitKind::wgmma_wait:
      return std::string(w.what) + " " + std::to_string(w.a) + ": " + std::to_string(w.b) + " group(s) pending";
    case WaitKind::bulk_wait:
      return std::string(w.what) + " " + std::to_string(w.a) + ": " + std::to_string(w.b) + " group(s) pending";
    case WaitKind::tmem_alloc:
      return std::string(w.what) + " of " + std::to_string(w.a) + " columns: no free range (" + std::to_string(w.b) +
             " of 512 columns allocated)";
    case WaitKind::pair:
      return std::string(w.what) + ": waits for " + c->name() +
             ", the pair's other CTA, to execute it too (one warp of each CTA of the pair executes the pair's "
             "tcgen05.alloc, dealloc and relinquish_alloc_permit, together)";
    case WaitKind::none: break;
  }
  return "running";
}

// A diagnosis of the deadlock report: the pattern recognised, where (a waiting thread's wait), and
// how specific it is (the report's first line is the most specific one).
struct Diagnosis {
  Diagnosis(int r, const SourceLoc& l, std::string t, std::string f = {})
      : rank(r), loc(l), text(std::move(t)), first(std::move(f)) {}
  int rank = 0;  // lower: more specific
  SourceLoc loc{};
  std::string text;
  std::string first;  // as the first line says it, after the location (empty: text)
};

// Whether every thread of `threads` that is not done is blocked on an mbarrier it has waited on
// before: it walks the barrier's phases and is behind, so a collective it has not reached waits for
// it, and that wait is the cause, not convergence. (A thread whose first wait on a barrier blocks
// may as well have skipped the collective and gone on.)
bool behind_on_mbarriers(const std::vector<const Fiber*>& threads) {
  bool any = false;
  for (const Fiber* f : threads) {
    if (f->state == Fiber::State::done) continue;
    if (f->wait.kind != WaitKind::mbarrier) return false;
    const auto* b = static_cast<const MBarrier*>(f->wait.obj);
    const auto it = f->waits.find(b->slot);
    if (it == f->waits.end() || !it->second.has_prev) return false;
    any = true;
  }
  return any;
}

// Whether a waiter on `tag`, in `role`, waits for a free slot (a producer's wait: parity 1 first).
bool waits_for_free_slot(const Fiber* f) {
  const char* role = f->wait.tag.role ? f->wait.tag.role : "";
  const char* tag = f->wait.tag.barrier ? f->wait.tag.barrier : "";
  return std::strstr(role, "producer") || std::strstr(tag, "empty");
}

// The blocked mbarrier waits that no arrival can complete, for a deadlock no other pattern explains.
// Two kinds: a wait in step with the thread's previous wait on the barrier (the phase after it)
// whose arrival never comes, and a thread's first wait on a fresh barrier, for parity 0 (the
// barrier's first phase, which may be the wrong one to wait for). Of the first kind, a thread
// whose own output (the barriers it fed) nobody consumed is left out: the threads that should
// consume it are stuck elsewhere, and its wait is their consequence. The most advanced such
// thread (most mbarrier waits behind it) is named; without one, every first wait of the second
// kind, one per barrier, since which of them is wrong the emulator cannot tell.
void diagnose_missing_arrival(Emu& e, std::vector<Diagnosis>& out) {
  const Fiber* in_step = nullptr;
  std::vector<const Fiber*> first;  // one per barrier
  for (auto& cp : e.cluster->ctas)
    for (const Fiber* f : cp->threads) {
      if (f->state == Fiber::State::done || f->wait.kind != WaitKind::mbarrier) continue;
      const auto* b = static_cast<const MBarrier*>(f->wait.obj);
      if (b->pending != static_cast<int64_t>(b->count) || b->tx != 0) continue;
      const auto it = f->waits.find(b->slot);
      if (it == f->waits.end()) continue;
      const WaitMemo& m = it->second;
      if (m.has_prev) {
        if (m.target != m.prev_target + 1) continue;  // out of step: the skips say so
        bool consumed = f->fed.empty();
        for (const auto& [c, off] : f->fed) {
          const auto bi = c->mbar.find(off);
          if (bi != c->mbar.end() && bi->second.waited) consumed = true;
        }
        if (!consumed) continue;
        if (!in_step || f->waits_done > in_step->waits_done) in_step = f;
      } else if (b->phase == 0 && f->wait.a == 0) {
        const bool seen = std::any_of(first.begin(), first.end(), [&](const Fiber* g) { return g->wait.obj == b; });
        if (!seen) first.push_back(f);
      }
    }
  const auto name = [](const Fiber* f) {
    Cta& c = *(f->wait.cta ? f->wait.cta : f->cta);
    return "mbarrier " + barrier_name(c, f->wait.id) + (&c != f->cta ? " of " + c.name() : "");
  };
  if (in_step) {
    const Fiber* f = in_step;
    const auto* b = static_cast<const MBarrier*>(f->wait.obj);
    const WaitMemo& m = f->waits.at(b->slot);
    std::string d = thread_name(f) + " waits on " + name(f) + " for parity " + std::to_string(f->wait.a) + " (" +
                    phase_name(m.target) + "), in step with its previous wait on it (at " + where(m.prev_loc) +
                    ", for " + phase_name(m.prev_target) +
                    (m.prev_target < 0 ? ", which passed at once on the fresh barrier" : "") + "); but 0 of its " +
                    std::to_string(b->count) + " arrivals for that phase came, and nothing left in flight can arrive: ";
    if (b->phase > 0) {
      bool commit = false;
      for (const Contrib& k : b->contrib_done)
        if (std::strstr(k.what, "commit")) commit = true;
      d += "phase " + std::to_string(b->phase - 1) + " was completed by " + b->last_arrival + ", and phase " +
           std::to_string(b->phase) + " got no arrival: " + (commit ? "the tcgen05.commit" : "the arrival") +
           " that completes its phases never comes this time";
    } else {
      d += "no arrival has ever reached it, and the arrive, tcgen05.commit or arrive.expect_tx that should complete "
           "its phases never comes (missing, or made on another barrier)";
    }
    out.push_back({8, f->wait.loc, d});
    return;
  }
  if (first.empty()) return;
  // Free-slot waits first: their initial phase is the likelier one to be wrong.
  std::stable_partition(first.begin(), first.end(), waits_for_free_slot);
  std::string d;
  for (size_t i = 0; i < first.size(); ++i) {
    const Fiber* f = first[i];
    d += (i == 0                  ? ""
          : i + 1 == first.size() ? ", and "
                                  : ", ") +
         thread_name(f) + " waits on " + name(f) + " for parity 0 (phase 0)" +
         (i ? " at " + where(f->wait.loc) : std::string());
  }
  const auto* b0 = static_cast<const MBarrier*>(first.front()->wait.obj);
  d += first.size() == 1
           ? ", its first wait on it: the barrier is fresh (no phase completed, 0 of its " + std::to_string(b0->count) +
                 " arrivals came, nothing left in flight arrives), and parity 0 waits for its first phase to "
                 "complete: a wrong initial phase? "
           : ", each its first wait, on a fresh barrier that no arrival has reached: if each waits for the "
             "others' work, one of them must wait for parity 1 first, which returns at once on a fresh barrier: a "
             "wrong initial phase? ";
  d += waits_for_free_slot(first.front())
           ? "A producer waiting for a free slot waits for parity phase ^ 1, which returns at once on a fresh barrier "
             "(PipelineState::empty_parity). "
           : "A first wait for a resource nothing has used yet (a free slot, a free accumulator) is for parity 1. ";
  d += "Otherwise the arrive, tcgen05.commit or arrive.expect_tx that completes a first phase never comes";
  out.push_back({8, first.front()->wait.loc, d});
}

std::string deadlock_report(Emu& e) {
  std::string body;
  int lines = 0;
  int omitted = 0;
  std::vector<Diagnosis> diagnosis;
  for (auto& cp : e.cluster->ctas) {
    Cta& c = *cp;
    for (int warp = 0; warp * 32 < c.nthreads; ++warp) {
      std::vector<std::pair<std::string, std::vector<int>>> groups;
      for (int t = warp * 32; t < std::min(c.nthreads, warp * 32 + 32); ++t) {
        Fiber* f = c.threads[t];
        if (f->state == Fiber::State::done) continue;
        const char* role = f->wait.tag.role ? f->wait.tag.role : f->role;
        std::string what =
            (role ? "role " + std::string(role) + ", " : "") + "at " + where(f->wait.loc) + ": " + describe_wait(f);
        auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == what; });
        if (it == groups.end()) groups.push_back({what, {f->lane}});
        else it->second.push_back(f->lane);
      }
      for (auto& [what, lanes] : groups) {
        // A .sync.aligned instruction that only part of the warp reached, unless the other lanes are
        // behind, on an mbarrier (behind_on_mbarriers).
        const Fiber* f = c.threads[warp * 32 + lanes.front()];
        if (f->wait.kind == WaitKind::collective && groups.size() > 1 &&
            !static_cast<const Collective*>(f->wait.obj)->executing) {
          std::vector<const Fiber*> others;
          for (int t = warp * 32; t < std::min(c.nthreads, warp * 32 + 32); ++t)
            if (std::find(lanes.begin(), lanes.end(), t - warp * 32) == lanes.end()) others.push_back(c.threads[t]);
          if (!behind_on_mbarriers(others))
            diagnosis.push_back({7, f->wait.loc,
                                 std::string(f->wait.what) + " in " + c.name() + " warp " + std::to_string(warp) +
                                     " was reached by " + lanes_string(lanes) +
                                     " only, while the other lanes wait elsewhere: "
                                     "a .sync.aligned instruction must be executed by every thread of the warp (or "
                                     "warpgroup), convergently"});
        }
        if (lines >= 48) {
          ++omitted;
          continue;
        }
        body += "\n  " + c.name() + " warp " + std::to_string(warp) + " " + lanes_string(lanes) + ", " + what;
        ++lines;
      }
    }
    for (auto& [off, b] : c.mbar) {
      if (!b.init || b.waiters.empty()) continue;
      const Fiber* waiter = b.waiters.front();
      int inflight = 0;
      for (const auto& [ph, n] : b.inflight) inflight += n;
      if (b.tx > 0 && inflight == 0)
        diagnosis.push_back(
            {5, waiter->wait.loc,
             "mbarrier " + barrier_name(c, off) + " of " + c.name() + " still expects " + std::to_string(b.tx) +
                 " tx bytes and no TMA load crediting it is in flight: "
                 "expect_tx announced more bytes (" +
                 std::to_string(b.expected) + ") than the loads deliver (" + std::to_string(b.delivered) +
                 " so far), and " + thread_name(waiter) + " waits on it"});
      if (b.pending > 0 && b.pending < static_cast<int64_t>(b.count))
        diagnosis.push_back({4, waiter->wait.loc,
                             "mbarrier " + barrier_name(c, off) + " of " + c.name() + " got " +
                                 std::to_string(b.count - b.pending) + " of its " + std::to_string(b.count) +
                                 " arrivals this phase, and " + thread_name(waiter) +
                                 " waits on it: the init count or the arriving threads are wrong"});
    }
  }
  if (omitted) body += "\n  ... and " + std::to_string(omitted) + " more group(s)";
  // setmaxnreg.inc waiting for registers that no warpgroup will return.
  for (auto& cp : e.cluster->ctas)
    for (const Fiber* f : cp->reg_waiters) {
      const int64_t total = int64_t{cp->nthreads} * e.regs_per_thread;
      diagnosis.push_back({1, f->wait.loc,
                           "setmaxnreg.inc " + std::to_string(f->wait.a) + " in " + cp->name() + " warpgroup " +
                               std::to_string(f->wait.id) + " waits for " + std::to_string(f->wait.b) +
                               " registers of the CTA's pool, which has " + std::to_string(cp->regs_free) +
                               ", and no warpgroup will return any: a warpgroup that should lower its count has not "
                               "run setmaxnreg.dec, or the counts the warpgroups ask for add up to more than the " +
                               std::to_string(total) + " registers the launch gave the CTA (" +
                               std::to_string(cp->nthreads) + " threads x " + std::to_string(e.regs_per_thread) + ")"});
    }
  // A warpgroup instruction (wgmma, setmaxnreg) that only some of the warpgroup's threads reached,
  // unless the others are behind, on an mbarrier.
  for (auto& cp : e.cluster->ctas)
    for (size_t g = 0; g < cp->wg.size(); ++g) {
      const Collective& co = cp->wg[g].coll;
      if (co.arrived.empty() || static_cast<int>(co.arrived.size()) >= co.members) continue;
      std::vector<const Fiber*> others;
      for (int t = static_cast<int>(g) * 128; t < std::min(cp->nthreads, static_cast<int>(g) * 128 + 128); ++t)
        if (std::find(co.arrived.begin(), co.arrived.end(), cp->threads[t]) == co.arrived.end())
          others.push_back(cp->threads[t]);
      if (behind_on_mbarriers(others)) continue;
      std::set<int> warps;
      for (const Fiber* m : co.arrived) warps.insert(m->warp);
      std::vector<int> ws(warps.begin(), warps.end());
      std::string l = lanes_string(ws);  // "lanes 0-2"
      l = "warp" + l.substr(4);
      diagnosis.push_back({7, co.loc,
                           std::string(co.name) + " in " + cp->name() + " warpgroup " + std::to_string(g) +
                               " was reached by " + l + " only (" + std::to_string(co.arrived.size()) + " of its " +
                               std::to_string(co.members) + " threads, first at " + where(co.loc) +
                               "): a warpgroup's .sync.aligned instruction must be executed by all four of its "
                               "warps"});
    }
  // Waits out of step with the thread's own earlier waits: the parity of the previous wait again
  // (a ring whose phase does not flip) first, then phases or ring positions skipped.
  std::string skipped;
  const Emu::Skip* first_skip = nullptr;
  for (const Emu::Skip& k : e.skips) {
    const std::string more = k.threads > 1 ? " (and " + std::to_string(k.threads - 1) + " more threads alike)" : "";
    if (k.repeat) {
      diagnosis.push_back({2, k.loc, k.who + " " + k.what + more, k.who + " " + k.primary + more});
      continue;
    }
    skipped += (skipped.empty() ? "" : "; ") + k.who + " " + k.what + more;
    if (!first_skip) first_skip = &k;
  }
  if (first_skip)
    diagnosis.push_back({3, first_skip->loc,
                         "threads waited for mbarrier phases out of step with their own earlier waits: " + skipped +
                             ". A pipeline position (stage, phase) that no longer follows the barriers' phases: is "
                             "a PipelineState re-initialised (for each tile?), or advanced a different number of "
                             "times by the two sides?"});
  if (std::none_of(diagnosis.begin(), diagnosis.end(), [](const Diagnosis& d) { return d.rank <= 5; }))
    diagnose_missing_arrival(e, diagnosis);
  std::stable_sort(diagnosis.begin(), diagnosis.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.rank < b.rank; });
  // The first line: the most specific diagnosis, at its thread's wait.
  std::string r = "deadlock: ";
  if (!diagnosis.empty())
    r += (known(diagnosis.front().loc) ? where(diagnosis.front().loc) + ": " : std::string()) +
         (diagnosis.front().first.empty() ? diagnosis.front().text : diagnosis.front().first);
  else r += "every live thread waits and no asynchronous operation is in flight to wake one";
  r += "\n  every live thread waits and no asynchronous operation is in flight to wake one; the threads, grouped by "
       "CTA, warp and what they wait on:" +
       body;
  for (size_t i = 1; i < diagnosis.size(); ++i) r += "\n  diagnosis: " + diagnosis[i].text;
  return r;
}

}  // namespace

// "'full' stage 1 (shared 0x10808)": the tag a wait gave the barrier, and its index in the array of
// barriers waited on under the same tag (from the lowest such offset, in steps of the smallest
// distance between them, 8 bytes when only one was seen: a stage that was never waited on yet
// counts too, so the first stage is the only one that must have been).
std::string barrier_name(Cta& c, uint32_t off) {
  for (const auto& [tag, offs] : c.tag_offsets)
    if (offs.count(off)) {
      uint32_t stride = 0;
      for (auto it = offs.begin(); std::next(it) != offs.end(); ++it) {
        const uint32_t d = *std::next(it) - *it;
        stride = stride ? std::min(stride, d) : d;
      }
      if (stride == 0) stride = 8;
      const uint32_t stage = (off - *offs.begin()) / stride;
      return "'" + tag + "' stage " + std::to_string(stage) + " (shared " + hex(c.addr_of(off)) + ")";
    }
  return "at shared " + hex(c.addr_of(off));
}

// ---------------------------------------------------------------------------------------------
// The launch.
// ---------------------------------------------------------------------------------------------
namespace {

// Runs the fibers of the current cluster to the end, or to the first failure.
void run_cluster(Emu& e) {
  const int period = g_options.async_period;  // 0: only when every thread waits
  while (true) {
    if (!e.failure.empty()) return;
    bool live = false;
    for (auto& c : e.cluster->ctas)
      if (!c->done) live = true;
    if (!live) {
      // Every thread has exited: what is still in flight completes now (and finds out if it
      // targets a CTA that is gone).
      if (e.active.empty()) break;
      complete_async(e, e.rand() % e.active.size());
      continue;
    }
    // Asynchronous work completes late: on average after `period` rounds of every runnable fiber.
    if (period > 0 && !e.active.empty() &&
        e.rand() % (static_cast<uint64_t>(period) * std::max<size_t>(1, e.runnable.size())) == 0) {
      complete_async(e, e.rand() % e.active.size());
      continue;
    }
    if (e.runnable.empty()) {
      if (!e.active.empty()) {
        complete_async(e, e.rand() % e.active.size());
        continue;
      }
      bool any_blocked = false;
      for (auto& c : e.cluster->ctas)
        for (Fiber* f : c->threads)
          if (f->state == Fiber::State::blocked) any_blocked = true;
      if (!any_blocked) break;  // every fiber done (CTA bookkeeping follows)
      throw Failure{deadlock_report(e)};
    }
    const size_t i = e.rand() % e.runnable.size();
    Fiber* f = e.runnable[i];
    e.runnable[i] = e.runnable.back();
    e.runnable.pop_back();
    if (f->state != Fiber::State::runnable) continue;
    f->state = Fiber::State::running;
    f->started = true;
    e.current = f;
    ++e.stats.switches;
    swapcontext(&e.sched, &f->ctx);
    e.current = nullptr;
  }
}

// Tears down the fibers of a failed cluster: each one that started unwinds (Abort).
void abort_cluster(Emu& e) {
  e.aborting = true;
  for (Queue* q : e.active) {
    q->listed = false;
    if (q->transient) delete q;  // a TMA load in flight; the other queues belong to fibers and CTAs
  }
  e.active.clear();
  for (auto& c : e.cluster->ctas)
    for (Fiber* f : c->threads)
      if (f->started && f->state != Fiber::State::done) {
        e.current = f;
        swapcontext(&e.sched, &f->ctx);
        e.current = nullptr;
      }
  e.aborting = false;
}

void watch_begin() {
  if (!g_watch.active) return;
  g_watch.snapshot.assign(g_watch.alloc, g_watch.alloc + g_watch.bytes);
  g_watch.result = g_watch.snapshot;
  g_watch.writer.assign(static_cast<size_t>(g_watch.rows * g_watch.cols), -1);
}

// After cluster `cluster_index`: what it wrote is moved aside and the allocation restored, so
// that the next cluster's writes show up as changes too.
void watch_cluster(int64_t cluster_index, const std::string& cluster_name) {
  if (!g_watch.active) return;
  OutputWatch& w = g_watch;
  const size_t d_begin = static_cast<size_t>(w.d - w.alloc);
  const size_t d_bytes = static_cast<size_t>(w.rows * w.cols) * w.elem;
  constexpr size_t kBlock = 4096;
  for (size_t blk = 0; blk < w.bytes; blk += kBlock) {
    const size_t len = std::min(kBlock, w.bytes - blk);
    if (std::memcmp(w.alloc + blk, w.snapshot.data() + blk, len) == 0) continue;
    for (size_t i = blk; i < blk + len; ++i) {
      if (w.alloc[i] == w.snapshot[i]) continue;
      if (i < d_begin || i >= d_begin + d_bytes) {
        const int64_t elems = (static_cast<int64_t>(i) - static_cast<int64_t>(d_begin)) / static_cast<int64_t>(w.elem);
        throw Failure{"write outside D: " + cluster_name + " wrote " +
                      (i < d_begin ? std::to_string(-elems) + " element(s) before D's start"
                                   : "past D's end, at element " + std::to_string(elems) + " of a D of " +
                                         std::to_string(w.rows * w.cols) + " elements") +
                      " (D is " + std::to_string(w.rows) + " x " + std::to_string(w.cols) +
                      "): a store not bounded by M and N (a ragged shape's last tiles: rows past M, or columns past "
                      "N, which run on into the next rows)"};
      }
      const size_t e = (i - d_begin) / w.elem;
      if (w.writer[e] >= 0 && w.writer[e] != cluster_index)
        throw Failure{"element of D written twice: element (" + std::to_string(e / w.cols) + ", " +
                      std::to_string(e % w.cols) + ") was written by cluster " + std::to_string(w.writer[e]) +
                      " and again by " + cluster_name +
                      ": two tiles overlap (a tile origin not scaled by the tile size, or taken from the wrong "
                      "index), or a store's columns past N ran on into the next row (a store not bounded by N)"};
      w.writer[e] = cluster_index;
      w.result[i] = w.alloc[i];
      w.alloc[i] = w.snapshot[i];
    }
  }
}

void watch_end() {
  if (!g_watch.active) return;
  std::memcpy(g_watch.alloc, g_watch.result.data(), g_watch.bytes);
}

struct SmemBuffer {
  uint8_t* p = nullptr;
  size_t size = 0;
};

}  // namespace

Status launch_grid(const LaunchConfig& cfg, void (*body)(void*), void* ctx) {
  if (g_emu) return Status::failure("emulator: a kernel launched another kernel (nested launches are not modelled)");
  const auto dims_ok = [](dim3 d) { return d.x >= 1 && d.y >= 1 && d.z >= 1; };
  if (!dims_ok(cfg.grid) || !dims_ok(cfg.block) || !dims_ok(cfg.cluster))
    return Status::failure("kernel launch: grid, block and cluster dimensions must be at least 1");
  const uint64_t threads = uint64_t{cfg.block.x} * cfg.block.y * cfg.block.z;
  if (threads > 1024)
    return Status::failure("kernel launch: " + std::to_string(threads) + " threads per block (at most 1024)");
  if (cfg.grid.y > 65535 || cfg.grid.z > 65535)
    return Status::failure("kernel launch: grid y and z are limited to 65535");
  if (cfg.grid.x % cfg.cluster.x || cfg.grid.y % cfg.cluster.y || cfg.grid.z % cfg.cluster.z)
    return Status::failure("kernel launch: the grid must be a multiple of the cluster dimensions");
  const uint64_t cluster_size = uint64_t{cfg.cluster.x} * cfg.cluster.y * cfg.cluster.z;
  if (cluster_size > 16) return Status::failure("kernel launch: at most 16 CTAs per cluster");
  if (cfg.smem_bytes > kMaxSmemPerCta)
    return Status::failure("shared-memory limit: the kernel needs " + std::to_string(cfg.smem_bytes) +
                           " bytes of shared memory per CTA, the device allows " + std::to_string(kMaxSmemPerCta));

  Emu e;
  e.cfg = cfg;
  e.sm_ctas = std::max(1, ctas_per_sm(static_cast<int>(threads), cfg.smem_bytes));
  e.regs_per_thread = regs_at_launch(static_cast<int>(threads), e.sm_ctas);
  e.body = body;
  e.body_ctx = ctx;
  e.rng_state = g_options.seed;
  e.stats.seed = g_options.seed;
  g_emu = &e;
  watch_begin();

  const size_t smem_size = std::max<size_t>(256, (cfg.smem_bytes + 255) / 256 * 256);
  std::vector<SmemBuffer> buffers;
  Status status;
  try {
    const dim3 nclusters(cfg.grid.x / cfg.cluster.x, cfg.grid.y / cfg.cluster.y, cfg.grid.z / cfg.cluster.z);
    // The clusters run one after another, in an order drawn from the seed: nothing orders the CTAs
    // of a grid on hardware, and a kernel that assumes an order (the last part of a split tile
    // finishing last) must not pass by the emulator's.
    const int64_t ncl = int64_t{nclusters.x} * nclusters.y * nclusters.z;
    std::vector<int64_t> order(static_cast<size_t>(ncl));
    for (int64_t i = 0; i < ncl; ++i) order[static_cast<size_t>(i)] = i;
    uint64_t shuffle = g_options.seed ^ 0x5DEECE66Dull;
    for (int64_t i = ncl - 1; i > 0; --i) {
      shuffle = shuffle * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(order[static_cast<size_t>(i)],
                order[static_cast<size_t>((shuffle >> 33) % static_cast<uint64_t>(i + 1))]);
    }
    global_launch_begin(e);
    for (const int64_t cluster_index : order) {
      {
        const uint32_t cx = static_cast<uint32_t>(cluster_index % nclusters.x);
        const uint32_t cy = static_cast<uint32_t>((cluster_index / nclusters.x) % nclusters.y);
        const uint32_t cz = static_cast<uint32_t>(cluster_index / (int64_t{nclusters.x} * nclusters.y));
        {
          Cluster cl;
          cl.dims = cfg.cluster;
          e.cluster = &cl;
          e.cluster_index = cluster_index;
          size_t fiber_i = 0;
          for (uint32_t z = 0; z < cfg.cluster.z; ++z)
            for (uint32_t y = 0; y < cfg.cluster.y; ++y)
              for (uint32_t x = 0; x < cfg.cluster.x; ++x) {
                auto c = std::make_unique<Cta>();
                c->cluster = &cl;
                c->rank = static_cast<int>(x + cfg.cluster.x * (y + cfg.cluster.y * z));
                c->idx = dim3(cx * cfg.cluster.x + x, cy * cfg.cluster.y + y, cz * cfg.cluster.z + z);
                c->gidx = static_cast<int>(c->idx.x + cfg.grid.x * (c->idx.y + cfg.grid.y * c->idx.z));
                c->nthreads = static_cast<int>(threads);
                {
                  // Where the hardware could place it: resident CTAs fill the SMs wave by wave, the
                  // CTAs of a cluster on different SMs.
                  const int64_t g = cluster_index * static_cast<int64_t>(cluster_size) + c->rank;
                  const int64_t sms = std::max(1, g_options.sm_count);
                  const int64_t per_wave = sms * e.sm_ctas;
                  c->wave = static_cast<int>(g / per_wave);
                  c->sm = static_cast<int>((g % per_wave) % sms);
                }
                const size_t ci = cl.ctas.size();
                if (ci == buffers.size()) {
                  SmemBuffer b;
                  b.size = smem_size;
                  b.p = static_cast<uint8_t*>(std::aligned_alloc(4096, smem_size));
                  buffers.push_back(b);
                }
                c->smem = buffers[ci].p;
                c->size = smem_size;
                std::memset(c->smem, kSmemPoison, smem_size);
                c->shadow.assign(c->smem, c->smem + smem_size);
                c->unfenced.assign(smem_size / 4, -1);
                c->writer.assign(smem_size / 4, -1);
                c->wepoch.assign(smem_size / 4, 0);
                c->writer_prev.assign(smem_size / 4, -1);
                c->wepoch_prev.assign(smem_size / 4, 0);
                c->read_since.assign(smem_size / 4, 0);
                c->prev_unread.assign(smem_size / 4, 0);
                c->inflight.assign(smem_size / 4, 0);
                c->inflight_box.assign(smem_size / 4, 0);
                c->swizzle.assign(smem_size / 4, 0);
                c->warp_coll.resize((threads + 31) / 32);
                c->warps.resize((threads + 31) / 32);
                c->wg.resize((threads + 127) / 128);
                c->wg_regs.assign(c->wg.size(), e.regs_per_thread);
                for (int t = 0; t < c->nthreads; ++t) {
                  Fiber* f = fiber_i < e.pool.size() ? e.pool[fiber_i].get() : new_fiber(e);
                  ++fiber_i;
                  char* stack = f->stack;
                  const size_t mapping = f->mapping;
                  *f = Fiber{};
                  f->stack = stack;
                  f->mapping = mapping;
                  f->cta = c.get();
                  f->tid = t;
                  f->slot = cluster_slot(*c, t);
                  f->tidx = dim3(t % cfg.block.x, (t / cfg.block.x) % cfg.block.y, t / (cfg.block.x * cfg.block.y));
                  f->warp = t / 32;
                  f->lane = t % 32;
                  start_fiber(e, f);
                  f->state = Fiber::State::runnable;
                  c->threads.push_back(f);
                  e.runnable.push_back(f);
                }
                cl.threads += c->nthreads;
                cl.ctas.push_back(std::move(c));
              }
          // CTAs in rank order, as cta_of_rank indexes them.
          std::sort(cl.ctas.begin(), cl.ctas.end(), [](const auto& a, const auto& b) { return a->rank < b->rank; });
          cl.next_slot = static_cast<size_t>(cl.threads);  // mbarrier slots follow the threads'
          e.readers.clear();
          e.skips.clear();
          e.stats.threads += static_cast<uint64_t>(cl.threads);
          ++e.stats.clusters;
          try {
            run_cluster(e);
          } catch (const Failure& x) {
            if (e.failure.empty()) e.failure = x.message;
          }
          if (!e.failure.empty()) {
            abort_cluster(e);
            e.runnable.clear();
            throw Failure{e.failure};
          }
          // Queues left by fibers of this cluster are empty now; transient ones were freed.
          e.runnable.clear();
          e.active.clear();
          watch_cluster(
              cluster_index,
              cl.ctas.front()->name() + (cl.ctas.size() > 1 ? " (cluster " + std::to_string(cluster_index) + ")" : ""));
          e.cluster = nullptr;
        }
      }
    }
  } catch (const Failure& x) {
    status = Status::failure("emulator: " + x.message + "\n  replay: --emu-seed " + std::to_string(g_options.seed));
  }
  const std::string global = global_launch_end(e, status.ok());
  if (status.ok() && !global.empty())
    status = Status::failure("emulator: " + global + "\n  replay: --emu-seed " + std::to_string(g_options.seed));
  watch_end();
  for (SmemBuffer& b : buffers) std::free(b.p);
  free_pool(e);
  g_last = e.stats;
  g_emu = nullptr;
  return status;
}

}  // namespace gemm::emu

// The wrappers are declared in namespace gemm (common/*.cuh); the definitions above are in
// gemm::emu. Forward.
namespace gemm {
uint32_t smem_addr(const void* p) { return emu::smem_addr(p); }
void* dynamic_smem_base(size_t alignment, size_t bytes) { return emu::dynamic_smem_base(alignment, bytes); }
void named_barrier_sync(uint32_t id, uint32_t num_threads, SourceLoc loc) {
  emu::named_barrier_sync(id, num_threads, loc);
}
bool elect_one_sync(SourceLoc loc) { return emu::elect_one_sync(loc); }
void warp_sync(SourceLoc loc) { emu::warp_sync(loc); }
uint32_t shfl_broadcast(uint32_t value, int src_lane, SourceLoc loc) {
  return emu::shfl_broadcast(value, src_lane, loc);
}
uint32_t cluster_ctarank() { return emu::cluster_ctarank(); }
uint32_t cluster_nctarank() { return emu::cluster_nctarank(); }
uint32_t cluster_id_x() { return emu::cluster_id_x(); }
uint32_t cluster_count_x() { return emu::cluster_count_x(); }
void cluster_arrive(SourceLoc loc) { emu::cluster_arrive(loc); }
void cluster_arrive_relaxed(SourceLoc loc) { emu::cluster_arrive_relaxed(loc); }
void cluster_wait(SourceLoc loc) { emu::cluster_wait(loc); }
void cluster_sync(SourceLoc loc) { emu::cluster_sync(loc); }
uint32_t mapa_shared(uint32_t addr, uint32_t cta_rank) { return emu::mapa_shared(addr, cta_rank); }
}  // namespace gemm
