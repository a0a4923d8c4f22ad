// Global memory between CTAs: the scratch through which CTAs of a grid hand each other data
// (common/scratch.h: step 11's partial sums and tickets), and what orders it (common/
// global_memory.cuh), as the PTX memory consistency model defines it at CTA granularity: a CTA
// sees a word another CTA wrote only through a release that CTA performed after the write (a
// fence.acq_rel.gpu, st.release, red.release) and an acquire of its own that synchronises with it
// (a fence.acq_rel.gpu after an atomic that read the signal, an ld.acquire), the release carried by
// the signal's location (a relaxed atomic after the release fence; atomics continue the release
// sequence, a plain store ends it). A read of a word that such a pair does not make visible (it could
// return a stale value on hardware) is reported, and so is a read of scratch data that no thread
// has written in the launch (its contents are unspecified at a launch). Each launch starts with
// every earlier launch's writes visible (stream order). Within a CTA the model does not order
// global memory: that is its barriers' business.
//
// How. Scratch is allocated here (page-aligned, whole pages). While a launch runs its pages are
// protected (no access): a thread's plain load or store faults, and the handler decides. (Data, whose
// contents are unspecified at a launch, is filled with poison first, so that every write changes it.) It opens
// the page to the thread (read and write, no more faults) when every word on it is one the thread
// may read (a store may also open a page whose other words no thread has written yet: a thread
// filling its own part); else it checks the word a load reads (and notes a failure to raise at the
// thread's next emulated instruction), or lets a store execute alone (single-stepped with the trap
// flag) and attributes what it changed. A thread's open pages close when it stops running or
// synchronises (track_writes): what changed on them since it opened them is its writes. Clusters
// run one after another, so a page is never open to two threads. Linux on x86-64 only (the fault's
// access kind and the trap flag); elsewhere scratch is plain memory and nothing is checked.
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "emu/core.h"

