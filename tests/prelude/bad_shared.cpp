// Must NOT compile: a step file declaring __shared__ (tests/CMakeLists.txt expects the error).
#include "emu/prelude.h"
__global__ void kernel(float* out) {
  __shared__ float tile[32];
  tile[threadIdx.x] = 1.0f;
  out[threadIdx.x] = tile[threadIdx.x];
}
