// mbarrier and the proxy fences, as the PTX ISA defines them: an arrival count, a transaction
// (tx) byte count and a phase; a phase completes when its pending arrivals and its tx-count are
// both zero, and the barrier then reloads the arrival count and moves to the next phase.
//
// Beyond the counts, each barrier remembers what the rules of core.h need: the clocks of its
// phases' arrivals (happens-before), the threads that waited on its last two phases (a waiter
// must have returned, ordered before the next phase's arrivals: else it can fall two phases
// behind), who contributed to a phase (the convergence rule), and the unfenced tcgen05 work its
// arrivals carried.
#include "emu/core.h"
#include "emu/trace.h"

namespace gemm::emu {

namespace {

constexpr int64_t kMaxCount = (int64_t{1} << 20) - 1;

std::string at_loc(const Fiber* f) { return thread_name(f) + " at " + where(f->loc); }

// Completes the current phase if its arrivals and bytes are in. `by` names the completing event.
void try_complete(Cta& c, uint32_t off, MBarrier& b, const std::string& by) {
  if (b.pending != 0 || b.tx != 0) return;
  auto it = b.inflight.find(b.phase);
  if (it != b.inflight.end() && it->second > 0) {
    // Named at the arrive.expect_tx that announced too few bytes (else at a load still in flight),
    // with one of the loads the phase did not wait for.
    auto loads = b.inflight_loads.find(b.phase);
    const Issue* load = loads != b.inflight_loads.end() && !loads->second.empty() ? loads->second.front() : nullptr;
    const bool announced = known(b.expect_loc);
    fail_loc(announced ? b.expect_loc
             : load    ? load->contrib.loc
                       : SourceLoc{},
             announced ? b.expect_by
             : load    ? load->who
                       : nullptr,
             "expect_tx bytes differ from the bytes delivered",
             "mbarrier " + barrier_name(c, off) + " of " + c.name() + " completed phase " + std::to_string(b.phase) +
                 " with all " + std::to_string(b.count) + " arrivals and its expected " + std::to_string(b.expected) +
                 " tx bytes in" +
                 (announced ? " (announced by the arrive.expect_tx at " + where(b.expect_loc) + ")" : "") + ", while " +
                 std::to_string(it->second) + " TMA load(s) crediting that phase are still in flight" +
                 (load ? " (" + load->name + ")" : "") +
                 ": expect_tx announced fewer bytes than the loads deliver (every load credits its full box, zero "
                 "fill included; a CTA pair's barrier expects the bytes of both CTAs' loads)");
  }
  if (it != b.inflight.end()) b.inflight.erase(it);
  b.inflight_loads.erase(b.phase);
  b.expect_loc = SourceLoc{};
  b.expect_by = nullptr;
  // Every thread that waited on the previous phase must have returned from its wait, ordered before
  // the arrivals of this one: else on hardware it may still spin when the barrier's parity comes
  // round again, and then it hangs or passes a phase late.
  for (const WaitRec& r : b.waited_prev) {
    if (r.pass && b.phase_xc.at(r.f->slot) >= r.pass) continue;
    fail_loc(r.loc, r.f, "mbarrier wait two phases behind",
             thread_name(r.f) + " waits for parity " + std::to_string(r.parity) + " of mbarrier " +
                 barrier_name(c, off) + " of " + c.name() + ", i.e. for its phase " + std::to_string(b.phase - 1) +
                 (r.pass ? ", and has returned from that wait, but nothing orders its return before the arrivals of "
                           "the next phase"
                         : ", and has not yet returned from that wait") +
                 "; that next phase (" + std::to_string(b.phase) + ") has now completed too (" + by +
                 "), so the barrier's parity is " + std::to_string(r.parity) +
                 " again: on hardware this waiter can hang, or pass a phase late. A barrier that keeps every waiter "
                 "within one phase of the mbarrier (such as the K loop's __syncthreads) is missing");
  }
  b.waited_prev = std::move(b.waited_cur);
  b.waited_cur.clear();
  b.tc_done = b.tc_phase;
  b.tc_phase = TcKnow{};
  b.unf_done = b.unf_phase;
  b.unf_phase = TcUnfenced{};
  ++b.phase;
  b.done_vc = std::move(b.phase_vc);
  b.phase_vc = Clock{};
  b.done_xc = std::move(b.phase_xc);
  b.phase_xc = Clock{};
  b.done_xc.raise(b.slot, b.phase);
  b.done_epoch = emu().next_epoch();
  b.contrib_done = std::move(b.contrib);
  b.contrib.clear();
  b.last_arrival = by;
  b.pending = b.count;
  b.expected = 0;
  b.delivered = 0;
  wake_all(b.waiters);
}

std::string arrival_detail(Cta& c, uint32_t off, const MBarrier& b) {
  return "mbarrier " + barrier_name(c, off) + " of " + c.name() + " (init count " + std::to_string(b.count) +
         ", phase " + std::to_string(b.phase) + ", " + std::to_string(b.tx) + " tx bytes pending)";
}

// An mbarrier arrival by `f` notes, on each wgmma group of its warp that it has not yet waited
// for, that the warp signalled something before that wait (named if the group's buffer is then
// overwritten: a stage released before the warp's own wgmma.wait_group).
void note_early_release(Fiber* f, Cta& c, uint32_t off) {
  const size_t g = static_cast<size_t>(f->tid / 128);
  if (g >= c.wg.size()) return;
  WarpgroupState& wg = c.wg[g];
  for (uint32_t id : wg.unseen[f->warp % 4]) {
    AsyncReader& r = reader(id);
    if (r.seen[f->lane] || std::any_of(r.early.begin(), r.early.end(), [off](const auto& e) { return e.first == off; }))
      continue;
    r.early.push_back({off, thread_name(f) + " arrived on mbarrier " + barrier_name(c, off) + " at " + where(f->loc) +
                                " before its wgmma.wait_group covered this group"});
  }
}

}  // namespace

MBarrier& mbarrier_at(Cta& c, uint32_t off, const char* what) {
  if (off % 8 != 0) fail("mbarrier", std::string(what) + ": the mbarrier must be 8-byte aligned");
  auto it = c.mbar.find(off);
  if (it == c.mbar.end() || !it->second.init)
    fail("mbarrier used before initialisation", std::string(what) + " on shared " + hex(c.addr_of(off)) + " of " +
                                                    c.name() + ", which no mbarrier.init has initialised");
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
             thread_name(b.init_by) + " at " + where(b.init_loc) +
             ", which has not run fence.mbarrier_init (fence_mbarrier_init) since: the init may not be visible "
             "to other threads or to the async proxy");
  if (remote && c.cluster->barrier_phase <= b.cluster_phase_at_init)
    fail("mbarrier used before fence.mbarrier_init",
         std::string(what) + " from another CTA of the cluster on mbarrier " + barrier_name(c, off) + " of " +
             c.name() +
             " before any cluster barrier completed after its initialisation: peers may signal a barrier only "
             "after fence.mbarrier_init and a cluster barrier (barrier.cluster.arrive/wait)");
}

