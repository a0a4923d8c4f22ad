// Each modelled instruction on the emulator against a case worked by hand: one tcgen05.ld, one
// wgmma fragment, TMA loads (128-byte swizzle, zero fill past every edge, the full box credited),
// stores (clipped), multicast, remote arrive, mbarrier phases, warp collectives, named barriers,
// cluster registers and mapa. Each case runs under several schedules (emulator seeds).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/swizzle.cuh"
#include "emu/emu.h"
#include "emu/models.h"
#include "tests/emu/instr_kernels.h"

namespace gemm {
namespace {

class Instr : public ::testing::TestWithParam<uint64_t> {
 protected:
  void SetUp() override {
    emu::Options o = emu::options();
    o.seed = GetParam();
    emu::set_options(o);
  }
};

float f32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// PTX ISA tcgen05 "Data movement shape" 32x32b: thread t of warp w gets TMEM lane 32 (w % 4) + t,
// one 32-bit column per register. With D[i][j] = 1000 i + j, thread t's register c is 1000 t + c.
TEST_P(Instr, OneTcgen05Ld) {
  std::vector<uint32_t> out(128 * 32);
  const Status s = emu_cases::tmem_ld_case(out.data());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(f32(out[0]), 0.0f);
  EXPECT_EQ(f32(out[1 * 32 + 0]), 1000.0f);
  EXPECT_EQ(f32(out[37 * 32 + 17]), 37017.0f);  // warp 1, lane 5: TMEM lane 37; second x16 load
  for (int t = 0; t < 128; ++t)
    for (int c = 0; c < 32; ++c) ASSERT_EQ(f32(out[t * 32 + c]), 1000.0f * t + c) << t << "," << c;
}

// PTX ISA wgmma .m64nNk16 D fragment: thread t register i holds D[row][col] with
// row = 16 (t / 32) + (t % 32) / 4 + 8 ((i >> 1) & 1), col = 8 (i >> 2) + 2 (t % 4) + (i & 1).
TEST_P(Instr, OneWgmmaFragment) {
  std::vector<float> out(128 * 64);
  const Status s = emu_cases::wgmma_case(out.data());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out[0 * 64 + 3], 8001.0f);      // t 0, i 3: row 8, col 1
  EXPECT_EQ(out[37 * 64 + 0], 17002.0f);    // t 37 (warp 1, lane 5), i 0: row 17, col 2
  EXPECT_EQ(out[127 * 64 + 63], 63127.0f);  // row 63, col 127
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 64; ++i) {
      const emu::model::FragPos p = emu::model::wgmma_acc_pos(t, i);
      ASSERT_EQ(out[t * 64 + i], 1000.0f * p.row + p.col) << t << "," << i;
    }
}

std::vector<__half> iota(uint64_t rows, uint64_t cols) {
  std::vector<__half> v(rows * cols);
  for (uint64_t i = 0; i < v.size(); ++i) v[i] = __float2half(static_cast<float>(i % 2000));
  return v;
}

// The box element (r, c) sits at byte swizzle(r * 128 + 2 c) of the 1024-aligned box.
float box_at(const std::vector<uint8_t>& box, size_t base, int r, int c) {
  const uint32_t off = sw128_offset(static_cast<uint32_t>(r), static_cast<uint32_t>(c / 8)) + (c % 8) * 2;
  __half h;
  std::memcpy(&h, &box[base + off], 2);
  return __half2float(h);
}

// A 100 x 40 tensor, boxes of 64 x 64: past column 40 and row 100 (and before row 0) TMA fills zeros
// and still credits the full 8 KB (the kernel expects exactly that, or it would hang or fail).
TEST_P(Instr, TmaLoadSwizzlesAndZeroFills) {
  const std::vector<__half> src = iota(100, 40);
  for (auto [c0, c1] : {std::pair{0, 0}, std::pair{0, 64}, std::pair{8, -8}, std::pair{32, 90}}) {
    std::vector<uint8_t> box(8192, 0xAB);
    const Status s = emu_cases::tma_load_case(src.data(), 100, 40, c0, c1, box.data());
    ASSERT_TRUE(s.ok()) << s.message();
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) {
        const int64_t gr = c1 + r, gc = c0 + c;
        const float want = gr >= 0 && gr < 100 && gc >= 0 && gc < 40 ? __half2float(src[gr * 40 + gc]) : 0.0f;
        ASSERT_EQ(box_at(box, 0, r, c), want) << "box {" << c0 << ", " << c1 << "} row " << r << " col " << c;
      }
  }
}

