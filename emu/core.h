// The functional emulator's internals, shared by its .cpp files (not a public header).
//
// One OS thread runs everything. A launch runs the grid cluster by cluster, in an order drawn from
// the seed; a cluster's CTAs run together, each thread a fiber (glibc ucontext). Fibers run until
// they block (a barrier, a warp or warpgroup collective, an mbarrier wait, a wait for asynchronous
// work) and the scheduler picks the next runnable fiber at random (seeded). Asynchronous operations (TMA copies, wgmma groups,
// tcgen05.mma and commit, bulk stores) wait in queues and complete at random scheduler steps, in
// the order the PTX ISA guarantees within each queue; when every fiber waits they are completed
// one by one, and when nothing is left to complete the kernel is deadlocked.
//
// Shared memory is tracked per 4-byte word: ordinary (generic-proxy) stores by the kernel are
// found by comparing shared memory with a shadow copy each time a fiber stops running (and before
// a fence or an asynchronous operation it issues), so every store is attributed to the thread that
// made it. That is what the proxy-fence rule and the "overwritten while an asynchronous operation
// reads it" rule are checked against.
//
// Happens-before. Each thread carries two vector clocks (Clock): per thread of the cluster, the
// epoch of that thread's latest event it is ordered after. The memory clock (vc) is joined by the
// synchronisations that order memory: CTA and named barriers, mbarrier phases, cluster barriers,
// bar.warp.sync. The execution clock (xc) is joined by those and by the warp and warpgroup
// collectives (.sync.aligned instructions, elect, shfl), which order execution but not memory; it
// also counts, per mbarrier, the phases the thread knows to have completed. An asynchronous
// operation carries the clocks of the thread that issued it. The rules that must hold whatever the schedule (a stage
// released before the warp's own wgmma.wait_group, a waiter that can fall two phases behind, an
// arrival beyond a barrier's count, stores not ordered before the TMA store that reads them) are
// checked against these clocks, so they are caught on every run, not only when the random schedule
// happens to show them.
#pragma once

// System headers first: the prelude poisons `asm`.
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <source_location>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

// The prelude and every header whose GEMM_EMULATED declarations the emulator defines: a signature
// that drifts from its definition is then a compile error here.
#include "emu/prelude.h"

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"
#include "common/device.cuh"
#include "common/fence.cuh"
#include "common/global_memory.cuh"
#include "common/hopper/setmaxnreg.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/named_barrier.cuh"
#include "common/smem.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/warp.cuh"
#include "emu/emu.h"
#include "emu/models.h"

