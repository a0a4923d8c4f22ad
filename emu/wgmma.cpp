// wgmma (sm90a): warpgroup MMAs with A and B from shared memory (descriptors decoded as the
// hardware does) and the fp32 accumulator in each thread's registers (the m64nNk16 fragment),
// scale-d, wgmma.fence / commit_group / wait_group.
//
// A wgmma is formed when all 128 threads of the warpgroup have issued it (each passes its own
// accumulator array). A committed group completes per warp: each warp's share (its 16 rows of each
// m64 MMA: A rows 16w..16w+15 and all of B) at its own random later point, in order within the
// warp, reading shared memory then; a thread's wait_group waits for its own warp's shares only, as
// on hardware. Meanwhile each thread's accumulator registers hold poison and the values live in
// the emulator; they go back to the registers when the thread passes a wait_group that covers the
// last wgmma on them. So reading the accumulators before the wait gives NaN, and writing them
// before the wait is reported. Each share is an AsyncReader of the shared memory it reads: a write
// there that is not ordered after the warp's covering wait_group is reported, whatever the
// schedule (a warp that releases a stage before its own wait).
#include "emu/core.h"
#include "emu/trace.h"

namespace gemm::emu {

namespace {

constexpr uint32_t kAccPoison = 0x7FBADBADu;  // a NaN

bool poisoned(const float* regs, int count) {
  for (int i = 0; i < count; ++i) {
    uint32_t u;
    std::memcpy(&u, &regs[i], 4);
    if (u != kAccPoison) return false;
  }
  return true;
}

void poison(float* regs, int count) {
  for (int i = 0; i < count; ++i) std::memcpy(&regs[i], &kAccPoison, 4);
}

WarpgroupState& warpgroup_of(Fiber* f, const char* what) {
  Cta& c = *f->cta;
  const int wg = f->tid / 128;
  if ((wg + 1) * 128 > c.nthreads)
    fail("wgmma", std::string(what) + " needs a whole warpgroup (4 warps, 128 threads), but the CTA has only " +
                      std::to_string(c.nthreads) + " threads");
  return c.wg[wg];
}

// The words of shared memory rows [row0, row0 + rows) of a wgmma operand (16 fp16, K-major) read.
std::vector<uint32_t> operand_words(Cta& c, const model::MatrixDesc& d, int row0, int rows, const char* which) {
  std::vector<uint32_t> words;
  words.reserve(static_cast<size_t>(rows) * 8);
  for (int r = row0; r < row0 + rows; ++r)
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t off = addr_offset(c, model::kmajor_chunk_addr(d, r, k) | (c.addr_of(0) & 0xFF000000u), 16, which);
      for (uint32_t w = 0; w < 4; ++w) words.push_back(off / 4 + w);
    }
  return words;
}

// Rows [row0, row0 + rows) x 16 values of a K-major fp16 operand.
std::vector<float> read_operand(Cta& c, const model::MatrixDesc& d, int row0, int rows) {
  std::vector<float> v(static_cast<size_t>(rows) * 16);
  for (int r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t off =
          addr_offset(c, model::kmajor_chunk_addr(d, row0 + r, k) | (c.addr_of(0) & 0xFF000000u), 16, "wgmma");
      uint16_t h[8];
      std::memcpy(h, c.smem + off, 16);
      for (int e = 0; e < 8; ++e) v[r * 16 + k * 8 + e] = half_to_float(h[e]);
    }
  return v;
}

model::MatrixDesc decode(uint64_t desc, const char* which) {
  const model::DescDecode d = model::decode_wgmma_desc(desc);
  if (!d.ok) fail("wgmma matrix descriptor", std::string(which) + ": " + d.error);
  const std::string align = model::check_desc_alignment(d.desc);
  if (!align.empty()) fail("swizzled tile not aligned to its atom", std::string(which) + ": " + align);
  return d.desc;
}

// The shared memory warp w's share of a group reads: its 16 rows of A and all of B, per wgmma.
std::vector<uint32_t> share_words(Cta& c, const std::vector<WgmmaOp>& ops, int w) {
  std::vector<uint32_t> words;
  for (const WgmmaOp& op : ops) {
    const std::vector<uint32_t> a = operand_words(c, op.a, 16 * w, 16, "wgmma A");
    const std::vector<uint32_t> b = operand_words(c, op.b, 0, op.n, "wgmma B");
    words.insert(words.end(), a.begin(), a.end());
    words.insert(words.end(), b.begin(), b.end());
  }
  return words;
}

// Completes warp w's share of a group: rows 16w..16w+15 of each wgmma, into the accumulators of
// the warp's 32 threads.
// B of each wgmma of a group, read once for the four shares (unchanged since the issue: checked).
using BCache = std::vector<std::vector<float>>;

void complete_share(Cta& c, WarpgroupState& wg, const std::vector<WgmmaOp>& ops, int w, uint32_t reader_id,
                    const std::string& issuer, BCache& bcache) {
  bcache.resize(ops.size());
  for (size_t o = 0; o < ops.size(); ++o) {
    const WgmmaOp& op = ops[o];
    check_unchanged(c, operand_words(c, op.a, 16 * w, 16, "wgmma A"), op.issue_epoch, "wgmma.mma_async (A)", issuer);
    check_unchanged(c, operand_words(c, op.b, 0, op.n, "wgmma B"), op.issue_epoch, "wgmma.mma_async (B)", issuer);
    const std::vector<float> a = read_operand(c, op.a, 16 * w, 16);
    if (bcache[o].empty()) bcache[o] = read_operand(c, op.b, 0, op.n);
    const std::vector<float>& b = bcache[o];
    std::vector<float> d(static_cast<size_t>(16) * op.n);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < op.n; ++j) {
        float s = 0.0f;
        for (int k = 0; k < 16; ++k) s = std::fma(a[i * 16 + k], b[j * 16 + k], s);
        d[static_cast<size_t>(i) * op.n + j] = s;
      }
    for (int t = 32 * w; t < 32 * w + 32; ++t) {
      AccShadow& s = *op.acc[t];
      for (int i = 0; i < op.n / 2; ++i) {
        const model::FragPos p = model::wgmma_acc_pos(t, i);
        const float v = d[static_cast<size_t>(p.row - 16 * w) * op.n + p.col];
        s.vals[i] = op.accumulate ? s.vals[i] + v : v;
      }
      --s.pending;
    }
  }
  reader(reader_id).done = true;
  --wg.pending[w];
  wake_all(wg.waiters);
}

}  // namespace