Issue issue_of(Fiber* f, const char* what) {
  Issue is;
  is.who = f;
  is.contrib.epoch = tick(f);
  is.vc = f->vc;
  is.xc = f->xc;
  is.contrib.who = f;
  is.contrib.who_waited_async = f->async_wait;
  is.contrib.who_wait = f->async_wait_what;
  is.contrib.loc = f->loc;
  is.contrib.what = what;
  is.name = std::string(what) + " issued by " + at_loc(f);
  return is;
}

void mbarrier_arrive_on(Cta& c, uint32_t off, const char* what, const Issue* issue, bool relaxed) {
  MBarrier& b = mbarrier_at(c, off, what);
  Fiber* f = issue ? nullptr : self();
  // An arrival one too many (below) by a thread whose wait before passed early: that wait let it
  // arrive for a phase it should have waited for.
  const Clock& xc = issue ? issue->xc : f->xc;
  if (f && (b.pending == 0 || xc.at(b.slot) < b.phase))
    if (const WaitMemo* e = early_wait(f))
      fail_early(f, *e,
                 "its " + std::string(what) + " at " + where(f->loc) + " on " + arrival_detail(c, off, b) +
                     " came before that barrier's phase " + std::to_string(b.pending == 0 ? b.phase : b.phase - 1) +
                     " was done with: one arrival more than the phase's count of " + std::to_string(b.count));
  if (b.pending == 0)
    fail_loc(issue ? issue->contrib.loc : f->loc, issue ? issue->who : f, "more arrivals than the init count",
             std::string(what) + " on " + arrival_detail(c, off, b) + " whose " + std::to_string(b.count) +
                 " arrivals of this phase have all come (the phase waits only for tx bytes)");
  // An arrival belongs to the phase it is ordered after the completion of: one that comes after a
  // phase completed, but is not ordered after that completion, was meant for the completed phase,
  // which then got more arrivals than its count.
  if (!issue && f->cta != &c) b.remote_arrivals = true;
  if (xc.at(b.slot) < b.phase)
    fail_loc(issue ? issue->contrib.loc : f->loc, issue ? issue->who : f, "more arrivals than the init count",
             std::string(what) + " arrives on " + arrival_detail(c, off, b) + ", initialised at " + where(b.init_loc) +
                 ", but is not ordered after the completion of its phase " + std::to_string(b.phase - 1) +
                 " (the last arrival of that phase: " + b.last_arrival + "): this arrival is one more for phase " +
                 std::to_string(b.phase - 1) + ", which had already had its " + std::to_string(b.count) +
                 ". The init count is too low (it must equal the arrivals of one phase), or a thread arrives once "
                 "too often" +
                 (b.remote_arrivals
                      ? std::string(", or a thread of another CTA of the cluster arrived for the next phase early: a "
                                    "remote arrival counts toward the phase it lands in, so that CTA must be held "
                                    "back until this phase completes")
                      : std::string()));
  if (issue) {
    b.phase_vc.join(issue->vc);
    b.phase_xc.join(issue->xc);
    b.contrib.push_back(issue->contrib);
    // A tcgen05.commit's arrival tells the waiters that MMAs have written TMEM.
    b.tc_phase.w = std::max(b.tc_phase.w, emu().epoch);
  } else {
    // A thread's arrival publishes its tcgen05 dependencies and its clock to the waiters of the phase;
    // a relaxed one, only what orders execution (not its shared-memory writes, not its memory clock).
    TcKnow pub = f->tc_pub;
    if (relaxed) pub.s = 0;
    b.tc_phase.merge(pub);
    for (int k = 0; k < 2; ++k)
      if (f->tc_own.e[k] > b.unf_phase.e[k]) {
        b.unf_phase.e[k] = f->tc_own.e[k];
        b.unf_phase.who[k] = f;
        b.unf_phase.op[k] = f->tc_own.op[k];
        b.unf_phase.op_name[k] = f->tc_own.op_name[k];
        b.unf_phase.sync[k] = f->loc;
        b.unf_phase.sync_what[k] = what;
      }
    Contrib k;
    k.who = f;
    k.epoch = f->vc.at(f->slot);
    k.who_waited_async = f->async_wait;
    k.who_wait = f->async_wait_what;
    k.loc = f->loc;
    k.what = what;
    b.contrib.push_back(k);
    if (!relaxed) b.phase_vc.join(f->vc);
    b.phase_xc.join(f->xc);
    if (&c == f->cta) note_early_release(f, c, off);  // its own warpgroup's readers are in its own CTA
  }
  --b.pending;
  const uint64_t before = b.phase;
  try_complete(c, off, b, issue ? issue->name : std::string(what) + " by " + at_loc(f));
  if (f && b.phase != before) f->xc.raise(b.slot, b.phase);  // it completed the phase itself
}

