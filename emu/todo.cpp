// GEMM_TODO on the functional emulator (common/todo.cuh): a named failure of the emulated thread
// that reaches it, through the emulator's own failure path, so that the launch stops at once and
// reports "emulator: TODO step05: steps/05_pipeline/hopper.cu:83: <hint>" with the thread. Part of
// gemm_emu (emu/CMakeLists.txt).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/todo.cuh"
#include "emu/core.h"

namespace gemm::emu {

void todo(const char* step, const char* hint, SourceLoc loc) {
  const Fiber* f = nullptr;
  try {
    f = self();
  } catch (const Failure&) {
    // Host code of a step file (its launcher): nothing to fail but the process.
    std::fprintf(stderr, "TODO %s (%s): %s\n", step, where(loc).c_str(), hint);
    std::abort();
  }
  fail_loc(loc, f, std::string("TODO ") + step, std::string(hint) + " (this part of the step is yours to write)");
}

}  // namespace gemm::emu
