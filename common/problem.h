// The problem every step solves, its shape contracts, and the status a host launcher returns.
//
// D[M,N] = A[M,K] * B[N,K]^T; A, B, D row-major fp16 (A and B are "K-major"), fp32 accumulation.
// Host-only, plain C++: it is part of every build, the emulator's included.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <string>

namespace gemm {

// What a host launcher returns: empty message = success. A failure names the rule it broke.
class Status {
 public:
  Status() = default;
  static Status failure(std::string message) { return Status(std::move(message)); }
  bool ok() const { return message_.empty(); }
  const std::string& message() const { return message_; }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::string message_;
};

// M x N x K: what a contract is checked against, what the benchmarks' --sizes list and the driver's
// --m/--n/--k give, what the harness allocates operands for.
struct Shape {
  int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};
inline bool operator==(const Shape& x, const Shape& y) { return x.m == y.m && x.n == y.n && x.k == y.k; }
inline bool operator!=(const Shape& x, const Shape& y) { return !(x == y); }

// A call: a shape and the operands' device pointers. Problem{m, n, k, a, b, d} or
// Problem{shape, a, b, d}; a Problem is a Shape wherever one is asked for.
struct Problem : Shape {
  const __half* a = nullptr;  // M x K, row-major
  const __half* b = nullptr;  // N x K, row-major
  __half* d = nullptr;        // M x N, row-major
};

// docs/design.md, "The shape contract".
enum class Contract {
  single_tile,  // step 1: M = N = 128, K = 64
  k_loop,       // step 2: M = N = 128, K a positive multiple of 64, at most 2^31 - 1
  general,      // steps 3 on: M >= 1; N, K positive multiples of 8; each at most 2^31 - 1
};

constexpr Contract contract_for_step(int step) {
  return step == 1 ? Contract::single_tile : step == 2 ? Contract::k_loop : Contract::general;
}

// Largest M, N or K: every index that is a single dimension fits in a signed 32-bit int.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;

inline std::string shape_string(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// Checks a shape against a contract, pointers aside (check_problem checks a whole call). The
// message names the rule.
inline Status check_shape(Contract contract, const Shape& s) {
  const std::string got = " (got M x N x K = " + shape_string(s) + ")";
  switch (contract) {
    case Contract::single_tile:
      if (s.m != 128 || s.n != 128 || s.k != 64)
        return Status::failure("shape: step 1 computes exactly one tile, M = N = 128 and K = 64" + got);
      break;
    case Contract::k_loop:
      if (s.m != 128 || s.n != 128 || s.k <= 0 || s.k % 64 != 0 || s.k > kMaxDim)
        return Status::failure("shape: step 2 needs M = N = 128 and K a positive multiple of 64, at most 2^31 - 1" +
                               got);
      break;
    case Contract::general:
      if (s.m < 1 || s.n < 1 || s.k < 1) return Status::failure("shape: M, N and K must be positive" + got);
      if (s.m > kMaxDim || s.n > kMaxDim || s.k > kMaxDim)
        return Status::failure("shape: M, N and K must each be at most 2^31 - 1" + got);
      if (s.n % 8 != 0 || s.k % 8 != 0)
        return Status::failure("shape: N and K must be multiples of 8 (TMA needs 16-byte row strides for A, B and D)" +
                               got);
      break;
  }
  return {};
}

// Checks a call against a contract before anything is launched: the shape (check_shape), then
// the pointers. The message names the rule.
inline Status check_problem(Contract contract, const Problem& p) {
  if (Status s = check_shape(contract, p); !s.ok()) return s;
  const struct {
    const void* ptr;
    const char* name;
  } operands[] = {{p.a, "A"}, {p.b, "B"}, {p.d, "D"}};
  for (const auto& o : operands) {
    if (o.ptr == nullptr) return Status::failure(std::string("null pointer: ") + o.name + " is null");
    if (reinterpret_cast<uintptr_t>(o.ptr) % 16 != 0)
      return Status::failure(std::string("alignment: ") + o.name + " must be 16-byte aligned");
  }
  return {};
}

}  // namespace gemm