void mbarrier_complete_tx(Cta& c, uint32_t off, uint32_t bytes, uint64_t phase_at_issue, const Issue& issue) {
  const char* what = issue.name.c_str();
  MBarrier& b = mbarrier_at(c, off, what);
  auto it = b.inflight.find(phase_at_issue);
  if (it != b.inflight.end() && --it->second == 0) b.inflight.erase(it);
  auto loads = b.inflight_loads.find(phase_at_issue);
  if (loads != b.inflight_loads.end()) {
    auto l = std::find(loads->second.begin(), loads->second.end(), &issue);
    if (l != loads->second.end()) loads->second.erase(l);
    if (loads->second.empty()) b.inflight_loads.erase(loads);
  }
  if (c.done)
    fail_loc(issue.contrib.loc, issue.who, "CTA exiting with peer traffic in flight",
             std::string(what) + " completed its bytes on mbarrier " + barrier_name(c, off) + " of " + c.name() +
                 " after that CTA exited");
  if (b.phase != phase_at_issue)
    fail_loc(issue.contrib.loc, issue.who, "expect_tx bytes differ from the bytes delivered",
             std::string(what) + " delivered " + std::to_string(bytes) + " bytes to " + arrival_detail(c, off, b) +
                 " after the phase it was issued in (" + std::to_string(phase_at_issue) +
                 ") had completed: expect_tx announced fewer bytes than the loads deliver");
  b.tx -= bytes;
  b.delivered += bytes;
  b.tc_phase.s = std::max(b.tc_phase.s, emu().epoch);  // TMA wrote shared memory
  b.phase_vc.join(issue.vc);
  b.phase_xc.join(issue.xc);
  b.contrib.push_back(issue.contrib);
  if (b.tx < -kMaxCount) fail("mbarrier tx-count out of range", arrival_detail(c, off, b));
  try_complete(c, off, b, issue.name);
}

