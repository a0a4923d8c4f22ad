// GEMM_TODO on the functional emulator (common/todo.cuh): a named failure of the emulated thread
// that reaches it, through the emulator's own failure path, so that the launch stops at once and
// reports "emulator: TODO step05: 05_pipeline/hopper.cu:83: <hint>" with the thread. Part of
// gemm_emu (common/CMakeLists.txt).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/emu/core.h"
#include "common/todo.cuh"

namespace gemm::emu {

void todo(const char* step, const char* hint, const char* file, int line) {
  const std::string where = std::string(todo_short_path(file)) + ":" + std::to_string(line);
  bool in_kernel = true;
  try {
    (void)self();
  } catch (const Failure&) {
    in_kernel = false;  // host code of a step file (its launcher): nothing to fail but the process
  }
  if (!in_kernel) {
    std::fprintf(stderr, "TODO %s (%s): %s\n", step, where.c_str(), hint);
    std::abort();
  }
  fail(std::string("TODO ") + step, where + ": " + hint + " (this part of the step is yours to write)");
}

}  // namespace gemm::emu
