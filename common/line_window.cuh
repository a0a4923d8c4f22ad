// Line windows: loading K slices of A and B whose rows do not start on a 128-byte L2 line.
//
// A TMA box row is 128 bytes of one row of A or B (64 fp16 of one K slice). When the row pitch
// (K x 2 bytes) is not a multiple of 128, most rows start inside an L2 line, every box row then
// straddles two lines, and the L2 serves those split requests at about half the rate of whole
// lines, whoever issues them (TMA, cp.async: docs/shape-performance.md). The fix is to ask the
// L2 only for whole lines and do the shifting on the way into shared memory:
//
//   row r starts s = (address % 128) / 16 chunks (16 bytes each) into its line. Window line L of
//   the row is the aligned line that holds the row's 16-byte chunks 8L - s ... 8L - s + 7: the
//   first s of them (q < s) are the last s chunks of K slice L - 1, the other 8 - s the first
//   8 - s chunks of slice L. Line 0's first s chunks belong to the row before (skipped); line
//   k_slices holds only the tail of the last slice.
//
// So each line is read once, whole, and every K slice is complete once its two lines (L and L+1)
// have landed: a producer that walks the lines fills the slice it starts and completes the one
// before. cp.async does the shifting for free: each thread's 16-byte copy names its own
// shared-memory address, here the chunk's place in the 128-byte-swizzled tile that wgmma reads
// (what TMA would have written). Rows 16 apart start at the same s (16 x pitch is a multiple of
// 128 bytes, the pitch being a multiple of 16), so a thread that copies one chunk position q of
// rows g, g + 16, ... works out its slice and column once per line.
#pragma once

#include <cuda_fp16.h>

#include <cstdlib>  // std::getenv
#include <string>

#include "common/defs.cuh"
#include "common/problem.h"
#include "common/swizzle.cuh"
#if GEMM_HAS_DEVICE_HELPERS
#include "common/cp_async.cuh"
#endif

namespace gemm {

// 16-byte chunks from the start of the L2 line that holds `row_addr` to `row_addr` (0-7).
GEMM_HD constexpr int line_chunk_offset(uint64_t row_addr) { return static_cast<int>((row_addr % 128) / 16); }

// Chunk q (0-7) of window line `line` of a row that starts `s` chunks into its line: the row's
// 16-byte chunk `k_chunk` (may be negative: the row before), in K slice `slice` at column `col`.
struct WindowChunk {
  int64_t k_chunk;
  int64_t slice;  // -1 when k_chunk < 0
  int col;        // 0-7
};
GEMM_HD constexpr WindowChunk window_chunk(int s, int64_t line, int q) {
  const int64_t k_chunk = 8 * line - s + q;
  if (k_chunk < 0) return {k_chunk, -1, static_cast<int>(k_chunk + 8)};
  return {k_chunk, k_chunk / 8, static_cast<int>(k_chunk % 8)};
}

// The window line a producer loads at step t (0 .. n) of a tile whose n K slices it walks
// forward (0, 1, ..., n-1) or backward (n-1, ..., 0): step t starts the t-th slice of that order
// and completes the (t-1)-th. Forward, line t holds the tail of slice t-1 and the head of slice t;
// backward, line n-t holds the head of slice n-t and the tail of slice n-t-1.
GEMM_HD constexpr int64_t window_line(int64_t t, int64_t n, bool forward) { return forward ? t : n - t; }

// Whether the rows of an operand (base address, K fp16 per row) all start on an L2 line.
inline bool rows_start_on_lines(const void* base, int64_t k) {
  return reinterpret_cast<uintptr_t>(base) % 128 == 0 && (k * 2) % 128 == 0;
}

// Whether a launcher loads A and B through line windows: when a row of either starts inside a
// line, unless GEMM_LINE_WINDOWS forces it (1: always, 0: never, for measurements).
inline Status use_line_windows(const Problem& p, bool* windows) {
  const char* force = std::getenv("GEMM_LINE_WINDOWS");
  if (force == nullptr || *force == '\0') {
    *windows = !rows_start_on_lines(p.a, p.k) || !rows_start_on_lines(p.b, p.k);
    return {};
  }
  if (std::string(force) != "0" && std::string(force) != "1")
    return Status::failure(std::string("GEMM_LINE_WINDOWS must be 0 or 1 (got \"") + force + "\")");
  *windows = *force == '1';
  return {};
}

#if GEMM_HAS_DEVICE_HELPERS

// Copies window line `line` of rows row0 .. row0 + Rows - 1 of an operand (`rows` x `k` fp16,
// row-major at `base`) into the SW128 tiles of two K slices: chunks of slice `slice_start` into
// `start_tile`, chunks of slice `slice_finish` into `finish_tile` (either tile may be null: its
// chunks are skipped). Chunks past row `rows` or past K are zero-filled, as TMA fills past the
// edges. Threads 0 .. Threads - 1 of the calling group (`p`): thread p copies chunk position
// p % 8 of rows p / 8, p / 8 + Threads / 8, ...: every 8 consecutive lanes copy one whole line.
template <int Rows, int Threads>
GEMM_DEVICE void load_window_line(__half* start_tile, int64_t slice_start, __half* finish_tile, int64_t slice_finish,
                                  const __half* base, int64_t row0, int64_t rows, int64_t k, int64_t line, int p) {
  static_assert(Threads % 8 == 0 && Rows % (Threads / 8) == 0 && (Threads / 8) % 16 == 0,
                "each thread's rows must be a multiple of 16 apart, so that they start at the same chunk offset");
  constexpr int kRowStep = Threads / 8;
  const int q = p % 8;
  const int r0 = p / 8;
  const uint64_t pitch = static_cast<uint64_t>(k) * sizeof(__half);
  const char* row_ptr = reinterpret_cast<const char*>(base) + static_cast<uint64_t>(row0 + r0) * pitch;
  const WindowChunk c = window_chunk(line_chunk_offset(reinterpret_cast<uintptr_t>(row_ptr)), line, q);
  __half* tile = c.slice < 0               ? nullptr
                 : c.slice == slice_start  ? start_tile
                 : c.slice == slice_finish ? finish_tile
                                           : nullptr;
  if (tile == nullptr) return;
  const bool in_k = c.k_chunk < k / 8;
  // Rows r0, r0 + 16, ...: the same swizzle row phase (r % 8), so each copy's shared address is the
  // first one's plus 16 rows of 128 bytes; the global one the first's plus 16 pitches. The shared
  // window address is converted once.
  const uint32_t dst = smem_addr(tile) + sw128_offset(static_cast<uint32_t>(r0), static_cast<uint32_t>(c.col));
  const char* src = row_ptr + 16 * c.k_chunk;
  const uint64_t src_step = kRowStep * pitch;
#pragma unroll
  for (int u = 0; u < Rows / kRowStep; ++u) {
    const bool in = in_k && row0 + r0 + u * kRowStep < rows;
    const void* from = in ? static_cast<const void*>(src + u * src_step) : static_cast<const void*>(base);
    cp_async_16(dst + u * kRowStep * kSwizzleBytes, from, in ? 16 : 0);  // 0 bytes read: zeros
  }
}

#endif

}  // namespace gemm
