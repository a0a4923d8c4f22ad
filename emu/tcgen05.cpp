// Tensor Memory and tcgen05 (sm100a): allocation (128 lanes x 512 columns per CTA, power-of-2
// column counts from 32 to 512, one whole warp), tcgen05.mma .kind::f16 with cta_group 1 and 2
// (descriptors decoded per the sm100 tables), commit (plain and multicast), tcgen05.ld
// .32x32b.xN limited to the warp's quarter of the lanes, wait::ld, and the thread-sync fences.
#include "emu/core.h"
#include "emu/trace.h"

namespace gemm::emu {

namespace {

constexpr uint32_t kRegPoison = 0x7FBADBADu;
constexpr uint32_t kTmemPoison = 0x7FC0FFEEu;

void use_cta_group(int cg, const char* what) {
  Emu& e = emu();
  if (cg != 1 && cg != 2) fail("cta_group", std::string(what) + ": cta_group must be 1 or 2");
  if (e.cta_group == 0) e.cta_group = cg;
  if (e.cta_group != cg)
    fail("mixed cta_group in one kernel",
         std::string(what) + " with cta_group::" + std::to_string(cg) +
             " in a kernel whose earlier tcgen05 instructions used cta_group::" + std::to_string(e.cta_group) +
             ": every tcgen05 instruction of a kernel must use the same cta_group");
}

Tmem& tmem_of(Cta& c) {
  if (!c.tmem) c.tmem = std::make_unique<Tmem>();
  return *c.tmem;
}

// The fence rule (see TcKnow): a tcgen05.ld needs TMEM writes it learned of through a thread
// synchronisation to be covered by a later tcgen05.fence::after_thread_sync; a tcgen05.mma needs
// that for TMEM writes and reads and shared-memory writes.
void check_fenced_after_sync(Fiber* f, const char* what, bool mma) {
  check_tc_unfenced(f, what);
  const TcKnow& k = f->tc_known;
  const TcKnow& d = f->tc_fenced;
  // An MMA overwrites what others read (r) and reads what others wrote (s); any tcgen05 operation
  // follows the MMAs and allocations it learned of (w).
  const int part = mma && k.r > d.r ? 1 : mma && k.s > d.s ? 2 : k.w > d.w ? 0 : -1;
  static const char* const deps[3] = {"TMEM written by tcgen05.mma or tcgen05.alloc", "TMEM read by tcgen05.ld",
                                      "shared memory written by threads or TMA"};
  if (part >= 0)
    fail_at(f, "missing tcgen05.fence::after_thread_sync",
            std::string(what) + " after a thread synchronisation (" +
                (known(f->tc_learned_at[part])
                     ? std::string("its ") + f->tc_learned_op[part] + " at " + where(f->tc_learned_at[part])
                     : std::string("a barrier or an mbarrier wait")) +
                ") that ordered it after other threads' work (" + deps[part] +
                "), with no tcgen05.fence::after_thread_sync in between: without the fence the "
                "asynchronous tcgen05 operation is not ordered after that synchronisation (the fence orders "
                "what follows it after every synchronisation before it, so one fence after the last wait "
                "serves them all)");
}

std::string cols_string(uint32_t col, uint32_t n) {
  return "columns " + std::to_string(col) + "-" + std::to_string(col + n - 1);
}

void check_columns(Cta& c, uint32_t col, uint32_t n, const char* what) {
  Tmem& t = tmem_of(c);
  if (col + n > Tmem::kCols || !t.allocated(col, n))
    fail("TMEM access outside the allocation", std::string(what) + " touches TMEM " + cols_string(col, n) + " of " +
                                                   c.name() + ", which are not (all) allocated");
}

// The words of shared memory `rows` rows (from `row0`) of a K16 operand read.
std::vector<uint32_t> operand_words(Cta& c, const model::MatrixDesc& d, int row0, int rows, const char* which) {
  std::vector<uint32_t> words;
  words.reserve(static_cast<size_t>(rows) * 8);
  for (int r = row0; r < row0 + rows; ++r)
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t off = addr_offset(c, model::kmajor_chunk_addr(d, r, k), 16, which);
      for (uint32_t w = 0; w < 4; ++w) words.push_back(off / 4 + w);
    }
  return words;
}

std::vector<float> read_operand(Cta& c, const model::MatrixDesc& d, int rows, int type, bool negate) {
  std::vector<float> v(static_cast<size_t>(rows) * 16);
  for (int r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t off = addr_offset(c, model::kmajor_chunk_addr(d, r, k), 16, "tcgen05.mma");
      uint16_t h[8];
      std::memcpy(h, c.smem + off, 16);
      for (int e = 0; e < 8; ++e) {
        const float x = type == 1 ? bf16_to_float(h[e]) : half_to_float(h[e]);
        v[r * 16 + k * 8 + e] = negate ? -x : x;
      }
    }
  return v;
}

model::MatrixDesc decode_smem(uint64_t desc, const char* which) {
  const model::DescDecode d = model::decode_sm100_desc(desc);
  if (!d.ok) fail("tcgen05 shared-memory descriptor", std::string(which) + ": " + d.error);
  const std::string align = model::check_desc_alignment(d.desc);
  if (!align.empty()) fail("swizzled tile not aligned to its atom", std::string(which) + ": " + align);
  return d.desc;
}

struct MmaPart {
  Cta* cta;  // whose A rows and TMEM lanes
};

// A thread's own tcgen05 work (kind 0: TMEM written, 1: TMEM read), not yet fenced before a
// thread synchronisation.
void own_tc(Fiber* f, int kind, uint64_t epoch) {
  f->tc_own.e[kind] = epoch;
  f->tc_own.op[kind] = f->loc;
  f->tc_own.op_name[kind] = f->op;
  f->tc_own.who[kind] = f;
  f->tc_own_ever[kind] = std::max(f->tc_own_ever[kind], epoch);
}

// tcgen05.fence::before_thread_sync, and the one a tcgen05.commit implies: the thread's own
// tcgen05 work is now ordered before its next synchronisation, which publishes it.
void fence_own_tc(Fiber* f) {
  f->tc_pub.w = std::max(f->tc_pub.w, f->tc_own.e[0]);
  f->tc_pub.r = std::max(f->tc_pub.r, f->tc_own.e[1]);
  f->tc_own = TcUnfenced{};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Fences.
// ---------------------------------------------------------------------------------------------
void tcgen05_fence_before_thread_sync(SourceLoc loc) { fence_own_tc(enter(loc, "tcgen05.fence::before_thread_sync")); }
void tcgen05_fence_after_thread_sync(SourceLoc loc) {
  Fiber* f = enter(loc, "tcgen05.fence::after_thread_sync");
  check_tc_unfenced(f, "tcgen05.fence::after_thread_sync");
  f->tc_fenced = f->tc_known;
}

// ---------------------------------------------------------------------------------------------
// Allocation. One whole warp executes each of tcgen05.alloc, dealloc and relinquish_alloc_permit
// (.sync.aligned); with .cta_group::2 the pair executes it together: one warp of each CTA, the same
// warp, with the same operands (PairOp). The pair's allocation takes the same columns in both
// CTAs' TMEM, and TMEM is per SM: an allocation is accounted against the CTAs the launch places on
// the same SM at the same time (Emu::sm_tmem).
// ---------------------------------------------------------------------------------------------
namespace {

const char* const kPairOpNames[3] = {"tcgen05.alloc.cta_group::2", "tcgen05.dealloc.cta_group::2",
                                     "tcgen05.relinquish_alloc_permit.cta_group::2"};

// The pair's instruction `op` (0 alloc, 1 dealloc, 2 relinquish), reached by warp `rec.warp` of the
// calling thread's CTA (its lanes in rec.members): waits until the other CTA of the pair has reached
// it too, and then the second to arrive checks that both executed the same instruction alike and
// runs `exec(rec of the even CTA, rec of the odd CTA)` for both.
void pair_op(int op, Cta& c, Cta::PairRecord rec, const std::function<void(Cta::PairRecord&, Cta::PairRecord&)>& exec) {
  const char* what = kPairOpNames[op];
  Cluster& cl = *c.cluster;
  const uint32_t even = static_cast<uint32_t>(c.rank) & ~1u;
  if (even + 1 >= cl.ctas.size())
    fail("cta_group::2", std::string(what) + " in " + c.name() + ", which has no peer CTA (cluster rank " +
                             std::to_string(even + 1) + "): a CTA pair is two CTAs of a cluster");
  Cta& leader = cta_of_rank(even);
  Cta::PairOp& p = leader.pair_ops[op];
  const int me = c.rank & 1, other = me ^ 1;
  if (p.rec[me].in)
    fail("CTA pair instruction executed by one CTA only",
         std::string(what) + " executed again by " + c.name() + " (warp " + std::to_string(rec.warp) +
             ") while its first one, at " + where(p.rec[me].loc) + ", still waits for the pair's other CTA (" +
             cta_of_rank(even + static_cast<uint32_t>(other)).name() +
             "): one warp of each CTA of the pair executes it, once for both");
  rec.in = true;
  p.rec[me] = rec;
  if (!p.rec[other].in) {
    Wait w;
    w.kind = WaitKind::pair;
    w.what = what;
    w.obj = &p;
    w.cta = &cta_of_rank(even + static_cast<uint32_t>(other));
    const uint64_t gen = p.generation;
    while (p.generation == gen) {
      p.waiters.push_back(self());
      block(w);
    }
    return;
  }
  Cta::PairRecord& a = p.rec[0];
  Cta::PairRecord& b = p.rec[1];
  const std::string who0 = leader.name() + " warp " + std::to_string(a.warp) + " at " + where(a.loc);
  const std::string who1 = cta_of_rank(even + 1).name() + " warp " + std::to_string(b.warp) + " at " + where(b.loc);
  std::string diff;
  if (a.warp != b.warp)
    diff = "from warp " + std::to_string(a.warp) + " in one CTA and warp " + std::to_string(b.warp) + " in the other";
  else if (op == 0 && a.slot != b.slot)
    diff = "writing the address to shared offset " + hex(a.slot) + " in one CTA and " + hex(b.slot) + " in the other";
  else if (op != 2 && a.ncols != b.ncols)
    diff = "with " + std::to_string(a.ncols) + " columns in one CTA and " + std::to_string(b.ncols) + " in the other";
  else if (op == 1 && a.taddr != b.taddr)
    diff = "at TMEM address " + hex(a.taddr) + " in one CTA and " + hex(b.taddr) + " in the other";
  if (!diff.empty())
    fail_loc(rec.loc, self(), "CTA pair instruction differs between the CTAs",
             std::string(what) + " executed by " + who0 + " and by " + who1 + " " + diff +
                 ": both CTAs of the pair execute it from the same warp, with the same slot and columns");
  exec(a, b);
  a = Cta::PairRecord{};
  b = Cta::PairRecord{};
  ++p.generation;
  wake_all(p.waiters);
}

// The first `ncols`-aligned range of `ncols` columns free in every one of `ts`, or -1.
int64_t free_columns(const std::vector<Tmem*>& ts, uint32_t ncols) {
  for (uint32_t col = 0; col + ncols <= Tmem::kCols; col += ncols) {
    bool free = true;
    for (const Tmem* t : ts)
      for (const Tmem::Alloc& a : t->allocs)
        if (col < a.col + a.ncols && a.col < col + ncols) free = false;
    if (free) return col;
  }
  return -1;
}

uint32_t held_columns(const Tmem& t) {
  uint32_t used = 0;
  for (const Tmem::Alloc& a : t.allocs) used += a.ncols;
  return used;
}

// TMEM is per SM. The launch places each CTA on an SM (Cta::sm); the CTAs resident on one SM at
// the same time share its 512 columns, and a tcgen05.alloc that finds too few free waits until a
// co-resident CTA frees them. For CTA pairs that can deadlock (two pairs each holding one SM's
// columns and waiting for the other's), and a pair's allocation that must wait for another CTA is
// reported. (cta_group::1: a CTA that waits is legal, and is not reported.)
void account_sm_tmem(Cta& c, int cta_group, const char* what) {
  Emu& e = emu();
  const uint32_t held = held_columns(*c.tmem);
  c.tmem_peak = std::max(c.tmem_peak, held);
  auto& uses = e.sm_tmem[{c.wave, c.sm}];
  const std::string name = c.name();
  if (cta_group == 2)
    for (const Emu::SmTmemUse& u : uses)
      if (u.cluster != e.cluster_index && u.peak + held > static_cast<uint32_t>(Tmem::kCols))
        fail("TMEM contention between co-resident CTAs",
             std::string(what) + " of " + std::to_string(held) + " columns in " + name +
                 ", which the launch places on SM " + std::to_string(c.sm) + " beside " + u.cta +
                 " of another cluster (shared memory and threads let " + std::to_string(e.sm_ctas) +
                 " CTAs reside on an SM at once), which holds up to " + std::to_string(u.peak) + " of the SM's " +
                 std::to_string(Tmem::kCols) +
                 " TMEM columns while it runs: this pair's allocation waits until that CTA frees them, and two "
                 "pairs that each hold one SM's columns while waiting for the other's deadlock. TMEM is per SM: "
                 "keep one CTA per SM (shared memory above half an SM's, as steps 9-11 assert), or allocate "
                 "at most 512 / CTAs per SM");
  auto it = std::find_if(uses.begin(), uses.end(),
                         [&](const Emu::SmTmemUse& u) { return u.cta == name && u.cluster == e.cluster_index; });
  if (it == uses.end()) uses.push_back({name, e.cluster_index, c.tmem_peak});
  else it->peak = c.tmem_peak;
}

// Allocates `ncols` columns at the same place in each CTA of `ctas` (one, or the pair), writing the
// address to `slots[i]` in ctas[i]; the members' tcgen05 work now includes it. Blocks while no
// range is free in all of them.
void allocate(const std::vector<Cta*>& ctas, const std::vector<uint32_t>& slots, uint32_t ncols,
              const std::vector<Fiber*>& members, int cta_group, const char* what) {
  std::vector<Tmem*> ts;
  for (Cta* c : ctas) {
    Tmem& t = tmem_of(*c);
    if (t.relinquished)
      fail("TMEM allocation", std::string(what) + " in " + c->name() +
                                  " after tcgen05.relinquish_alloc_permit: the CTA gave up allocating");
    ts.push_back(&t);
  }
  while (true) {
    const int64_t col = free_columns(ts, ncols);
    if (col >= 0) {
      const uint64_t epoch = emu().next_epoch();
      for (size_t i = 0; i < ctas.size(); ++i) {
        Tmem& t = *ts[i];
        t.allocs.push_back({static_cast<uint32_t>(col), ncols});
        for (uint32_t lane = 0; lane < Tmem::kLanes; ++lane)
          for (uint32_t k = static_cast<uint32_t>(col); k < col + ncols; ++k) {
            t.cell(lane, k) = kTmemPoison;
            t.written[lane * Tmem::kCols + k] = 0;
          }
        const uint32_t addr = static_cast<uint32_t>(col);  // lane 0, the first column
        async_write(*ctas[i], slots[i], &addr, 4);
        t.last_use_epoch = epoch;
        account_sm_tmem(*ctas[i], cta_group, what);
      }
      for (Fiber* m : members) own_tc(m, 0, epoch);
      return;
    }
    Wait wa;
    wa.kind = WaitKind::tmem_alloc;
    wa.what = what;
    wa.a = ncols;
    wa.b = held_columns(*ts.front());
    for (Tmem* t : ts) t->alloc_waiters.push_back(self());
    block(wa);
  }
}

// Frees the allocation at `taddr` of `ncols` columns in each CTA of `ctas`.
void deallocate(const std::vector<Cta*>& ctas, uint32_t taddr, uint32_t ncols, const std::vector<Fiber*>& members,
                int cta_group) {
  const uint32_t col = taddr & 0xFFFFu;
  for (Cta* c : ctas) {
    Tmem& t = tmem_of(*c);
    auto it = std::find_if(t.allocs.begin(), t.allocs.end(),
                           [&](const Tmem::Alloc& a) { return a.col == col && a.ncols == ncols; });
    if ((taddr >> 16) != 0 || it == t.allocs.end())
      fail("TMEM allocation", "tcgen05.dealloc of " + std::to_string(ncols) + " columns at " + hex(taddr) +
                                  ", which is not an allocation of " + c->name());
    for (const Fiber* g : c->threads)
      for (const PendingLd& ld : g->lds)
        if (ld.col < col + ncols && col < ld.col + ld.ncols)
          fail("dealloc while a load is outstanding",
               "tcgen05.dealloc of TMEM " + cols_string(col, ncols) + " while a tcgen05.ld of " + thread_name(g) +
                   " from them has not completed (tcgen05.wait::ld, then a barrier, before the dealloc)");
    for (uint32_t k = col; k < col + ncols; ++k)
      if (t.pending[k])
        fail("dealloc while a load is outstanding",
             "tcgen05.dealloc of TMEM " + cols_string(col, ncols) + " of " + c->name() +
                 " while a tcgen05.mma writing them is still in flight (wait on its commit's mbarrier first)");
  }
  if (cta_group == 2) {
    Cluster& cl = *ctas.front()->cluster;
    uint64_t last = 0;
    for (Cta* c : ctas) last = std::max(last, tmem_of(*c).last_use_epoch);
    if (last > cl.barrier_epoch)
      fail("dealloc while the peer CTA may still use TMEM",
           "tcgen05.dealloc.cta_group::2 in " + ctas.front()->name() +
               " with no cluster barrier since the pair's last tcgen05 "
               "operation: the peer CTA may still use the pair's TMEM (end the epilogues with a cluster barrier "
               "before the dealloc)");
  }
  const uint64_t e = emu().next_epoch();
  for (Cta* c : ctas) {
    Tmem& t = *c->tmem;
    t.allocs.erase(std::find_if(t.allocs.begin(), t.allocs.end(),
                                [&](const Tmem::Alloc& a) { return a.col == col && a.ncols == ncols; }));
    wake_all(t.alloc_waiters);
  }
  for (Fiber* m : members) own_tc(m, 0, e);
}

// A whole warp executes it (.sync.aligned), every lane with the same operands (carg[0], carg[1]).
void check_warp_operands(Fiber* f, const std::vector<Fiber*>& all, const char* what) {
  (void)f;
  for (Fiber* m : all)
    if (m->carg[0] != all.front()->carg[0] || m->carg[1] != all.front()->carg[1])
      fail("TMEM allocation", std::string("the lanes of the warp pass different operands to ") + what);
}

int whole_warp(Fiber* f, const char* what) {
  const int members = std::min(32, f->cta->nthreads - 32 * f->warp);
  if (members != 32) fail("TMEM allocation", std::string(what) + " must be executed by a whole warp of 32 threads");
  return members;
}

}  // namespace

void tmem_alloc_n(int cta_group, uint32_t* slot, uint32_t num_columns, SourceLoc loc) {
  Fiber* f = enter(loc, "tcgen05.alloc");
  const char* what = cta_group == 2 ? "tcgen05.alloc.cta_group::2" : "tcgen05.alloc";
  use_cta_group(cta_group, what);
  Cta& c = *f->cta;
  f->carg[0] = smem_offset(c, slot, 4, what);
  f->carg[1] = num_columns;
  Wait w;
  w.what = what;
  collective(c.warp_coll[f->warp], whole_warp(f, what), what, w,
             [&c, f, cta_group, num_columns, what, loc](std::vector<Fiber*>& all) {
               check_warp_operands(f, all, what);
               if (num_columns < 32 || num_columns > 512 || (num_columns & (num_columns - 1)) != 0)
                 fail("TMEM allocation", std::string(what) + " of " + std::to_string(num_columns) +
                                             " columns: the count must be a power of 2 from 32 to 512");
               const uint32_t slot_off = static_cast<uint32_t>(all.front()->carg[0]);
               if (cta_group == 1) {
                 allocate({&c}, {slot_off}, num_columns, all, cta_group, what);
                 return;
               }
               Cta::PairRecord r;
               r.warp = all.front()->warp;
               r.slot = slot_off;
               r.ncols = num_columns;
               r.loc = loc;
               r.members = all;
               pair_op(0, c, r, [&c, cta_group, what](Cta::PairRecord& a, Cta::PairRecord& b) {
                 Cta& even = cta_of_rank(static_cast<uint32_t>(c.rank) & ~1u);
                 Cta& odd = cta_of_rank((static_cast<uint32_t>(c.rank) & ~1u) + 1);
                 std::vector<Fiber*> members = a.members;
                 members.insert(members.end(), b.members.begin(), b.members.end());
                 allocate({&even, &odd}, {a.slot, b.slot}, a.ncols, members, cta_group, what);
               });
             });
}

void tmem_dealloc_n(int cta_group, uint32_t taddr, uint32_t num_columns, SourceLoc loc) {
  Fiber* f = enter(loc, "tcgen05.dealloc");
  const char* what = cta_group == 2 ? "tcgen05.dealloc.cta_group::2" : "tcgen05.dealloc";
  use_cta_group(cta_group, what);
  Cta& c = *f->cta;
  f->carg[0] = taddr;
  f->carg[1] = num_columns;
  Wait w;
  w.what = what;
  collective(c.warp_coll[f->warp], whole_warp(f, what), what, w,
             [&c, f, cta_group, taddr, num_columns, what, loc](std::vector<Fiber*>& all) {
               check_warp_operands(f, all, what);
               if (cta_group == 1) {
                 deallocate({&c}, taddr, num_columns, all, cta_group);
                 return;
               }
               Cta::PairRecord r;
               r.warp = all.front()->warp;
               r.ncols = num_columns;
               r.taddr = taddr;
               r.loc = loc;
               r.members = all;
               pair_op(1, c, r, [&c, cta_group](Cta::PairRecord& a, Cta::PairRecord& b) {
                 Cta& even = cta_of_rank(static_cast<uint32_t>(c.rank) & ~1u);
                 Cta& odd = cta_of_rank((static_cast<uint32_t>(c.rank) & ~1u) + 1);
                 std::vector<Fiber*> members = a.members;
                 members.insert(members.end(), b.members.begin(), b.members.end());
                 deallocate({&even, &odd}, a.taddr, a.ncols, members, cta_group);
               });
             });
}

void tmem_relinquish_alloc_permit_n(int cta_group, SourceLoc loc) {
  Fiber* f = enter(loc, "tcgen05.relinquish_alloc_permit");
  const char* what =
      cta_group == 2 ? "tcgen05.relinquish_alloc_permit.cta_group::2" : "tcgen05.relinquish_alloc_permit";
  use_cta_group(cta_group, what);
  Cta& c = *f->cta;
  f->carg[0] = 0;
  f->carg[1] = 0;
  Wait w;
  w.what = what;
  collective(c.warp_coll[f->warp], whole_warp(f, what), what, w, [&c, cta_group, loc](std::vector<Fiber*>& all) {
    if (cta_group == 1) {
      tmem_of(c).relinquished = true;
      return;
    }
    Cta::PairRecord r;
    r.warp = all.front()->warp;
    r.loc = loc;
    r.members = all;
    pair_op(2, c, r, [&c](Cta::PairRecord&, Cta::PairRecord&) {
      tmem_of(cta_of_rank(static_cast<uint32_t>(c.rank) & ~1u)).relinquished = true;
      tmem_of(cta_of_rank((static_cast<uint32_t>(c.rank) & ~1u) + 1)).relinquished = true;
    });
  });
}

// ---------------------------------------------------------------------------------------------
// MMA and commit.
// ---------------------------------------------------------------------------------------------
void tcgen05_mma_f16_n(int cta_group, uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                       bool enable_input_d, SourceLoc loc) {
  Fiber* f = enter(loc, "tcgen05.mma");
  const char* what = "tcgen05.mma";
  use_cta_group(cta_group, what);
  check_fenced_after_sync(f, what, true);
  Cta& c = *f->cta;
  const model::IdescDecode id = model::decode_idesc_f16(idesc, cta_group);
  if (!id.ok) fail("tcgen05 instruction descriptor", id.error);
  const model::MatrixDesc a = decode_smem(a_desc, "A descriptor");
  const model::MatrixDesc b = decode_smem(b_desc, "B descriptor");
  const int n = id.idesc.n;

  std::vector<Cta*> parts{&c};
  if (cta_group == 2) {
    if (c.rank % 2 != 0)
      fail("cta_group::2", "tcgen05.mma.cta_group::2 issued by " + c.name() +
                               ", an odd CTA of its pair: only the even (leader) CTA issues the pair's MMAs");
    if (static_cast<size_t>(c.rank) + 1 >= c.cluster->ctas.size())
      fail("cta_group::2",
           "tcgen05.mma.cta_group::2 needs a peer CTA (cluster rank " + std::to_string(c.rank + 1) + ")");
    parts.push_back(&cta_of_rank(static_cast<uint32_t>(c.rank) + 1));
  }
  if ((d_tmem >> 16) != 0)
    fail("TMEM access outside the warp's lanes",
         "tcgen05.mma D address " + hex(d_tmem) +
             ": an M=128-per-CTA accumulator spans lanes 0-127, the lane field must be 0");
  const uint32_t col = d_tmem & 0xFFFFu;
  for (Cta* p : parts) check_columns(*p, col, static_cast<uint32_t>(n), "tcgen05.mma (D)");

  // Rows read: A 128 rows from each CTA; B N rows (cta_group::1) or N/2 rows from each CTA.
  const int b_rows = cta_group == 2 ? n / 2 : n;
  track_writes(f);
  for (Cta* p : parts) {
    check_async_read(*p, operand_words(*p, a, 0, 128, "tcgen05.mma A"), "tcgen05.mma (A)", f, &a.layout);
    check_async_read(*p, operand_words(*p, b, 0, b_rows, "tcgen05.mma B"), "tcgen05.mma (B)", f, &b.layout);
  }
  const uint64_t issue = emu().next_epoch();
  for (Cta* p : parts) {
    Tmem& t = tmem_of(*p);
    for (uint32_t k = col; k < col + static_cast<uint32_t>(n); ++k) {
      ++t.pending[k];
      t.pending_issuer[k] = thread_name(f) + " at " + where(loc);
      t.pending_by[k] = f;
      t.pending_epoch[k] = issue;
    }
    t.last_use_epoch = issue;
  }
  ++f->tc_pending;
  own_tc(f, 0, issue);
  const model::Idesc idd = id.idesc;
  const std::string issuer = thread_name(f) + " at " + where(loc);
  enqueue(f->tc_queue, [f, parts, a, b, idd, col, b_rows, enable_input_d, issue, issuer, loc] {
    // B: the rows of the whole N, from the leader then the peer (cta_group::2).
    std::vector<float> bv;
    for (Cta* p : parts) {
      if (p->done)
        fail("CTA exiting with peer traffic in flight",
             "a tcgen05.mma issued by " + issuer + " reads shared memory of " + p->name() + ", which has exited");
      check_unchanged(*p, operand_words(*p, a, 0, 128, "tcgen05.mma A"), issue, "tcgen05.mma (A)", issuer);
      check_unchanged(*p, operand_words(*p, b, 0, b_rows, "tcgen05.mma B"), issue, "tcgen05.mma (B)", issuer);
      const std::vector<float> part = read_operand(*p, b, b_rows, idd.btype, idd.negate_b);
      bv.insert(bv.end(), part.begin(), part.end());
    }
    for (Cta* p : parts) {
      const std::vector<float> av = read_operand(*p, a, 128, idd.atype, idd.negate_a);
      Tmem& t = tmem_of(*p);
      for (int i = 0; i < 128; ++i)
        for (int j = 0; j < idd.n; ++j) {
          float s = 0.0f;
          for (int k = 0; k < 16; ++k) s = std::fma(av[i * 16 + k], bv[static_cast<size_t>(j) * 16 + k], s);
          uint32_t& cell = t.cell(static_cast<uint32_t>(i), col + static_cast<uint32_t>(j));
          uint8_t& written = t.written[static_cast<size_t>(i) * Tmem::kCols + col + static_cast<uint32_t>(j)];
          if (enable_input_d) {
            if (!written)
              fail_loc(
                  loc, f, "MMA accumulates into unwritten TMEM",
                  "a tcgen05.mma issued by " + issuer + " with enable_input_d = true accumulates into TMEM lane " +
                      std::to_string(i) + " column " + std::to_string(col + j) + " of " + p->name() +
                      ", which no MMA has written since tcgen05.alloc (TMEM is not zeroed: the first MMA of a tile "
                      "must pass enable_input_d = false)");
            float old;
            std::memcpy(&old, &cell, 4);
            s = old + s;
          }
          std::memcpy(&cell, &s, 4);
          written = 1;
        }
      for (uint32_t k = col; k < col + static_cast<uint32_t>(idd.n); ++k) --t.pending[k];
    }
    --f->tc_pending;
  });
}

namespace {

void commit(int cta_group, uint64_t* bar, uint16_t mask, bool multicast, const char* what) {
  Fiber* f = self();
  use_cta_group(cta_group, what);
  track_writes(f);
  fence_own_tc(f);  // tcgen05.commit implies tcgen05.fence::before_thread_sync
  Cta& c = *f->cta;
  const uint32_t off = smem_offset(c, bar, 8, what);
  std::vector<Cta*> targets;
  if (multicast) {
    const uint32_t n = static_cast<uint32_t>(c.cluster->ctas.size());
    if (mask == 0 || (n < 16 && (mask >> n) != 0))
      fail("tcgen05.commit multicast",
           std::string(what) + ": ctaMask " + hex(mask) + " names CTAs outside the cluster of " + std::to_string(n));
    for (uint32_t r = 0; r < n; ++r)
      if (mask & (1u << r)) targets.push_back(&cta_of_rank(r));
  } else {
    targets.push_back(&c);
  }
  for (Cta* t : targets) {
    MBarrier& b = mbarrier_at(*t, off, what);
    mbarrier_check_use(*t, off, b, f, t != &c, true, what);
    note_fed(f, *t, off);
  }
  auto is = std::make_shared<Issue>(issue_of(f, what));
  f->commits.push_back({off, is->contrib.epoch, f->loc});
  enqueue(f->tc_queue, [f, targets, off, is] {
    f->commits.pop_front();
    for (Cta* t : targets) {
      MBarrier& b = mbarrier_at(*t, off, is->name.c_str());
      mbarrier_check_use(*t, off, b, nullptr, false, true, is->name.c_str());
      mbarrier_arrive_on(*t, off, is->name.c_str(), is.get());
    }
  });
}

}  // namespace

void tcgen05_commit_n(int cta_group, uint64_t* bar, SourceLoc loc) {
  enter(loc, "tcgen05.commit");
  commit(cta_group, bar, 0, false, "tcgen05.commit");
}

void tcgen05_commit_multicast_n(int cta_group, uint64_t* bar, uint16_t cta_mask, SourceLoc loc) {
  enter(loc, "tcgen05.commit.multicast::cluster");
  commit(cta_group, bar, cta_mask, true, "tcgen05.commit.multicast::cluster");
}

// ---------------------------------------------------------------------------------------------
// Loads.
// ---------------------------------------------------------------------------------------------
namespace {

// Why a tcgen05.ld by the warp `readers` meets an MMA in flight (issued by `mma_by` at epoch
// `mma_epoch`), from the commit that will arrive after that MMA and the readers' waits on its
// barrier: a column the readers read already since their latest wait (this use's wait missing); their
// latest wait on the latest phase of a commit's barrier (the accumulator was complete: the MMA came
// too early); else the commit that covers the MMA: none yet, no wait on its barrier, or one for an
// older phase.
std::string ld_during_mma(Cta& c, uint32_t col, const Fiber* mma_by, uint64_t mma_epoch,
                          const std::vector<Fiber*>& readers) {
  const std::string too_early =
      "the MMA was issued too early, before its thread waited for this read to be done (a release barrier such as "
      "ld2mma, which the readers arrive on after their tcgen05.ld and the MMA's thread waits on before it)";
  // The readers' latest wait returned on the latest phase of a barrier that tcgen05.commits complete:
  // the accumulator they read was complete, and this MMA came after.
  for (const Fiber* m : readers) {
    const WaitMemo& w = m->last_passed;
    if (!w.cta || w.early || w.cta != &c) continue;
    // Columns it read already since that wait: this read is of the accumulator's next use.
    if (col < m->ld_since_wait.size() && m->ld_since_wait[col])
      return thread_name(m) + " read TMEM column " + std::to_string(col) + " already after its latest wait (at " +
             where(w.loc) + ", on mbarrier " + barrier_name(c, w.off) +
             "): this read is of the accumulator's next use, for which its wait (on the mbarrier that use's "
             "tcgen05.commit arrives on) is missing";
    const auto bi = c.mbar.find(w.off);
    if (bi == c.mbar.end() || w.target + 1 != static_cast<int64_t>(bi->second.phase)) continue;
    const bool committed = std::any_of(bi->second.contrib_done.begin(), bi->second.contrib_done.end(),
                                       [](const Contrib& k) { return std::strstr(k.what, "commit") != nullptr; });
    if (committed)
      return thread_name(m) + " waited (at " + where(w.loc) + ") for " + phase_name(w.target) + " of mbarrier " +
             barrier_name(c, w.off) +
             ", its latest phase, which a tcgen05.commit completed, so the accumulator it "
             "reads was complete: " +
             too_early;
  }
  const Fiber::PendingCommit* covering = nullptr;
  if (mma_by)
    for (const Fiber::PendingCommit& p : mma_by->commits)
      if (p.epoch > mma_epoch) {
        covering = &p;
        break;
      }
  if (!covering)
    return "no tcgen05.commit after that MMA has been issued yet, so no wait could have covered it: a wait on the "
           "mbarrier of the commit that follows the MMA is missing, or " +
           too_early;
  const auto bi = c.mbar.find(covering->off);
  if (bi == c.mbar.end()) return "its tcgen05.commit (at " + where(covering->loc) + ") has not arrived: " + too_early;
  const MBarrier& b = bi->second;
  const Fiber* reader = readers.front();
  const WaitMemo* last = nullptr;
  for (const Fiber* m : readers)
    if (auto it = m->waits.find(b.slot); it != m->waits.end() && (!last || it->second.epoch > last->epoch)) {
      last = &it->second;
      reader = m;
    }
  const std::string bar = "mbarrier " + barrier_name(c, covering->off) + ", on which the tcgen05.commit at " +
                          where(covering->loc) + " after that MMA arrives";
  if (!last) return "the wait on " + bar + ", is missing: " + thread_name(reader) + " never waited on it";
  if (last->target + 1 < static_cast<int64_t>(b.phase))
    return "the wait on " + bar + ", is missing (or waits for an old phase): the last wait on it by " +
           thread_name(reader) + ", at " + where(last->loc) + ", was for " + phase_name(last->target) +
           ", and the barrier has completed " + std::to_string(b.phase) + " phase(s) since";
  return thread_name(reader) + " waited (at " + where(last->loc) + ") for " + phase_name(last->target) + " of " + bar +
         ", its latest completed phase: " + too_early;
}

void tmem_ld(uint32_t taddr, uint32_t* v, uint32_t ncols, const char* what, SourceLoc loc) {
  Fiber* f = enter(loc, what);
  Cta& c = *f->cta;
  f->carg[0] = taddr;
  f->carg[1] = ncols;
  f->cptr = v;
  Wait w;
  w.what = what;
  const int members = std::min(32, c.nthreads - 32 * f->warp);
  if (members != 32) fail("tcgen05.ld", std::string(what) + " must be executed by a whole warp of 32 threads");
  collective(c.warp_coll[f->warp], 32, what, w, [&c, taddr, ncols, what](std::vector<Fiber*>& all) {
    for (Fiber* m : all) {
      if (m->carg[0] != all.front()->carg[0] || m->carg[1] != all.front()->carg[1])
        fail("tcgen05.ld", std::string(what) + ": the lanes of the warp pass different TMEM addresses (" +
                               hex(m->carg[0]) + " in lane " + std::to_string(m->lane) + ", " +
                               hex(all.front()->carg[0]) + " in lane 0)");
    }
    const int warp = all.front()->warp;
    const uint32_t lane = taddr >> 16, col = taddr & 0xFFFFu;
    const uint32_t quarter = 32u * static_cast<uint32_t>(warp % 4);
    if (lane != quarter)
      fail("TMEM access outside the warp's lanes",
           std::string(what) + " at " + hex(taddr) + " (lanes " + std::to_string(lane) + "-" +
               std::to_string(lane + 31) + ") by warp " + std::to_string(warp) + ", which may access only lanes " +
               std::to_string(quarter) + "-" + std::to_string(quarter + 31) +
               " (warp % 4 = " + std::to_string(warp % 4) + ")");
    check_columns(c, col, ncols, what);
    Tmem& t = *c.tmem;
    // A lane whose latest wait passed early (WaitMemo) read before the phase it should have waited
    // for: that wait is the cause of what follows.
    const auto early_then = [&all, what](const std::string& then) {
      for (Fiber* m : all)
        if (const WaitMemo* e = early_wait(m))
          fail_early(m, *e, std::string("its ") + what + " at " + where(m->loc) + " read " + then);
    };
    for (uint32_t k = col; k < col + ncols; ++k)
      if (t.pending[k]) {
        early_then("TMEM column " + std::to_string(k) + " while a tcgen05.mma writing it was in flight (issued by " +
                   t.pending_issuer[k] + ")");
        fail("tcgen05.ld of TMEM an MMA is still writing",
             std::string(what) + " reads TMEM column " + std::to_string(k) +
                 " while a tcgen05.mma writing it is in flight (issued by " + t.pending_issuer[k] +
                 "): " + ld_during_mma(c, k, t.pending_by[k], t.pending_epoch[k], all));
      }
    for (uint32_t l = lane; l < lane + 32; ++l)
      for (uint32_t k = col; k < col + ncols; ++k)
        if (!t.written[l * Tmem::kCols + k]) {
          early_then("TMEM lane " + std::to_string(l) + " column " + std::to_string(k) + " of " + c.name() +
                     ", which no tcgen05.mma had written yet");
          fail("tcgen05.ld of unwritten TMEM",
               std::string(what) + " reads TMEM lane " + std::to_string(l) + " column " + std::to_string(k) + " of " +
                   c.name() +
                   ", which no tcgen05.mma has written since tcgen05.alloc (is N in the instruction "
                   "descriptor, or the column offset, what the epilogue assumes?)");
        }
    for (Fiber* m : all) check_fenced_after_sync(m, what, false);
    for (Fiber* m : all) {
      PendingLd ld;
      ld.regs = static_cast<uint32_t*>(m->cptr);
      ld.col = col;
      ld.ncols = ncols;
      for (uint32_t k = 0; k < ncols; ++k) {
        ld.vals.push_back(t.cell(lane + static_cast<uint32_t>(m->lane), col + k));
        ld.regs[k] = kRegPoison;
      }
      m->lds.push_back(std::move(ld));
    }
    t.last_use_epoch = emu().next_epoch();
    for (Fiber* m : all) {
      own_tc(m, 1, t.last_use_epoch);
      if (m->ld_since_wait.size() < Tmem::kCols) m->ld_since_wait.assign(Tmem::kCols, 0);
      for (uint32_t k = col; k < col + ncols; ++k) m->ld_since_wait[k] = 1;
    }
  });
}

}  // namespace

void tmem_ld_32x32b_x16(uint32_t taddr, uint32_t (&v)[16], SourceLoc loc) {
  tmem_ld(taddr, v, 16, "tcgen05.ld.32x32b.x16", loc);
}
void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&v)[32], SourceLoc loc) {
  tmem_ld(taddr, v, 32, "tcgen05.ld.32x32b.x32", loc);
}