void wgmma_fence(SourceLoc loc) {
  Fiber* f = enter(loc, "wgmma.fence");
  WarpgroupState& wg = warpgroup_of(f, "wgmma.fence");
  Wait w;
  w.what = "wgmma.fence";
  collective(wg.coll, 128, "wgmma.fence", w, [](std::vector<Fiber*>& all) {
    for (Fiber* m : all) m->wgmma_fenced = true;
  });
}

void wgmma_f32_f16_ss_n(int n, float* d, uint64_t a_desc, uint64_t b_desc, bool accumulate, SourceLoc loc) {
  Fiber* f = enter(loc, "wgmma.mma_async");
  const char* what = "wgmma.mma_async";
  WarpgroupState& wg = warpgroup_of(f, what);
  if (!f->wgmma_fenced)
    fail("wgmma issued without wgmma.fence",
         "the thread issues a wgmma.mma_async with no wgmma.fence since the start of the kernel or its last "
         "wgmma.wait_group: the accumulator registers may have been touched by other instructions");
  track_writes(f);
  f->carg[0] = a_desc;
  f->carg[1] = b_desc;
  f->carg[2] = static_cast<uint64_t>(n);
  f->carg[3] = accumulate;
  f->cptr = d;
  Wait w;
  w.what = what;
  collective(wg.coll, 128, what, w, [&wg](std::vector<Fiber*>& all) {
    Fiber* first = all.front();
    for (Fiber* m : all)
      if (std::memcmp(m->carg, first->carg, sizeof first->carg) != 0)
        fail("wgmma operands differ across the warpgroup",
             "thread " + std::to_string(m->tid) + " issued descriptors " + hex(m->carg[0]) + ", " + hex(m->carg[1]) +
                 " (N " + std::to_string(m->carg[2]) + ", scale-d " + std::to_string(m->carg[3]) + ") and thread " +
                 std::to_string(first->tid) + " " + hex(first->carg[0]) + ", " + hex(first->carg[1]) + " (N " +
                 std::to_string(first->carg[2]) + ", scale-d " + std::to_string(first->carg[3]) +
                 "): the descriptors must be the same in every warp of the warpgroup");
    Cta& c = *first->cta;
    WgmmaOp op;
    op.a = decode(first->carg[0], "A descriptor");
    op.b = decode(first->carg[1], "B descriptor");
    op.n = static_cast<int>(first->carg[2]);
    op.accumulate = first->carg[3] != 0;
    check_async_read(c, operand_words(c, op.a, 0, 64, "wgmma A"), "wgmma.mma_async (A)", first, &op.a.layout);
    check_async_read(c, operand_words(c, op.b, 0, op.n, "wgmma B"), "wgmma.mma_async (B)", first, &op.b.layout);
    const int count = op.n / 2;
    for (Fiber* m : all) {
      float* regs = static_cast<float*>(m->cptr);
      AccShadow* s = nullptr;
      for (auto& sp : m->acc) {
        if (sp->regs == regs) {
          s = sp.get();
        } else if (regs < sp->regs + sp->count && sp->regs < regs + count) {
          fail("wgmma accumulators", "thread " + std::to_string(m->tid) +
                                         " passes an accumulator array that overlaps another one still in flight");
        }
      }
      if (s) {
        if (s->count != count)
          fail("wgmma accumulators", "thread " + std::to_string(m->tid) + " chains wgmmas of different N on one array");
        if (!poisoned(regs, count))
          fail("accumulators touched before the covering wait",
               "thread " + std::to_string(m->tid) + " (warp " + std::to_string(m->warp) +
                   ") wrote its accumulator registers while a wgmma on them was in flight (before the "
                   "wgmma.wait_group that covers it)");
      } else {
        auto sp = std::make_unique<AccShadow>();
        sp->regs = regs;
        sp->count = count;
        sp->vals.assign(regs, regs + count);
        s = sp.get();
        m->acc.push_back(std::move(sp));
        poison(regs, count);
      }
      ++s->pending;
      op.acc[m->tid % 128] = s;
    }
    op.issue_epoch = emu().next_epoch();
    op.loc = first->loc;
    wg.uncommitted.push_back(op);
  });
}