// ---------------------------------------------------------------------------------------------
// The wrappers of common/mbarrier.cuh.
// ---------------------------------------------------------------------------------------------
void mbarrier_init(uint64_t* bar, uint32_t count, SourceLoc loc) {
  Fiber* f = enter(loc, "mbarrier.init");
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
  b.init_loc = loc;
  b.slot = c.cluster->next_slot++;
  b.cluster_phase_at_init = c.cluster->barrier_phase;
}

namespace {

// A thread's own arrival (arrive, arrive.expect_tx: .release; a remote arrive: .relaxed).
void thread_arrive(Fiber* f, Cta& target, uint32_t off, const char* what, bool relaxed = false) {
  note_fed(f, target, off);
  track_writes(f);  // its stores so far are ordered before the arrival
  tick(f);
  mbarrier_arrive_on(target, off, what, nullptr, relaxed);
}

}  // namespace

void mbarrier_arrive(uint64_t* bar, SourceLoc loc) {
  Fiber* f = enter(loc, "mbarrier.arrive");
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier.arrive");
  MBarrier& b = mbarrier_at(c, off, "mbarrier.arrive");
  mbarrier_check_use(c, off, b, f, false, false, "mbarrier.arrive");
  thread_arrive(f, c, off, "mbarrier.arrive");
}

void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes, SourceLoc loc) {
  Fiber* f = enter(loc, "mbarrier.arrive.expect_tx");
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier.arrive.expect_tx");
  MBarrier& b = mbarrier_at(c, off, "mbarrier.arrive.expect_tx");
  mbarrier_check_use(c, off, b, f, false, false, "mbarrier.arrive.expect_tx");
  b.tx += bytes;
  b.expected += bytes;
  b.expect_loc = loc;
  b.expect_by = f;
  if (b.tx > kMaxCount)
    fail("mbarrier tx-count out of range",
         "expect_tx of " + std::to_string(bytes) + " bytes takes " + arrival_detail(c, off, b) + " past 2^20 - 1");
  thread_arrive(f, c, off, "mbarrier.arrive.expect_tx");
}

void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank, SourceLoc loc) {
  Fiber* f = enter(loc, "mbarrier.arrive.relaxed.shared::cluster");
  const uint32_t off = smem_offset(*f->cta, bar, 8, "mbarrier.arrive.relaxed.shared::cluster");
  Cta& target = cta_of_rank(cta_rank);
  MBarrier& b = mbarrier_at(target, off, "mbarrier.arrive.relaxed.shared::cluster");
  mbarrier_check_use(target, off, b, f, &target != f->cta, false, "mbarrier.arrive.relaxed.shared::cluster");
  // mbarrier.arrive.relaxed.cluster (common/mbarrier.cuh): it tells the waiters that this thread
  // got this far, and publishes none of its writes.
  thread_arrive(f, target, off, "mbarrier.arrive.relaxed.shared::cluster", true);
}