namespace gemm::emu {

struct Fiber;
struct Cta;
struct Cluster;

// A rule violation (or a deadlock): unwinds the fiber (or the scheduler) that found it.
struct Failure {
  std::string message;
};
// Unwinds a fiber that is being torn down after a failure elsewhere.
struct Abort {};

// Throws Failure: "rule: file:line: detail", the line being the current thread's operation (the
// call site its wrapper was given), then the thread (CTA, warp, lane, role).
[[noreturn]] void fail(const std::string& rule, const std::string& detail);
// The same, naming `who` and its current operation instead of the current thread.
[[noreturn]] void fail_at(const Fiber* who, const std::string& rule, const std::string& detail);
// The same at an explicit location (an asynchronous operation's issue, a waiter's wait).
[[noreturn]] void fail_loc(const SourceLoc& loc, const Fiber* who, const std::string& rule, const std::string& detail);
std::string hex(uint64_t v);
// "steps/05_pipeline/hopper.cu:182" (the path relative to the project, or as the compiler saw it).
std::string where(const SourceLoc& loc);
bool known(const SourceLoc& loc);

// ---------------------------------------------------------------------------------------------
// Happens-before: vector clocks (see the header comment). Slots: the threads of the cluster
// (cluster_slot), then one per mbarrier (MBarrier::slot), whose value is a count of phases.
// ---------------------------------------------------------------------------------------------
struct Clock {
  std::vector<uint64_t> v;
  uint64_t at(size_t i) const { return i < v.size() ? v[i] : 0; }
  void raise(size_t i, uint64_t x) {
    if (i >= v.size()) v.resize(i + 1, 0);
    if (x > v[i]) v[i] = x;
  }
  void join(const Clock& o) {
    if (o.v.size() > v.size()) v.resize(o.v.size(), 0);
    for (size_t i = 0; i < o.v.size(); ++i)
      if (o.v[i] > v[i]) v[i] = o.v[i];
  }
};

// ---------------------------------------------------------------------------------------------
// Waiting.
// ---------------------------------------------------------------------------------------------
enum class WaitKind {
  none,
  cta_barrier,  // bar.sync / __syncthreads
  mbarrier,     // mbarrier wait (try_wait loop)
  cluster,      // barrier.cluster.wait
  collective,   // a .sync.aligned warp / warpgroup / CTA-pair instruction waiting for its peers
  wgmma_wait,   // wgmma.wait_group
  bulk_wait,    // cp.async.bulk.wait_group(.read)
  tmem_alloc,   // tcgen05.alloc waiting for free columns
  registers,    // setmaxnreg.inc waiting for the CTA's register pool
  pair,         // a cta_group::2 alloc/dealloc/relinquish waiting for the pair's other CTA
};

struct Wait {
  WaitKind kind = WaitKind::none;
  SourceLoc loc{};            // where the thread waits
  const char* what = "";      // the instruction
  const void* obj = nullptr;  // the object waited on (Collective, NamedBar, MBarrier, ...)
  Cta* cta = nullptr;         // whose object
  uint32_t id = 0;            // barrier id, mbarrier offset
  uint64_t a = 0, b = 0;      // kind-specific: parity, expected counts, N of wait_group
  WaitTag tag{nullptr, nullptr};
};

using WaitList = std::vector<Fiber*>;

// What a thread knows of other threads' work that a tcgen05 operation of its own may depend on,
// as the epochs of the latest such work: w, TMEM written (tcgen05.mma, alloc, dealloc); r, TMEM
// read (tcgen05.ld); s, shared memory written (ordinary stores, TMA loads). Thread
// synchronisations (barriers, mbarrier phases, cluster barriers) carry it from thread to thread.
// A tcgen05.ld depends on w, a tcgen05.mma on w, r and s: issuing one while the thread knows of
// such work that its last tcgen05.fence::after_thread_sync did not cover breaks the rule.
struct TcKnow {
  uint64_t w = 0, r = 0, s = 0;
  void merge(const TcKnow& o) {
    w = std::max(w, o.w);
    r = std::max(r, o.r);
    s = std::max(s, o.s);
  }
};

// The largest TcKnow over a set of threads, and the largest without each thread's own part (a
// thread learns nothing from a barrier about its own work).
struct TcTop {
  uint64_t v1[3] = {}, v2[3] = {};
  const Fiber* who[3] = {};
  void add(const Fiber* f, const TcKnow& k);
  TcKnow without(const Fiber* f) const;
};

// What tcgen05 work of its own a thread has not yet ordered before its next thread
// synchronisation with tcgen05.fence::before_thread_sync (or a tcgen05.commit, which implies it):
// the epochs of its TMEM writes (w: mma, alloc, dealloc) and reads (r: tcgen05.ld), and where.
// A synchronisation hands these to the other threads only as "unfenced": a thread that learns of
// them and then fences after_thread_sync, or issues a tcgen05 operation, breaks the rule.
struct TcUnfenced {
  uint64_t e[2] = {};             // w, r
  const Fiber* who[2] = {};       // whose work
  SourceLoc op[2]{};              // its operation
  const char* op_name[2] = {};    // ... and its instruction
  SourceLoc sync[2]{};            // the synchronisation it crossed (in the learning thread)
  const char* sync_what[2] = {};  // ... and its instruction
};

// A .sync.aligned instruction of a warp, a warpgroup or a CTA pair: every member arrives, then
// the last one executes it for all of them.
struct Collective {
  uint64_t generation = 0;
  const char* name = nullptr;  // the instruction of the instance in progress
  SourceLoc loc{};             // ... and where the first member reached it
  std::vector<Fiber*> arrived;
  int members = 0;
  bool executing = false;  // every member arrived; the last one executes it (and may block)
  WaitList waiters;
};

// Per warp: its last convergence point (a warp or warpgroup collective, bar.warp.sync, a CTA or
// named barrier that all its threads passed together), for the convergence rule of .sync.aligned
// instructions (see Fiber::spun).
struct WarpState {
  uint64_t conv_epoch = 0;
};

// ---------------------------------------------------------------------------------------------
// Asynchronous work.
// ---------------------------------------------------------------------------------------------
struct Queue {
  std::deque<std::function<void()>> ops;  // completed front to back
  bool listed = false;                    // in Emu::active
  bool transient = false;                 // one unordered op: deleted once it has completed
};

// An asynchronous operation that reads shared memory until a thread observes its completion: a
// warp's share of a wgmma group (observed by that warp's wgmma.wait_group) or a bulk group of TMA
// stores (observed by its issuer's cp.async.bulk.wait_group.read). Shared memory it reads may be
// written again only by a thread ordered after that observation (Cta::readers).
struct AsyncReader {
  bool store = false;  // a TMA store group; else a wgmma share
  Cta* cta = nullptr;
  int warp = 0;             // wgmma: the warp (CTA-wide index); store: the issuer's tid
  uint64_t seq = 0;         // the group's number in its warp (wgmma) or issuer (store)
  SourceLoc loc{};          // issue (wgmma: the commit_group; stores: the group's first TMA store)
  SourceLoc commit_loc{};   // the commit_group
  size_t issue_slot = 0;    // stores: the issuer's clock slot ...
  uint64_t issue_time = 0;  // ... and its clock at the commit
  bool done = false;        // completed
  uint64_t seen[32] = {};   // per lane (store: [0], the issuer): the epoch of the observing wait, 0 none
  SourceLoc seen_loc{};     // the first observing wait
  // The warp's mbarrier arrivals before its covering wait: the first on each barrier (by offset).
  std::vector<std::pair<uint32_t, std::string>> early;
};

// wgmma: a thread's accumulator array while wgmmas on it are in flight. The registers hold
// poison meanwhile; the values live here and go back at the wait that covers the last of them.
struct AccShadow {
  float* regs = nullptr;
  int count = 0;
  std::vector<float> vals;
  int pending = 0;  // wgmmas on it not yet completed
};

struct WgmmaOp {
  model::MatrixDesc a, b;
  int n = 0;
  bool accumulate = false;
  uint64_t issue_epoch = 0;
  SourceLoc loc{};
  AccShadow* acc[128] = {};
};

// wgmma groups complete per warp: each warp's share of a group (its 16 rows of each m64 MMA) at
// its own random time, in order within the warp; a thread's wait_group waits for its warp's shares.
struct WarpgroupState {
  Collective coll;
  std::vector<WgmmaOp> uncommitted;
  Queue queue[4];                  // committed shares, in order, per warp of the warpgroup
  int pending[4] = {};             // shares not yet completed, per warp
  uint64_t committed[4] = {};      // groups committed so far, per warp
  std::deque<uint32_t> unseen[4];  // AsyncReader ids not yet seen by every lane, per warp
  WaitList waiters;
};

// tcgen05.ld results waiting for tcgen05.wait::ld.
struct PendingLd {
  uint32_t* regs = nullptr;
  std::vector<uint32_t> vals;
  uint32_t col = 0, ncols = 0;
};

// A TMA store waiting in a bulk group.
struct StoreReq {
  model::TensorMap2D map;
  uint32_t src_off = 0;  // shared-memory offset
  int32_t c0 = 0, c1 = 0;
  uint64_t issue_epoch = 0;
  SourceLoc loc{};
};

// A contribution to an mbarrier phase (an arrival, a commit's arrival, a TMA load's bytes), for
// the convergence rule: which thread issued it, when, and whether that thread had waited on
// asynchronous progress since its warp's last convergence point.
struct Contrib {
  const Fiber* who = nullptr;
  uint64_t epoch = 0;
  bool who_waited_async = false;
  SourceLoc loc{};
  const char* what = "";
  std::string who_wait;  // where it waited ("mbarrier 'full' stage 0 at ...")
};

// A thread that waited on a phase, for the two-phases-behind rule.
struct WaitRec {
  Fiber* f = nullptr;
  uint64_t pass = 0;  // the epoch at which its wait returned; 0: still waiting
  SourceLoc loc{};
  uint32_t parity = 0;
};

// A thread's wait on an mbarrier as its diagnoses need it: which phase the parity named, and how
// it stood to the thread's previous wait on the same barrier. A thread that waits on each phase of
// a barrier in turn names the phase after its previous one; a wait that names an earlier one (the
// same again: the parity a phase off) or, on a fresh barrier, the phase before the first (parity 1:
// a producer's first wait for a free slot, or a wrong initial phase) passes at once and orders
// nothing. Such a wait is `early`: where what follows it needed the phase it should have waited
// for (it reads TMEM or shared memory that phase makes ready, or it refills a buffer that phase
// frees), the wait is named as the cause.
struct WaitMemo {
  Cta* cta = nullptr;
  uint32_t off = 0;
  int64_t target = 0;  // the phase the parity named (-1: the phase before a fresh barrier's first)
  uint32_t parity = 0;
  SourceLoc loc{};
  uint64_t epoch = 0;       // when the wait began
  bool at_once = false;     // the phase had completed when the wait began (or, -1, never runs)
  bool early = false;       // see above
  bool has_prev = false;    // the thread waited on the barrier before ...
  int64_t prev_target = 0;  // ... for this phase ...
  uint32_t prev_parity = 0;
  SourceLoc prev_loc{};  // ... there
  // The barriers waited on under one WaitTag are a ring of stages (note_ring_position): since its
  // previous wait on this barrier the thread waited once on each other stage of the ring, in order.
  bool ring_lap = false;
  bool one_stage = true;  // ... or it waits on this barrier of the tag's array only (no ring to walk)
  uint64_t stages = 0;
  const char* tag = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Barriers.
// ---------------------------------------------------------------------------------------------
struct Issue;

struct MBarrier {
  bool init = false;
  uint32_t count = 0;
  int64_t pending = 0;  // arrivals still missing in the current phase
  int64_t tx = 0;       // transaction bytes still expected
  uint64_t phase = 0;   // phases completed
  Fiber* init_by = nullptr;
  SourceLoc init_loc{};
  size_t slot = 0;                               // its Clock slot (phases completed, as threads know it)
  Clock phase_vc, done_vc;                       // the arrivals' memory clocks: current phase, last completed one
  Clock phase_xc, done_xc;                       // ... and execution clocks
  uint64_t done_epoch = 0;                       // when the last phase completed
  std::vector<Contrib> contrib, contrib_done;    // contributions: current phase, last completed phase
  std::vector<WaitRec> waited_cur, waited_prev;  // waiters of the current / last completed phase
  std::string last_arrival;                      // the arrival that completed the last phase ("thread 0 at ...")
  TcUnfenced unf_phase, unf_done;                // unfenced tcgen05 work of the arrivals (see TcUnfenced)
  bool fenced = false;                           // fence.mbarrier_init (or fence.proxy.async) after the init
  uint64_t cluster_phase_at_init = 0;            // cluster barriers completed before the init
  int64_t expected = 0, delivered = 0;           // bytes in the current phase, for messages
  std::map<uint64_t, int> inflight;              // TMA loads in flight, by the phase they credit
  std::map<uint64_t, std::vector<const Issue*>> inflight_loads;  // ... the loads themselves, for messages
  SourceLoc expect_loc{};                                        // the current phase's last arrive.expect_tx
  const Fiber* expect_by = nullptr;                              // ... and its thread, for messages
  TcKnow tc_phase;  // tcgen05 dependencies of the current phase's arrivals and completions
  TcKnow tc_done;   // ... of the last completed phase: what a waiter learns
  WaitList waiters;
  bool remote_arrivals = false;  // a thread of another CTA of the cluster has arrived on it (for messages)
  bool waited = false;           // a thread has waited on it (the deadlock report: was what fed it consumed?)
};

struct NamedBar {
  int expected = 0;  // 0: no instance in progress
  int arrived = 0;
  uint64_t generation = 0;
  std::vector<Fiber*> participants;
  WaitList waiters;
  SourceLoc loc{};  // where the instance's first thread arrived
};

// ---------------------------------------------------------------------------------------------
// Tensor Memory of one CTA.
// ---------------------------------------------------------------------------------------------
struct Tmem {
  static constexpr int kLanes = 128, kCols = 512;
  std::vector<uint32_t> cells = std::vector<uint32_t>(kLanes * kCols);
  std::vector<uint8_t> written = std::vector<uint8_t>(kLanes * kCols);  // by an MMA since its allocation
  int pending[kCols] = {};                                              // in-flight MMAs writing the column
  std::string pending_issuer[kCols];    // the last MMA issued on the column: thread and source line ...
  const Fiber* pending_by[kCols] = {};  // ... the thread ...
  uint64_t pending_epoch[kCols] = {};   // ... and its issue
  struct Alloc {
    uint32_t col, ncols;
  };
  std::vector<Alloc> allocs;
  bool relinquished = false;
  uint64_t last_use_epoch = 0;  // last tcgen05 operation on it (for the pair dealloc rule)
  WaitList alloc_waiters;
  uint32_t& cell(uint32_t lane, uint32_t col) { return cells[lane * kCols + col]; }
  bool allocated(uint32_t col, uint32_t ncols) const;
};

// ---------------------------------------------------------------------------------------------
// Global memory between CTAs (global.cpp): what a CTA has released, per CTA of the grid (its
// linear index): the epoch of the latest release of that CTA that is known.
// ---------------------------------------------------------------------------------------------
struct GClock {
  std::vector<std::pair<int, uint64_t>> v;
  uint64_t at(int cta) const {
    for (const auto& [c, e] : v)
      if (c == cta) return e;
    return 0;
  }
  void raise(int cta, uint64_t e) {
    for (auto& [c, x] : v)
      if (c == cta) {
        if (e > x) x = e;
        return;
      }
    v.push_back({cta, e});
  }
  void join(const GClock& o) {
    for (const auto& [c, e] : o.v) raise(c, e);
  }
  bool empty() const { return v.empty(); }
};

// An acquire by a thread of this CTA (a fence.acq_rel after an atomic read, an ld.acquire): the
// releases it synchronises with; a thread is ordered after it when its memory clock is.
struct GAcquire {
  size_t slot = 0;    // the acquiring thread's Clock slot ...
  uint64_t time = 0;  // ... and its epoch at the acquire
  GClock clock;       // the releases acquired
  SourceLoc loc{};
};

// ---------------------------------------------------------------------------------------------
// Threads, CTAs, clusters.
// ---------------------------------------------------------------------------------------------
struct Fiber {
  ucontext_t ctx;
  char* stack = nullptr;  // mapping start (guard page included)
  size_t mapping = 0;
  Cta* cta = nullptr;
  int tid = 0;      // linear index in the CTA
  size_t slot = 0;  // in the cluster's clocks: rank * threads per CTA + tid
  dim3 tidx;
  int warp = 0, lane = 0;
  enum class State { idle, runnable, running, blocked, done } state = State::idle;
  bool started = false;
  Wait wait;
  const char* role = nullptr;  // from the thread's last WaitTag
  SourceLoc loc{};             // the operation in progress (its wrapper's call site)
  const char* op = "";         // ... and its instruction
  // Its stores have been attributed since it last ran kernel code (set by track_writes, cleared
  // when it enters the next emulated instruction): track_writes then has nothing to compare.
  bool tracked = false;
  Clock vc, xc;  // happens-before: memory and execution clocks (see Clock)
  // Per mbarrier (Clock slot): its last wait on it (the deadlock report's diagnosis of waits that
  // skip phases, and the waits that passed early).
  std::unordered_map<size_t, WaitMemo> waits;
  WaitMemo last_passed;                // the latest wait it returned from
  std::vector<uint8_t> ld_since_wait;  // per TMEM column: read by its tcgen05.ld since that wait
  // The mbarriers it has fed (arrived on, issued a TMA load or a commit to), as (CTA, offset): the
  // deadlock report asks whether another thread consumed what it produced.
  std::vector<std::pair<const Cta*, uint32_t>> fed;
  // The latest wait it had returned from when its last stores were found (track_writes), if that
  // passed early, and the epoch of those stores (Cta::wepoch).
  WaitMemo early_stores;
  uint64_t early_stores_epoch = 0;
  uint64_t waits_done = 0;                  // mbarrier waits so far (how far the thread got)
  std::map<std::string, int64_t> ring_pos;  // per WaitTag barrier name: its last ring position
  // Per WaitTag barrier name: its waits on that ring so far, the stage of the last one, how many
  // waits in a row walked the ring's stages in order, and whether it waited on more than one stage
  // (a thread that waits on one barrier of the array only, its own, walks no ring).
  struct RingWalk {
    uint64_t waits = 0, stage = 0, in_order = 0;
    bool moved = false;
  };
  std::map<std::string, RingWalk> ring_walk;
  std::unordered_map<size_t, uint64_t> ring_index;  // per mbarrier: RingWalk::waits at its last wait
  // The mbarrier phase this thread's last wait returned on (for the release analysis of the
  // overwrite rule).
  Cta* last_wait_cta = nullptr;
  uint32_t last_wait_off = 0;
  uint64_t last_wait_phase = 0;
  SourceLoc last_wait_loc{};

