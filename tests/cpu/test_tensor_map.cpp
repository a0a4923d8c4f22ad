// The host rules of make_tensor_map_2d (common/tensor_map.h): each bad argument is refused with a
// Status naming its rule, before the driver is asked, so these run without a GPU or driver. The
// tests of the encoding itself need the driver: they run where there is a GPU, and without one
// check the Status or skip with the reason.
#include "common/tensor_map.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "harness/backend.h"  // gpu_available
#include "harness/check.h"

namespace gemm {
namespace {

// Addresses only: nothing is dereferenced on the host, the encoder is never reached.
const void* fake_address(uintptr_t a) { return reinterpret_cast<const void*>(a); }
constexpr uintptr_t kAligned = 0x7f0000001000;

// The driver encodes only with a context current on this thread (CUDA_ERROR_INVALID_CONTEXT
// otherwise), and this binary makes none of its own. With a GPU: device 0's primary context is made
// current (cudaSetDevice initialises it; cudaFree(nullptr), a no-op, is the runtime's usual way to
// make sure it exists) and true is returned. Without one (gpu_available: no device, or no driver):
// false, with gpu_available's reason in *why. Any other failure throws gemm::Error, so a broken
// set-up fails the test instead of passing for a machine without a GPU.
bool make_encoder_context(std::string* why) {
  if (!gpu_available(why)) return false;
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaFree(nullptr));
  return true;
}

void expect_rule(const Status& s, const std::string& rule) {
  ASSERT_FALSE(s.ok()) << "expected a failure naming: " << rule;
  EXPECT_NE(s.message().find(rule), std::string::npos) << "message: " << s.message();
  EXPECT_EQ(s.message().rfind("tensor map: ", 0), 0u) << "message: " << s.message();
}

TEST(TensorMap, ValidOperandAndEpilogueMapsPassTheHostRules) {
  CUtensorMap map{};
  // A or B: rows x K, box {64 cols, 128 rows}, SW128.
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 128, 64, Swizzle::b128).ok());
  // D, swizzled epilogue: box of 64 columns.
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 128, 64, Swizzle::b128).ok());
  // D, plain epilogue: up to 256 columns.
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), 1, 8, 256, 256, Swizzle::none).ok());
  // The edges of each rule: 8 columns (16-byte stride), a 1 x 8 box, the largest dimension.
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), 1, 8, 1, 8, Swizzle::b128).ok());
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), uint64_t{1} << 32, 8, 1, 8, Swizzle::none).ok());
}

TEST(TensorMap, MisalignedBase) {
  CUtensorMap map{};
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned + 8), 128, 64, 128, 64, Swizzle::b128),
              "base address must be 16-byte aligned");
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned + 2), 128, 64, 128, 64, Swizzle::none),
              "base address must be 16-byte aligned");
}

TEST(TensorMap, NullPointers) {
  CUtensorMap map{};
  expect_rule(make_tensor_map_2d(&map, nullptr, 128, 64, 128, 64, Swizzle::b128), "global base address is null");
  expect_rule(make_tensor_map_2d(nullptr, fake_address(kAligned), 128, 64, 128, 64, Swizzle::b128),
              "output CUtensorMap pointer is null");
}

TEST(TensorMap, MisalignedOutput) {
  alignas(64) unsigned char storage[sizeof(CUtensorMap) + 64];
  auto* misaligned = reinterpret_cast<CUtensorMap*>(storage + 16);
  expect_rule(make_tensor_map_2d(misaligned, fake_address(kAligned), 128, 64, 128, 64, Swizzle::b128),
              "CUtensorMap must be 64-byte aligned");
}

TEST(TensorMap, RowStrideNotAMultipleOf16) {
  CUtensorMap map{};
  // 100 fp16 = 200 bytes per row: not a multiple of 16.
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 128, 100, 128, 64, Swizzle::b128),
              "row stride (cols * 2 bytes) must be a multiple of 16 bytes");
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 128, 4, 128, 8, Swizzle::none),
              "row stride (cols * 2 bytes) must be a multiple of 16 bytes");
}

TEST(TensorMap, GlobalDimensions) {
  CUtensorMap map{};
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 0, 64, 128, 64, Swizzle::b128),
              "each global dimension must be in 1..2^32");
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), (uint64_t{1} << 32) + 1, 64, 128, 64, Swizzle::b128),
              "each global dimension must be in 1..2^32");
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 1, (uint64_t{1} << 32) + 8, 1, 8, Swizzle::none),
              "each global dimension must be in 1..2^32");
}

