// The inputs: a counter-based hash of (seed, index), the same function on the host and the device.
//
// Element i of A is input_value(operand_seed(seed, Operand::a), i, mode), and likewise for B: a
// pure function of its index, so the GPU fill, the CPU reference and the emulator all see
// identical fp16 inputs without copying them around, and any element can be recomputed alone.
// Plain host C++ too (GEMM_HD is `inline` outside nvcc), so .cpp files and tests include it.
#pragma once

#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "common/defs.cuh"

namespace gemm {

enum class InputMode {
  float_uniform,  // uniform in [-1, 1), as fp16: checked against cuBLAS with a tolerance
  exact_int,      // integers in [-2, 2]: with K <= 512 every sum is exact, checked bit for bit
};

inline const char* input_mode_name(InputMode mode) { return mode == InputMode::exact_int ? "exact" : "float"; }

// Exact mode keeps every partial sum an integer of magnitude <= 4 * 512 = 2048, which fp32 holds
// exactly and fp16 too (integers up to 2048 are exact in fp16): so D is the same whatever the
// summation order, and any correct kernel matches the reference bit for bit.
inline constexpr int64_t kExactMaxK = 512;

enum class Operand { a, b };

// The splitmix64 finalizer: a bijection of 64-bit words that mixes every input bit into every
// output bit.
GEMM_HD uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The counter-based hash: the index-th output of splitmix64 seeded with mix64(seed).
GEMM_HD uint64_t hash64(uint64_t seed, uint64_t index) {
  return mix64(mix64(seed) + (index + 1) * 0x9E3779B97F4A7C15ull);
}

// A's and B's seeds from the user's seed: hash64(seed, 0xA) and hash64(seed, 0xB), so that A and
// B differ for every seed and each operand can be regenerated alone.
GEMM_HD uint64_t operand_seed(uint64_t seed, Operand op) { return hash64(seed, op == Operand::a ? 0xA : 0xB); }

// Element `index` of an operand filled with `seed` (already the operand's seed).
GEMM_HD __half input_value(uint64_t seed, uint64_t index, InputMode mode) {
  const uint64_t h = hash64(seed, index);
  if (mode == InputMode::exact_int) return __float2half_rn(static_cast<float>(static_cast<int>((h >> 32) % 5) - 2));
  // 24 random bits make u in [0, 1) exactly in fp32, and 2u - 1 in [-1, 1) exactly. Rounding to
  // fp16 toward zero keeps it in [-1, 1) (to nearest, values just below 1 would round up to 1).
  const float u = static_cast<float>(h >> 40) * 0x1p-24f;
  return __float2half_rz(2.0f * u - 1.0f);
}

// The host fill: what the backends' device fill writes, element for element.
inline void fill_host(__half* out, size_t count, uint64_t seed, InputMode mode) {
  for (size_t i = 0; i < count; ++i) out[i] = input_value(seed, i, mode);
}

// fp16 <-> its 16 bits, for poison patterns and bit-for-bit comparisons.
GEMM_HD uint16_t half_bits(__half h) { return __half_as_ushort(h); }
GEMM_HD __half half_from_bits(uint16_t bits) { return __ushort_as_half(bits); }

}  // namespace gemm