  // Collective arguments and result.
  uint64_t carg[4] = {};
  void* cptr = nullptr;
  uint64_t cresult = 0;

  // Rules.
  TcKnow tc_pub;                 // what this thread's synchronisations publish: its own work and what it knows
  TcKnow tc_known;               // what it learned from other threads through synchronisations
  TcKnow tc_fenced;              // tc_known at its last tcgen05.fence::after_thread_sync
  SourceLoc tc_learned_at[3]{};  // per TcKnow part: the synchronisation that last raised it (w, r, s)
  const char* tc_learned_op[3] = {};
  TcUnfenced tc_own;             // its own tcgen05 work not yet fenced before a thread sync
  uint64_t tc_own_ever[2] = {};  // its own tcgen05 work, fenced or not (w, r)
  TcUnfenced tc_unf;             // other threads' unfenced tcgen05 work it learned of
  // The convergence rule: set when the thread waited on an mbarrier phase that completed after its
  // warp's last convergence point (async_wait), and when a phase it waited on was completed by work
  // a lane of its own warp issued since that point after waiting so itself (spun): the lanes then
  // ran apart, and a .sync.aligned instruction needs bar.warp.sync first.
  bool async_wait = false;
  std::string async_wait_what;
  bool spun = false;
  std::string spun_what;
  bool wgmma_fenced = false;           // wgmma.fence since the last wait_group
  std::vector<uint32_t> unfenced;      // shared-memory words this thread wrote, not yet fenced
  int64_t cluster_arrived_phase = -1;  // barrier.cluster.arrive without its wait yet
  // Global memory between CTAs (global.cpp).
  struct OpenPages {
    int region = 0;
    uint32_t first = 0, count = 0;
  };
  std::vector<OpenPages> gopen;  // watched pages open to it
  GClock grel;                   // its latest release (a fence's), carried by its later atomics
  SourceLoc grel_loc{};
  GClock gpending;  // releases its atomic reads synchronised with, not yet acquired by a fence
  SourceLoc gpending_loc{};
  bool gwrote = false;      // its writes were attributed, and its clock has not yet moved past them
  int gfail = 0;            // a read it made that breaks the rule (found in a fault handler): kind ...
  int gfail_region = 0;     // ... region ...
  uint32_t gfail_word = 0;  // ... and word