TEST(TensorMap, BoxDimensions) {
  CUtensorMap map{};
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 0, 64, Swizzle::b128),
              "each box dimension must be in 1..256");
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 257, 64, Swizzle::b128),
              "each box dimension must be in 1..256");
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 128, 264, Swizzle::none),
              "each box dimension must be in 1..256");
}

TEST(TensorMap, InnerBoxBytesMultipleOf16) {
  CUtensorMap map{};
  // 12 fp16 = 24 bytes.
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 128, 12, Swizzle::none),
              "inner dimension (box_cols * 2 bytes) must be a multiple of 16");
}

TEST(TensorMap, Swizzle128BoxAtMost64Fp16) {
  CUtensorMap map{};
  // 128 fp16 = 256 bytes: wider than the 128-byte swizzle span (the driver says INVALID_VALUE).
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 64, 128, Swizzle::b128),
              "with the 128-byte swizzle the box's inner dimension must be at most 128 bytes");
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 128, 72, Swizzle::b128),
              "at most 128 bytes, i.e. 64 fp16");
  // The same box without swizzle is legal (the plain epilogue's 128 x 64 boxes).
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 64, 128, Swizzle::none).ok());
}

// A valid call reaches the driver: with a GPU it encodes (the encoder reads no memory, so the fake
// address is fine); without one (CI) the Status names the encoder it could not reach or use.
TEST(TensorMap, ValidCallEncodesOrNamesTheMissingGpu) {
  std::string why;
  const bool gpu = make_encoder_context(&why);
  CUtensorMap map{};
  const Status s = make_tensor_map_2d(&map, fake_address(kAligned), 4096, 4096, 128, 64, Swizzle::b128);
  if (gpu) {
    EXPECT_TRUE(s.ok()) << s.message();
  } else if (!s.ok()) {
    EXPECT_EQ(s.message().rfind("tensor map: ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find("cuTensorMapEncodeTiled"), std::string::npos) << s.message() << " (" << why << ")";
  }
}

// A padded row stride (TensorMapOptions::row_stride_bytes): a multiple of 16 bytes that holds a
// row; with it, cols * 2 itself need not be a multiple of 16.
TEST(TensorMap, PaddedRowStride) {
  CUtensorMap map{};
  TensorMapOptions padded;
  padded.row_stride_bytes = 6016;  // K = 3000 (6000 bytes) padded to a multiple of 128 bytes
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), 3072, 3000, 128, 64, Swizzle::b128, padded).ok());
  padded.row_stride_bytes = 208;  // 100 fp16 = 200 bytes, padded to 208
  EXPECT_TRUE(check_tensor_map_2d(&map, fake_address(kAligned), 128, 100, 128, 64, Swizzle::b128, padded).ok());
  padded.row_stride_bytes = 6008;
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 3072, 3000, 128, 64, Swizzle::b128, padded),
              "padded row stride must be a multiple of 16 bytes");
  padded.row_stride_bytes = 5984;
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 3072, 3000, 128, 64, Swizzle::b128, padded),
              "padded row stride must hold a row, at least cols * 2 = 6000 bytes");
  padded.row_stride_bytes = uint64_t{1} << 40;
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 8, 8, 8, 8, Swizzle::none, padded),
              "padded row stride must be below 2^40 bytes");
  // Without padding the dense rule still applies.
  expect_rule(make_tensor_map_2d(&map, fake_address(kAligned), 128, 100, 128, 64, Swizzle::b128, TensorMapOptions{}),
              "row stride (cols * 2 bytes) must be a multiple of 16 bytes");
}

// TensorMapOptions{} is an aligned-pitch map of the steps (their misaligned pitches: below).
TEST(TensorMap, DefaultOptionsAreAnAlignedMap) {
  const TensorMapOptions options;
  EXPECT_EQ(options.l2_promotion, L2Promotion::b256);
  EXPECT_EQ(options.row_stride_bytes, 0u);
}

// The steps' maps pick the L2 promotion by the row pitch: 256 bytes when the pitch is a multiple
// of 128 bytes (K a multiple of 64), 128 otherwise (docs/shape-performance.md).
TEST(TensorMap, DefaultL2PromotionFollowsThePitch) {
  EXPECT_EQ(default_l2_promotion(6144), L2Promotion::b256);  // K = 3072: 48 x 128 bytes
  EXPECT_EQ(default_l2_promotion(128), L2Promotion::b256);   // K = 64
  EXPECT_EQ(default_l2_promotion(6000), L2Promotion::b128);  // K = 3000: 6000 = 46 x 128 + 112
  EXPECT_EQ(default_l2_promotion(6080), L2Promotion::b128);  // K = 3040: 64 mod 128
  EXPECT_EQ(default_l2_promotion(4112), L2Promotion::b128);  // K = 2056: 16 mod 128
  EXPECT_EQ(default_l2_promotion(16), L2Promotion::b128);    // K = 8
}