namespace {

bool parity_done(const MBarrier& b, uint32_t parity) { return (b.phase & 1) != (parity & 1); }

// Notes a wait out of step for the deadlock report (threads with the same note are counted):
// `what` follows "waited at <its location>", `primary` the location.
void note_skip(const Fiber* f, const std::string& what, const std::string& primary, bool repeat) {
  auto& skips = emu().skips;
  auto s = std::find_if(skips.begin(), skips.end(), [&](const Emu::Skip& x) { return x.what == what; });
  if (s != skips.end()) ++s->threads;
  else if (skips.size() < 4 || (repeat && skips.size() < 8))
    skips.push_back(
        {thread_name(f), "waited at " + where(f->loc) + " " + what, "waited " + primary, 1, f->loc, repeat});
}

// The ring of the barriers waited on under one WaitTag: its stage count and the stage of `off`
// (from the lowest offset seen under the tag, in steps of the smallest distance between them).
bool ring_of(Cta& c, uint32_t off, WaitTag tag, uint64_t* stages, uint64_t* stage) {
  if (!tag.barrier) return false;
  const std::set<uint32_t>& offs = c.tag_offsets[tag.barrier];
  if (offs.empty()) return false;
  uint32_t stride = 0;
  for (auto it = offs.begin(); std::next(it) != offs.end(); ++it) {
    const uint32_t d = *std::next(it) - *it;
    stride = stride ? std::min(stride, d) : d;
  }
  if (stride == 0) stride = 8;
  *stages = (*offs.rbegin() - *offs.begin()) / stride + 1;
  *stage = (off - *offs.begin()) / stride;
  return true;
}

// The barriers waited on under one WaitTag form a ring of stages: a thread that walks the ring waits
// for position phase * stages + stage, one after another. A wait for another position than the
// next one is noted for the deadlock report (out of step with the barriers: a pipeline state).
void note_ring_position(Fiber* f, Cta& c, uint32_t off, int64_t target, WaitTag tag, bool noted) {
  uint64_t stages = 0, stage = 0;
  if (!ring_of(c, off, tag, &stages, &stage) || stages < 2 || !f->ring_walk[tag.barrier].moved) return;
  const int64_t pos = target * static_cast<int64_t>(stages) + static_cast<int64_t>(stage);
  auto it = f->ring_pos.find(tag.barrier);
  // (Not where the wait itself was noted already: the same parity twice, which skips positions too.)
  if (it != f->ring_pos.end() && pos != it->second + 1 && !noted) {
    const int64_t prev = it->second;
    const int64_t n = static_cast<int64_t>(stages);
    const std::string what = "on the '" + std::string(tag.barrier) + "' ring for stage " + std::to_string(stage) +
                             " phase " + std::to_string(target) + " (position " + std::to_string(pos) +
                             " of the ring of " + std::to_string(stages) +
                             " stages), while its previous wait on that ring was for stage " +
                             std::to_string(prev % n) + " phase " + std::to_string(prev / n) +
                             (pos > prev + 1 ? ": it skipped " + std::to_string(pos - prev - 1) + " position(s)"
                                             : std::string(": it went back"));
    note_skip(f, what, what, false);
  }
  f->ring_pos[tag.barrier] = pos;
}

// Whether, since its previous wait on this barrier, the thread waited once on each other stage of
// the barrier's ring, in order (WaitMemo::ring_lap).
void note_ring_walk(Fiber* f, Cta& c, uint32_t off, size_t slot, WaitTag tag, WaitMemo& m) {
  uint64_t stages = 0, stage = 0;
  if (!ring_of(c, off, tag, &stages, &stage)) return;
  Fiber::RingWalk& r = f->ring_walk[tag.barrier];
  r.in_order = r.waits > 0 && stage == (r.stage + 1) % stages ? r.in_order + 1 : 1;
  if (r.waits > 0 && stage != r.stage) r.moved = true;
  m.one_stage = !r.moved;
  auto it = f->ring_index.find(slot);
  m.ring_lap = it != f->ring_index.end() && r.waits - it->second == stages && r.in_order >= stages + 1;
  m.stages = stages;
  m.tag = tag.barrier;
  f->ring_index[slot] = r.waits;
  r.stage = stage;
  ++r.waits;
}

WaitRec* find_rec(std::vector<WaitRec>& v, const Fiber* f) {
  for (WaitRec& r : v)
    if (r.f == f) return &r;
  return nullptr;
}

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
  // The phase it waits for: the one in progress (parity of the current phase), else the last
  // completed one (-1 on a fresh barrier waited on with parity 1: that wait passes at once).
  b.waited = true;
  const bool at_once = parity_done(b, parity);
  const int64_t target = static_cast<int64_t>(b.phase) - (at_once ? 1 : 0);
  WaitMemo m;
  m.cta = &c;
  m.off = off;
  m.target = target;
  m.parity = parity & 1;
  m.loc = f->loc;
  m.epoch = emu().epoch;
  m.at_once = at_once;
  if (auto it = f->waits.find(b.slot); it != f->waits.end()) {
    m.has_prev = true;
    m.prev_target = it->second.target;
    m.prev_parity = it->second.parity;
    m.prev_loc = it->second.loc;
  }
  m.early = at_once && (m.has_prev ? target <= m.prev_target : target < 0);
  note_ring_walk(f, c, off, b.slot, tag, m);
  // A wait for a phase other than the one after this thread's last wait on the barrier skips phases
  // (legal, but a pipeline out of step with its barriers when the kernel then hangs), or names one
  // it waited for already. The parity of its previous wait again (the parity names phases of one
  // parity) is noted as such: it passes at once for the same phase, or waits for the phase after
  // the next one.
  const bool repeat = m.has_prev && m.parity == m.prev_parity;
  // (Ring positions from the first phase on: the stages of the ring are still being seen on its
  // first lap, which a producer's waits for phase -1 walk.)
  if (target >= 0) note_ring_position(f, c, off, target, tag, repeat);
  if (repeat) {
    const int64_t prev = m.prev_target;
    const std::string barrier = "on mbarrier " + barrier_name(c, off) + " of " + c.name();
    const std::string what =
        "for parity " + std::to_string(m.parity) + ", the parity of its previous wait on it (for " + phase_name(prev) +
        ")" +
        (m.ring_lap && m.stages >= 2
             ? ", after one wait on each other stage of the '" + std::string(m.tag) + "' ring of " +
                   std::to_string(m.stages) +
                   " stages: its stage index wrapped to 0, where its phase should have flipped, and did not "
                   "(PipelineState::advance)"
             : std::string(": a thread that waits for each phase of a barrier in turn alternates the parity")) +
        "; so it " +
        (at_once ? "passed at once, for " + phase_name(target) + " again"
                 : "waits for phase " + std::to_string(target) + ", skipping phase" +
                       (target > prev + 2 ? "s " + std::to_string(prev + 1) + "-" + std::to_string(target - 1)
                                          : " " + std::to_string(prev + 1)));
    note_skip(f, barrier + " " + what, barrier + " " + what, m.ring_lap || m.one_stage);
  } else if (m.has_prev && target != m.prev_target + 1) {
    const int64_t prev = m.prev_target;
    const std::string what =
        "for " + phase_name(target) + " of mbarrier " + barrier_name(c, off) + " of " + c.name() +
        ", while its previous wait on that barrier was for " + phase_name(prev) +
        (target > prev + 1 ? ": it skipped phase" + std::string(target > prev + 2 ? "s " : " ") +
                                 std::to_string(prev + 1) + (target > prev + 2 ? "-" + std::to_string(target - 1) : "")
                           : std::string(": it went back"));
    note_skip(f, what, what, false);
  }
  f->waits[b.slot] = m;
  ++f->waits_done;
  // The waiters of a phase, for the two-phases-behind rule (none for the phase before the first).
  WaitRec rec{f, 0, f->loc, parity & 1};
  std::vector<WaitRec>* list = target < 0 ? nullptr : at_once ? &b.waited_prev : &b.waited_cur;
  if (list) {
    if (WaitRec* r = find_rec(*list, f)) *r = rec;
    else list->push_back(rec);
  }
  while (!parity_done(b, parity)) {
    b.waiters.push_back(f);
    block(w);
  }
  const uint64_t t = tick(f);
  f->last_passed = m;
  f->ld_since_wait.clear();
  if (list)
    if (WaitRec* r = find_rec(b.waited_prev, f)) r->pass = t;
  learn(f, b.tc_done);
  for (int k = 0; k < 2; ++k)
    if (b.unf_done.who[k] != f && b.unf_done.e[k] > f->tc_unf.e[k]) {
      f->tc_unf.e[k] = b.unf_done.e[k];
      f->tc_unf.who[k] = b.unf_done.who[k];
      f->tc_unf.op[k] = b.unf_done.op[k];
      f->tc_unf.op_name[k] = b.unf_done.op_name[k];
      f->tc_unf.sync[k] = b.unf_done.sync[k];
      f->tc_unf.sync_what[k] = b.unf_done.sync_what[k];
    }
  f->vc.join(b.done_vc);
  f->xc.join(b.done_xc);
  f->xc.raise(b.slot, b.phase);
  f->last_wait_cta = &c;
  f->last_wait_off = off;
  f->last_wait_phase = b.phase ? b.phase - 1 : ~uint64_t{0};  // a fresh barrier's "phase -1": none
  f->last_wait_loc = f->loc;
  // The convergence rule (see Fiber::spun).
  const uint64_t conv = c.warps[f->warp].conv_epoch;
  if (b.done_epoch > conv && !f->async_wait) {
    f->async_wait = true;
    f->async_wait_what = "mbarrier " + barrier_name(c, off) + " at " + where(f->loc);
  }
  if (!f->spun)
    for (const Contrib& k : b.contrib_done)
      if (k.who && k.who != f && k.who->cta == f->cta && k.who->warp == f->warp && k.epoch > conv &&
          k.who_waited_async) {
        f->spun = true;
        f->spun_what = "after waiting at " + where(f->loc) + " on mbarrier " + barrier_name(c, off) + ", which lane " +
                       std::to_string(k.who->lane) + " of the same warp completed (" + k.what + " at " + where(k.loc) +
                       ") inside a branch these lanes did not take, after waiting there "
                       "itself on " +
                       k.who_wait;
        break;
      }
}

}  // namespace

