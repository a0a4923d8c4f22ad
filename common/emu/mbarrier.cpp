// mbarrier and the proxy fences, as the PTX ISA defines them: an arrival count, a transaction
// (tx) byte count and a phase; a phase completes when its pending arrivals and its tx-count are
// both zero, and the barrier then reloads the arrival count and moves to the next phase.
#include "common/emu/core.h"

namespace gemm::emu {

namespace {

constexpr int64_t kMaxCount = (int64_t{1} << 20) - 1;

void try_complete(Cta& c, uint32_t off, MBarrier& b) {
  if (b.pending != 0 || b.tx != 0) return;
  auto it = b.inflight.find(b.phase);
  if (it != b.inflight.end() && it->second > 0)
    fail("expect_tx bytes differ from the bytes delivered",
         "mbarrier " + barrier_name(c, off) + " of " + c.name() + " completed phase " + std::to_string(b.phase) +
             " with all " + std::to_string(b.count) + " arrivals and its expected " + std::to_string(b.expected) +
             " tx bytes in, while " + std::to_string(it->second) +
             " TMA load(s) crediting that phase are still in flight: expect_tx announced fewer bytes than the "
             "loads deliver (every load credits its full box, zero fill included)");
  if (it != b.inflight.end()) b.inflight.erase(it);
  b.tc_done = b.tc_phase;
  b.tc_phase = TcKnow{};
  ++b.phase;
  b.pending = b.count;
  b.expected = 0;
  b.delivered = 0;
  wake_all(b.waiters);
}

}  // namespace

MBarrier& mbarrier_at(Cta& c, uint32_t off, const char* what) {
  if (off % 8 != 0) fail("mbarrier", std::string(what) + ": the mbarrier must be 8-byte aligned");
  auto it = c.mbar.find(off);
  if (it == c.mbar.end() || !it->second.init)
    fail("mbarrier used before initialisation",
         std::string(what) + " on shared " + hex(c.addr_of(off)) + " of " + c.name() +
             ", which no mbarrier.init has initialised");
  return it->second;
}

void mbarrier_check_use(Cta& c, uint32_t off, MBarrier& b, Fiber* user, bool remote, bool async, const char* what) {
  if (c.done)
    fail("CTA exiting with peer traffic in flight",
         std::string(what) + " reached mbarrier " + barrier_name(c, off) + " of " + c.name() +
             " after that CTA exited: a CTA must not exit while peers may still signal it (end with a cluster "
             "barrier, or wait for the last arrival)");
  if ((async || user != b.init_by) && !b.fenced)
    fail("mbarrier used before fence.mbarrier_init",
         std::string(what) + " on mbarrier " + barrier_name(c, off) + " of " + c.name() + ", initialised by " +
             thread_name(b.init_by) +
             ", which has not run fence.mbarrier_init (fence_mbarrier_init) since: the init may not be visible "
             "to other threads or to the async proxy");
  if (remote && c.cluster->barrier_phase <= b.cluster_phase_at_init)
    fail("mbarrier used before fence.mbarrier_init",
         std::string(what) + " from another CTA of the cluster on mbarrier " + barrier_name(c, off) + " of " +
             c.name() +
             " before any cluster barrier completed after its initialisation: peers may signal a barrier only "
             "after fence.mbarrier_init and a cluster barrier (barrier.cluster.arrive/wait)");
}

std::string arrival_detail(Cta& c, uint32_t off, const MBarrier& b) {
  return "mbarrier " + barrier_name(c, off) + " of " + c.name() + " (init count " + std::to_string(b.count) +
         ", phase " + std::to_string(b.phase) + ", " + std::to_string(b.tx) + " tx bytes pending)";
}

void mbarrier_arrive_on(Cta& c, uint32_t off, const char* what) {
  MBarrier& b = mbarrier_at(c, off, what);
  // A thread's arrival publishes its tcgen05 dependencies to the waiters of the phase; a
  // tcgen05.commit's arrival (no current thread) tells them that MMAs have written TMEM.
  if (Fiber* f = emu().current) b.tc_phase.merge(f->tc_pub);
  else b.tc_phase.w = std::max(b.tc_phase.w, emu().epoch);
  if (b.pending == 0)
    fail("more arrivals than the init count",
         std::string(what) + " on " + arrival_detail(c, off, b) + " whose " + std::to_string(b.count) +
             " arrivals of this phase have all come (the phase waits only for tx bytes)");
  --b.pending;
  try_complete(c, off, b);
}

void mbarrier_complete_tx(Cta& c, uint32_t off, uint32_t bytes, uint64_t phase_at_issue, const char* what) {
  MBarrier& b = mbarrier_at(c, off, what);
  auto it = b.inflight.find(phase_at_issue);
  if (it != b.inflight.end() && --it->second == 0) b.inflight.erase(it);
  if (c.done)
    fail("CTA exiting with peer traffic in flight",
         std::string(what) + " completed its bytes on mbarrier " + barrier_name(c, off) + " of " + c.name() +
             " after that CTA exited");
  if (b.phase != phase_at_issue)
    fail("expect_tx bytes differ from the bytes delivered",
         std::string(what) + " delivered " + std::to_string(bytes) + " bytes to " + arrival_detail(c, off, b) +
             " after the phase it was issued in (" + std::to_string(phase_at_issue) +
             ") had completed: expect_tx announced fewer bytes than the loads deliver");
  b.tx -= bytes;
  b.delivered += bytes;
  b.tc_phase.s = std::max(b.tc_phase.s, emu().epoch);  // TMA wrote shared memory
  if (b.tx < -kMaxCount) fail("mbarrier tx-count out of range", arrival_detail(c, off, b));
  try_complete(c, off, b);
}

// ---------------------------------------------------------------------------------------------
// The wrappers of common/mbarrier.cuh.
// ---------------------------------------------------------------------------------------------
void mbarrier_init(uint64_t* bar, uint32_t count) {
  Fiber* f = self();
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier.init");
  if (off % 8 != 0) fail("mbarrier", "mbarrier.init: the mbarrier must be 8-byte aligned");
  if (count < 1 || count > kMaxCount)
    fail("mbarrier", "mbarrier.init count " + std::to_string(count) + " is outside 1 .. 2^20 - 1");
  MBarrier& b = c.mbar[off];
  if (b.init && !b.waiters.empty())
    fail("mbarrier", "mbarrier.init on " + barrier_name(c, off) + " while threads wait on it");
  b = MBarrier{};
  b.init = true;
  b.count = count;
  b.pending = count;
  b.init_by = f;
  b.cluster_phase_at_init = c.cluster->barrier_phase;
}

void mbarrier_arrive(uint64_t* bar) {
  Fiber* f = self();
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier.arrive");
  MBarrier& b = mbarrier_at(c, off, "mbarrier.arrive");
  mbarrier_check_use(c, off, b, f, false, false, "mbarrier.arrive");
  mbarrier_arrive_on(c, off, "mbarrier.arrive");
}

void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  Fiber* f = self();
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier.arrive.expect_tx");
  MBarrier& b = mbarrier_at(c, off, "mbarrier.arrive.expect_tx");
  mbarrier_check_use(c, off, b, f, false, false, "mbarrier.arrive.expect_tx");
  b.tx += bytes;
  b.expected += bytes;
  if (b.tx > kMaxCount)
    fail("mbarrier tx-count out of range", "expect_tx of " + std::to_string(bytes) + " bytes takes " +
                                               arrival_detail(c, off, b) + " past 2^20 - 1");
  mbarrier_arrive_on(c, off, "mbarrier.arrive.expect_tx");
}

