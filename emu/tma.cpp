// TMA: the emulator's own tensor-map encoding (no driver), 2D tile loads (128-byte swizzle, zero
// fill past the edges, the full box credited to the mbarrier; multicast; cta_group::2, crediting the
// barrier whose address the device code computed) and stores (clipped at the edges) in bulk groups.
#include "emu/core.h"
#include "emu/trace.h"

namespace gemm {
inline namespace emulated {

Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                          uint32_t box_cols, Swizzle swizzle) {
  if (Status s = check_tensor_map_2d(out, base, rows, cols, box_rows, box_cols, swizzle); !s.ok()) return s;
  if (swizzle == Swizzle::b128 && box_cols * kTmaElementBytes != 128)
    return Status::failure(
        "tensor map (emulator): a 128-byte swizzled box narrower than 128 bytes is not modelled (got " +
        std::to_string(box_cols) + " cols)");
  emu::model::TensorMap2D m;
  m.base = base;
  m.rows = rows;
  m.cols = cols;
  m.row_stride = cols * kTmaElementBytes;
  m.box_rows = box_rows;
  m.box_cols = box_cols;
  m.elem_bytes = kTmaElementBytes;
  m.swizzle = swizzle == Swizzle::b128 ? emu::model::Layout::sw128 : emu::model::Layout::none;
  emu::model::encode_tensor_map(out, m);
  return {};
}

}  // namespace emulated
}  // namespace gemm

