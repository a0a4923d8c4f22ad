// The blackwell encoders (common/blackwell/descriptors.cuh, tmem.cuh) against values worked out
// by hand from the PTX ISA tables: the instruction descriptor (#tcgen05-instruction-descriptor),
// the shared-memory descriptor (#tcgen05-shared-memory-descriptor), the legal .kind::f16 shapes
// (#tcgen05-kind-shapes), TMEM addressing (#tensor-memory-addressing) and the CTA pair's masks
// (#tcgen05-cta-pair). Every expected value is a literal derived in the comment above it, never
// computed by the code under test.
#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>

#include "common/blackwell/descriptors.cuh"
#include "common/blackwell/tcgen05.cuh"
#include "common/blackwell/tmem.cuh"
#include "common/cluster.cuh"

namespace {

using namespace gemm::blackwell;

uint64_t bits(uint64_t v, int lo, int hi) { return (v >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1); }

// ---------------------------------------------------------------------------------------------
// Instruction descriptor, .kind::f16, D = F32, A/B K-major, dense.
// ---------------------------------------------------------------------------------------------

TEST(BlackwellIdesc, WorkedValuesF16) {
  // (1<<4) dtype F32 | (128>>3)<<17 | (128>>4)<<24 = 0x10 | 0x200000 | 0x8000000
  EXPECT_EQ(make_idesc_f16(1, 128, 128), 0x08200010u);
  // (1<<4) | (256>>3)<<17 | (128>>4)<<24 = 0x10 | (32<<17 = 0x400000) | 0x8000000
  EXPECT_EQ(make_idesc_f16(1, 128, 256), 0x08400010u);
  // (1<<4) | (128>>3)<<17 | (64>>4)<<24 = 0x10 | 0x200000 | (4<<24 = 0x4000000)
  EXPECT_EQ(make_idesc_f16(1, 64, 128), 0x04200010u);
  // cta_group::2, the pair's M: (1<<4) | (128>>3)<<17 | (256>>4)<<24 = 0x10 | 0x200000 | (16<<24 = 0x10000000)
  EXPECT_EQ(make_idesc_f16(2, 256, 128), 0x10200010u);
  // (1<<4) | (256>>3)<<17 | (256>>4)<<24 = 0x10 | 0x400000 | 0x10000000
  EXPECT_EQ(make_idesc_f16(2, 256, 256), 0x10400010u);
  // Smallest shapes: (1<<4) | (8>>3)<<17 | (64>>4)<<24 = 0x10 | 0x20000 | 0x4000000
  EXPECT_EQ(make_idesc_f16(1, 64, 8), 0x04020010u);
  // (1<<4) | (16>>3)<<17 | (128>>4)<<24 = 0x10 | 0x40000 | 0x8000000
  EXPECT_EQ(make_idesc_f16(1, 128, 16), 0x08040010u);
  // The idesc does not encode the cta_group: M128 N16 under ::2 is the same word as under ::1.
  EXPECT_EQ(make_idesc_f16(2, 128, 16), 0x08040010u);
  // Default input type is fp16.
  EXPECT_EQ(make_idesc_f16(1, 128, 128, MmaInput::f16), 0x08200010u);
}

TEST(BlackwellIdesc, WorkedValuesBf16) {
  // bf16 adds atype (1<<7) = 0x80 and btype (1<<10) = 0x400: low bits 0x10 | 0x80 | 0x400 = 0x490.
  // 0x08200000 | 0x490
  EXPECT_EQ(make_idesc_f16(1, 128, 128, MmaInput::bf16), 0x08200490u);
  // 0x08400000 | 0x490
  EXPECT_EQ(make_idesc_f16(1, 128, 256, MmaInput::bf16), 0x08400490u);
  // 0x10200000 | 0x490
  EXPECT_EQ(make_idesc_f16(2, 256, 128, MmaInput::bf16), 0x10200490u);
  // 0x10400000 | 0x490
  EXPECT_EQ(make_idesc_f16(2, 256, 256, MmaInput::bf16), 0x10400490u);
  // 0x04200000 | 0x490
  EXPECT_EQ(make_idesc_f16(1, 64, 128, MmaInput::bf16), 0x04200490u);
}

TEST(BlackwellIdesc, FieldByField) {
  const uint32_t d = make_idesc_f16(2, 256, 256);
  EXPECT_EQ(bits(d, 0, 1), 0u);     // sparsity selector
  EXPECT_EQ(bits(d, 2, 2), 0u);     // dense
  EXPECT_EQ(bits(d, 3, 3), 0u);     // no saturate
  EXPECT_EQ(bits(d, 4, 5), 1u);     // dtype F32
  EXPECT_EQ(bits(d, 6, 6), 0u);     // reserved
  EXPECT_EQ(bits(d, 7, 9), 0u);     // atype F16
  EXPECT_EQ(bits(d, 10, 12), 0u);   // btype F16
  EXPECT_EQ(bits(d, 13, 14), 0u);   // no negation
  EXPECT_EQ(bits(d, 15, 15), 0u);   // A K-major
  EXPECT_EQ(bits(d, 16, 16), 0u);   // B K-major
  EXPECT_EQ(bits(d, 17, 22), 32u);  // N >> 3 = 256 / 8
  EXPECT_EQ(bits(d, 23, 23), 0u);   // reserved
  EXPECT_EQ(bits(d, 24, 28), 16u);  // M >> 4 = 256 / 16
  EXPECT_EQ(bits(d, 29, 31), 0u);   // reserved, no .ws max shift

  const uint32_t b = make_idesc_f16(1, 64, 8, MmaInput::bf16);
  EXPECT_EQ(bits(b, 7, 9), 1u);    // atype BF16
  EXPECT_EQ(bits(b, 10, 12), 1u);  // btype BF16
  EXPECT_EQ(bits(b, 17, 22), 1u);  // 8 >> 3
  EXPECT_EQ(bits(b, 24, 28), 4u);  // 64 >> 4
}

// Step 9's pair MMA, M256 N128 with cta_group::2 (the idesc holds the PAIR's M: 2 CTAs x 128 rows;
// N a multiple of 16 in [16, 256]), field by field from the table: dtype F32 = 1 at bits 4-5 ->
// 1 << 4 = 0x10; atype = btype = F16 = 0 (bits 7-9, 10-12); no negation, K-major A and B (bits
// 13-16 = 0); N >> 3 = 128 / 8 = 16 at bits 17-22 -> 16 << 17 = 0x200000; M >> 4 = 256 / 16 = 16 at
// bits 24-28 -> 16 << 24 = 0x10000000. Sum: 0x10000000 | 0x200000 | 0x10 = 0x10200010. Against step
// 8's M128 N128 (0x08200010) only the M field differs: 16 instead of 8.
TEST(BlackwellIdesc, PairM256N128) {
  const uint32_t d = make_idesc_f16(2, 256, 128);
  EXPECT_EQ(d, 0x10200010u);
  EXPECT_EQ(bits(d, 0, 3), 0u);     // dense, no saturate
  EXPECT_EQ(bits(d, 4, 5), 1u);     // dtype F32
  EXPECT_EQ(bits(d, 6, 6), 0u);     // reserved
  EXPECT_EQ(bits(d, 7, 12), 0u);    // atype, btype F16
  EXPECT_EQ(bits(d, 13, 16), 0u);   // no negation, A and B K-major
  EXPECT_EQ(bits(d, 17, 22), 16u);  // N >> 3 = 128 / 8
  EXPECT_EQ(bits(d, 23, 23), 0u);   // reserved
  EXPECT_EQ(bits(d, 24, 28), 16u);  // M >> 4 = 256 / 16
  EXPECT_EQ(bits(d, 29, 31), 0u);   // reserved, no .ws max shift
  EXPECT_TRUE(idesc_f16_shape_ok(2, 256, 128));
  static_assert(make_idesc_f16(2, 256, 128) == 0x10200010u, "a constant expression, as step 9's kIdesc");
}

// The pair MMA at other widths, M256 (cta_group::2) at N = 192, 128 and 64 (N256 is in
// WorkedValuesF16): step 12's widths are 128 (steps 9-11's N) and 64; 192 is legal too, for a
// wider configuration. Only the N field differs from step 9's 0x10200010: dtype F32 1 << 4 = 0x10;
// atype = btype = F16 = 0; M >> 4 = 256 / 16 = 16 at bits 24-28 -> 16 << 24 = 0x10000000; then
//   N = 192: N >> 3 = 24 at bits 17-22 -> 24 << 17 = 0x18 x 0x20000 = 0x300000 -> 0x10300010
//   N = 128: N >> 3 = 16               -> 16 << 17 = 0x10 x 0x20000 = 0x200000 -> 0x10200010
//   N =  64: N >> 3 =  8               ->  8 << 17 = 0x08 x 0x20000 = 0x100000 -> 0x10100010
// Each N is a multiple of 16 in [16, 256], legal under cta_group::2.
TEST(BlackwellIdesc, PairM256Step12Widths) {
  EXPECT_EQ(make_idesc_f16(2, 256, 192), 0x10300010u);
  EXPECT_EQ(make_idesc_f16(2, 256, 128), 0x10200010u);
  EXPECT_EQ(make_idesc_f16(2, 256, 64), 0x10100010u);
  EXPECT_EQ(bits(make_idesc_f16(2, 256, 192), 17, 22), 24u);  // N >> 3 = 192 / 8
  EXPECT_EQ(bits(make_idesc_f16(2, 256, 64), 17, 22), 8u);    // N >> 3 = 64 / 8
  EXPECT_TRUE(idesc_f16_shape_ok(2, 256, 192));
  EXPECT_TRUE(idesc_f16_shape_ok(2, 256, 64));
  static_assert(make_idesc_f16(2, 256, 192) == 0x10300010u, "a constant expression, as a kIdesc<192> would be");
  static_assert(make_idesc_f16(2, 256, 64) == 0x10100010u, "a constant expression, as step 12's kIdesc<64>");
}

// Step 12's tilings without a pair: one CTA, one consumer of 128 rows, cta_group::1 M128 at the
// widths 128 and 64. Worked from the PTX table: c_format F32 = 1 at bits 4-5 (0x10), N >> 3 at bits
// 17-22 (128: 16 << 17 = 0x200000; 64: 8 << 17 = 0x100000), M >> 4 at bits 24-28 (128: 8 << 24 =
// 0x08000000).
TEST(BlackwellIdesc, SingleM128Step12Tilings) {
  EXPECT_EQ(make_idesc_f16(1, 128, 128), 0x08200010u);
  EXPECT_EQ(make_idesc_f16(1, 128, 64), 0x08100010u);
  EXPECT_EQ(bits(make_idesc_f16(1, 128, 64), 24, 28), 8u);  // M >> 4 = 128 / 16
  EXPECT_EQ(bits(make_idesc_f16(1, 128, 64), 17, 22), 8u);  // N >> 3 = 64 / 8
  EXPECT_TRUE(idesc_f16_shape_ok(1, 128, 64));
  static_assert(make_idesc_f16(1, 128, 64) == 0x08100010u, "a constant expression, as step 12's kIdesc");
  // One consumer's accumulator: 128 or 64 columns, both powers of 2 in [32, 512]; its box 1 at 128
  // columns (columns 64 ..) for warp 2 (lanes 64 ..): lane 64 << 16 = 0x400000 | column 64 = 0x40.
  EXPECT_TRUE(tmem_alloc_columns_ok(128));
  EXPECT_TRUE(tmem_alloc_columns_ok(64));
  EXPECT_EQ(tmem_addr(0, tmem_lane_base(2), 64), 0x00400040u);
}

TEST(BlackwellIdesc, ShapeRules) {
  // cta_group::1: M in {64, 128}; M = 64: N % 8, 8..256; M = 128: N % 16, 16..256 (the stricter
  // DeepGEMM rule; the PTX table allows steps of 8 for both).
  EXPECT_TRUE(idesc_f16_shape_ok(1, 64, 8));
  EXPECT_TRUE(idesc_f16_shape_ok(1, 64, 120));
  EXPECT_TRUE(idesc_f16_shape_ok(1, 64, 256));
  EXPECT_TRUE(idesc_f16_shape_ok(1, 128, 16));
  EXPECT_TRUE(idesc_f16_shape_ok(1, 128, 128));
  EXPECT_TRUE(idesc_f16_shape_ok(1, 128, 256));
  EXPECT_FALSE(idesc_f16_shape_ok(1, 128, 8));    // below 16 for M = 128
  EXPECT_FALSE(idesc_f16_shape_ok(1, 128, 120));  // not a multiple of 16
  EXPECT_FALSE(idesc_f16_shape_ok(1, 64, 12));    // not a multiple of 8
  EXPECT_FALSE(idesc_f16_shape_ok(1, 64, 0));
  EXPECT_FALSE(idesc_f16_shape_ok(1, 64, 264));  // above 256
  EXPECT_FALSE(idesc_f16_shape_ok(1, 128, 272));
  EXPECT_FALSE(idesc_f16_shape_ok(1, 128, -16));
  EXPECT_FALSE(idesc_f16_shape_ok(1, 256, 128));  // M = 256 needs the CTA pair
  EXPECT_FALSE(idesc_f16_shape_ok(1, 32, 128));   // M = 32 is .ws only
  EXPECT_FALSE(idesc_f16_shape_ok(1, 96, 128));
  // cta_group::2: M in {128, 256}, N % 16, 16..256.
  EXPECT_TRUE(idesc_f16_shape_ok(2, 128, 16));
  EXPECT_TRUE(idesc_f16_shape_ok(2, 256, 16));
  EXPECT_TRUE(idesc_f16_shape_ok(2, 256, 256));
  EXPECT_FALSE(idesc_f16_shape_ok(2, 256, 8));
  EXPECT_FALSE(idesc_f16_shape_ok(2, 256, 24));
  EXPECT_FALSE(idesc_f16_shape_ok(2, 256, 272));
  EXPECT_FALSE(idesc_f16_shape_ok(2, 64, 128));
  EXPECT_FALSE(idesc_f16_shape_ok(2, 512, 128));
  // No other cta_group.
  EXPECT_FALSE(idesc_f16_shape_ok(0, 128, 128));
  EXPECT_FALSE(idesc_f16_shape_ok(3, 128, 128));
  EXPECT_FALSE(idesc_f16_shape_ok(4, 256, 256));
}

// An illegal shape in a constant expression does not compile: make_idesc_f16 then reaches a
// non-constexpr function, so it is no constant and cannot be a template argument.
template <int G, int M, int N>
concept IdescIsConstant = requires {
  typename std::integral_constant<uint32_t, make_idesc_f16(G, M, N)>;
};
static_assert(IdescIsConstant<1, 128, 128>);
static_assert(IdescIsConstant<2, 256, 256>);
static_assert(!IdescIsConstant<1, 128, 120>);
static_assert(!IdescIsConstant<1, 256, 256>);
static_assert(!IdescIsConstant<2, 256, 8>);
static_assert(!IdescIsConstant<2, 64, 128>);

template <uint32_t Lbo, uint32_t Sbo>
concept SmemDescIsConstant = requires {
  typename std::integral_constant<uint64_t, make_smem_desc(0x400, Lbo, Sbo, SmemLayout::swizzle_128b)>;
};
static_assert(SmemDescIsConstant<16, 1024>);
static_assert(!SmemDescIsConstant<8, 1024>);       // LBO not a multiple of 16
static_assert(!SmemDescIsConstant<16, 1000>);      // SBO not a multiple of 16
static_assert(!SmemDescIsConstant<16, 1u << 18>);  // SBO does not fit 14 bits after >> 4

// ---------------------------------------------------------------------------------------------
// Shared-memory descriptor (sm100).
// ---------------------------------------------------------------------------------------------

TEST(BlackwellSmemDesc, WorkedValueSw128) {
  // K-major SW128 tile at shared address 0x400: start 0x400>>4 = 0x40; LBO 16 B -> field 1 << 16 =
  // 0x10000; SBO 1024 B -> field 64 << 32 = 0x40'0000'0000; bit 46 (bits 46-48 = 0b001) =
  // 0x4000'0000'0000; layout SWIZZLE_128B = 2 << 61 = 0x4000'0000'0000'0000.
  // Sum: 0x4000'0000'0000'0000 | 0x4000'0000'0000 | 0x40'0000'0000 | 0x10000 | 0x40.
  EXPECT_EQ(make_smem_desc_k_sw128(0x400), 0x4000404000010040ull);
  EXPECT_EQ(make_smem_desc(0x400, 16, 1024, SmemLayout::swizzle_128b), 0x4000404000010040ull);
  // LBO written as 0 (DeepGEMM's choice; unused for swizzled K-major): the 0x10000 term drops.
  EXPECT_EQ(make_smem_desc(0x400, 0, 1024, SmemLayout::swizzle_128b), 0x4000404000000040ull);
  // At shared address 0 only the constant part remains: 0x4000'4040'0001'0000.
  EXPECT_EQ(make_smem_desc_k_sw128(0), 0x4000404000010000ull);
}

TEST(BlackwellSmemDesc, K16Advance) {
  // One k16 slice = 16 fp16 = 32 B of a K-major row: start field +32>>4 = +2.
  // 0x400 + 32 = 0x420 -> 0x42; + 64 -> 0x44; + 96 -> 0x46 (the 4 MMAs of a 64-wide atom).
  EXPECT_EQ(make_smem_desc_k_sw128(0x400 + 32), 0x4000404000010042ull);
  EXPECT_EQ(make_smem_desc_k_sw128(0x400 + 64), 0x4000404000010044ull);
  EXPECT_EQ(make_smem_desc_k_sw128(0x400 + 96), 0x4000404000010046ull);
  // The advance touches the low 14-bit field only: the descriptors differ by exactly 2.
  EXPECT_EQ(make_smem_desc_k_sw128(0x8400 + 32) - make_smem_desc_k_sw128(0x8400), 2ull);
  // A tile 16 KiB further (the B tile after a 128 x 64 A tile): 0x4400 >> 4 = 0x440.
  EXPECT_EQ(make_smem_desc_k_sw128(0x4400), 0x4000404000010440ull);
}

TEST(BlackwellSmemDesc, HalfBTileOfThePair) {
  // Step 9: each CTA holds 64 rows of B per stage (8 KB: eight 8-row groups of 1024 B). The
  // descriptor does not encode the row count (the MMA's N / 2 does): SBO stays 1024 B (field 64),
  // layout SWIZZLE_128B, LBO field 1. Stage 1 of B behind eight 16 KB A stages: 8 x 0x4000 + 0x2000
  // = 0x22000 -> start field 0x22000 >> 4 = 0x2200; 0x4000'4040'0001'0000 | 0x2200.
  EXPECT_EQ(make_smem_desc_k_sw128(0x22000), 0x4000404000012200ull);
  // The next stage, 8 KB on (still 1024-byte aligned): 0x24000 >> 4 = 0x2400.
  EXPECT_EQ(make_smem_desc_k_sw128(0x24000), 0x4000404000012400ull);
  // Its last k16 step, + 3 x 32 B = 0x24060 -> 0x2406.
  EXPECT_EQ(make_smem_desc_k_sw128(0x24060), 0x4000404000012406ull);
}

TEST(BlackwellSmemDesc, SecondBlockOfA) {
  // Steps 10-12: a stage holds A's two 128-row blocks, 128 x 64 fp16 = 16 KB = 0x4000 each, and MMA
  // warp 1 reads block 1 (a_block = 1 x 128 x 64 x 2 bytes). With A's ring at 0x400 (its stage 0),
  // block 1 starts at 0x400 + 0x4000 = 0x4400 -> start field 0x4400 >> 4 = 0x440; stage 1 (32 KB,
  // 0x8000, further) at 0xC400 -> 0xC40. SBO 1024 B, LBO 16 B and SWIZZLE_128B as for block 0: a
  // block is eight-row groups of 1024 B like any SW128 tile.
  EXPECT_EQ(make_smem_desc_k_sw128(0x400 + 1 * 128 * 64 * 2), 0x4000404000010440ull);
  EXPECT_EQ(make_smem_desc_k_sw128(0x400 + 0x8000 + 1 * 128 * 64 * 2), 0x4000404000010C40ull);
  // Its k16 steps advance the start field by 2 (32 B), as block 0's: 0x4400 + 96 -> 0x446.
  EXPECT_EQ(make_smem_desc_k_sw128(0x4400 + 96), 0x4000404000010446ull);
}

TEST(BlackwellSmemDesc, StartAddressField) {
  // Bits 0-13 hold (addr & 0x3FFFF) >> 4: 0x3FFF0 -> 0x3FFF, the largest start field.
  EXPECT_EQ(bits(make_smem_desc_k_sw128(0x3FFF0), 0, 13), 0x3FFFull);
  // Address bits above 17 are dropped: 0x40400 & 0x3FFFF = 0x400 -> 0x40.
  EXPECT_EQ(bits(make_smem_desc_k_sw128(0x40400), 0, 13), 0x40ull);
  // The low 4 bits are dropped (addresses are 16-byte aligned): 0x40F -> 0x40.
  EXPECT_EQ(bits(make_smem_desc_k_sw128(0x40F), 0, 13), 0x40ull);
}

TEST(BlackwellSmemDesc, FieldByField) {
  const uint64_t d = make_smem_desc_k_sw128(0x1C00);
  EXPECT_EQ(bits(d, 0, 13), 0x1C0ull);  // 0x1C00 >> 4
  EXPECT_EQ(bits(d, 14, 15), 0ull);     // reserved
  EXPECT_EQ(bits(d, 16, 29), 1ull);     // LBO 16 B >> 4
  EXPECT_EQ(bits(d, 30, 31), 0ull);     // reserved
  EXPECT_EQ(bits(d, 32, 45), 64ull);    // SBO 1024 B >> 4
  EXPECT_EQ(bits(d, 46, 48), 1ull);     // fixed constant 0b001 (bit 46 set)
  EXPECT_EQ(bits(d, 46, 46), 1ull);
  EXPECT_EQ(bits(d, 49, 51), 0ull);  // base offset 0
  EXPECT_EQ(bits(d, 52, 52), 0ull);  // LBO mode: relative
  EXPECT_EQ(bits(d, 53, 60), 0ull);  // fixed 0
  EXPECT_EQ(bits(d, 61, 63), 2ull);  // SWIZZLE_128B
}

TEST(BlackwellSmemDesc, LayoutCodes) {
  // Bits 61-63: none 0, 128B_base32B 1, 128B 2, 64B 4, 32B 6 -- always with bit 46 (0x4000'0000'0000).
  EXPECT_EQ(make_smem_desc(0, 0, 0, SmemLayout::none), 0x0000400000000000ull);
  // 1 << 61 = 0x2000'0000'0000'0000
  EXPECT_EQ(make_smem_desc(0, 0, 0, SmemLayout::swizzle_128b_base32b), 0x2000400000000000ull);
  // 2 << 61 = 0x4000'0000'0000'0000
  EXPECT_EQ(make_smem_desc(0, 0, 0, SmemLayout::swizzle_128b), 0x4000400000000000ull);
  // 4 << 61 = 0x8000'0000'0000'0000
  EXPECT_EQ(make_smem_desc(0, 0, 0, SmemLayout::swizzle_64b), 0x8000400000000000ull);
  // 6 << 61 = 0xC000'0000'0000'0000
  EXPECT_EQ(make_smem_desc(0, 0, 0, SmemLayout::swizzle_32b), 0xC000400000000000ull);
  // No-swizzle K-major core-matrix layout, LBO 2048 B (field 128 << 16 = 0x800000), SBO 128 B
  // (field 8 << 32 = 0x8'0000'0000), start 0x2000 (field 0x200): 0x4008'0080'0200.
  EXPECT_EQ(make_smem_desc(0x2000, 2048, 128, SmemLayout::none), 0x0000400800800200ull);
}

// ---------------------------------------------------------------------------------------------
// TMEM addresses and allocation rules.
// ---------------------------------------------------------------------------------------------

TEST(BlackwellTmem, Address) {
  // lane in bits 31-16, column in bits 15-0.
  EXPECT_EQ(tmem_addr(0, 0, 0), 0x00000000u);
  // lane 32 -> 32 << 16 = 0x200000
  EXPECT_EQ(tmem_addr(0, 32, 0), 0x00200000u);
  // lane 96, column 64 -> 0x600000 | 0x40
  EXPECT_EQ(tmem_addr(0, 96, 64), 0x00600040u);
  // lane 127, column 511 -> 0x7F0000 | 0x1FF
  EXPECT_EQ(tmem_addr(0, 127, 511), 0x007F01FFu);
  // A base at column 128 (0x80): lane 64, 32 columns further -> 0x400000 | 0xA0
  EXPECT_EQ(tmem_addr(0x80, 64, 32), 0x004000A0u);
  EXPECT_EQ(tmem_addr_lane(0x007F01FFu), 127u);
  EXPECT_EQ(tmem_addr_column(0x007F01FFu), 511u);
}

TEST(BlackwellTmem, WarpLaneQuarter) {
  // Warp w reaches lanes 32*(w%4) .. 32*(w%4)+31.
  EXPECT_EQ(tmem_lane_base(0), 0u);
  EXPECT_EQ(tmem_lane_base(1), 32u);
  EXPECT_EQ(tmem_lane_base(2), 64u);
  EXPECT_EQ(tmem_lane_base(3), 96u);
  EXPECT_EQ(tmem_lane_base(4), 0u);
  EXPECT_EQ(tmem_lane_base(7), 96u);
  EXPECT_EQ(tmem_lane_base(9), 32u);
}

TEST(BlackwellTmem, ConsumerAccumulators) {
  // Steps 10-12: consumer i's accumulator starts at column kTileN x i of the CTA's allocation
  // (tmem_acc + i * kTileN): lane 0, column 128 (steps 10-11, 2 x 128 of an allocation of 256
  // columns) or column 64 (step 12 at 64 columns, 2 x 64 of 128). An allocation starting at column
  // 0x80 (a second CTA's, say) puts consumer 1's at 0x80 + 0x80 = 0x100, lane 0.
  EXPECT_EQ(tmem_addr(0, 0, 128), 0x00000080u);
  EXPECT_EQ(tmem_addr(0, 0, 64), 0x00000040u);
  EXPECT_EQ(tmem_addr(0x80, 0, 128), 0x00000100u);
  // Warp 5 of the second epilogue warpgroup (warps 4-7) reads lanes 32 (5 % 4) = 32 ..: consumer 1
  // at 128 columns, its box 1 (columns 64 ..): lane 32 << 16 = 0x200000 | column 128 + 64 = 0xC0.
  EXPECT_EQ(tmem_addr(0 + 128, tmem_lane_base(5), 64), 0x002000C0u);
  // The allocations: 2 x 128 and 2 x 64 columns are powers of 2 in [32, 512].
  EXPECT_TRUE(tmem_alloc_columns_ok(2 * 128));
  EXPECT_TRUE(tmem_alloc_columns_ok(2 * 64));
}

TEST(BlackwellTmem, AllocColumns) {
  // A power of 2 in [32, 512].
  for (uint32_t n : {32u, 64u, 128u, 256u, 512u}) EXPECT_TRUE(tmem_alloc_columns_ok(n)) << n;
  for (uint32_t n : {0u, 1u, 16u, 48u, 96u, 129u, 384u, 1024u}) EXPECT_FALSE(tmem_alloc_columns_ok(n)) << n;
  EXPECT_EQ(kTmemLanes, 128u);
  EXPECT_EQ(kTmemColumns, 512u);
}

TEST(BlackwellTmem, OccupancyBySharedMemory) {
  // 228 KB = 233472 bytes of shared memory per SM, 1 KB reserved per CTA. 128 columns: TMEM holds
  // 4 accumulators, so 5 CTAs must not fit: 5 (x + 1024) > 233472, x > 45670.4, x = 45671; then 4
  // fit (4 x 46695 = 186780). 256 columns: 2 fit, 3 must not: 233472 / 3 = 77824, 77824 - 1023 =
  // 76801. 512 columns: 233472 / 2 - 1023 = 115713.
  EXPECT_EQ(tmem_limited_smem_bytes(33 * 1024, 128), 45671u);
  EXPECT_GT(5 * (tmem_limited_smem_bytes(0, 128) + 1024), 233472u);
  EXPECT_LE(4 * (tmem_limited_smem_bytes(0, 128) + 1024), 233472u);
  EXPECT_EQ(tmem_limited_smem_bytes(0, 256), 76801u);
  EXPECT_EQ(tmem_limited_smem_bytes(0, 512), 115713u);
  // A CTA that already needs more keeps what it needs.
  EXPECT_EQ(tmem_limited_smem_bytes(66 * 1024, 128), 66u * 1024);
}

TEST(BlackwellTmem, F32Bits) {
  // IEEE-754 binary32: 0x3F800000 = 1.0, 0xC0000000 = -2.0, 0x3EA00000 = 0.3125 (1.25 * 2^-2).
  EXPECT_EQ(tmem_f32(0x3F800000u), 1.0f);
  EXPECT_EQ(tmem_f32(0xC0000000u), -2.0f);
  EXPECT_EQ(tmem_f32(0x3EA00000u), 0.3125f);
  EXPECT_EQ(tmem_f32(0u), 0.0f);
  // And back: the sums a split tile puts into its row (steps 11-12).
  EXPECT_EQ(f32_bits(1.0f), 0x3F800000u);
  EXPECT_EQ(f32_bits(-2.0f), 0xC0000000u);
  EXPECT_EQ(f32_bits(0.3125f), 0x3EA00000u);
  EXPECT_EQ(f32_bits(-0.0f), 0x80000000u);
}

TEST(BlackwellMma, KPerInstruction) {
  // .kind::f16: K = 16 per instruction (32 bytes of fp16).
  EXPECT_EQ(kMmaK, 16);
}

// ---------------------------------------------------------------------------------------------
// CTA pairs (cta_group::2, steps 9-11): the ctaMask of a commit multicast to both CTAs of the pair.
// ---------------------------------------------------------------------------------------------

TEST(BlackwellCtaPair, MulticastMask) {
  // ctaMask bit r names %cluster_ctarank r. The pair of ranks 0 and 1 (a 2x1 cluster, steps 9-11):
  // (1 << 0) | (1 << 1) = 0b11 = 0x3, from either CTA of the pair.
  EXPECT_EQ(gemm::cta_pair_mask(0), 0x3u);
  EXPECT_EQ(gemm::cta_pair_mask(1), 0x3u);
  // Ranks 2 and 3 of a larger cluster: (1 << 2) | (1 << 3) = 0b1100 = 0xC.
  EXPECT_EQ(gemm::cta_pair_mask(2), 0xCu);
  EXPECT_EQ(gemm::cta_pair_mask(3), 0xCu);
  // Ranks 14 and 15, the last pair of a 16-CTA cluster: (1 << 14) | (1 << 15) = 0x4000 | 0x8000 = 0xC000.
  EXPECT_EQ(gemm::cta_pair_mask(14), 0xC000u);
  EXPECT_EQ(gemm::cta_pair_mask(15), 0xC000u);
  static_assert(gemm::cta_pair_mask(1) == 0x3u, "a constant expression, as the kernels' constants need it");
}

}  // namespace