void wgmma_commit_group(SourceLoc loc) {
  Fiber* f = enter(loc, "wgmma.commit_group");
  const char* what = "wgmma.commit_group";
  WarpgroupState& wg = warpgroup_of(f, what);
  Wait w;
  w.what = what;
  collective(wg.coll, 128, what, w, [&wg](std::vector<Fiber*>& all) {
    Cta& c = *all.front()->cta;
    std::vector<WgmmaOp> ops;
    ops.swap(wg.uncommitted);
    const int group = all.front()->tid / 128;
    const std::string issuer =
        "warpgroup " + std::to_string(group) + " of " + c.name() + " (committed at " + where(all.front()->loc) + ")";
    Cta* cp = &c;
    WarpgroupState* wp = &wg;
    auto bcache = std::make_shared<BCache>();
    for (int w4 = 0; w4 < 4; ++w4) {
      auto r = std::make_unique<AsyncReader>();
      r->cta = &c;
      r->warp = group * 4 + w4;
      r->seq = ++wg.committed[w4];
      r->loc = all.front()->loc;
      const uint32_t id = new_reader(std::move(r));
      add_reader(c, share_words(c, ops, w4), group * 4 + w4, id);
      wg.unseen[w4].push_back(id);
      ++wg.pending[w4];
      enqueue(wg.queue[w4],
              [cp, wp, ops, w4, id, issuer, bcache] { complete_share(*cp, *wp, ops, w4, id, issuer, *bcache); });
    }
  });
}

void wgmma_wait_group_n(int n, SourceLoc loc) {
  Fiber* f = enter(loc, "wgmma.wait_group");
  const char* what = "wgmma.wait_group";
  WarpgroupState& wg = warpgroup_of(f, what);
  if (n < 0 || n > 7) fail("wgmma.wait_group", "N must be an immediate 0..7");
  const int w4 = f->warp % 4;
  Wait w;
  w.kind = WaitKind::wgmma_wait;
  w.what = what;
  w.a = static_cast<uint64_t>(n);
  while (wg.pending[w4] > n) {
    w.b = static_cast<uint64_t>(wg.pending[w4]);
    wg.waiters.push_back(f);
    block(w);
  }
  // The groups this wait covers (all but the newest n of the warp) are observed by this thread.
  const uint64_t t = tick(f);
  const uint64_t covered = wg.committed[w4] > static_cast<uint64_t>(n) ? wg.committed[w4] - n : 0;
  for (uint32_t id : wg.unseen[w4]) {
    AsyncReader& r = reader(id);
    if (r.seq > covered || r.seen[f->lane]) continue;
    r.seen[f->lane] = t;
    if (!known(r.seen_loc)) r.seen_loc = f->loc;
  }
  const int lanes = std::min(32, f->cta->nthreads - 32 * f->warp);
  while (!wg.unseen[w4].empty()) {
    const AsyncReader& r = reader(wg.unseen[w4].front());
    int seen = 0;
    for (int l = 0; l < lanes; ++l) seen += r.seen[l] != 0;
    if (seen < lanes) break;
    wg.unseen[w4].pop_front();
  }
  // Hand back every accumulator array whose wgmmas have all completed.
  for (size_t i = 0; i < f->acc.size();) {
    AccShadow& s = *f->acc[i];
    if (s.pending > 0) {
      ++i;
      continue;
    }
    if (!poisoned(s.regs, s.count))
      fail("accumulators touched before the covering wait",
           "the thread wrote its accumulator registers while a wgmma on them was in flight (before this "
           "wgmma.wait_group)");
    std::memcpy(s.regs, s.vals.data(), sizeof(float) * static_cast<size_t>(s.count));
    f->acc[i] = std::move(f->acc.back());
    f->acc.pop_back();
  }
  f->wgmma_fenced = false;
}

