// wgmma.mma_async and its fences (sm_90a), accumulators in registers.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async
//
// All four warps of a warpgroup execute each of these convergently (`.sync.aligned`).
// Accumulator fragment (m64nN, f32), thread t of the warpgroup, register i:
//   row = 16*(t/32) + (t%32)/4 + 8*((i>>1)&1),   col = 8*(i>>2) + 2*(t%4) + (i&1)
#pragma once

#include "common/defs.cuh"
#include "common/trace.cuh"

namespace gemm::hopper {

// Accumulator registers per thread of one m64nNk16 wgmma with f32 D.
template <int N>
inline constexpr int kWgmmaAccRegs = N / 2;

// Row and column, inside the 64xN warpgroup tile, of accumulator register `i` of thread `t`.
GEMM_HD constexpr int wgmma_acc_row(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1); }
GEMM_HD constexpr int wgmma_acc_col(int t, int i) { return 8 * (i >> 2) + 2 * (t % 4) + (i & 1); }

#if defined(__CUDACC__)

// Orders this warpgroup's earlier register and shared-memory accesses before the wgmma that
// follows (required before the first wgmma touching accumulators other instructions wrote).
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-fence
GEMM_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// Closes the uncommitted wgmmas of this warpgroup into one wgmma-group.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-commit-group
// A traced build records the commit (the timeline's "MMA commit": the slice's wgmmas were just issued).
GEMM_DEVICE void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  trace_record(TraceKind::mma_commit, nullptr, 0);
}

// Waits until at most N of this warpgroup's wgmma-groups are pending. Accumulators of a group
// must not be touched before a wait that covers it. A traced build records the wait's begin and end.
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-instructions-wgmma-wait-group
template <int N>
GEMM_DEVICE void wgmma_wait_group() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes an immediate 0..7");
  trace_record(TraceKind::mma_wait_begin, nullptr, N);
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
  trace_record(TraceKind::mma_wait_end, nullptr, N);
}

// Compiler-only fence on accumulator registers: keeps the compiler from moving their reads or
// writes into the asynchronous window between a wgmma and the wait that covers it.
template <int R>
GEMM_DEVICE void wgmma_fence_operands(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 with A and B from shared memory.
// scale-d is `accumulate` (false: D = A*B, the old D ignored); imm-scale-a/b = 1; imm-trans-a/b
// = 0 because A (M x K) and B (N x K) are both K-major.
// D(64x64, f32) (+)= A(64x16, f16, smem) * B(64x16, f16, smem)^T, both K-major.
GEMM_DEVICE void wgmma_m64n64k16_f32_f16_ss(float (&d)[32], uint64_t a_desc, uint64_t b_desc, bool accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},"
      " %32, %33, p, 1, 1, 0, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(a_desc), "l"(b_desc), "r"(static_cast<uint32_t>(accumulate)));
}

// D(64x128, f32) (+)= A(64x16, f16, smem) * B(128x16, f16, smem)^T, both K-major.
GEMM_DEVICE void wgmma_m64n128k16_f32_f16_ss(float (&d)[64], uint64_t a_desc, uint64_t b_desc, bool accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63},"
      " %64, %65, p, 1, 1, 0, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(a_desc), "l"(b_desc), "r"(static_cast<uint32_t>(accumulate)));
}

// D(64x256, f32) (+)= A(64x16, f16, smem) * B(256x16, f16, smem)^T, both K-major.
GEMM_DEVICE void wgmma_m64n256k16_f32_f16_ss(float (&d)[128], uint64_t a_desc, uint64_t b_desc, bool accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},"
      " %128, %129, p, 1, 1, 0, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
        "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
        "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]),
        "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
        "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(a_desc), "l"(b_desc), "r"(static_cast<uint32_t>(accumulate)));
}

// D(64x192, f32) (+)= A(64x16, f16, smem) * B(192x16, f16, smem)^T, both K-major.
GEMM_DEVICE void wgmma_m64n192k16_f32_f16_ss(float (&d)[96], uint64_t a_desc, uint64_t b_desc, bool accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %98, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95},"
      " %96, %97, p, 1, 1, 0, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(a_desc), "l"(b_desc), "r"(static_cast<uint32_t>(accumulate)));
}

template <int N>
GEMM_DEVICE void wgmma_f32_f16_ss(float (&d)[N / 2], uint64_t a_desc, uint64_t b_desc, bool accumulate) {
  static_assert(N == 64 || N == 128 || N == 192 || N == 256, "wrapped wgmma shapes: m64nNk16, N = 64, 128, 192, 256");
  if constexpr (N == 64) wgmma_m64n64k16_f32_f16_ss(d, a_desc, b_desc, accumulate);
  else if constexpr (N == 128) wgmma_m64n128k16_f32_f16_ss(d, a_desc, b_desc, accumulate);
  else if constexpr (N == 192) wgmma_m64n192k16_f32_f16_ss(d, a_desc, b_desc, accumulate);
  else wgmma_m64n256k16_f32_f16_ss(d, a_desc, b_desc, accumulate);
}

#elif defined(GEMM_EMULATED)

void wgmma_fence(SourceLoc loc = SourceLoc::current());
void wgmma_commit_group(SourceLoc loc = SourceLoc::current());
void wgmma_wait_group_n(int n, SourceLoc loc = SourceLoc::current());
template <int N>
void wgmma_wait_group(SourceLoc loc = SourceLoc::current()) {
  wgmma_wait_group_n(N, loc);
}
template <int R>
void wgmma_fence_operands(float (&)[R]) {}
void wgmma_f32_f16_ss_n(int n, float* d, uint64_t a_desc, uint64_t b_desc, bool accumulate,
                        SourceLoc loc = SourceLoc::current());
template <int N>
void wgmma_f32_f16_ss(float (&d)[N / 2], uint64_t a_desc, uint64_t b_desc, bool accumulate,
                      SourceLoc loc = SourceLoc::current()) {
  static_assert(N == 64 || N == 128 || N == 192 || N == 256, "wrapped wgmma shapes: m64nNk16, N = 64, 128, 192, 256");
  wgmma_f32_f16_ss_n(N, d, a_desc, b_desc, accumulate, loc);
}

#endif

}  // namespace gemm::hopper
