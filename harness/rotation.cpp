#include "harness/rotation.h"

#include <algorithm>

namespace gemm {

int rotating_set_count(size_t set_bytes, int64_t l2_bytes, size_t max_bytes, int min_sets, int l2_factor) {
  if (set_bytes == 0) return 1;
  const size_t want_bytes = static_cast<size_t>(std::max<int64_t>(l2_bytes, 0)) * static_cast<size_t>(l2_factor);
  size_t sets = std::max<size_t>((want_bytes + set_bytes - 1) / set_bytes, static_cast<size_t>(std::max(min_sets, 1)));
  sets = std::min(sets, max_bytes / set_bytes);
  return static_cast<int>(std::max<size_t>(sets, 1));
}

RotatingOperands::RotatingOperands(Backend& backend, const Shape& shape, uint64_t seed, InputMode mode, int sets)
    : shape_(shape),
      sets_(sets),
      a_stride_(set_stride(shape.m, shape.k)),
      b_stride_(set_stride(shape.n, shape.k)),
      d_stride_(set_stride(shape.m, shape.n)) {
  if (sets < 1) throw Error("RotatingOperands: needs at least one set (got " + std::to_string(sets) + ")");
  const size_t count = static_cast<size_t>(sets);
  a_ = DeviceBuffer<__half>(backend, a_stride_ * count);
  b_ = DeviceBuffer<__half>(backend, b_stride_ * count);
  d_ = DeviceBuffer<__half>(backend, d_stride_ * count);
  backend.fill(a_.get(), a_.size(), operand_seed(seed, Operand::a), mode);
  backend.fill(b_.get(), b_.size(), operand_seed(seed, Operand::b), mode);
  backend.poison(d_.get(), d_.size(), kUnwrittenBits);
  backend.synchronize();
}

Problem RotatingOperands::problem(int64_t i) const {
  const size_t s = static_cast<size_t>(((i % sets_) + sets_) % sets_);
  return Problem{shape_, a_.get() + s * a_stride_, b_.get() + s * b_stride_, d_.get() + s * d_stride_};
}

}  // namespace gemm
