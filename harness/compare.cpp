#include "harness/compare.h"

#include <cmath>
#include <cstdio>

#include "harness/backend.h"  // the poison patterns

namespace gemm {
namespace {

bool is_nan(uint16_t bits) { return (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0; }

// A value for a message: the number, or "NaN (0x7d5a)" with its bits.
std::string value_string(uint16_t bits) {
  char buf[48];
  if (is_nan(bits)) std::snprintf(buf, sizeof buf, "NaN (0x%04x)", bits);
  else std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(__half2float(half_from_bits(bits))));
  return buf;
}

}  // namespace

CompareResult compare(std::span<const __half> got, size_t guard, std::span<const __half> want, int64_t m, int64_t n,
                      InputMode mode) {
  const size_t count = static_cast<size_t>(m * n);
  if (want.size() != count || got.size() != count + 2 * guard)
    throw Error("compare: sizes do not match M x N = " + std::to_string(m) + " x " + std::to_string(n));

  CompareResult r;
  auto flag = [&](std::string reason, int64_t row, int64_t col, uint16_t got_bits, uint16_t want_bits) {
    if (r.bad_count++ == 0) {  // keep the first
      r.reason = std::move(reason);
      r.row = row;
      r.col = col;
      r.got_bits = got_bits;
      r.want_bits = want_bits;
    }
  };

  for (size_t i = 0; i < guard; ++i)
    if (const uint16_t g = half_bits(got[i]); g != kGuardBits)
      flag("guard touched before D at offset " + std::to_string(static_cast<int64_t>(i) - static_cast<int64_t>(guard)),
           -1, -1, g, kGuardBits);

  double err2 = 0, ref2 = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint16_t g = half_bits(got[guard + i]), w = half_bits(want[i]);
    const double d = __half2float(got[guard + i]), ref = __half2float(want[i]);
    const double diff = std::fabs(d - ref);
    r.max_abs_err = std::isnan(diff) || diff > r.max_abs_err ? diff : r.max_abs_err;  // NaN sticks
    err2 += (d - ref) * (d - ref);
    ref2 += ref * ref;

    const char* bad = nullptr;
    if (g == kUnwrittenBits) bad = "unwritten (still poisoned)";
    else if (is_nan(g)) bad = "NaN";
    else if (is_nan(w)) bad = "NaN in the reference";
    else if (mode == InputMode::exact_int ? g != w : !(diff <= kAbsTol + kRelTol * std::fabs(ref))) bad = "mismatch";
    if (bad) flag(bad, static_cast<int64_t>(i) / n, static_cast<int64_t>(i) % n, g, w);
  }

  for (size_t i = 0; i < guard; ++i)
    if (const uint16_t g = half_bits(got[guard + count + i]); g != kGuardBits)
      flag("guard touched after D at offset " + std::to_string(i), -1, -1, g, kGuardBits);

  // An all-zero reference has no scale: then only an all-equal D has relative error 0.
  r.rel_frobenius = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 == 0 ? 0.0 : INFINITY);
  r.ok = r.bad_count == 0;
  if (r.ok && mode == InputMode::float_uniform && !(r.rel_frobenius <= kMaxRelFrobenius)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "relative Frobenius error %.3g > %.0e", r.rel_frobenius, kMaxRelFrobenius);
    r.reason = buf;
    r.ok = false;
  }
  return r;
}

bool is_untouched(std::span<const __half> got, size_t guard) {
  for (size_t i = 0; i < got.size(); ++i) {
    const bool in_guard = i < guard || i >= got.size() - guard;
    if (half_bits(got[i]) != (in_guard ? kGuardBits : kUnwrittenBits)) return false;
  }
  return true;
}

std::string verdict(const CompareResult& r) {
  if (r.ok) return "match";
  if (r.row >= 0)
    return "MISMATCH at (" + std::to_string(r.row) + "," + std::to_string(r.col) + "): got " +
           value_string(r.got_bits) + " want " + value_string(r.want_bits) + " (" + r.reason + ")";
  if (r.bad_count > 0)  // a guard element
    return "MISMATCH: " + r.reason + ": got " + value_string(r.got_bits) + " want the guard's " +
           value_string(r.want_bits);
  return "MISMATCH: " + r.reason;
}

std::string summary(const CompareResult& r) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "; %lld bad, max abs err %.3g, rel Frobenius err %.3g",
                static_cast<long long>(r.bad_count), r.max_abs_err, r.rel_frobenius);
  return verdict(r) + buf;
}

}  // namespace gemm
