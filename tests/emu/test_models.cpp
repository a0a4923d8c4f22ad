// The emulator's models (emu/models.h) against cases worked by hand from the PTX ISA, and
// against common/'s encoders: the 128-byte swizzle, the addresses a matrix descriptor walks, the
// descriptor and instruction-descriptor decoders, the wgmma accumulator fragment, the tensor map.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/blackwell/descriptors.cuh"
#include "common/hopper/wgmma.cuh"
#include "common/hopper/wgmma_desc.cuh"
#include "common/swizzle.cuh"
#include "emu/models.h"

namespace gemm::emu::model {
namespace {

// --- the 128-byte swizzle -------------------------------------------------------------------
// PTX ISA "Tensor swizzling modes", 128B: inside each 1024-byte atom (8 rows of 128 bytes), the
// 16-byte chunk c of row r lands at chunk c ^ (r % 8).
TEST(Swizzle, WhereA16ByteChunkLands) {
  const uint32_t atom = 0x8400;  // a 1024-byte aligned tile start
  struct {
    uint32_t row, chunk, offset;
  } cases[] = {
      {0, 0, 0},  // row 0 is not permuted
      {0, 5, 5 * 16},
      {1, 2, 128 + (0x2 ^ 0x1) * 16},  // = 176
      {5, 3, 5 * 128 + (3 ^ 5) * 16},  // = 736
      {7, 7, 7 * 128 + 0},             // 7 ^ 7 = 0
      {9, 0, 9 * 128 + 1 * 16},        // the second atom: row 9 is row 1 of it
  };
  for (const auto& c : cases) {
    EXPECT_EQ(swizzle(atom + c.row * 128 + c.chunk * 16, Layout::sw128), atom + c.offset) << c.row << "," << c.chunk;
    EXPECT_EQ(sw128_offset(c.row, c.chunk), c.offset) << "common/swizzle.cuh agrees";
  }
  // Bytes inside a chunk keep their place; other layouts: 64B XORs 2 bits, 32B one, none nothing.
  EXPECT_EQ(swizzle(atom + 128 + 2 * 16 + 5, Layout::sw128), atom + 128 + 3 * 16 + 5);
  EXPECT_EQ(swizzle(0x180 + 0x10, Layout::sw64), 0x180 + 0x20);  // bits 7-8 = 3: chunk 1 ^ 3 = 2
  EXPECT_EQ(swizzle(0x180 + 0x10, Layout::sw32), 0x180 + 0x00);  // bit 7 = 1: chunk 1 ^ 1 = 0
  EXPECT_EQ(swizzle(0x180 + 0x10, Layout::none), 0x190u);
  // The whole atom is a permutation of itself.
  std::vector<int> seen(64, 0);
  for (uint32_t a = 0; a < 1024; a += 16) ++seen[(swizzle(atom + a, Layout::sw128) - atom) / 16];
  for (int n : seen) EXPECT_EQ(n, 1);
}

// --- matrix descriptors ---------------------------------------------------------------------
// docs/hopper.md, the wgmma descriptor: desc = enc(addr) | 1 << 16 | 64 << 32 | 1 << 62 for a K-major SW128 tile.
TEST(WgmmaDesc, DecodesCommonsEncoding) {
  const uint64_t d = hopper::make_wgmma_desc_k_sw128(0x10420);
  EXPECT_EQ(d, (0x10420u >> 4) | (uint64_t{1} << 16) | (uint64_t{64} << 32) | (uint64_t{1} << 62));
  const DescDecode r = decode_wgmma_desc(d);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.desc.start, 0x10420u);
  EXPECT_EQ(r.desc.lbo, 16u);
  EXPECT_EQ(r.desc.sbo, 1024u);
  EXPECT_EQ(r.desc.layout, Layout::sw128);
  EXPECT_EQ(decode_wgmma_desc((d & ~(uint64_t{3} << 62)) | (uint64_t{2} << 62)).desc.layout, Layout::sw64);
  EXPECT_EQ(decode_wgmma_desc((d & ~(uint64_t{3} << 62)) | (uint64_t{3} << 62)).desc.layout, Layout::sw32);
  EXPECT_EQ(decode_wgmma_desc(d & ~(uint64_t{3} << 62)).desc.layout, Layout::none);
  EXPECT_FALSE(decode_wgmma_desc(d | (uint64_t{1} << 49)).ok) << "base offset 1 is not modelled";
  EXPECT_FALSE(decode_wgmma_desc(d | (uint64_t{1} << 15)).ok) << "reserved bit 15";
}

// The addresses a K-major SW128 descriptor walks: row r (M or N index), 16-byte K chunk j.
// Worked by hand: the tile starts at 0x10400 (1024-aligned); the k16 step 1 starts at +32.
// Row 9, K 24..31 (chunk 1 of step 1, i.e. chunk 3 of the 128-byte row): atom 1 (+1024), row 1 of
// it (+128), chunk 3 ^ 1 = 2 (+32): 0x10400 + 0x400 + 0x80 + 0x20 = 0x108A0.
TEST(WgmmaDesc, AddressesTheDescriptorWalks) {
  const DescDecode r = decode_wgmma_desc(hopper::make_wgmma_desc_k_sw128(0x10400 + 32));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(kmajor_chunk_addr(r.desc, 9, 1), 0x108A0u);
  EXPECT_EQ(kmajor_chunk_addr(r.desc, 0, 0), 0x10420u);             // row 0, chunk 2: not permuted
  EXPECT_EQ(kmajor_chunk_addr(r.desc, 3, 0), 0x10400u + 384 + 16);  // row 3: chunk 2 ^ 3 = 1
  // Every (row, K chunk) of a 128 x 64 tile, for the 4 k16 steps, is where TMA's SW128 box put it.
  for (uint32_t step = 0; step < 4; ++step) {
    const DescDecode s = decode_wgmma_desc(hopper::make_wgmma_desc_k_sw128(0x10400 + 32 * step));
    for (uint32_t row = 0; row < 128; ++row)
      for (uint32_t j = 0; j < 2; ++j)
        EXPECT_EQ(kmajor_chunk_addr(s.desc, row, j), 0x10400 + sw128_offset(row, 2 * step + j));
  }
  // No swizzle (interleave): core matrices of 8 rows x 16 bytes; LBO between the K chunks.
  MatrixDesc none;
  none.start = 0x1000;
  none.lbo = 2048;
  none.sbo = 128;
  EXPECT_EQ(kmajor_chunk_addr(none, 10, 1), 0x1000u + 128 + 2 * 16 + 2048);
}

TEST(WgmmaDesc, AtomAlignment) {
  EXPECT_EQ(check_desc_alignment(decode_wgmma_desc(hopper::make_wgmma_desc_k_sw128(0x10400 + 96)).desc), "");
  EXPECT_NE(check_desc_alignment(decode_wgmma_desc(hopper::make_wgmma_desc_k_sw128(0x10400 + 128)).desc), "");
  EXPECT_NE(check_desc_alignment(decode_wgmma_desc(hopper::make_wgmma_desc_k_sw128(0x10400 + 512)).desc), "");
  EXPECT_EQ(check_desc_alignment(decode_wgmma_desc(hopper::make_wgmma_desc_k_sw128(0x10400 + 8192)).desc), "")
      << "the second 64-row half of A: 8 atoms further";
}

// docs/blackwell.md, the sm100 descriptor: the constant part 0x4000404000000000 = (2 << 61) | (1 << 46) | (64 << 32).
TEST(Sm100Desc, DecodesCommonsEncoding) {
  const uint64_t d = blackwell::make_smem_desc_k_sw128(0x10400);
  EXPECT_EQ(d & ~uint64_t{0x3FFFFFFF}, 0x4000404000000000ull);
  const DescDecode r = decode_sm100_desc(d);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.desc.start, 0x10400u);
  EXPECT_EQ(r.desc.sbo, 1024u);
  EXPECT_EQ(r.desc.layout, Layout::sw128);
  // The same walk as the wgmma descriptor (the two encodings differ, the layouts do not).
  const DescDecode h = decode_wgmma_desc(hopper::make_wgmma_desc_k_sw128(0x10400 + 64));
  const DescDecode b = decode_sm100_desc(blackwell::make_smem_desc_k_sw128(0x10400 + 64));
  for (uint32_t row = 0; row < 128; ++row)
    for (uint32_t j = 0; j < 2; ++j) EXPECT_EQ(kmajor_chunk_addr(b.desc, row, j), kmajor_chunk_addr(h.desc, row, j));
}