void note_fed(Fiber* f, const Cta& c, uint32_t off) {
  const std::pair<const Cta*, uint32_t> b{&c, off};
  if (std::find(f->fed.begin(), f->fed.end(), b) == f->fed.end()) f->fed.push_back(b);
}

std::string phase_name(int64_t phase) {
  return phase < 0 ? std::string("phase -1 (before the first)") : "phase " + std::to_string(phase);
}

const WaitMemo* early_wait_on(const Fiber* f, size_t slot) {
  auto it = f->waits.find(slot);
  return it != f->waits.end() && it->second.early ? &it->second : nullptr;
}

const WaitMemo* early_wait(const Fiber* f) { return f->last_passed.early ? &f->last_passed : nullptr; }

void fail_early(const Fiber* waiter, const WaitMemo& m, const std::string& then) {
  Cta& c = *m.cta;
  const std::string p = std::to_string(m.parity), q = std::to_string(m.parity ^ 1u);
  // It passed at once: the barrier had completed the phase it named, so target + 1 phases.
  const int64_t phases = m.target + 1;
  std::string d = thread_name(waiter) + " waited on mbarrier " + barrier_name(c, m.off) +
                  (&c != waiter->cta ? " of " + c.name() : "") + " for parity " + p + " and passed at once: ";
  if (!m.has_prev) {
    d += "the barrier had completed no phase yet, and parity 1 names the phase before its first, which never runs, "
         "so the wait ordered nothing";
  } else if (m.target == m.prev_target) {
    d += "its previous wait on that barrier (at " + where(m.prev_loc) + ") was for " + phase_name(m.prev_target) +
         " too, and this one named that phase again, while the phase after it, " + phase_name(phases) + " (parity " +
         q + "), was still in progress: the parity is a phase off";
    if (m.ring_lap && m.stages >= 2)
      d += ". Between the two waits the thread waited once on each other stage of the '" + std::string(m.tag) +
           "' ring of " + std::to_string(m.stages) +
           " stages: its stage index wrapped to 0, where its phase should have flipped, and did not "
           "(PipelineState::advance)";
    else d += " (a thread that waits for each phase of a barrier in turn alternates the parity)";
  } else {
    d += "its previous wait on that barrier (at " + where(m.prev_loc) + ") was for " + phase_name(m.prev_target) +
         ", and this one named " + phase_name(m.target) +
         ", an earlier phase, which had completed: the position it waits for went back (is a PipelineState "
         "re-initialised, or advanced a different number of times by the two sides?)";
  }
  d += "; then " + then;
  if (!m.has_prev)
    d += ". On a barrier's first phase a wait for its completion is for parity 0 (parity 1 passes at once on a "
         "fresh barrier, which only a first wait for a free slot, as a producer's, wants): a wrong initial phase?";
  fail_loc(m.loc, waiter, "mbarrier wait passed early", d);
}

bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity, SourceLoc loc) {
  Fiber* f = enter(loc, "mbarrier.try_wait.parity");
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, "mbarrier.try_wait.parity");
  MBarrier& b = mbarrier_at(c, off, "mbarrier.try_wait.parity");
  mbarrier_check_use(c, off, b, f, false, false, "mbarrier.try_wait.parity");
  // On hardware try_wait may time out and return false; here it returns once the phase has
  // completed, which a spin loop around it cannot tell apart.
  wait_parity(f, c, off, b, parity, WaitTag{nullptr, nullptr}, "mbarrier.try_wait.parity");
  return true;
}

void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag, SourceLoc loc) {
  Fiber* f = enter(loc, "mbarrier wait");
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

void fence_proxy_async_shared(SourceLoc loc) {
  Fiber* f = enter(loc, "fence.proxy.async.shared::cta");
  Cta& c = *f->cta;
  track_writes(f);
  for (uint32_t w : f->unfenced)
    if (c.unfenced[w] == f->tid) c.unfenced[w] = -1;
  f->unfenced.clear();
  // The CUDA programming guide publishes mbarrier.init to TMA with this fence, too.
  mark_inits_fenced(f);
}

void fence_mbarrier_init(SourceLoc loc) { mark_inits_fenced(enter(loc, "fence.mbarrier_init")); }

}  // namespace gemm::emu

