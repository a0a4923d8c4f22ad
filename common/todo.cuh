// The handout's TODOs (docs/course.md): tools/handout replaces each solution region of an
// assigned step by its hint and
//
//   GEMM_TODO("step05", "<hint>", uses...);
//
// which fails loudly the moment it runs, never a hang and never silent wrong output:
//   - in a kernel on the GPU: one printf line "TODO step05 (05_pipeline/hopper.cu:83): <hint> [CTA x,
//     thread t]", then __trap(): the launch fails and the line reaches the host when it synchronises;
//   - in a kernel on the emulator: a named failure through the emulator (emu/todo.cpp), so the
//     run reports "emulator: TODO step05: steps/05_pipeline/hopper.cu:83: <hint>" at once;
//   - in host code, and in plain host builds: the same line on stderr, then abort().
// `uses` are the variables the removed code used, taken by reference and otherwise ignored, so that
// -Wunused-variable and nvcc's "declared but never referenced" stay quiet about them.
#pragma once

#include "common/defs.cuh"

#if !defined(GEMM_EMULATED)
#include <cstdio>
#include <cstdlib>
#endif

namespace gemm {

#if defined(GEMM_EMULATED)
namespace emu {
// Fails the emulated thread that calls it: the launch reports "TODO <step>: <file:line>: <hint>";
// outside a kernel, prints the same and aborts.
void todo(const char* step, const char* hint, SourceLoc loc);
}  // namespace emu

template <class... Uses>
inline void todo_fail_emulated(SourceLoc loc, const char* step, const char* hint, const Uses&...) {
  emu::todo(step, hint, loc);
}

#else

// "05_pipeline/hopper.cu" of ".../steps/05_pipeline/hopper.cu": the file and its folder.
GEMM_HD const char* todo_short_path(const char* file) {
  const char* last = file;
  const char* before = file;
  for (const char* p = file; *p != '\0'; ++p)
    if (*p == '/') {
      before = last;
      last = p + 1;
    }
  return before;
}

template <class... Uses>
GEMM_HD void todo_fail(const char* file, int line, const char* step, const char* hint, const Uses&...) {
#if defined(__CUDA_ARCH__)
  printf("TODO %s (%s:%d): %s [CTA %u, thread %u]\n", step, todo_short_path(file), line, hint, blockIdx.x, threadIdx.x);
  __trap();
#else
  std::fprintf(stderr, "TODO %s (%s:%d): %s\n", step, todo_short_path(file), line, hint);
  std::abort();
#endif
}

#endif

}  // namespace gemm

#if defined(GEMM_EMULATED)
#define GEMM_TODO(...) ::gemm::todo_fail_emulated(::gemm::SourceLoc::current(), __VA_ARGS__)
#else
#define GEMM_TODO(...) ::gemm::todo_fail(__FILE__, __LINE__, __VA_ARGS__)
#endif