namespace gemm::emu {

namespace {

constexpr size_t kPage = 4096;
constexpr uint64_t kNone = ~uint64_t{0};
constexpr int kMaxRegions = 64;
constexpr uint32_t kPoison = 0x7FBADBADu;  // fp32 NaN
constexpr uint32_t kMaxRun = 64;           // pages opened at one fault, each way

#if defined(__x86_64__) && defined(__linux__)
constexpr bool kWatch = true;
#else
constexpr bool kWatch = false;
#endif

// What a thread's read of a word broke (Fiber::gfail).
enum FailKind { kOk = 0, kUninitialised = 1, kUnreleased = 2, kUnacquired = 3 };

struct Release {
  int cta = 0, tid = 0;
  uint64_t epoch = 0;
  SourceLoc loc{};
  const char* op = "";
};

struct Region {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  bool defined = false;               // contents defined at a launch (counters), else unspecified (data)
  std::atomic<void*> owner{nullptr};  // the launch (LaunchState) that armed it
  // The launch's view, per 4-byte word.
  std::vector<uint32_t> shadow;    // the contents as last attributed
  std::vector<uint32_t> at_start;  // a defined region's contents when the launch started
  std::vector<uint8_t> written;    // written in this launch
  std::vector<uint8_t> strong;     // ... last by an atomic or release store
  std::vector<int32_t> writer_cta, writer_tid;
  std::vector<uint64_t> wepoch;    // the writer's epoch: ordered after its write is vc[writer] >= wepoch
  std::vector<uint64_t> released;  // epoch of the release of its CTA that covers it (kNone: none)
  std::vector<int32_t> release;    // ... its index in LaunchState::releases
  std::vector<SourceLoc> wloc;     // the writer's last emulated instruction before the write
  std::vector<const char*> wop;
  std::vector<uint8_t> wfound;  // the write was found at wloc (it came before), else it came after
  std::vector<uint8_t> open;    // per page: open to the running thread
  // Per page, to decide whether it may be opened without looking at every word: its words written
  // in this launch, the one CTA that wrote them (-1 none, -2 several), how many of them no release
  // covers yet, and the latest release that covers one.
  std::vector<uint16_t> page_written;
  std::vector<int32_t> page_writer;
  std::vector<uint16_t> page_unreleased;
  std::vector<uint64_t> page_released;
  std::unordered_map<uint32_t, GClock> msg;  // per word: the releases its release sequence carries
  size_t words() const { return bytes / 4; }
  uint32_t* mem() const { return reinterpret_cast<uint32_t*>(base); }
};

std::atomic<Region*> g_regions[kMaxRegions];
std::mutex g_regions_mutex;

struct Step {  // a single-stepped access
  bool active = false;
  int region = 0;
  uint32_t pages[4] = {};
  int npages = 0;
  Fiber* f = nullptr;
  bool write = false;
};

struct LaunchState {
  Emu* e = nullptr;
  std::vector<int> regions;  // armed by this launch
  std::vector<Release> releases;
  Step step;
};
thread_local LaunchState* t_launch = nullptr;

struct sigaction g_old_segv, g_old_trap;
std::once_flag g_handlers;

Region* region_at(int i) { return g_regions[i].load(std::memory_order_acquire); }

// The armed region of this launch holding address a, or -1.
int find_region(const LaunchState& L, uintptr_t a) {
  for (int i : L.regions) {
    const Region* r = region_at(i);
    if (a >= reinterpret_cast<uintptr_t>(r->base) && a < reinterpret_cast<uintptr_t>(r->base) + r->bytes) return i;
  }
  return -1;
}

void protect(Region& r, uint32_t page, int prot) { mprotect(r.base + static_cast<size_t>(page) * kPage, kPage, prot); }

// Whether thread f may read word w: unwritten in this launch and defined; written by its own CTA;
// or released by the writer's CTA and acquired by an acquire of f's CTA that f is ordered after.
// `acquired`: the releases f is ordered after (acquired_by(f)).
FailKind readable(const Fiber* f, const GClock& acquired, const Region& r, uint32_t w) {
  if (!r.written[w]) return r.defined ? kOk : kUninitialised;
  const int x = r.writer_cta[w];
  if (x == f->cta->gidx) return kOk;
  if (r.released[w] == kNone) return kUnreleased;
  return acquired.at(x) >= r.released[w] ? kOk : kUnacquired;
}

// The releases of thread f's CTA's acquires that f is ordered after.
GClock acquired_by(const Fiber* f) {
  GClock c;
  for (const GAcquire& a : f->cta->gacq)
    if (f->vc.at(a.slot) >= a.time) c.join(a.clock);
  return c;
}

// Whether the page may be opened to f: every word readable, or (for a store) none written yet
// (a thread filling its part of unspecified data).
bool openable(const Fiber* f, const GClock& acquired, const Region& r, uint32_t page, bool write) {
  if (r.page_written[page] == 0) return write || r.defined;
  const uint32_t w0 = page * static_cast<uint32_t>(kPage / 4);
  const uint32_t w1 = std::min<uint32_t>(w0 + kPage / 4, static_cast<uint32_t>(r.words()));
  const int x = r.page_writer[page];
  if (x >= 0) {  // one CTA wrote what was written of it
    if (r.page_written[page] < w1 - w0 && !write && !r.defined) return false;
    if (x == f->cta->gidx) return true;
    return r.page_unreleased[page] == 0 && acquired.at(x) >= r.page_released[page];
  }
  for (uint32_t w = w0; w < w1; ++w) {
    const FailKind k = readable(f, acquired, r, w);
    if (k == kOk || (write && k == kUninitialised)) continue;
    return false;
  }
  return true;
}

// Word w now holds `value`, which f wrote (an ordinary store unless `is_strong`).
void note_write(Region& r, uint32_t w, const Fiber* f, uint64_t epoch, bool is_strong, uint32_t value) {
  r.shadow[w] = value;
  const uint32_t page = w / static_cast<uint32_t>(kPage / 4);
  if (!r.written[w]) ++r.page_written[page];
  if (!r.written[w] || r.released[w] != kNone) ++r.page_unreleased[page];
  int32_t& pw = r.page_writer[page];
  pw = pw == -1 || pw == f->cta->gidx ? f->cta->gidx : -2;
  r.written[w] = 1;
  r.strong[w] = is_strong;
  r.writer_cta[w] = f->cta->gidx;
  r.writer_tid[w] = f->tid;
  r.wepoch[w] = epoch;
  r.released[w] = kNone;
  r.release[w] = -1;
  r.wloc[w] = f->loc;
  r.wop[w] = f->op;
  r.wfound[w] = 0;
}

// The words of the page that changed since they were last attributed are f's writes. Runs in the
// trap handler too: it only updates vectors sized at arming (and erases from `msg`: the interrupted
// code is a load or store of the kernel, never the allocator).
// `found`: at f's instruction in progress (the write came before it), else after its last one.
void attribute(Region& r, uint32_t page, Fiber* f, bool found) {
  const uint32_t w0 = page * static_cast<uint32_t>(kPage / 4);
  const uint32_t w1 = std::min<uint32_t>(w0 + kPage / 4, static_cast<uint32_t>(r.words()));
  const uint64_t epoch = f ? emu_if_any()->epoch + 1 : 0;  // before f's next event
  const uint32_t* m = r.mem();
  if (std::memcmp(m + w0, r.shadow.data() + w0, (w1 - w0) * 4) == 0) return;
  for (uint32_t w = w0; w < w1; ++w) {
    if (m[w] == r.shadow[w]) continue;
    if (!f) {
      r.shadow[w] = m[w];  // the emulator's own access
      continue;
    }
    note_write(r, w, f, epoch, false, m[w]);
    r.wfound[w] = found;
    if (!r.msg.empty()) r.msg.erase(w);  // a plain store ends the word's release sequence
    f->gwrote = true;
  }
}

// ---------------------------------------------------------------------------------------------
// The fault and trap handlers.
// ---------------------------------------------------------------------------------------------
void chain(int sig, siginfo_t* si, void* uc, const struct sigaction& old) {
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction) {
      old.sa_sigaction(sig, si, uc);
      return;
    }
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
    old.sa_handler(sig);
    return;
  }
  // The default action: re-raise it with the default handler once this one returns.
  signal(sig, SIG_DFL);
}

