// cp.async (common/cp_async.cuh): 16-byte copies from global to shared memory, completed at
// seeded random later points in issue order per thread, and cp.async.mbarrier.arrive.noinc, which
// arrives on its mbarrier once every earlier copy of the thread has completed. The copies are
// generic-proxy writes: an async-proxy reader (wgmma, tcgen05.mma, a TMA store) of their bytes
// must have run fence.proxy.async after they landed (check_async_read).
#include "common/emu/core.h"

namespace gemm::emu {

namespace {

constexpr const char* kCopy = "cp.async.ca.shared.global";
constexpr const char* kArrive = "cp.async.mbarrier.arrive.noinc";

}  // namespace

void cp_async_ca_16(uint32_t dst, const void* src, uint32_t src_bytes, SourceLoc loc) {
  Fiber* f = enter(loc, kCopy);
  Cta& c = *f->cta;
  const uint32_t off = addr_offset(c, dst, 16, kCopy);
  if ((c.addr_of(off) & 15u) != 0 || reinterpret_cast<uintptr_t>(src) % 16 != 0)
    fail("cp.async alignment", std::string(kCopy) + ": a 16-byte copy needs 16-byte aligned addresses (shared " +
                                   hex(c.addr_of(off)) + ", global " + hex(reinterpret_cast<uintptr_t>(src)) + ")");
  if (src_bytes != 0 && src_bytes != 16)
    fail("cp.async src-size", std::string(kCopy) + ": src-size " + std::to_string(src_bytes) +
                                  " (this project copies 16 bytes or zero-fills: 0 or 16)");
  track_writes(f);
  for (uint32_t w = off / 4; w < off / 4 + 4; ++w) {
    check_overwrite(c, w, f->vc, f, kCopy);
    ++c.inflight[w];
    c.inflight_box[w] = off;
  }
  c.tma_load_site[off] = {0, loc};
  // Poisoned until the copy completes, as a TMA load's box.
  const uint8_t poison[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                              0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  async_write(c, off, poison, 16, kCpAsyncWritten);
  ++f->cp_pending;
  Cta* cta = &c;
  enqueue(f->cp_queue, [f, cta, off, src, src_bytes] {
    uint8_t data[16] = {};
    if (src_bytes) std::memcpy(data, src, 16);  // read global memory now, at completion
    async_write(*cta, off, data, 16, kCpAsyncWritten);
    for (uint32_t w = off / 4; w < off / 4 + 4; ++w) --cta->inflight[w];
    --f->cp_pending;
  });
}

void cp_async_mbarrier_arrive_noinc(uint64_t* bar, SourceLoc loc) {
  Fiber* f = enter(loc, kArrive);
  Cta& c = *f->cta;
  track_writes(f);
  const uint32_t off = smem_offset(c, bar, 8, kArrive);
  MBarrier& b = mbarrier_at(c, off, kArrive);
  mbarrier_check_use(c, off, b, f, false, true, kArrive);
  auto is = std::make_shared<Issue>(issue_of(f, kArrive));
  // Behind every earlier copy of this thread in its queue: it arrives once they have all landed.
  enqueue(f->cp_queue, [cta = &c, off, is] {
    MBarrier& bar_now = mbarrier_at(*cta, off, is->name.c_str());
    mbarrier_check_use(*cta, off, bar_now, nullptr, false, true, is->name.c_str());
    mbarrier_arrive_on(*cta, off, is->name.c_str(), is.get());
  });
}

}  // namespace gemm::emu

// The wrappers are declared in namespace gemm; the definitions above are in gemm::emu. Forward.
namespace gemm {
void cp_async_ca_16(uint32_t dst, const void* src, uint32_t src_bytes, SourceLoc loc) {
  emu::cp_async_ca_16(dst, src, src_bytes, loc);
}
void cp_async_mbarrier_arrive_noinc(uint64_t* bar, SourceLoc loc) { emu::cp_async_mbarrier_arrive_noinc(bar, loc); }
}  // namespace gemm