namespace gemm::emu {

namespace {

model::TensorMap2D decode_map(const CUtensorMap* map, const char* what) {
  model::TensorMap2D m;
  if (map == nullptr || !model::decode_tensor_map(map, &m))
    fail("tensor map", std::string(what) +
                           ": the map is not a tensor map made by make_tensor_map_2d (pass the address of the "
                           "__grid_constant__ kernel parameter)");
  return m;
}

uint32_t box_bytes(const model::TensorMap2D& m) { return m.box_rows * m.box_cols * m.elem_bytes; }

// The shared-memory alignment TMA needs for the box: the swizzle atom, or 128 bytes.
void check_box_alignment(Cta& c, uint32_t off, const model::TensorMap2D& m, const char* what) {
  const uint32_t addr = c.addr_of(off) & 0xFFFFFFu;
  const uint32_t align = m.swizzle == model::Layout::none ? 128 : model::swizzle_atom_bytes(m.swizzle);
  if (addr % align != 0)
    fail(m.swizzle == model::Layout::none ? "TMA shared-memory alignment" : "swizzled tile not aligned to its atom",
         std::string(what) + ": the shared-memory box at " + hex(addr) + " must be " + std::to_string(align) +
             "-byte aligned" +
             (m.swizzle == model::Layout::none ? std::string()
                                               : std::string(" (the ") + model::layout_name(m.swizzle) +
                                                     " pattern is a function of the address bits)"));
}

std::vector<uint32_t> box_words(uint32_t off, const model::TensorMap2D& m) {
  std::vector<uint32_t> w;
  for (uint32_t i = off / 4; i < (off + box_bytes(m)) / 4; ++i) w.push_back(i);
  return w;
}

// The shared-memory offset of byte `b` of box row `r` for a box at offset `off`.
uint32_t box_offset(Cta& c, uint32_t off, const model::TensorMap2D& m, uint32_t r, uint32_t b) {
  const uint32_t base = c.addr_of(off) & 0xFFFFFFu;
  return off + (model::tma_box_addr(m, base, r, b) - base);
}

// Global element (row, col) of the map, or nullptr past the edges.
const uint8_t* global_at(const model::TensorMap2D& m, int64_t row, int64_t col) {
  if (row < 0 || col < 0 || row >= static_cast<int64_t>(m.rows) || col >= static_cast<int64_t>(m.cols)) return nullptr;
  return static_cast<const uint8_t*>(m.base) + row * m.row_stride + col * m.elem_bytes;
}

struct LoadDest {
  Cta* data;       // receives the box
  Cta* barrier;    // whose barrier gets the bytes
  uint64_t phase;  // the barrier's phase at issue
};

// `bar` is the barrier of each receiving CTA at that pointer's offset; for a CTA pair's load (pair),
// `bar` is null and `pair_bar` the shared::cluster address of the one barrier every byte credits.
void tma_load(void* smem_dst, const CUtensorMap* map, uint64_t* bar, uint32_t pair_bar, int32_t c0, int32_t c1,
              uint16_t mask, bool multicast, bool pair, const char* what, SourceLoc loc) {
  Fiber* f = enter(loc, what);
  Cta& c = *f->cta;
  const model::TensorMap2D m = decode_map(map, what);
  const uint32_t bytes = box_bytes(m);
  const uint32_t off = smem_offset(c, smem_dst, bytes, what);
  check_box_alignment(c, off, m, what);
  uint32_t bar_off = 0;
  Cta* pair_cta = nullptr;  // whose barrier a pair's load credits
  if (pair) {
    // The address the device code computed (cta_pair_barrier: mapa to the even CTA), as the
    // hardware takes it: the CTA its rank bits name, at its offset. With .cta_group::2 the barrier
    // may be in either CTA of the pair; the pair's MMAs are issued by the leader, which waits for
    // both CTAs' bytes on its own barrier, so a pair load credits the leader's.
    const uint32_t rank = (pair_bar >> 24) & 0xFu;
    if (rank >= c.cluster->ctas.size() || (rank >> 1) != (static_cast<uint32_t>(c.rank) >> 1))
      fail("cta_group::2 TMA load's mbarrier outside the CTA pair",
           std::string(what) + ": the mbarrier address " + hex(pair_bar) + " names cluster rank " +
               std::to_string(rank) + ", which is not " + c.name() +
               " or its peer: a .cta_group::2 load may complete only on a barrier "
               "of its own CTA pair");
    pair_cta = &cta_of_rank(rank);
    bar_off = addr_offset(*pair_cta, pair_bar, 8, what);
    if (rank != (static_cast<uint32_t>(c.rank) & ~1u))
      fail("cta_group::2 TMA load not crediting the leader's barrier",
           std::string(what) + " by " + c.name() + " completes its bytes on mbarrier " +
               barrier_name(*pair_cta, bar_off) + " of " + pair_cta->name() +
               ", the odd CTA of the pair: the leader (cluster rank " + std::to_string(c.rank & ~1) +
               "), which issues the pair's MMAs, waits for both CTAs' bytes on its own barrier (" +
               barrier_name(cta_of_rank(static_cast<uint32_t>(c.rank) & ~1u), bar_off) +
               "); the address must be the leader's (mapa to rank & ~1, as cta_pair_barrier computes it)");
  } else {
    bar_off = smem_offset(c, bar, 8, what);
  }
  track_writes(f);

  std::vector<Cta*> targets;
  if (multicast) {
    const uint32_t n = static_cast<uint32_t>(c.cluster->ctas.size());
    if (mask == 0 || (n < 16 && (mask >> n) != 0))
      fail("TMA multicast",
           std::string(what) + ": ctaMask " + hex(mask) + " names CTAs outside the cluster of " + std::to_string(n));
    for (uint32_t r = 0; r < n; ++r)
      if (mask & (1u << r)) targets.push_back(&cta_of_rank(r));
  } else {
    targets.push_back(&c);
  }
  if (pair && c.cluster->ctas.size() < 2)
    fail("cta_group::2", std::string(what) + ": a CTA pair needs a cluster of at least 2 CTAs");

  const uint8_t tag = static_cast<uint8_t>(1 + static_cast<int>(m.swizzle));
  std::vector<LoadDest> dests;
  for (Cta* t : targets) {
    Cta* bc = pair ? pair_cta : t;
    MBarrier& b = mbarrier_at(*bc, bar_off, what);
    mbarrier_check_use(*bc, bar_off, b, f, bc != &c, true, what);
    if (t->done)
      fail("CTA exiting with peer traffic in flight", std::string(what) + " into " + t->name() + ", which has exited");
    dests.push_back({t, bc, b.phase});
    note_fed(f, *bc, bar_off);
    ++b.inflight[b.phase];
    // A buffer an asynchronous operation still reads must not be overwritten (AsyncReader).
    for (uint32_t w : box_words(off, m)) check_overwrite(*t, w, f->xc, f, what);
    // The destination is poisoned until the load completes.
    std::vector<uint8_t> poison(bytes, 0xFF);
    async_write(*t, off, poison.data(), bytes, tag);
    for (uint32_t w : box_words(off, m)) {
      ++t->inflight[w];
      t->inflight_box[w] = off;
    }
    Cta::TmaLoadSite& site = t->tma_load_site[off];
    site = {bar_off, bc, b.phase, loc, f, WaitMemo{}};
    if (const WaitMemo* e = early_wait(f)) site.wait = *e;
  }
  auto is = std::make_shared<Issue>(issue_of(f, what));
  for (const LoadDest& d : dests) mbarrier_at(*d.barrier, bar_off, what).inflight_loads[d.phase].push_back(is.get());
  Queue* q = new Queue;
  q->transient = true;
  enqueue(*q, [m, off, bar_off, c0, c1, dests, bytes, is, tag] {
    // Read global memory now, at completion; zeros past the edges.
    const uint32_t row_bytes = m.box_cols * m.elem_bytes;
    std::vector<uint8_t> chunk(16);
    for (const LoadDest& d : dests) {
      for (uint32_t r = 0; r < m.box_rows; ++r)
        for (uint32_t b = 0; b < row_bytes; b += 16) {
          for (uint32_t e = 0; e < 16; e += m.elem_bytes) {
            const uint8_t* g = global_at(m, int64_t{c1} + r, int64_t{c0} + (b + e) / m.elem_bytes);
            if (g) std::memcpy(&chunk[e], g, m.elem_bytes);
            else std::memset(&chunk[e], 0, m.elem_bytes);
          }
          async_write(*d.data, box_offset(*d.data, off, m, r, b), chunk.data(), 16, tag);
        }
      for (uint32_t w : box_words(off, m)) --d.data->inflight[w];
      mbarrier_complete_tx(*d.barrier, bar_off, bytes, d.phase, *is);
    }
  });
}

}  // namespace

void tma_prefetch_descriptor(const CUtensorMap* map, SourceLoc loc) {
  enter(loc, "prefetch.tensormap");
  decode_map(map, "prefetch.tensormap");
}

void tma_load_2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1, SourceLoc loc) {
  tma_load(smem_dst, map, bar, 0, c0, c1, 0, false, false, "cp.async.bulk.tensor.2d (TMA load)", loc);
}

