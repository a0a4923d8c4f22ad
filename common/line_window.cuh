// Line windows: loading K slices of A and B whose rows do not start on a 128-byte L2 line.
//
// A TMA box row is 128 bytes of one row of A or B (64 fp16 of one K slice). When the row pitch
// (K x 2 bytes) is not a multiple of 128, most rows start inside an L2 line, every box row then
// straddles two lines, and TMA asks the L2 for each in several small requests, which it serves at
// about half the rate of whole lines (docs/shape-performance.md). The fix is to ask the L2 only
// for whole lines and do the shifting on the way into shared memory:
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
// (what TMA would have written). The copies go through L1 (cp.async.ca): L1 asks the L2 for each
// line the 8 lanes of a line read in one request, wherever the chunks land. With .cg (L1 bypassed)
// a line whose chunks land in two tiles reaches the L2 as split requests again, as TMA's do. Rows
// 16 apart start at the same s (16 x pitch is a multiple of 128 bytes, the pitch being a multiple
// of 16), so a thread that copies one chunk position q of rows g, g + 16, ... works out its slice
// and column once per line.
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

// Which operands a kernel loads through line windows, one bit each; the others come by TMA.
constexpr int kWindowsA = 1;
constexpr int kWindowsB = 2;

// Which operands a launcher loads through line windows (a mask of kWindowsA and kWindowsB):
//   - an operand whose rows start on lines keeps TMA, which loads whole lines already;
//   - of two whose rows straddle, only `shared`, the one the scheduler's neighbouring CTAs share
//     (a walk down M shares B tiles). One operand through the windows beside TMA for the other runs
//     faster than both through them, and most when the windows take the operand that CTAs running
//     side by side ask the L2 for at the same time (docs/shape-performance.md);
//   - none unless `ring_fits`: a window step fills one stage while it completes the one before,
//     and a consumer with one wgmma group in flight releases a stage only once it has issued the
//     next slice, so with fewer than three stages each would wait for the other.
// GEMM_LINE_WINDOWS forces a choice, for measurements: 0 none, 1 both, a or b that operand.
inline Status use_line_windows(const Problem& p, bool ring_fits, int shared, int* operands) {
  const char* force = std::getenv("GEMM_LINE_WINDOWS");
  if (force == nullptr || *force == '\0') {
    int straddle = (rows_start_on_lines(p.a, p.k) ? 0 : kWindowsA) | (rows_start_on_lines(p.b, p.k) ? 0 : kWindowsB);
    if (straddle == (kWindowsA | kWindowsB)) straddle = shared;
    *operands = ring_fits ? straddle : 0;
    return {};
  }
  const std::string f(force);
  if (f != "0" && f != "1" && f != "a" && f != "b")
    return Status::failure("GEMM_LINE_WINDOWS must be 0, 1, a or b (got \"" + f + "\")");
  const int forced = f == "0" ? 0 : f == "1" ? kWindowsA | kWindowsB : f == "a" ? kWindowsA : kWindowsB;
  if (forced != 0 && !ring_fits)
    return Status::failure("GEMM_LINE_WINDOWS=" + f + ": line windows need a ring of at least 3 stages");
  *operands = forced;
  return {};
}

#if GEMM_HAS_DEVICE_HELPERS

// One thread's share of the line windows of a tile's rows row0 .. row0 + Rows - 1 of an operand
// (`rows` x `k` fp16, row-major at `base`), copied by threads 0 .. Threads - 1 of a group (`p`):
// thread p copies chunk position q = p % 8 of rows p / 8, p / 8 + Threads / 8, ..., so every 8
// consecutive lanes copy one whole line. Those rows are 16 (or a multiple of 16) apart: they start
// at the same chunk offset s, sit at the same swizzle phase (row % 8), and so take the same slice
// and column from each line. start() works out, once per tile, each row's address and whether it
// exists; copy_line() is then, per row, one address addition and one copy.
template <int Rows, int Threads>
struct LineWindowRows {
  static_assert(Threads % 8 == 0 && Rows % (Threads / 8) == 0 && (Threads / 8) % 16 == 0,
                "each thread's rows must be a multiple of 16 apart, so that they start at the same chunk offset");
  static constexpr int kRowStep = Threads / 8;
  static constexpr int kRows = Rows / kRowStep;  // rows per thread

  // Set by start(); zero before it, so that a kernel may start() only the operands it windows.
  const char* src[kRows] = {};     // each row's first byte (row 0 of `base` for rows past the operand)
  uint32_t src_bytes[kRows] = {};  // 16, or 0 for rows past the operand (zero-filled)
  int64_t k_chunks = 0;            // 16-byte chunks of a row: K / 8
  uint32_t row_offset = 0;         // shared-memory offset of this thread's first row in a tile: r0 * 128
  int r0 = 0, q = 0, s = 0;

  GEMM_DEVICE void start(const __half* base, int64_t row0, int64_t rows, int64_t k, int p) {
    q = p % 8;
    r0 = p / 8;
    k_chunks = k / 8;
    row_offset = static_cast<uint32_t>(r0) * kSwizzleBytes;
    const uint64_t pitch = static_cast<uint64_t>(k) * sizeof(__half);
    const char* first = reinterpret_cast<const char*>(base) + static_cast<uint64_t>(row0 + r0) * pitch;
    s = line_chunk_offset(reinterpret_cast<uintptr_t>(first));
#pragma unroll
    for (int u = 0; u < kRows; ++u) {
      const bool in = row0 + r0 + u * kRowStep < rows;
      src[u] = in ? first + u * kRowStep * pitch : reinterpret_cast<const char*>(base);
      src_bytes[u] = in ? 16 : 0;
    }
  }

  // Copies window line `line` into the SW128 tiles of two K slices, given as shared-window
  // addresses: chunks of slice `slice_start` into `start_tile`, of slice `slice_finish` into
  // `finish_tile` (a slice of -1 takes nothing). Chunks past K are zero-filled, as TMA fills past
  // the edges; the row before the first (line 0) and past the last slice are skipped.
  GEMM_DEVICE void copy_line(uint32_t start_tile, int64_t slice_start, uint32_t finish_tile, int64_t slice_finish,
                             int64_t line) const {
    const WindowChunk c = window_chunk(s, line, q);
    if (c.slice < 0 || (c.slice != slice_start && c.slice != slice_finish)) return;
    const uint32_t tile = c.slice == slice_start ? start_tile : finish_tile;
    const bool in_k = c.k_chunk < k_chunks;
    const uint64_t offset = in_k ? 16 * static_cast<uint64_t>(c.k_chunk) : 0;  // past K: the row start, 0 bytes
    const uint32_t bytes_mask = in_k ? 16 : 0;
    const uint32_t dst = tile + row_offset + ((static_cast<uint32_t>(c.col) ^ static_cast<uint32_t>(r0 % 8)) * 16);
#pragma unroll
    for (int u = 0; u < kRows; ++u)
      cp_async_ca_16(dst + static_cast<uint32_t>(u * kRowStep) * kSwizzleBytes, src[u] + offset,
                     src_bytes[u] & bytes_mask);
  }
};

#endif

}  // namespace gemm