#if defined(__x86_64__) && defined(__linux__)
constexpr greg_t kTrapFlag = 0x100;

void single_step(LaunchState& L, int ri, uint32_t page, Fiber* f, bool write, ucontext_t* uc) {
  Region& r = *region_at(ri);
  protect(r, page, PROT_READ | PROT_WRITE);
  if (!L.step.active) {
    L.step = Step{};
    L.step.active = true;
    L.step.region = ri;
    L.step.f = f;
  }
  L.step.write = L.step.write || write;
  if (L.step.npages < 4) L.step.pages[L.step.npages++] = page;
  uc->uc_mcontext.gregs[REG_EFL] |= kTrapFlag;
}

void on_segv(int sig, siginfo_t* si, void* ucv) {
  LaunchState* L = t_launch;
  const uintptr_t a = reinterpret_cast<uintptr_t>(si->si_addr);
  const int ri = L ? find_region(*L, a) : -1;
  if (ri < 0) {
    chain(sig, si, ucv, g_old_segv);
    return;
  }
  auto* uc = static_cast<ucontext_t*>(ucv);
  Region& r = *region_at(ri);
  const bool write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
  const uint32_t page = static_cast<uint32_t>((a - reinterpret_cast<uintptr_t>(r.base)) / kPage);
  Emu* e = emu_if_any();
  Fiber* f = e ? e->current : nullptr;
  if (!f || L->step.active) {  // the emulator's own access, or the second page of one access
    single_step(*L, ri, page, L->step.active ? L->step.f : nullptr, write, uc);
    return;
  }
  const GClock acquired = acquired_by(f);
  // Opens the page, and the pages around it that may be opened alike (a thread reads or fills a
  // run of pages: one fault for the run), in one call.
  auto open_pages = [&](bool extend) {
    uint32_t first = page, last = page;
    const uint32_t pages = static_cast<uint32_t>(r.bytes / kPage);
    if (extend) {
      while (first > 0 && page - first < kMaxRun && !r.open[first - 1] && openable(f, acquired, r, first - 1, write))
        --first;
      while (last + 1 < pages && last - page < kMaxRun && !r.open[last + 1] &&
             openable(f, acquired, r, last + 1, write))
        ++last;
    }
    mprotect(r.base + static_cast<size_t>(first) * kPage, static_cast<size_t>(last - first + 1) * kPage,
             PROT_READ | PROT_WRITE);
    for (uint32_t p = first; p <= last; ++p) r.open[p] = 1;
    f->gopen.push_back({ri, first, last - first + 1});
  };
  if (f->gfail) {
    open_pages(false);
    return;
  }
  if (openable(f, acquired, r, page, write)) {
    open_pages(true);
    return;
  }
  const uint32_t w = static_cast<uint32_t>((a - reinterpret_cast<uintptr_t>(r.base)) / 4);
  if (!write) {
    const FailKind k = readable(f, acquired, r, w);
    if (k != kOk) {
      f->gfail = k;
      f->gfail_region = ri;
      f->gfail_word = w;
      open_pages(false);  // it fails at its next instruction; nothing more to check until then
      return;
    }
  }
  single_step(*L, ri, page, f, write, uc);
}