TEST(TensorMap, ParseL2Promotion) {
  L2Promotion p = L2Promotion::b256;
  EXPECT_TRUE(parse_l2_promotion("none", &p));
  EXPECT_EQ(p, L2Promotion::none);
  EXPECT_TRUE(parse_l2_promotion("64", &p));
  EXPECT_EQ(p, L2Promotion::b64);
  EXPECT_TRUE(parse_l2_promotion("128", &p));
  EXPECT_EQ(p, L2Promotion::b128);
  EXPECT_TRUE(parse_l2_promotion("256", &p));
  EXPECT_EQ(p, L2Promotion::b256);
  for (const char* bad : {"", "256B", "L2_256B", "512", "NONE"}) EXPECT_FALSE(parse_l2_promotion(bad, &p)) << bad;
  EXPECT_FALSE(parse_l2_promotion(nullptr, &p));
  for (L2Promotion q : {L2Promotion::none, L2Promotion::b64, L2Promotion::b128, L2Promotion::b256}) {
    EXPECT_TRUE(parse_l2_promotion(l2_promotion_name(q), &p));
    EXPECT_EQ(p, q);
  }
}

// GEMM_TMA_L2_PROMOTION, the diagnostic override of the steps' maps: unset or empty keeps the
// defaults, a known value sets the promotion only, anything else is an error naming the variable.
TEST(TensorMap, L2PromotionFromEnvironment) {
  TensorMapOptions options;
  EXPECT_TRUE(tensor_map_options_from_env(nullptr, &options).ok());
  EXPECT_EQ(options.l2_promotion, L2Promotion::b256);
  EXPECT_TRUE(tensor_map_options_from_env("", &options).ok());
  EXPECT_EQ(options.l2_promotion, L2Promotion::b256);
  EXPECT_TRUE(tensor_map_options_from_env("none", &options).ok());
  EXPECT_EQ(options.l2_promotion, L2Promotion::none);
  EXPECT_EQ(options.row_stride_bytes, 0u);
  EXPECT_TRUE(tensor_map_options_from_env("128", &options).ok());
  EXPECT_EQ(options.l2_promotion, L2Promotion::b128);
  expect_rule(tensor_map_options_from_env("fast", &options), "GEMM_TMA_L2_PROMOTION must be none, 64, 128 or 256");
}

// With a GPU, each L2 promotion and a padded stride encode (the encoder reads no memory) and give
// different maps. Without one (CI) there is no encoder to ask: skipped, with gpu_available's reason.
// A failed encoding on a GPU fails the test, naming its CUresult.
TEST(TensorMap, OptionsReachTheEncoding) {
  std::string why;
  if (!make_encoder_context(&why)) GTEST_SKIP() << why;
  alignas(64) CUtensorMap maps[5]{};
  const L2Promotion promotions[4] = {L2Promotion::none, L2Promotion::b64, L2Promotion::b128, L2Promotion::b256};
  for (int i = 0; i < 4; ++i) {
    TensorMapOptions options;
    options.l2_promotion = promotions[i];
    const Status s = make_tensor_map_2d(&maps[i], fake_address(kAligned), 3072, 3000, 128, 64, Swizzle::b128, options);
    ASSERT_TRUE(s.ok()) << "L2 promotion " << l2_promotion_name(promotions[i]) << ": " << s.message();
  }
  TensorMapOptions padded;
  padded.row_stride_bytes = 6016;
  const Status s = make_tensor_map_2d(&maps[4], fake_address(kAligned), 3072, 3000, 128, 64, Swizzle::b128, padded);
  ASSERT_TRUE(s.ok()) << "padded row stride: " << s.message();
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j)
      EXPECT_NE(std::memcmp(&maps[i], &maps[j], sizeof(CUtensorMap)), 0) << "maps " << i << " and " << j;
  // The 7-argument form (the steps') encodes TensorMapOptions{} with default_l2_promotion of its
  // pitch (6000 bytes: 128), unless GEMM_TMA_L2_PROMOTION is set for this process.
  if (std::getenv("GEMM_TMA_L2_PROMOTION") == nullptr) {
    alignas(64) CUtensorMap plain{};
    const Status p = make_tensor_map_2d(&plain, fake_address(kAligned), 3072, 3000, 128, 64, Swizzle::b128);
    ASSERT_TRUE(p.ok()) << p.message();
    EXPECT_EQ(std::memcmp(&plain, &maps[2], sizeof(CUtensorMap)), 0);
  }
}

}  // namespace
}  // namespace gemm