  // Asynchronous work issued by this thread.
  std::vector<std::unique_ptr<AccShadow>> acc;
  std::vector<PendingLd> lds;
  Queue tc_queue;  // tcgen05.mma and commit, in issue order
  // Its tcgen05.commits not yet arrived, in issue order: the barrier's offset (in each CTA it
  // arrives on), the issue's epoch and where.
  struct PendingCommit {
    uint32_t off = 0;
    uint64_t epoch = 0;
    SourceLoc loc{};
  };
  std::deque<PendingCommit> commits;
  int tc_pending = 0;
  std::vector<StoreReq> open_stores;  // not yet committed
  Queue store_queue;                  // committed bulk groups
  int store_groups = 0;
  uint64_t stores_committed = 0;       // bulk groups committed so far
  std::deque<uint32_t> store_readers;  // their AsyncReader ids, not yet covered by a wait
  WaitList store_waiters;
};

struct Cta {
  Cluster* cluster = nullptr;
  int rank = 0;  // in the cluster
  dim3 idx;
  int nthreads = 0;
  int exited = 0;
  bool done = false;
  std::vector<Fiber*> threads;

  // Shared memory and its tracking, per 4-byte word.
  uint8_t* smem = nullptr;
  size_t size = 0;
  std::vector<uint8_t> shadow;
  std::vector<int32_t> unfenced;     // writer tid, -1 if fenced or written by the async proxy
  std::vector<int32_t> writer;       // tid of the last ordinary store, -1 if written by the async proxy
  std::vector<uint64_t> wepoch;      // epoch of the last write
  std::vector<int32_t> writer_prev;  // ... and of the write before it (a buffer refilled too early)
  std::vector<uint64_t> wepoch_prev;
  std::vector<uint8_t> read_since;     // an MMA or TMA store has read it since its last write
  std::vector<uint8_t> prev_unread;    // ... not so its previous contents, before they were overwritten
  std::vector<uint16_t> inflight;      // TMA loads in flight writing it
  std::vector<uint32_t> inflight_box;  // the offset of the last TMA load's box that wrote it
  struct TmaLoadSite {
    uint32_t bar = 0;        // the mbarrier it completes on ...
    Cta* bar_cta = nullptr;  // ... of this CTA ...
    uint64_t phase = 0;      // ... and the phase it credits
    SourceLoc loc{};         // where it was issued
    const Fiber* by = nullptr;
    WaitMemo wait;  // the issuer's latest mbarrier wait before it, if that passed early (else early false)
  };
  std::unordered_map<uint32_t, TmaLoadSite> tma_load_site;  // by box offset: its last TMA load
  std::vector<uint8_t> swizzle;                             // TMA-written: 1 + the box's model::Layout; 0 otherwise
  // AsyncReader ids (1-based, 0 none) reading each word: per word, one column per warp (wgmma
  // shares) and a last one for TMA stores. Allocated at the first such reader.
  std::vector<uint32_t> readers;
  int reader_cols = 0;

