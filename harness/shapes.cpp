#include "harness/shapes.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace gemm {
namespace {

// "'entry'" (built up in place: GCC 12 warns falsely, -Wrestrict, on "'" + std::string(...)).
std::string quoted(std::string_view entry) {
  std::string q(1, '\'');
  q += entry;
  q += '\'';
  return q;
}

// One dimension: the whole of `text` as a positive integer <= kMaxDim, or an error.
std::string parse_dim(std::string_view entry, std::string_view text, int64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || out < 1 || out > kMaxDim)
    return quoted(entry) + " is not N or MxNxK with each a positive integer at most 2^31 - 1";
  return {};
}

}  // namespace

ShapeList parse_shape_list(std::string_view text) {
  ShapeList r;
  if (text.empty()) {
    r.error = "the list of sizes is empty";
    return r;
  }
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view entry = text.substr(begin, comma - begin);
    begin = comma + 1;

    std::vector<std::string_view> parts;
    for (size_t p = 0;;) {
      const size_t x = entry.find('x', p);
      parts.push_back(entry.substr(p, x == std::string_view::npos ? std::string_view::npos : x - p));
      if (x == std::string_view::npos) break;
      p = x + 1;
    }
    if (parts.size() != 1 && parts.size() != 3) {
      r.error = quoted(entry) + " is not N or MxNxK";
      return r;
    }
    int64_t dims[3] = {0, 0, 0};
    for (size_t i = 0; i < parts.size(); ++i)
      if (std::string e = parse_dim(entry, parts[i], dims[i]); !e.empty()) {
        r.error = std::move(e);
        return r;
      }
    if (parts.size() == 1) dims[1] = dims[2] = dims[0];
    const Shape shape{dims[0], dims[1], dims[2]};
    if (std::find(r.shapes.begin(), r.shapes.end(), shape) == r.shapes.end()) r.shapes.push_back(shape);
  }
  return r;
}

}  // namespace gemm