// setmaxnreg (common/hopper/setmaxnreg.cuh), .sync.aligned over the warpgroup: every thread of it
// executes the same setmaxnreg, convergently. The registers, as the PTX ISA describes them: each
// CTA keeps a pool; .dec returns the warpgroup's registers above the new count to it, .inc takes
// the registers it adds from it and blocks until the pool has them. A thread starts with what the
// launch gave it (regs_at_launch: 64K registers per SM shared by the CTAs resident on it, as
// __launch_bounds__(threads, CTAs per SM) has ptxas allocate), and the pool starts empty.
void setmaxnreg_n(bool inc, int n, SourceLoc loc) {
  Fiber* f = enter(loc, inc ? "setmaxnreg.inc" : "setmaxnreg.dec");
  const char* what = inc ? "setmaxnreg.inc" : "setmaxnreg.dec";
  WarpgroupState& wg = warpgroup_of(f, what);
  f->carg[0] = static_cast<uint64_t>(n);
  Wait w;
  w.what = what;
  collective(wg.coll, 128, what, w, [what, inc, n](std::vector<Fiber*>& all) {
    for (Fiber* m : all)
      if (m->carg[0] != all.front()->carg[0])
        fail_at(m, "setmaxnreg",
                std::string(what) + " " + std::to_string(m->carg[0]) + " in thread " + std::to_string(m->tid) +
                    " and " + std::to_string(all.front()->carg[0]) + " in thread " + std::to_string(all.front()->tid) +
                    ": the warpgroup must execute it with one register count");
    Cta& c = *all.front()->cta;
    const int g = all.front()->tid / 128;
    int& held = c.wg_regs[static_cast<size_t>(g)];
    if (!inc) {
      if (n < held) {
        c.regs_free += int64_t{128} * (held - n);
        held = n;
        wake_all(c.reg_waiters);
      }
      return;
    }
    if (n <= held) return;
    const int64_t need = int64_t{128} * (n - held);
    Wait wr;
    wr.kind = WaitKind::registers;
    wr.what = what;
    wr.cta = &c;
    wr.id = static_cast<uint32_t>(g);
    wr.a = static_cast<uint64_t>(n);
    wr.b = static_cast<uint64_t>(need);
    while (c.regs_free < need) {
      c.reg_waiters.push_back(self());
      block(wr);
    }
    c.regs_free -= need;
    held = n;
  });
}

}  // namespace gemm::emu

namespace gemm::hopper {
void wgmma_fence(SourceLoc loc) { emu::wgmma_fence(loc); }
void wgmma_commit_group(SourceLoc loc) {
  emu::wgmma_commit_group(loc);
  emu::trace_event(TraceKind::mma_commit, nullptr, 0);  // the timeline (emu/trace.h)
}
void wgmma_wait_group_n(int n, SourceLoc loc) {
  emu::trace_event(TraceKind::mma_wait_begin, nullptr, n);
  emu::wgmma_wait_group_n(n, loc);
  emu::trace_event(TraceKind::mma_wait_end, nullptr, n);
}
void wgmma_f32_f16_ss_n(int n, float* d, uint64_t a_desc, uint64_t b_desc, bool accumulate, SourceLoc loc) {
  emu::wgmma_f32_f16_ss_n(n, d, a_desc, b_desc, accumulate, loc);
}
void setmaxnreg_n(bool inc, int n, SourceLoc loc) { emu::setmaxnreg_n(inc, n, loc); }
}  // namespace gemm::hopper