void on_trap(int sig, siginfo_t* si, void* ucv) {
  LaunchState* L = t_launch;
  if (!L || !L->step.active) {
    chain(sig, si, ucv, g_old_trap);
    return;
  }
  auto* uc = static_cast<ucontext_t*>(ucv);
  Region& r = *region_at(L->step.region);
  for (int i = 0; i < L->step.npages; ++i) {
    if (L->step.write || !L->step.f) attribute(r, L->step.pages[i], L->step.f, false);
    protect(r, L->step.pages[i], PROT_NONE);
  }
  L->step.active = false;
  uc->uc_mcontext.gregs[REG_EFL] &= ~kTrapFlag;
}

void install_handlers() {
  std::call_once(g_handlers, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_old_segv);
    struct sigaction st {};
    st.sa_sigaction = on_trap;
    st.sa_flags = SA_SIGINFO;
    sigemptyset(&st.sa_mask);
    sigaction(SIGTRAP, &st, &g_old_trap);
  });
}
#else
void install_handlers() {}
#endif

// The emulator's own access to word w of region ri: its page readable and writable meanwhile.
template <class Fn>
auto with_page(int ri, uint32_t w, Fn fn) {
  Region& r = *region_at(ri);
  const uint32_t page = w / static_cast<uint32_t>(kPage / 4);
  if (!r.open[page]) protect(r, page, PROT_READ | PROT_WRITE);
  struct Restore {
    Region& r;
    uint32_t page;
    ~Restore() {
      if (!r.open[page]) protect(r, page, PROT_NONE);
    }
  } restore{r, page};
  return fn(r.mem()[w]);
}

std::string cta_name(int gidx) {
  const dim3 g = emu().cfg.grid;
  const int x = gidx % static_cast<int>(g.x), y = (gidx / static_cast<int>(g.x)) % static_cast<int>(g.y),
            z = gidx / static_cast<int>(g.x * g.y);
  return "CTA (" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}

std::string word_name(const Region& r, uint32_t w) {
  return hex(reinterpret_cast<uintptr_t>(r.base) + 4ull * w) + " (scratch " + (r.defined ? "counters" : "data") +
         ", word " + std::to_string(w) + ")";
}

// A release by f (a fence.acq_rel.gpu, st.release, red.release): every write of its CTA that f
// is ordered after and no earlier release covered is released now; what f's later relaxed writes
// carry is this release and the releases f has acquired (fences are cumulative).
void release(Fiber* f, uint64_t epoch) {
  LaunchState* L = t_launch;
  if (!L) return;
  const int x = f->cta->gidx;
  L->releases.push_back({x, f->tid, epoch, f->loc, f->op});
  const int index = static_cast<int>(L->releases.size()) - 1;
  for (int ri : L->regions) {
    Region& r = *region_at(ri);
    for (uint32_t w = 0; w < r.words(); ++w)
      if (r.written[w] && r.writer_cta[w] == x && r.released[w] == kNone &&
          f->vc.at(cluster_slot(*f->cta, r.writer_tid[w])) >= r.wepoch[w]) {
        r.released[w] = epoch;
        r.release[w] = index;
        const uint32_t page = w / static_cast<uint32_t>(kPage / 4);
        --r.page_unreleased[page];
        r.page_released[page] = std::max(r.page_released[page], epoch);
      }
  }
  f->grel = acquired_by(f);
  f->grel.raise(x, epoch);
  f->grel_loc = f->loc;
}

// An acquire by f: the releases its atomic reads synchronised with since its last acquire.
void acquire(Fiber* f, uint64_t epoch) {
  if (f->gpending.empty()) return;
  f->cta->gacq.push_back({f->slot, epoch, f->gpending, f->loc});
  f->gpending = GClock{};
}

// The watched word at p (-1 if p is not scratch of this launch).
std::pair<int, uint32_t> watched(const void* p) {
  LaunchState* L = t_launch;
  if (!L) return {-1, 0};
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const int ri = find_region(*L, a);
  if (ri < 0) return {-1, 0};
  if (a % 4) fail("global memory", "a 32-bit global access must be 4-byte aligned (" + hex(a) + ")");
  return {ri, static_cast<uint32_t>((a - reinterpret_cast<uintptr_t>(region_at(ri)->base)) / 4)};
}

