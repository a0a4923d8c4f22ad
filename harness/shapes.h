// Shapes written as text: "4096" (4096^3) or "4096x2048x1024" (M x N x K), and comma-separated
// lists of them, as the benchmarks' --sizes flag takes them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/problem.h"

namespace gemm {

struct ShapeList {
  std::vector<Shape> shapes;
  std::string error;  // empty: parsed
  bool ok() const { return error.empty(); }
};

// "1024,2048,4096x2048x1024": each entry N (N^3) or MxNxK, positive and at most 2^31 - 1 each.
// Duplicates are kept once, in order of first appearance. Checks the text, not a step's contract.
ShapeList parse_shape_list(std::string_view text);

}  // namespace gemm
