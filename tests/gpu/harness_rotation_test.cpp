// The rotating input sets of the benchmarks (harness/rotation.h) on a GPU: set 0 holds exactly the
// inputs Operands would make, every set continues the same hash stream, every D starts poisoned.
// Skipped, with the reason, where there is no GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/rotation.h"
#include "harness/run.h"

namespace gemm {
namespace {

std::vector<__half> read(Backend& backend, const __half* ptr, size_t count) {
  std::vector<__half> host(count);
  backend.copy_to_host(host.data(), ptr, count * sizeof(__half));
  return host;
}

TEST(RotatingOperandsGpu, SetsContinueTheHashStream) {
  std::string why;
  if (!gpu_available(&why)) GTEST_SKIP() << why;
  const std::unique_ptr<Backend> backend = make_cuda_backend();
  const Shape shape{200, 136, 72};  // ragged: M*K is not a multiple of the 128-element alignment
  const uint64_t seed = 7;
  RotatingOperands sets(*backend, shape, seed, InputMode::float_uniform, 3);
  Operands ops(*backend, shape, seed, InputMode::float_uniform);
  ASSERT_EQ(sets.sets(), 3);

  const size_t mk = static_cast<size_t>(shape.m * shape.k), mn = static_cast<size_t>(shape.m * shape.n);
  const std::vector<__half> a0 = read(*backend, sets.problem(0).a, mk), want0 = ops.a.to_host();
  for (size_t i = 0; i < mk; ++i) ASSERT_EQ(half_bits(a0[i]), half_bits(want0[i])) << "set 0 is Operands' A at " << i;

  const uint64_t a_seed = operand_seed(seed, Operand::a), b_seed = operand_seed(seed, Operand::b);
  for (int s = 0; s < 4; ++s) {  // set 3 is set 0 again
    const Problem p = sets.problem(s);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.a) % 256, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.b) % 256, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.d) % 256, 0u);
    const size_t base_a = static_cast<size_t>(s % 3) * set_stride(shape.m, shape.k);
    const size_t base_b = static_cast<size_t>(s % 3) * set_stride(shape.n, shape.k);
    const std::vector<__half> a = read(*backend, p.a, mk), b = read(*backend, p.b, mk / shape.m * shape.n);
    for (size_t i = 0; i < a.size(); i += 97)
      ASSERT_EQ(half_bits(a[i]), half_bits(input_value(a_seed, base_a + i, InputMode::float_uniform))) << s << " " << i;
    for (size_t i = 0; i < b.size(); i += 89)
      ASSERT_EQ(half_bits(b[i]), half_bits(input_value(b_seed, base_b + i, InputMode::float_uniform))) << s << " " << i;
    for (const __half& d : read(*backend, p.d, mn)) ASSERT_EQ(half_bits(d), kUnwrittenBits);
  }
}

}  // namespace
}  // namespace gemm