  std::unordered_map<uint32_t, MBarrier> mbar;            // by offset
  std::map<std::string, std::set<uint32_t>> tag_offsets;  // barrier tag -> offsets seen (stages)
  NamedBar bars[16];
  std::vector<Collective> warp_coll;
  std::vector<WarpState> warps;
  std::vector<WarpgroupState> wg;
  std::unique_ptr<Tmem> tmem;
  // setmaxnreg: the CTA's register pool (registers no warpgroup holds) and each warpgroup's
  // per-thread count; every thread starts with Emu::regs_per_thread.
  int64_t regs_free = 0;
  std::vector<int> wg_regs;
  WaitList reg_waiters;
  // tcgen05.alloc / dealloc / relinquish_alloc_permit .cta_group::2 of this CTA's pair (the leader's
  // objects): one warp of each CTA executes them, together (PairOp).
  struct PairRecord {
    bool in = false;
    int warp = 0;
    uint32_t slot = 0;   // alloc: the shared-memory offset of the address it writes
    uint32_t ncols = 0;  // alloc, dealloc
    uint32_t taddr = 0;  // dealloc
    SourceLoc loc{};
    std::vector<Fiber*> members;  // the warp's threads
  };
  struct PairOp {
    uint64_t generation = 0;
    PairRecord rec[2];  // by rank in the pair
    WaitList waiters;
  };
  PairOp pair_ops[3];          // alloc, dealloc, relinquish
  int gidx = 0;                // its linear index in the grid
  std::vector<GAcquire> gacq;  // acquires of global memory by its threads
  int sm = 0;                  // the SM the launch places it on (TMEM is per SM: Emu::sm_tmem)
  int wave = 0;                // ... in this wave of resident CTAs
  uint32_t tmem_peak = 0;      // the most TMEM columns it held at once