void tma_load_3d(void*, const CUtensorMap*, uint64_t*, int32_t, int32_t, int32_t, SourceLoc loc) {
  enter(loc, "cp.async.bulk.tensor.3d");
  fail("not modelled", "cp.async.bulk.tensor.3d: the emulator models 2D tensor maps only");
}

void tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                           uint16_t cta_mask, SourceLoc loc) {
  tma_load(smem_dst, map, bar, 0, c0, c1, cta_mask, true, false,
           "cp.async.bulk.tensor.2d.multicast::cluster (TMA load)", loc);
}

void tma_load_2d_cta_pair_at(void* smem_dst, const CUtensorMap* map, uint32_t bar_addr, int32_t c0, int32_t c1,
                             SourceLoc loc) {
  tma_load(smem_dst, map, nullptr, bar_addr, c0, c1, 0, false, true, "cp.async.bulk.tensor.2d.cta_group::2 (TMA load)",
           loc);
}

void tma_store_2d(const CUtensorMap* map, const void* smem_src, int32_t c0, int32_t c1, SourceLoc loc) {
  const char* what = "cp.async.bulk.tensor.2d (TMA store)";
  Fiber* f = enter(loc, what);
  Cta& c = *f->cta;
  const model::TensorMap2D m = decode_map(map, what);
  const uint32_t off = smem_offset(c, smem_src, box_bytes(m), what);
  check_box_alignment(c, off, m, what);
  track_writes(f);
  check_async_read(c, box_words(off, m), what, f);
  StoreReq s;
  s.map = m;
  s.src_off = off;
  s.c0 = c0;
  s.c1 = c1;
  s.issue_epoch = emu().next_epoch();
  s.loc = loc;
  f->open_stores.push_back(s);
}