// The wrappers are declared in namespace gemm; the definitions above are in gemm::emu. Forward.
namespace gemm {
void mbarrier_init(uint64_t* bar, uint32_t count, SourceLoc loc) { emu::mbarrier_init(bar, count, loc); }
void mbarrier_arrive(uint64_t* bar, SourceLoc loc) { emu::mbarrier_arrive(bar, loc); }
void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes, SourceLoc loc) {
  emu::mbarrier_arrive_expect_tx(bar, bytes, loc);
}
void mbarrier_arrive_cluster(uint64_t* bar, uint32_t cta_rank, SourceLoc loc) {
  emu::mbarrier_arrive_cluster(bar, cta_rank, loc);
}
bool mbarrier_try_wait_parity(uint64_t* bar, uint32_t parity, SourceLoc loc) {
  return emu::mbarrier_try_wait_parity(bar, parity, loc);
}
void mbarrier_wait(uint64_t* bar, uint32_t parity, WaitTag tag, SourceLoc loc) {
  emu::trace_event(TraceKind::wait_begin, bar, parity, tag.barrier);  // the timeline (emu/trace.h)
  emu::mbarrier_wait(bar, parity, tag, loc);
  emu::trace_event(TraceKind::wait_end, bar, parity, tag.barrier);
}
void fence_proxy_async_shared(SourceLoc loc) { emu::fence_proxy_async_shared(loc); }
void fence_mbarrier_init(SourceLoc loc) { emu::fence_mbarrier_init(loc); }
}  // namespace gemm