  uint32_t addr_of(uint32_t offset) const;  // the shared-window address of an offset
  std::string name() const;                 // "CTA (3,0,0)"
};

struct Cluster {
  dim3 dims;
  std::vector<std::unique_ptr<Cta>> ctas;
  uint64_t barrier_phase = 0;  // cluster barriers completed
  int barrier_count = 0;       // arrivals (and exited threads) in the current phase
  int threads = 0, exited = 0;
  uint64_t barrier_epoch = 0;  // epoch of the last completed cluster barrier
  TcTop tc_phase, tc_done;     // tcgen05 dependencies of the arrivals of the current / last phase
  Clock vc_phase, vc_done;     // happens-before of the arrivals of the current / last phase
  Clock xc_phase, xc_done;
  // The arrivers' unfenced tcgen05 work (TcUnfenced), as it was at their arrival: current / last phase.
  std::vector<TcUnfenced> unf_phase, unf_done;
  WaitList barrier_waiters;
  size_t next_slot = 0;  // the next free Clock slot (after the threads' slots)
  // The convergence rule of the .aligned cluster barriers: per (CTA rank, warp, arrive or wait), the
  // first lane to reach the current barrier phase, and whether it had waited on asynchronous progress
  // since its warp's last convergence point (Fiber::async_wait).
  struct AlignedVisit {
    uint64_t phase = ~uint64_t{0};
    const Fiber* first = nullptr;
    bool waited = false;
  };
  std::map<std::tuple<int, int, int>, AlignedVisit> aligned;
};

// ---------------------------------------------------------------------------------------------
// The emulator of one launch.
// ---------------------------------------------------------------------------------------------
struct Emu {
  LaunchConfig cfg;
  void (*body)(void*) = nullptr;
  void* body_ctx = nullptr;
  ucontext_t sched;
  Fiber* current = nullptr;
  Cluster* cluster = nullptr;
  std::vector<Fiber*> runnable;
  std::vector<Queue*> active;
  uint64_t rng_state = 0;
  uint64_t epoch = 1;
  int cta_group = 0;  // of the kernel's tcgen05 instructions, 0 until the first
  int sm_ctas = 1;    // CTAs resident at once on one SM (shared memory, threads)
  // TMEM is per SM: the CTAs resident on an SM at once share its 512 columns. Clusters run one
  // after another here, so co-resident CTAs are accounted, not run together: per (wave, SM), the
  // CTAs placed there that allocated TMEM, with the most columns each held at once.
  struct SmTmemUse {
    std::string cta;
    int64_t cluster = 0;
    uint32_t peak = 0;
  };
  std::map<std::pair<int, int>, std::vector<SmTmemUse>> sm_tmem;
  int64_t cluster_index = 0;  // of the cluster running
  int regs_per_thread = 0;    // what a thread holds at launch (setmaxnreg's pool)
  bool aborting = false;
  std::string failure;  // the first failure
  LaunchStats stats;
  std::vector<std::unique_ptr<Fiber>> pool;           // fibers with stacks, reused cluster to cluster
  std::vector<std::unique_ptr<AsyncReader>> readers;  // of the current cluster (ids: index + 1)
  // Waits for an mbarrier phase other than the one after the thread's previous wait on it: the
  // deadlock report's diagnosis (what, how many threads alike, where the first of them waited).
  struct Skip {
    std::string who, what;  // the thread; what it did, from its wait's location on ("waited at ...")
    std::string primary;    // ... said for the report's first line, which gives the location itself
    int threads = 0;
    SourceLoc loc{};
    // The parity of the thread's previous wait on the barrier again, after a lap of the barrier's
    // ring (a ring whose phase did not flip), or on a barrier that is no ring.
    bool repeat = false;
  };
  std::vector<Skip> skips;