void tma_store_commit_group(SourceLoc loc) {
  Fiber* f = enter(loc, "cp.async.bulk.commit_group");
  std::vector<StoreReq> group;
  group.swap(f->open_stores);
  ++f->store_groups;
  // The group reads its boxes until its issuer's wait_group.read covers it.
  auto r = std::make_unique<AsyncReader>();
  r->store = true;
  r->cta = f->cta;
  r->warp = f->tid;
  r->seq = ++f->stores_committed;
  r->loc = group.empty() ? loc : group.front().loc;
  r->commit_loc = loc;
  r->issue_slot = f->slot;
  r->issue_time = tick(f);
  const uint32_t id = new_reader(std::move(r));
  for (const StoreReq& s : group)
    add_reader(*f->cta, box_words(s.src_off, s.map), static_cast<int>(f->cta->warp_coll.size()), id);
  f->store_readers.push_back(id);
  const std::string issuer = thread_name(f) + " at " + where(loc);
  enqueue(f->store_queue, [f, group, issuer, id] {
    Cta& c = *f->cta;
    for (const StoreReq& s : group) {
      const model::TensorMap2D& m = s.map;
      check_unchanged(c, box_words(s.src_off, m), s.issue_epoch, "a TMA store", issuer);
      const uint32_t row_bytes = m.box_cols * m.elem_bytes;
      for (uint32_t r = 0; r < m.box_rows; ++r)
        for (uint32_t b = 0; b < row_bytes; b += m.elem_bytes) {
          // Clipped: elements past the tensor's edges are not written.
          const uint8_t* g = global_at(m, int64_t{s.c1} + r, int64_t{s.c0} + b / m.elem_bytes);
          if (!g) continue;
          std::memcpy(const_cast<uint8_t*>(g), c.smem + box_offset(c, s.src_off, m, r, b), m.elem_bytes);
        }
    }
    --f->store_groups;
    reader(id).done = true;
    wake_all(f->store_waiters);
  });
}

namespace {
void store_wait(int n, const char* what, SourceLoc loc) {
  Fiber* f = enter(loc, what);
  if (n < 0) fail("bulk wait_group", "the group count must be non-negative");
  Wait w;
  w.kind = WaitKind::bulk_wait;
  w.what = what;
  w.a = static_cast<uint64_t>(n);
  while (f->store_groups > n) {
    w.b = static_cast<uint64_t>(f->store_groups);
    f->store_waiters.push_back(f);
    block(w);
  }
  // The groups it covers no longer read shared memory, as far as threads ordered after it know.
  const uint64_t t = tick(f);
  const uint64_t covered = f->stores_committed > static_cast<uint64_t>(n) ? f->stores_committed - n : 0;
  while (!f->store_readers.empty() && reader(f->store_readers.front()).seq <= covered) {
    AsyncReader& r = reader(f->store_readers.front());
    r.seen[0] = t;
    r.seen_loc = loc;
    f->store_readers.pop_front();
  }
}
}  // namespace

void tma_store_wait_group_read_n(int n, SourceLoc loc) { store_wait(n, "cp.async.bulk.wait_group.read", loc); }
void tma_store_wait_group_n(int n, SourceLoc loc) { store_wait(n, "cp.async.bulk.wait_group", loc); }

}  // namespace gemm::emu

namespace gemm {
void tma_prefetch_descriptor(const CUtensorMap* map, SourceLoc loc) { emu::tma_prefetch_descriptor(map, loc); }
void tma_load_2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1, SourceLoc loc) {
  emu::tma_load_2d(smem_dst, map, bar, c0, c1, loc);
  emu::trace_event(TraceKind::tma_load, bar, trace_coords(c0, c1));  // the timeline (emu/trace.h)
}
void tma_load_3d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1, int32_t c2,
                 SourceLoc loc) {
  emu::tma_load_3d(smem_dst, map, bar, c0, c1, c2, loc);
  emu::trace_event(TraceKind::tma_load, bar, trace_coords(c0, c1));
}
void tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                           uint16_t cta_mask, SourceLoc loc) {
  emu::tma_load_2d_multicast(smem_dst, map, bar, c0, c1, cta_mask, loc);
  emu::trace_event(TraceKind::tma_load, bar, trace_coords(c0, c1));
}
void tma_load_2d_cta_pair_at(void* smem_dst, const CUtensorMap* map, uint32_t bar_addr, int32_t c0, int32_t c1,
                             SourceLoc loc) {
  emu::tma_load_2d_cta_pair_at(smem_dst, map, bar_addr, c0, c1, loc);
  emu::trace_event(TraceKind::tma_load, nullptr, trace_coords(c0, c1));
}
void tma_store_2d(const CUtensorMap* map, const void* smem_src, int32_t c0, int32_t c1, SourceLoc loc) {
  emu::tma_store_2d(map, smem_src, c0, c1, loc);
  emu::trace_event(TraceKind::tma_store, nullptr, trace_coords(c0, c1));
}
void tma_store_commit_group(SourceLoc loc) { emu::tma_store_commit_group(loc); }
void tma_store_wait_group_read_n(int n, SourceLoc loc) { emu::tma_store_wait_group_read_n(n, loc); }
void tma_store_wait_group_n(int n, SourceLoc loc) { emu::tma_store_wait_group_n(n, loc); }
}  // namespace gemm
