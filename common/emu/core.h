// The functional emulator's internals, shared by its .cpp files (not a public header).
//
// One OS thread runs everything. A launch runs the grid cluster by cluster; a cluster's CTAs run
// together, each thread a fiber (glibc ucontext). Fibers run until they block (a barrier, a warp
// or warpgroup collective, an mbarrier wait, a wait for asynchronous work) and the scheduler picks
// the next runnable fiber at random (seeded). Asynchronous operations (TMA copies, wgmma groups,
// tcgen05.mma and commit, bulk stores) wait in queues and complete at random scheduler steps, in
// the order the PTX ISA guarantees within each queue; when every fiber waits they are completed
// one by one, and when nothing is left to complete the kernel is deadlocked.
//
// Shared memory is tracked per 4-byte word: ordinary (generic-proxy) stores by the kernel are
// found by comparing shared memory with a shadow copy each time a fiber stops running (and before
// a fence or an asynchronous operation it issues), so every store is attributed to the thread that
// made it. That is what the proxy-fence rule and the "overwritten while an asynchronous operation
// reads it" rule are checked against.
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
#include <string>
#include <unordered_map>
#include <vector>

// The prelude and every header whose GEMM_EMULATED declarations the emulator defines: a signature
// that drifts from its definition is then a compile error here.
#include "common/emu/prelude.h"

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"
#include "common/device.cuh"
#include "common/emu/emu.h"
#include "common/emu/models.h"
#include "common/fence.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/launch.cuh"
#include "common/mbarrier.cuh"
#include "common/named_barrier.cuh"
#include "common/smem.cuh"
#include "common/tensor_map.h"
#include "common/tma.cuh"
#include "common/warp.cuh"

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

// Throws Failure: "rule: detail", with the current thread (CTA, warp, lane, role) appended.
[[noreturn]] void fail(const std::string& rule, const std::string& detail);
// The same, naming `who` instead of the current thread.
[[noreturn]] void fail_at(const Fiber* who, const std::string& rule, const std::string& detail);
std::string hex(uint64_t v);

// ---------------------------------------------------------------------------------------------
// Waiting.
// ---------------------------------------------------------------------------------------------
enum class WaitKind {
  none,
  cta_barrier,   // bar.sync / __syncthreads
  mbarrier,      // mbarrier wait (try_wait loop)
  cluster,       // barrier.cluster.wait
  collective,    // a .sync.aligned warp / warpgroup / CTA-pair instruction waiting for its peers
  wgmma_wait,    // wgmma.wait_group
  bulk_wait,     // cp.async.bulk.wait_group(.read)
  tmem_alloc,    // tcgen05.alloc waiting for free columns
};

struct Wait {
  WaitKind kind = WaitKind::none;
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

// A .sync.aligned instruction of a warp, a warpgroup or a CTA pair: every member arrives, then
// the last one executes it for all of them.
struct Collective {
  uint64_t generation = 0;
  const char* name = nullptr;  // the instruction of the instance in progress
  std::vector<Fiber*> arrived;
  int members = 0;
  WaitList waiters;
};

// ---------------------------------------------------------------------------------------------
// Asynchronous work.
// ---------------------------------------------------------------------------------------------
struct Queue {
  std::deque<std::function<void()>> ops;  // completed front to back
  bool listed = false;                    // in Emu::active
  bool transient = false;                 // one unordered op: deleted once it has completed
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
  AccShadow* acc[128] = {};
};

struct WarpgroupState {
  Collective coll;
  std::vector<WgmmaOp> uncommitted;
  Queue queue;  // committed groups, in order
  int pending_groups = 0;
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
};

// ---------------------------------------------------------------------------------------------
// Barriers.
// ---------------------------------------------------------------------------------------------
struct MBarrier {
  bool init = false;
  uint32_t count = 0;
  int64_t pending = 0;  // arrivals still missing in the current phase
  int64_t tx = 0;       // transaction bytes still expected
  uint64_t phase = 0;   // phases completed
  Fiber* init_by = nullptr;
  bool fenced = false;                  // fence.mbarrier_init (or fence.proxy.async) after the init
  uint64_t cluster_phase_at_init = 0;   // cluster barriers completed before the init
  int64_t expected = 0, delivered = 0;  // bytes in the current phase, for messages
  std::map<uint64_t, int> inflight;     // TMA loads in flight, by the phase they credit
  TcKnow tc_phase;  // tcgen05 dependencies of the current phase's arrivals and completions
  TcKnow tc_done;   // ... of the last completed phase: what a waiter learns
  WaitList waiters;
};

struct NamedBar {
  int expected = 0;  // 0: no instance in progress
  int arrived = 0;
  uint64_t generation = 0;
  std::vector<Fiber*> participants;
  WaitList waiters;
};

// ---------------------------------------------------------------------------------------------
// Tensor Memory of one CTA.
// ---------------------------------------------------------------------------------------------
struct Tmem {
  static constexpr int kLanes = 128, kCols = 512;
  std::vector<uint32_t> cells = std::vector<uint32_t>(kLanes * kCols);
  std::vector<uint8_t> written = std::vector<uint8_t>(kLanes * kCols);  // by an MMA since its allocation
  int pending[kCols] = {};                                              // in-flight MMAs writing the column
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
// Threads, CTAs, clusters.
// ---------------------------------------------------------------------------------------------
struct Fiber {
  ucontext_t ctx;
  char* stack = nullptr;  // mapping start (guard page included)
  size_t mapping = 0;
  Cta* cta = nullptr;
  int tid = 0;  // linear index in the CTA
  dim3 tidx;
  int warp = 0, lane = 0;
  enum class State { idle, runnable, running, blocked, done } state = State::idle;
  bool started = false;
  Wait wait;
  const char* role = nullptr;  // from the thread's last WaitTag