// A strong read (an atomic, ld.acquire) of word w by f: it sees the latest value (coherence), but
// a plain store of another CTA it is not ordered after is a race all the same.
void check_strong_read(Fiber* f, int ri, uint32_t w) {
  const Region& r = *region_at(ri);
  const GClock acquired = acquired_by(f);
  if (r.written[w] && !r.strong[w] && readable(f, acquired, r, w) != kOk) {
    f->gfail = readable(f, acquired, r, w);
    f->gfail_region = ri;
    f->gfail_word = w;
    raise_global_failure(f);
  }
}

// Counts a poll (an atomic or acquire load, which spin loops repeat) and lets the others run.
void poll(Fiber* f, uint64_t polls_before) {
  Emu& e = emu();
  e.polls = polls_before + 1;
  if (e.polls > 1000000)
    fail("deadlock", std::string("every running thread keeps polling global memory (the last: ") + f->op + " at " +
                         where(f->loc) +
                         ") and nothing else happens: the value it waits for is written by a CTA that is not "
                         "running (the emulator runs the clusters one after another: only CTAs of one cluster wait "
                         "for each other)");
  yield_fiber(f);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Allocation.
// ---------------------------------------------------------------------------------------------
void* global_alloc(size_t bytes, bool defined) {
  const size_t size = std::max<size_t>(kPage, (bytes + kPage - 1) / kPage * kPage);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* r = new Region;
  r->base = static_cast<uint8_t*>(p);
  r->bytes = size;
  r->defined = defined;
  const std::lock_guard<std::mutex> lock(g_regions_mutex);
  for (auto& slot : g_regions)
    if (!slot.load()) {
      slot.store(r, std::memory_order_release);
      return p;
    }
  // No free slot: the memory works, unwatched.
  delete r;
  return p;
}

void global_free(void* p) {
  if (!p) return;
  const std::lock_guard<std::mutex> lock(g_regions_mutex);
  for (auto& slot : g_regions) {
    Region* r = slot.load();
    if (r && r->base == p) {
      slot.store(nullptr, std::memory_order_release);
      munmap(r->base, r->bytes);
      delete r;
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A launch.
// ---------------------------------------------------------------------------------------------
void global_launch_begin(Emu& e) {
  // GEMM_EMU_UNWATCHED=1 leaves scratch unwatched: for a debugger, which the faults and the trap
  // flag would stop at every access (gdb uses the trap flag itself).
  if (!kWatch || std::getenv("GEMM_EMU_UNWATCHED")) return;
  auto L = std::make_unique<LaunchState>();
  L->e = &e;
  for (int i = 0; i < kMaxRegions; ++i) {
    Region* r = region_at(i);
    void* none = nullptr;
    if (!r || !r->owner.compare_exchange_strong(none, L.get())) continue;
    const size_t n = r->words();
    // Unspecified data holds poison (a NaN) at a launch's start, as shared memory does: every write
    // then changes what the page holds, which is how writes are found.
    if (!r->defined) std::fill(r->mem(), r->mem() + n, kPoison);
    r->shadow.assign(r->mem(), r->mem() + n);
    if (r->defined) r->at_start = r->shadow;
    r->written.assign(n, 0);
    r->strong.assign(n, 0);
    r->writer_cta.assign(n, -1);
    r->writer_tid.assign(n, -1);
    r->wepoch.assign(n, 0);
    r->released.assign(n, kNone);
    r->release.assign(n, -1);
    r->wloc.assign(n, SourceLoc{});
    r->wop.assign(n, "");
    r->wfound.assign(n, 0);
    r->open.assign(r->bytes / kPage, 0);
    r->page_written.assign(r->bytes / kPage, 0);
    r->page_writer.assign(r->bytes / kPage, -1);
    r->page_unreleased.assign(r->bytes / kPage, 0);
    r->page_released.assign(r->bytes / kPage, 0);
    r->msg.clear();
    L->regions.push_back(i);
  }
  if (L->regions.empty()) return;
  install_handlers();
  for (int i : L->regions) mprotect(region_at(i)->base, region_at(i)->bytes, PROT_NONE);
  t_launch = L.release();
}

std::string global_launch_end(Emu& e, bool ok) {
  LaunchState* L = t_launch;
  if (!L || L->e != &e) return {};
  std::string failure;
  for (int i : L->regions) {
    Region& r = *region_at(i);
    mprotect(r.base, r.bytes, PROT_READ | PROT_WRITE);
    // A launch that failed stopped midway: its counters go back to what it found, so that the next
    // launch on the stream does not inherit a half-taken ticket.
    if (!ok && r.defined) std::copy(r.at_start.begin(), r.at_start.end(), r.mem());
    // Counters are left as the launch found them: zero (common/scratch.h).
    if (ok && failure.empty() && r.defined)
      for (uint32_t w = 0; w < r.words(); ++w)
        if (r.mem()[w] != 0) {
          failure =
              "scratch counter left non-zero: the launch ends with the counter at " + word_name(r, w) + " at " +
              std::to_string(r.mem()[w]) +
              (r.written[w] ? ", last written by " + cta_name(r.writer_cta[w]) + " thread " +
                                  std::to_string(r.writer_tid[w]) + " (" + r.wop[w] + " at " + where(r.wloc[w]) + ")"
                            : std::string()) +
              ": a kernel must leave the scratch counters zero for the next launch (common/scratch.h); a "
              "ticket taken after the part that reset it (the last part chosen wrongly?)";
          break;
        }
    r.owner.store(nullptr);
  }
  t_launch = nullptr;
  delete L;
  return failure;
}

void track_global(Fiber* f) {
  if (!t_launch) return;
  for (const Fiber::OpenPages& o : f->gopen) {
    Region& r = *region_at(o.region);
    for (uint32_t p = o.first; p < o.first + o.count; ++p) {
      attribute(r, p, f, true);
      r.open[p] = 0;
    }
    mprotect(r.base + static_cast<size_t>(o.first) * kPage, static_cast<size_t>(o.count) * kPage, PROT_NONE);
  }
  f->gopen.clear();
  // Its writes took the epoch after the last one (attribute): its clock moves past them now, so
  // that what it synchronises with next is ordered after them.
  if (f->gwrote) {
    tick(f);
    f->gwrote = false;
  }
}

void raise_global_failure(Fiber* f) {
  const int kind = f->gfail;
  f->gfail = 0;
  const Region& r = *region_at(f->gfail_region);
  const uint32_t w = f->gfail_word;
  const std::string read = std::string("a load of global memory by ") + thread_name(f) + " (after its " + f->op +
                           " at " + where(f->loc) + ") reads " + word_name(r, w);
  if (kind == kUninitialised)
    fail("global memory read of data no thread wrote",
         read +
             ", which no thread has written in this launch: scratch data is unspecified when a launch starts "
             "(common/scratch.h: a kernel reads only what it wrote). A part read before the part that writes it "
             "has run (the wrong part taken for the last one)?");
  const bool at_exit = std::strcmp(r.wop[w], "exit") == 0;
  std::string detail = read + ", which " + cta_name(r.writer_cta[w]) + " thread " + std::to_string(r.writer_tid[w]) +
                       " wrote in this launch (" +
                       (at_exit ? "after its last instruction, at " + where(r.wloc[w]) + ", before it exited"
                                : (r.strong[w]   ? "with "
                                   : r.wfound[w] ? "before its "
                                                 : "after its ") +
                                      std::string(r.wop[w]) + " at " + where(r.wloc[w])) +
                       ")";
  if (kind == kUnreleased) {
    detail +=
        ", and no release of that CTA covers the write: a fence.acq_rel.gpu (or st.release, red.release) by a "
        "thread ordered after the write must come before the signal (the atomic, the flag) this CTA reads";
  } else {
    const Release& rel = t_launch->releases[static_cast<size_t>(r.release[w])];
    detail += " and released at its " + std::string(rel.op) + " at " + where(rel.loc) + " (thread " +
              std::to_string(rel.tid) + "), but no acquire of " + f->cta->name() +
              " that this thread is ordered after synchronises with that release";
    // The likely cause: an atomic read that synchronised with it but was never acquired, or a
    // release that came after the signal it should have come before.
    const Fiber* pending = nullptr;
    for (const Fiber* g : f->cta->threads)
      if (g->gpending.at(r.writer_cta[w]) >= r.released[w]) pending = g;
    if (pending)
      detail += ": " + thread_name(pending) + "'s atomic at " + where(pending->gpending_loc) +
                " read a value that release reached, and no fence.acq_rel.gpu followed it (the acquire after the "
                "atomic is missing)";
    else
      detail +=
          ": the release must come before the signal the reader reads (the fence before the atomic, the "
          "release store), and the reader must acquire after reading it (a fence.acq_rel.gpu after the atomic, "
          "or ld.acquire), then a barrier to the threads that read";
  }
  fail("global memory read without release/acquire", detail);
}

// ---------------------------------------------------------------------------------------------
// The instructions (common/global_memory.cuh).
// ---------------------------------------------------------------------------------------------
void fence_acq_rel_gpu(SourceLoc loc) {
  Fiber* f = enter(loc, "fence.acq_rel.gpu");
  track_writes(f);
  const uint64_t t = tick(f);
  release(f, t);
  acquire(f, t);
}

uint32_t atomic_add_gpu(uint32_t* counter, uint32_t value, SourceLoc loc) {
  const uint64_t polls = emu().polls;
  Fiber* f = enter(loc, "atom.add.u32");
  track_writes(f);
  const auto [ri, w] = watched(counter);
  uint32_t old = 0;
  if (ri < 0) {
    old = *counter;
    *counter = old + value;
  } else {
    check_strong_read(f, ri, w);
    Region& r = *region_at(ri);
    old = with_page(ri, w, [value](uint32_t& x) {
      const uint32_t o = x;
      x = o + value;
      return o;
    });
    GClock& m = r.msg[w];
    f->gpending.join(m);  // it reads the release sequence so far
    f->gpending_loc = loc;
    if (!f->grel.empty()) m.join(f->grel);  // a release fence before it: it heads the sequence too
    note_write(r, w, f, tick(f), true, old + value);
  }
  poll(f, polls);
  return old;
}

uint32_t ld_acquire_gpu(const uint32_t* p, SourceLoc loc) {
  const uint64_t polls = emu().polls;
  Fiber* f = enter(loc, "ld.acquire.gpu");
  track_writes(f);
  const auto [ri, w] = watched(p);
  uint32_t v = 0;
  if (ri < 0) {
    v = *p;
  } else {
    check_strong_read(f, ri, w);
    Region& r = *region_at(ri);
    v = with_page(ri, w, [](uint32_t& x) { return x; });
    auto it = r.msg.find(w);
    if (it != r.msg.end()) f->gpending.join(it->second);
    f->gpending_loc = loc;
    acquire(f, tick(f));
  }
  poll(f, polls);
  return v;
}

void st_release_gpu(uint32_t* p, uint32_t value, SourceLoc loc) {
  Fiber* f = enter(loc, "st.release.gpu");
  track_writes(f);
  const auto [ri, w] = watched(p);
  if (ri < 0) {
    *p = value;
    return;
  }
  release(f, tick(f));
  Region& r = *region_at(ri);
  with_page(ri, w, [value](uint32_t& x) { return x = value; });
  r.msg[w] = f->grel;  // a new release sequence, headed by this store
  note_write(r, w, f, tick(f), true, value);
  yield_fiber(f);
}

void red_release_add_gpu(uint32_t* p, uint32_t value, SourceLoc loc) {
  Fiber* f = enter(loc, "red.release.gpu.add");
  track_writes(f);
  const auto [ri, w] = watched(p);
  if (ri < 0) {
    *p += value;
    return;
  }
  release(f, tick(f));
  Region& r = *region_at(ri);
  const uint32_t now = with_page(ri, w, [value](uint32_t& x) { return x += value; });
  r.msg[w].join(f->grel);
  note_write(r, w, f, tick(f), true, now);
  yield_fiber(f);
}

}  // namespace gemm::emu

// The wrappers are declared in namespace gemm (common/global_memory.cuh, common/scratch.h). Forward.
namespace gemm {
void fence_acq_rel_gpu(SourceLoc loc) { emu::fence_acq_rel_gpu(loc); }
uint32_t atomic_add_gpu(uint32_t* counter, uint32_t value, SourceLoc loc) {
  return emu::atomic_add_gpu(counter, value, loc);
}
uint32_t ld_acquire_gpu(const uint32_t* p, SourceLoc loc) { return emu::ld_acquire_gpu(p, loc); }
void st_release_gpu(uint32_t* p, uint32_t value, SourceLoc loc) { emu::st_release_gpu(p, value, loc); }
void red_release_add_gpu(uint32_t* p, uint32_t value, SourceLoc loc) { emu::red_release_add_gpu(p, value, loc); }
}  // namespace gemm