  uint64_t rand();
  uint64_t next_epoch() { return ++epoch; }
  uint64_t polls = 0;  // acquire loads and atomics in a row with nothing else in between (a spin)
};

// Occupancy: the CTAs of `threads` threads and `smem_bytes` of dynamic shared memory that fit on
// one SM at once (shared memory, 1 KB reserved per CTA, 2048 threads, 32 CTAs); and the registers
// each thread of such a CTA starts with (64K per SM shared among them, in units of 8, at most 256).
int ctas_per_sm(int threads, size_t smem_bytes);
int regs_at_launch(int threads, int per_sm);

Emu& emu();     // the launch in progress
Fiber* self();  // the calling emulated thread (fails outside a kernel)

// The calling emulated thread, entering the instruction `op` called at `loc`.
Fiber* enter(const SourceLoc& loc, const char* op);

// Happens-before.
uint64_t tick(Fiber* f);  // a new event of f: its own clock slots advance; returns the epoch
// A synchronisation of these threads: their execution clocks join, and their memory clocks too
// when it orders memory.
void join_all(const std::vector<Fiber*>& members, bool memory);
size_t cluster_slot(const Cta& c, int tid);
// Whether `vc` is ordered after the write of word `w` of `c` (true if no thread wrote it).
bool knows_write(const Clock& vc, const Cta& c, uint32_t w);
// The convergence rule: a convergence point of these threads' warps; the check of a .sync.aligned
// instruction (fails if lanes of a member's warp ran apart since their last convergence point).
void converge(const std::vector<Fiber*>& members);
void check_converged(const std::vector<Fiber*>& members, const char* what);

// Asynchronous shared-memory readers (AsyncReader) and the writes they forbid.
uint32_t new_reader(std::unique_ptr<AsyncReader> r);
AsyncReader& reader(uint32_t id);
void add_reader(Cta& c, const std::vector<uint32_t>& words, int col, uint32_t id);
// Fails if a thread with execution clock `xc` (or the async proxy issued by it) writes word `w` while
// an AsyncReader reads it and xc is not ordered after that reader's observed completion. (A write
// after a read needs only the read's completion ordered before it in execution: a relaxed arrival
// that follows the wait for that completion is enough.)
void check_overwrite(Cta& c, uint32_t w, const Clock& xc, const Fiber* writer, const char* op);
// The unfenced tcgen05 rule, checked at after_thread_sync and at a tcgen05 operation.
void check_tc_unfenced(Fiber* f, const char* what);

// Scheduling.
void block(const Wait& w);  // the calling fiber waits until woken; throws Abort when torn down
void wake(Fiber* f);
void wake_all(WaitList& list);
void enqueue(Queue& q, std::function<void()> op);
// A .sync.aligned instruction (aligned) or another warp-wide one (elect, shfl, bar.warp.sync):
// the members synchronise (clocks joined), converge, and the last one executes it for all.
void collective(Collective& c, int members, const char* name, const Wait& w,
                const std::function<void(std::vector<Fiber*>&)>& exec, bool aligned = true, bool memory = false);
// Hands each member the unfenced tcgen05 work of the others at a synchronisation `what`.
void hand_unfenced(const std::vector<Fiber*>& members, const char* what);
void learn(Fiber* f, const TcKnow& k);  // f completed a synchronisation that carries k

// Shared memory.
Cta& cta_of_rank(uint32_t rank);  // in the current cluster; fails for a bad rank
uint32_t smem_offset(Cta& cta, const void* p, size_t bytes, const char* what);
uint32_t addr_offset(Cta& cta, uint32_t addr, size_t bytes, const char* what);  // from a shared address
void track_writes(Fiber* f);                                                    // attribute changed words to f
// smem + shadow, written by the async proxy; `swizzle` tags TMA-written data (1 + model::Layout).
void async_write(Cta& cta, uint32_t off, const void* src, size_t bytes, uint8_t swizzle = 0);
// At the issue of an asynchronous read by `reader` (TMA store, MMA): the words must not be in
// flight, must be ordered after and fenced by their ordinary writers, and (layout != nullptr) must
// have been written by TMA with the same swizzle as the MMA descriptor reads them.
void check_async_read(Cta& cta, const std::vector<uint32_t>& words, const char* op, const Fiber* reader,
                      const model::Layout* layout = nullptr);
void check_unchanged(Cta& cta, const std::vector<uint32_t>& words, uint64_t since, const char* op,
                     const std::string& issuer);  // at completion
std::string thread_name(const Fiber* f);
std::string lanes_string(const std::vector<int>& lanes);  // "lane 3", "lanes 0-2,5"

// mbarriers.
MBarrier& mbarrier_at(Cta& cta, uint32_t off, const char* what);
void mbarrier_check_use(Cta& cta, uint32_t off, MBarrier& b, Fiber* user, bool remote, bool async, const char* what);
// What an asynchronous operation (a commit, a TMA load) carries from the thread that issued it.
struct Issue {
  const Fiber* who = nullptr;
  Clock vc, xc;
  Contrib contrib;
  std::string name;  // "tcgen05.commit issued by ..."
};
Issue issue_of(Fiber* f, const char* what);
// One arrival: by the current thread (issue == nullptr) or by an asynchronous operation. A thread's
// `relaxed` arrival (mbarrier.arrive.relaxed) orders execution only: the waiters are ordered after
// it (execution clock, tcgen05 work) but its memory clock and its shared-memory writes are not
// published, as a release arrival's are.
void mbarrier_arrive_on(Cta& cta, uint32_t off, const char* what, const Issue* issue = nullptr, bool relaxed = false);
void mbarrier_complete_tx(Cta& cta, uint32_t off, uint32_t bytes, uint64_t phase_at_issue, const Issue& issue);
std::string barrier_name(Cta& cta, uint32_t off);
// Waits that passed early (WaitMemo): the latest wait f returned from, or its latest wait on the
// barrier of `slot`, if that passed early. (A producer's first wait for a free slot passes so, and
// rightly: nothing has read the slot yet, so no rule that a later write breaks can follow it.)
const WaitMemo* early_wait(const Fiber* f);
const WaitMemo* early_wait_on(const Fiber* f, size_t slot);
// Notes that f fed the mbarrier at `off` of `c` (Fiber::fed).
void note_fed(Fiber* f, const Cta& c, uint32_t off);
// Fails with "mbarrier wait passed early" at the wait of `m` by `waiter`; `then` says what the
// operation that needed the phase did ("its tcgen05.ld at ... read TMEM ...").
[[noreturn]] void fail_early(const Fiber* waiter, const WaitMemo& m, const std::string& then);
// "phase 3", or "the phase before its first" for -1.
std::string phase_name(int64_t phase);

// Global memory between CTAs (global.cpp): the watched regions are armed at a launch's start and
// disarmed at its end (returns a failure message, or empty); a thread's open pages are closed (its
// writes attributed) by track_writes; a read it made that broke the rule is raised at its next
// emulated instruction.
void global_launch_begin(Emu& e);
std::string global_launch_end(Emu& e, bool ok);
void track_global(Fiber* f);
void raise_global_failure(Fiber* f);
// Lets the other threads run (a spin on global memory is a scheduling point).
void yield_fiber(Fiber* f);
Emu* emu_if_any();

// Exit checks.
void check_thread_exit(Fiber* f);
void check_cta_exit(Cta& cta);

// fp16 / bf16 -> float.
float half_to_float(uint16_t h);
float bf16_to_float(uint16_t h);

}  // namespace gemm::emu