// A store of a 64 x 64 box at {32, 80} of a 100 x 40 tensor writes rows 80..99, columns 32..39
// and nothing else: TMA clips at the edges.
TEST_P(Instr, TmaStoreClips) {
  std::vector<__half> dst(100 * 40, __float2half(-1.0f));
  const Status s = emu_cases::tma_store_case(dst.data(), 100, 40, 32, 80);
  ASSERT_TRUE(s.ok()) << s.message();
  for (int r = 0; r < 100; ++r)
    for (int c = 0; c < 40; ++c) {
      const bool inside = r >= 80 && c >= 32;
      const float want = inside ? static_cast<float>((r - 80) * 64 + (c - 32)) : -1.0f;
      ASSERT_EQ(__half2float(dst[r * 40 + c]), want) << r << "," << c;
    }
}

TEST_P(Instr, MulticastReachesEveryCtaOfTheMask) {
  const std::vector<__half> src = iota(64, 64);
  std::vector<uint8_t> out(2 * 8192, 0xAB);
  const Status s = emu_cases::multicast_case(src.data(), 64, 64, out.data());
  ASSERT_TRUE(s.ok()) << s.message();
  for (size_t cta = 0; cta < 2; ++cta)
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 64; ++c) ASSERT_EQ(box_at(out, cta * 8192, r, c), __half2float(src[r * 64 + c])) << cta;
}

// Phases and parity: the producer waits on `empty` with parity phase ^ 1 (a fresh barrier's
// "previous phase" counts as complete), the consumer on `full` with parity phase.
TEST_P(Instr, MbarrierPhases) {
  int log[4] = {};
  const Status s = emu_cases::ring_case(log);
  ASSERT_TRUE(s.ok()) << s.message();
  for (int it = 0; it < 4; ++it) EXPECT_EQ(log[it], 10 + it);
}

// A producer lane far ahead of its consumers (up to 8 loads in flight), role-divergent warps
// (the producer's warp-mates exit at once), a named barrier among the consumer warps.
TEST_P(Instr, WarpSpecializedRing) {
  std::vector<__half> src(64 * 24 * 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = __float2half(static_cast<float>(i / 64 % 2048));
  std::vector<float> log(24, -1.0f);
  const Status s = emu_cases::specialized_case(src.data(), log.data());
  ASSERT_TRUE(s.ok()) << s.message();
  for (int i = 0; i < 24; ++i) EXPECT_EQ(log[i], static_cast<float>(64 * i)) << i;
}

// Two arrivals on a count-1 barrier in its phase 1 (neither ordered after the other): whichever
// comes second is one more than the count, whatever the schedule.
TEST_P(Instr, ArrivalBeyondTheCountInALaterPhase) {
  const Status s = emu_cases::extra_arrival_case();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("more arrivals than the init count: tests/emu/instr_kernels.cpp:"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("is not ordered after the completion of its phase 1"), std::string::npos) << s.message();
}

TEST_P(Instr, CollectivesAndClusterRegisters) {
  std::vector<uint32_t> out(4 * 256 * 8);
  const Status s = emu_cases::collectives_case(out.data());
  ASSERT_TRUE(s.ok()) << s.message();
  for (uint32_t b = 0; b < 4; ++b)
    for (uint32_t t = 0; t < 256; ++t) {
      const uint32_t* o = &out[(b * 256 + t) * 8];
      const uint32_t lane = t % 32, warp = t / 32, rank = b % 2;
      EXPECT_EQ(o[0], lane == 0 ? 1u : 0u) << "elect.sync elects the lowest lane";
      EXPECT_EQ(o[1], 30 + warp) << "shfl.sync.idx from lane 3";
      EXPECT_EQ(o[2], rank);
      EXPECT_EQ(o[3], 2u);
      EXPECT_EQ(o[4], b / 2);
      EXPECT_EQ(o[5], 2u);
      EXPECT_EQ(o[6], 1000 * b + (t ^ 1)) << "the named barrier ordered the neighbour's write";
      EXPECT_EQ(o[7], rank ^ 1) << "mapa puts the target rank in the address";
    }
}

INSTANTIATE_TEST_SUITE_P(Seeds, Instr, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace gemm