TEST(Sm100Desc, RejectsWhatThePtxIsaForbids) {
  const uint64_t d = blackwell::make_smem_desc_k_sw128(0x10400);
  const DescDecode no46 = decode_sm100_desc(d & ~(uint64_t{1} << 46));
  EXPECT_FALSE(no46.ok);
  EXPECT_NE(no46.error.find("bits 46-48 must be the fixed constant 0b001"), std::string::npos) << no46.error;
  EXPECT_FALSE(decode_sm100_desc(d | (uint64_t{1} << 47)).ok) << "bits 46-48 = 0b011";
  // The sm90 encoding of the same tile: bit 46 missing.
  EXPECT_FALSE(decode_sm100_desc(hopper::make_wgmma_desc_k_sw128(0x10400)).ok);
  for (uint64_t code : {3, 5, 7}) {
    const DescDecode bad = decode_sm100_desc((d & ~(uint64_t{7} << 61)) | (code << 61));
    EXPECT_FALSE(bad.ok) << code;
    EXPECT_NE(bad.error.find("swizzle code " + std::to_string(code)), std::string::npos) << bad.error;
  }
  const struct {
    uint64_t code;
    Layout layout;
  } good[] = {{0, Layout::none}, {2, Layout::sw128}, {4, Layout::sw64}, {6, Layout::sw32}};
  for (const auto& g : good) {
    const DescDecode r = decode_sm100_desc((d & ~(uint64_t{7} << 61)) | (g.code << 61));
    EXPECT_TRUE(r.ok) << g.code << ": " << r.error;
    EXPECT_EQ(r.desc.layout, g.layout);
  }
  EXPECT_FALSE(decode_sm100_desc((d & ~(uint64_t{7} << 61)) | (uint64_t{1} << 61)).ok) << "128B_BASE32B: not modelled";
  EXPECT_FALSE(decode_sm100_desc(d | (uint64_t{1} << 14)).ok) << "reserved bit 14";
  EXPECT_FALSE(decode_sm100_desc(d | (uint64_t{1} << 30)).ok) << "reserved bit 30";
  EXPECT_FALSE(decode_sm100_desc(d | (uint64_t{1} << 55)).ok) << "fixed-0 bits 53-60";
  EXPECT_FALSE(decode_sm100_desc(d | (uint64_t{1} << 52)).ok) << "LBO mode 1: not modelled";
  EXPECT_FALSE(decode_sm100_desc(d | (uint64_t{3} << 49)).ok) << "base offset: not modelled";
}

