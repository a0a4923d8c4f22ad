// Must NOT compile: inline asm in a step file (tests/CMakeLists.txt expects the error).
#include "emu/prelude.h"
__global__ void kernel(float* out) { asm volatile("membar.gl;" ::: "memory"); }
