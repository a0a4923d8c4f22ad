// Rotating input sets: several copies of a problem's operands, used in turn when timing, so that a
// timed call finds none of its inputs in L2 from the calls just before it (Google Benchmark
// flushes no cache itself; bench/README.md, "Cold inputs"). The benchmarks use them; checking
// still goes through Operands.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/problem.h"
#include "harness/backend.h"
#include "harness/hash.h"

namespace gemm {

// Elements of one matrix of a set, rounded up so that every set's A, B and D start 256-byte
// aligned (what cuBLAS wants for its fastest kernels; TMA needs 16).
inline constexpr size_t kSetAlignElems = 128;
inline size_t set_stride(int64_t rows, int64_t cols) {
  const size_t elems = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  return (elems + kSetAlignElems - 1) / kSetAlignElems * kSetAlignElems;
}

// Bytes of one set: A (M x K), B (N x K) and D (M x N), fp16, each at its aligned stride.
inline size_t rotating_set_bytes(const Shape& shape) {
  return (set_stride(shape.m, shape.k) + set_stride(shape.n, shape.k) + set_stride(shape.m, shape.n)) * sizeof(__half);
}

// How many sets to rotate through: enough that together they hold at least `l2_factor` times the
// L2 (so each set has left L2 by the time it comes round again), and at least `min_sets`; then
// at most what fits in `max_bytes`, but never fewer than one.
int rotating_set_count(size_t set_bytes, int64_t l2_bytes, size_t max_bytes, int min_sets = 3, int l2_factor = 3);

// `sets` copies of a problem's operands on a backend. A of every set comes from one hash stream:
// set i's A is elements [i * stride, i * stride + M K) of the operand filled with
// operand_seed(seed, Operand::a) in `mode`, and likewise B, so every element follows the same
// distribution and set 0 holds exactly the inputs of Operands(backend, shape, seed, mode).
// Every D is poisoned (harness/backend.h); the steps write it.
class RotatingOperands {
 public:
  RotatingOperands(Backend& backend, const Shape& shape, uint64_t seed, InputMode mode, int sets);

  int sets() const { return sets_; }
  size_t bytes() const { return (a_.bytes() + b_.bytes() + d_.bytes()); }
  // The shape and the pointers of set i % sets().
  Problem problem(int64_t i) const;

 private:
  Shape shape_;
  int sets_;
  size_t a_stride_, b_stride_, d_stride_;
  DeviceBuffer<__half> a_, b_, d_;
};

}  // namespace gemm