// --- the tcgen05 instruction descriptor -----------------------------------------------------
// The worked values of docs/blackwell.md, "The instruction descriptor".
TEST(Idesc, DecodesWorkedValues) {
  const struct {
    uint32_t idesc;
    int cta_group, m, n, type;
  } cases[] = {
      {0x08200010, 1, 128, 128, 0}, {0x08400010, 1, 128, 256, 0}, {0x10200010, 2, 256, 128, 0},
      {0x10400010, 2, 256, 256, 0}, {0x08200490, 1, 128, 128, 1}, {0x10400490, 2, 256, 256, 1},
  };
  for (const auto& c : cases) {
    const IdescDecode r = decode_idesc_f16(c.idesc, c.cta_group);
    ASSERT_TRUE(r.ok) << std::hex << c.idesc << ": " << r.error;
    EXPECT_EQ(r.idesc.m, c.m);
    EXPECT_EQ(r.idesc.n, c.n);
    EXPECT_EQ(r.idesc.atype, c.type);
    EXPECT_EQ(r.idesc.btype, c.type);
    EXPECT_EQ(r.idesc.dtype, 1);
    EXPECT_EQ(c.idesc, blackwell::make_idesc_f16(c.cta_group, c.m, c.n,
                                                 c.type ? blackwell::MmaInput::bf16 : blackwell::MmaInput::f16));
  }
}