void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank) {
  Fiber* f = self();
  const uint32_t off = smem_offset(*f->cta, bar, 8, "mbarrier.arrive.shared::cluster");
  Cta& target = cta_of_rank(cta_rank);
  MBarrier& b = mbarrier_at(target, off, "mbarrier.arrive.shared::cluster");
  mbarrier_check_use(target, off, b, f, &target != f->cta, false, "mbarrier.arrive.shared::cluster");
  mbarrier_arrive_on(target, off, "mbarrier.arrive.shared::cluster");
}

namespace {

bool parity_done(const MBarrier& b, uint32_t parity) { return (b.phase & 1) != (parity & 1); }

// Waits until the phase of `parity` has completed (try_wait returns false only to come back).
void wait_parity(Fiber* f, Cta& c, uint32_t off, MBarrier& b, uint32_t parity, WaitTag tag, const char* what) {
  Wait w;
  w.kind = WaitKind::mbarrier;
  w.what = what;
  w.obj = &b;
  w.cta = &c;
  w.id = off;
  w.a = parity & 1;
  w.tag = tag;
  while (!parity_done(b, parity)) {
    b.waiters.push_back(f);
    block(w);
  }
  learn(f, b.tc_done);
}

}  // namespace

bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) {
  Fiber* f = self();
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier.try_wait.parity");
  MBarrier& b = mbarrier_at(c, off, "mbarrier.try_wait.parity");
  mbarrier_check_use(c, off, b, f, false, false, "mbarrier.try_wait.parity");
  // On hardware try_wait may time out and return false; here it returns once the phase has
  // completed, which a spin loop around it cannot tell apart.
  wait_parity(f, c, off, b, parity, WaitTag{nullptr, nullptr}, "mbarrier.try_wait.parity");
  return true;
}

void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag) {
  Fiber* f = self();
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier wait");
  if (tag.role) f->role = tag.role;
  if (tag.barrier) c.tag_offsets[tag.barrier].insert(off);
  MBarrier& b = mbarrier_at(c, off, "mbarrier wait");
  mbarrier_check_use(c, off, b, f, false, false, "mbarrier wait");
  wait_parity(f, c, off, b, parity, tag, "mbarrier.try_wait.parity");
}

// ---------------------------------------------------------------------------------------------
// Fences (common/fence.cuh).
// ---------------------------------------------------------------------------------------------
namespace {
void mark_inits_fenced(Fiber* f) {
  for (auto& [off, b] : f->cta->mbar)
    if (b.init && b.init_by == f) b.fenced = true;
}
}  // namespace

void fence_proxy_async_shared() {
  Fiber* f = self();
  Cta& c = *f->cta;
  track_writes(f);
  for (uint32_t w : f->unfenced)
    if (c.unfenced[w] == f->tid) c.unfenced[w] = -1;
  f->unfenced.clear();
  // The CUDA programming guide publishes mbarrier.init to TMA with this fence, too.
  mark_inits_fenced(f);
}

void fence_mbarrier_init() { mark_inits_fenced(self()); }

}  // namespace gemm::emu

// The wrappers are declared in namespace gemm; the definitions above are in gemm::emu. Forward.
namespace gemm {
void mbarrier_init(uint64_t* bar, uint32_t count) { emu::mbarrier_init(bar, count); }
void mbarrier_arrive(uint64_t* bar) { emu::mbarrier_arrive(bar); }
void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) { emu::mbarrier_arrive_expect_tx(bar, bytes); }
void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank) { emu::mbarrier_arrive_cluster(bar, cta_rank); }
bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity) { return emu::mbarrier_try_wait_parity(bar, parity); }
void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag) { emu::mbarrier_wait(bar, parity, tag); }
void fence_proxy_async_shared() { emu::fence_proxy_async_shared(); }
void fence_mbarrier_init() { emu::fence_mbarrier_init(); }
}  // namespace gemm