void tmem_wait_ld(SourceLoc loc) {
  Fiber* f = enter(loc, "tcgen05.wait::ld");
  for (PendingLd& ld : f->lds) {
    for (uint32_t k = 0; k < ld.ncols; ++k)
      if (ld.regs[k] != kRegPoison)
        fail("tcgen05.ld registers written before tcgen05.wait::ld",
             "the destination registers of a tcgen05.ld were overwritten before tcgen05.wait::ld completed it");
    std::memcpy(ld.regs, ld.vals.data(), 4 * static_cast<size_t>(ld.ncols));
  }
  f->lds.clear();
}

}  // namespace gemm::emu

namespace gemm::blackwell {
void tcgen05_fence_before_thread_sync(SourceLoc loc) { emu::tcgen05_fence_before_thread_sync(loc); }
void tcgen05_fence_after_thread_sync(SourceLoc loc) { emu::tcgen05_fence_after_thread_sync(loc); }
void tcgen05_mma_f16_n(int cta_group, uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc, uint32_t idesc,
                       bool enable_input_d, SourceLoc loc) {
  emu::tcgen05_mma_f16_n(cta_group, d_tmem, a_desc, b_desc, idesc, enable_input_d, loc);
}
void tcgen05_commit_n(int cta_group, uint64_t* bar, SourceLoc loc) {
  emu::tcgen05_commit_n(cta_group, bar, loc);
  emu::trace_event(TraceKind::mma_commit, bar, 0);  // the timeline (emu/trace.h)
}
void tcgen05_commit_multicast_n(int cta_group, uint64_t* bar, uint16_t cta_mask, SourceLoc loc) {
  emu::tcgen05_commit_multicast_n(cta_group, bar, cta_mask, loc);
  emu::trace_event(TraceKind::mma_commit, bar, 0);
}
void tmem_alloc_n(int cta_group, uint32_t* slot, uint32_t num_columns, SourceLoc loc) {
  emu::tmem_alloc_n(cta_group, slot, num_columns, loc);
}
void tmem_dealloc_n(int cta_group, uint32_t taddr, uint32_t num_columns, SourceLoc loc) {
  emu::tmem_dealloc_n(cta_group, taddr, num_columns, loc);
}
void tmem_relinquish_alloc_permit_n(int cta_group, SourceLoc loc) {
  emu::tmem_relinquish_alloc_permit_n(cta_group, loc);
}
void tmem_ld_32x32b_x16(uint32_t taddr, uint32_t (&v)[16], SourceLoc loc) { emu::tmem_ld_32x32b_x16(taddr, v, loc); }
void tmem_ld_32x32b_x32(uint32_t taddr, uint32_t (&v)[32], SourceLoc loc) { emu::tmem_ld_32x32b_x32(taddr, v, loc); }
void tmem_wait_ld(SourceLoc loc) { emu::tmem_wait_ld(loc); }
}  // namespace gemm::blackwell