TEST(Idesc, RejectsIllegalShapesAndBits) {
  auto idesc = [](int m, int n) {
    return (1u << 4) | (static_cast<uint32_t>(n >> 3) << 17) | (static_cast<uint32_t>(m >> 4) << 24);
  };
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 120), 1).ok) << "M128 needs N % 16 == 0";
  EXPECT_FALSE(decode_idesc_f16(idesc(256, 128), 1).ok) << "M256 is cta_group::2 only";
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 8), 2).ok) << "cta_group::2 needs N >= 16";
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 0), 1).ok);
  EXPECT_FALSE(decode_idesc_f16(idesc(112, 128), 1).ok);
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 128), 3).ok);
  EXPECT_FALSE(decode_idesc_f16(idesc(64, 128), 1).ok) << "M64: legal, not modelled";
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 128) | (1u << 23), 1).ok) << "reserved bit 23";
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 128) | (1u << 15), 1).ok) << "transposed A: not modelled";
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 128) & ~(1u << 4), 1).ok) << "fp16 D: not modelled";
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 128) | (1u << 2), 1).ok) << "sparse";
  EXPECT_FALSE(decode_idesc_f16(idesc(128, 128) | (1u << 7), 1).ok) << "bf16 A with f16 B";
  // The legal set matches common's rule exactly.
  for (int cg : {1, 2})
    for (int m = 16; m <= 256; m += 16)
      for (int n = 8; n <= 256; n += 8) {
        const bool legal = blackwell::idesc_f16_shape_ok(cg, m, n);
        const bool modelled = !(cg == 1 && m == 64) && !(cg == 2 && m == 128);
        EXPECT_EQ(decode_idesc_f16(idesc(m, n), cg).ok, legal && modelled) << cg << " " << m << "x" << n;
      }
}

// --- the wgmma accumulator fragment ---------------------------------------------------------
// PTX ISA, "wgmma .m64nNk16 register fragment D": warp w of the warpgroup holds rows 16w..16w+15;
// lane l holds row l/4 (and +8) and columns 2(l%4), +1 of every 8-column group; registers go
// (r, c), (r, c+1), (r+8, c), (r+8, c+1), then the next 8 columns.
TEST(WgmmaFragment, HandWorked) {
  const struct {
    int t, i, row, col;
  } cases[] = {
      {0, 0, 0, 0}, {0, 1, 0, 1},   {0, 2, 8, 0},       {0, 3, 8, 1},   {0, 4, 0, 8},
      {5, 0, 1, 2}, {37, 0, 17, 2}, {127, 63, 63, 127}, {64, 6, 40, 8},
  };
  for (const auto& c : cases) {
    const FragPos p = wgmma_acc_pos(c.t, c.i);
    EXPECT_EQ(p.row, c.row) << c.t << "," << c.i;
    EXPECT_EQ(p.col, c.col) << c.t << "," << c.i;
  }
  // A bijection of 128 threads x 64 registers onto the 64 x 128 tile, as common/ computes it.
  std::vector<int> seen(64 * 128, 0);
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 64; ++i) {
      const FragPos p = wgmma_acc_pos(t, i);
      ++seen[p.row * 128 + p.col];
      EXPECT_EQ(p.row, hopper::wgmma_acc_row(t, i));
      EXPECT_EQ(p.col, hopper::wgmma_acc_col(t, i));
    }
  for (int n : seen) EXPECT_EQ(n, 1);
}

// --- the emulator's tensor map --------------------------------------------------------------
TEST(TensorMap, RoundTripsAndPlacesTheBox) {
  alignas(64) unsigned char bytes[128];
  TensorMap2D m;
  m.base = bytes;
  m.rows = 100;
  m.cols = 40;
  m.row_stride = 80;
  m.box_rows = 64;
  m.box_cols = 64;
  m.elem_bytes = 2;
  m.swizzle = Layout::sw128;
  encode_tensor_map(bytes, m);
  TensorMap2D back;
  ASSERT_TRUE(decode_tensor_map(bytes, &back));
  EXPECT_EQ(back.rows, 100u);
  EXPECT_EQ(back.box_cols, 64u);
  EXPECT_EQ(back.swizzle, Layout::sw128);
  // Box row 3, byte 32 (chunk 2) at a 1024-aligned destination: chunk 2 ^ 3 = 1.
  EXPECT_EQ(tma_box_addr(back, 0x2400, 3, 32), 0x2400u + 3 * 128 + 16);
  unsigned char junk[128] = {};
  EXPECT_FALSE(decode_tensor_map(junk, &back));
}

}  // namespace
}  // namespace gemm::emu::model