  // Collective arguments and result.
  uint64_t carg[4] = {};
  void* cptr = nullptr;
  uint64_t cresult = 0;

  // Rules.
  TcKnow tc_pub;     // what this thread's synchronisations publish: its own work and what it knows
  TcKnow tc_known;   // what it learned from other threads through synchronisations
  TcKnow tc_fenced;  // tc_known at its last tcgen05.fence::after_thread_sync
  bool wgmma_fenced = false;           // wgmma.fence since the last wait_group
  std::vector<uint32_t> unfenced;      // shared-memory words this thread wrote, not yet fenced
  int64_t cluster_arrived_phase = -1;  // barrier.cluster.arrive without its wait yet

  // Asynchronous work issued by this thread.
  std::vector<std::unique_ptr<AccShadow>> acc;
  std::vector<PendingLd> lds;
  Queue tc_queue;  // tcgen05.mma and commit, in issue order
  int tc_pending = 0;
  std::vector<StoreReq> open_stores;  // not yet committed
  Queue store_queue;                  // committed bulk groups
  int store_groups = 0;
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
  std::vector<int32_t> unfenced;   // writer tid, -1 if fenced or written by the async proxy
  std::vector<uint64_t> wepoch;    // epoch of the last write
  std::vector<uint16_t> inflight;  // TMA loads in flight writing it

  std::unordered_map<uint32_t, MBarrier> mbar;  // by offset
  std::map<std::string, std::set<uint32_t>> tag_offsets;  // barrier tag -> offsets seen (stages)
  NamedBar bars[16];
  std::vector<Collective> warp_coll;
  std::vector<WarpgroupState> wg;
  std::unique_ptr<Tmem> tmem;
  Collective pair_coll;  // tcgen05.alloc/dealloc .cta_group::2 of this CTA's pair (leader's object)

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
  WaitList barrier_waiters;
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
  bool aborting = false;
  std::string failure;  // the first failure
  LaunchStats stats;
  std::vector<std::unique_ptr<Fiber>> pool;  // fibers with stacks, reused cluster to cluster

  uint64_t rand();
  uint64_t next_epoch() { return ++epoch; }
};

Emu& emu();  // the launch in progress
Fiber* self();  // the calling emulated thread (fails outside a kernel)

// Scheduling.
void block(const Wait& w);  // the calling fiber waits until woken; throws Abort when torn down
void wake(Fiber* f);
void wake_all(WaitList& list);
void enqueue(Queue& q, std::function<void()> op);
void collective(Collective& c, int members, const char* name, const Wait& w,
                const std::function<void(std::vector<Fiber*>&)>& exec);
void learn(Fiber* f, const TcKnow& k);  // f completed a synchronisation that carries k

// Shared memory.
Cta& cta_of_rank(uint32_t rank);  // in the current cluster; fails for a bad rank
uint32_t smem_offset(Cta& cta, const void* p, size_t bytes, const char* what);
uint32_t addr_offset(Cta& cta, uint32_t addr, size_t bytes, const char* what);  // from a shared address
void track_writes(Fiber* f);  // attribute changed words to f
void async_write(Cta& cta, uint32_t off, const void* src, size_t bytes);  // smem + shadow, async proxy
void check_async_read(Cta& cta, const std::vector<uint32_t>& words, const char* op);  // at issue
void check_unchanged(Cta& cta, const std::vector<uint32_t>& words, uint64_t since, const char* op,
                     const std::string& issuer);  // at completion
std::string thread_name(const Fiber* f);

// mbarriers.
MBarrier& mbarrier_at(Cta& cta, uint32_t off, const char* what);
void mbarrier_check_use(Cta& cta, uint32_t off, MBarrier& b, Fiber* user, bool remote, bool async, const char* what);
void mbarrier_arrive_on(Cta& cta, uint32_t off, const char* what);   // one arrival, any context
void mbarrier_complete_tx(Cta& cta, uint32_t off, uint32_t bytes, uint64_t phase_at_issue, const char* what);
std::string barrier_name(Cta& cta, uint32_t off);

// Exit checks.
void check_thread_exit(Fiber* f);
void check_cta_exit(Cta& cta);

// fp16 / bf16 -> float.
float half_to_float(uint16_t h);
float bf16_to_float(uint16_t h);

}  // namespace gemm::emu
