// Line windows (common/line_window.cuh) against values worked by hand from the byte layout: a row
// of fp16 that starts `o` bytes into a 128-byte L2 line (o a multiple of 16, s = o / 16); window
// line L of the row is the aligned line at (row start - o) + 128 L; its 16-byte chunk q is then
// byte 128 L + 16 q - o of the row, i.e. fp16 element (128 L + 16 q - o) / 2, which lies in K slice
// element / 64 at chunk column (element % 64) / 8 (negative: the row before).
#include "common/line_window.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>  // setenv, unsetenv
#include <map>
#include <string>
#include <utility>

namespace gemm {
namespace {

TEST(LineWindow, ChunkOffsetOfARowStart) {
  EXPECT_EQ(line_chunk_offset(0), 0);
  EXPECT_EQ(line_chunk_offset(128 * 7), 0);
  EXPECT_EQ(line_chunk_offset(16), 1);
  // Pitch 6000 (K = 3000): row 1 starts at 6000 = 46 x 128 + 112, row 2 at 12000 = 93 x 128 + 96.
  EXPECT_EQ(line_chunk_offset(6000), 7);
  EXPECT_EQ(line_chunk_offset(12000), 6);
  // Pitch 4112 (K = 2056): row 1 at 4112 = 32 x 128 + 16.
  EXPECT_EQ(line_chunk_offset(4112), 1);
}

TEST(LineWindow, AlignedRowIsOneSlicePerLine) {
  // s = 0: line L is exactly slice L; chunk q is its column q.
  for (int64_t line = 0; line < 4; ++line)
    for (int q = 0; q < 8; ++q) {
      const WindowChunk c = window_chunk(0, line, q);
      EXPECT_EQ(c.slice, line);
      EXPECT_EQ(c.col, q);
      EXPECT_EQ(c.k_chunk, 8 * line + q);
    }
}

TEST(LineWindow, RowStartingOnTheLastChunkOfItsLine) {
  // s = 7 (o = 112): line 0 holds 112 bytes of the row before, then the row's first chunk.
  for (int q = 0; q < 7; ++q) EXPECT_EQ(window_chunk(7, 0, q).slice, -1) << "q " << q;
  EXPECT_EQ(window_chunk(7, 0, 7).slice, 0);
  EXPECT_EQ(window_chunk(7, 0, 7).col, 0);
  // Line 1: bytes 16-143 of the row: chunks 1-7 of slice 0, then chunk 0 of slice 1.
  for (int q = 0; q < 7; ++q) {
    EXPECT_EQ(window_chunk(7, 1, q).slice, 0) << "q " << q;
    EXPECT_EQ(window_chunk(7, 1, q).col, q + 1) << "q " << q;
  }
  EXPECT_EQ(window_chunk(7, 1, 7).slice, 1);
  EXPECT_EQ(window_chunk(7, 1, 7).col, 0);
}

TEST(LineWindow, RowStartingOneChunkIn) {
  // s = 1 (o = 16): line 2 is bytes 240-367 of the row: chunk 15 (slice 1, column 7), then chunks
  // 16-22 (slice 2, columns 0-6).
  EXPECT_EQ(window_chunk(1, 2, 0).k_chunk, 15);
  EXPECT_EQ(window_chunk(1, 2, 0).slice, 1);
  EXPECT_EQ(window_chunk(1, 2, 0).col, 7);
  EXPECT_EQ(window_chunk(1, 2, 1).slice, 2);
  EXPECT_EQ(window_chunk(1, 2, 1).col, 0);
  EXPECT_EQ(window_chunk(1, 2, 7).col, 6);
}

TEST(LineWindow, EveryChunkOfEverySliceComesFromExactlyOneLine) {
  // For each offset and slice count, lines 0 .. n cover each (slice < n, column) once, and
  // nothing else but the row before (slice -1) and past the last slice (slice n).
  for (int s = 0; s < 8; ++s)
    for (int64_t n = 1; n <= 5; ++n) {
      std::map<std::pair<int64_t, int>, int> seen;
      for (int64_t line = 0; line <= n; ++line)
        for (int q = 0; q < 8; ++q) {
          const WindowChunk c = window_chunk(s, line, q);
          ASSERT_GE(c.slice, -1);
          ASSERT_LE(c.slice, n);
          if (c.slice >= 0 && c.slice < n) ++seen[{c.slice, c.col}];
        }
      EXPECT_EQ(seen.size(), static_cast<size_t>(8 * n)) << "s " << s << ", n " << n;
      for (const auto& [key, count] : seen) EXPECT_EQ(count, 1) << "s " << s << ", slice " << key.first;
    }
}

TEST(LineWindow, ProducerStepsWalkTheLinesInTheConsumersOrder) {
  // Forward (slices 0, 1, 2): step t loads line t. Backward (slices 2, 1, 0): line 3 - t.
  for (int64_t t = 0; t <= 3; ++t) {
    EXPECT_EQ(window_line(t, 3, true), t);
    EXPECT_EQ(window_line(t, 3, false), 3 - t);
  }
  // Backward, step 1 starts slice 1 and completes slice 2: line 2 holds slice 1's tail (q < s)
  // and slice 2's head.
  EXPECT_EQ(window_chunk(3, window_line(1, 3, false), 0).slice, 1);
  EXPECT_EQ(window_chunk(3, window_line(1, 3, false), 3).slice, 2);
}

TEST(LineWindow, RowsStartOnLinesOnlyForAlignedBaseAndPitch) {
  const void* aligned = reinterpret_cast<const void*>(uintptr_t{0x10000});
  const void* off16 = reinterpret_cast<const void*>(uintptr_t{0x10010});
  EXPECT_TRUE(rows_start_on_lines(aligned, 64));
  EXPECT_TRUE(rows_start_on_lines(aligned, 3072));
  EXPECT_FALSE(rows_start_on_lines(aligned, 3000));  // pitch 6000 = 112 mod 128
  EXPECT_FALSE(rows_start_on_lines(aligned, 3040));  // pitch 6080 = 64 mod 128
  EXPECT_FALSE(rows_start_on_lines(off16, 64));
}

// The launcher's choice: at a ragged pitch one operand through the windows, the one neighbouring
// CTAs share; an operand whose rows start on lines keeps TMA; none unless the ring has the three
// stages they need. GEMM_LINE_WINDOWS forces none, both or one operand, and is an error on a
// shallower ring.
TEST(LineWindow, LauncherChoosesTheSharedStraddlingOperandWhereTheRingFits) {
  unsetenv("GEMM_LINE_WINDOWS");
  constexpr int kBoth = kWindowsA | kWindowsB;
  Problem ragged;
  ragged.m = ragged.n = ragged.k = 3000;
  ragged.a = ragged.b = reinterpret_cast<const __half*>(uintptr_t{0x10000});
  Problem aligned = ragged;
  aligned.k = 3072;
  Problem a_off = aligned;  // rows of A start 16 bytes into a line; B's on lines
  a_off.a = reinterpret_cast<const __half*>(uintptr_t{0x10010});
  int windows = -1;
  ASSERT_TRUE(use_line_windows(ragged, true, kWindowsB, &windows).ok());
  EXPECT_EQ(windows, kWindowsB);
  ASSERT_TRUE(use_line_windows(ragged, true, kWindowsA, &windows).ok());
  EXPECT_EQ(windows, kWindowsA);
  ASSERT_TRUE(use_line_windows(a_off, true, kWindowsB, &windows).ok());
  EXPECT_EQ(windows, kWindowsA);
  ASSERT_TRUE(use_line_windows(aligned, true, kWindowsB, &windows).ok());
  EXPECT_EQ(windows, 0);
  ASSERT_TRUE(use_line_windows(ragged, false, kWindowsB, &windows).ok());
  EXPECT_EQ(windows, 0);

  setenv("GEMM_LINE_WINDOWS", "1", 1);
  ASSERT_TRUE(use_line_windows(aligned, true, kWindowsB, &windows).ok());
  EXPECT_EQ(windows, kBoth);
  const Status shallow = use_line_windows(aligned, false, kWindowsB, &windows);
  EXPECT_FALSE(shallow.ok());
  EXPECT_NE(shallow.message().find("at least 3 stages"), std::string::npos) << shallow.message();
  setenv("GEMM_LINE_WINDOWS", "a", 1);
  ASSERT_TRUE(use_line_windows(ragged, true, kWindowsB, &windows).ok());
  EXPECT_EQ(windows, kWindowsA);
  EXPECT_FALSE(use_line_windows(ragged, false, kWindowsB, &windows).ok());
  setenv("GEMM_LINE_WINDOWS", "b", 1);
  ASSERT_TRUE(use_line_windows(ragged, true, kWindowsA, &windows).ok());
  EXPECT_EQ(windows, kWindowsB);
  setenv("GEMM_LINE_WINDOWS", "0", 1);
  ASSERT_TRUE(use_line_windows(ragged, true, kWindowsB, &windows).ok());
  EXPECT_EQ(windows, 0);
  setenv("GEMM_LINE_WINDOWS", "2", 1);
  const Status bad = use_line_windows(ragged, true, kWindowsB, &windows);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("must be 0, 1, a or b"), std::string::npos) << bad.message();
  unsetenv("GEMM_LINE_WINDOWS");
}

}  // namespace
}  // namespace gemm
