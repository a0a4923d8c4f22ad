// The functional emulator's host API: what the harness (the EmuBackend), the step driver and the
// tests set and read. Plain host C++; it does not need the prelude.
//
// The emulator runs the unmodified step kernels on the CPU: one fiber per GPU thread, the CTAs of
// a cluster scheduled together, the grid run cluster by cluster in a seeded order, asynchronous
// work (TMA, wgmma, tcgen05.mma) completed at seeded random later points. docs/emulator.md says
// what it models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/trace.h"

namespace gemm::emu {

struct Options {
  // SMs the emulated device has: what resident_ctas (common/device.cuh) multiplies, so that a
  // persistent kernel sees a small grid and walks more tiles than it has CTAs.
  int sm_count = 4;
  // Seeds the order in which fibers run and asynchronous operations complete. Every launch
  // starts from it, so a launch is a function of (seed, kernel, inputs): printed, replayable.
  uint64_t seed = 1;
  // Fiber stack per emulated thread, bytes (the kernels hold up to ~128 fp32 accumulators per
  // thread plus locals). Stacks are mapped lazily, with a guard page below each.
  size_t stack_bytes = 256 * 1024;
  // How soon asynchronous operations complete: at each scheduler step, with probability
  // 1 / (async_period x runnable threads), one of them at random, i.e. about once per
  // async_period rounds of every runnable thread; and whenever every thread waits. 0: only when
  // every thread waits (as late as possible: a missing wait is then always caught).
  int async_period = 32;
};

// The options of launches made by the calling OS thread (each thread has its own).
void set_options(const Options& options);
const Options& options();

// Shared memory per CTA the emulated device allows (the H100's and B200's opt-in limit).
inline constexpr size_t kMaxSmemPerCta = 232448;
inline constexpr size_t kSmemPerSm = 233472;

// The output matrix a launch writes (rows x cols elements of elem_bytes, row-major, at `d`),
// inside a larger allocation [alloc, alloc + alloc_bytes) (the harness's guard band). While set,
// each launch checks, cluster by cluster, that no element of the output is written by two
// clusters and that nothing else in the allocation is written ("an element of D written twice",
// "a write outside D"). Cleared by clear_output_watch().
void watch_output(void* alloc, size_t alloc_bytes, void* d, int64_t rows, int64_t cols, size_t elem_bytes);
void clear_output_watch();

// What the last launch did (for the driver's summary line and the tests).
struct LaunchStats {
  uint64_t threads = 0;    // emulated threads run
  uint64_t clusters = 0;   // clusters run
  uint64_t switches = 0;   // fiber switches
  uint64_t async_ops = 0;  // asynchronous operations completed
  uint64_t seed = 0;       // the seed the launch ran with
};
const LaunchStats& last_launch();

// The timeline (docs/timeline.md, emu/trace.cpp). Armed, the launches of the calling OS thread
// record the events of common/trace.h, in logical time (the scheduler's steps: fiber switches plus
// completed asynchronous operations since the launch began), for the CTAs whose emulated SM,
// blockIdx.x % Options::sm_count, is in `sms` (empty: every CTA), at most `max_ctas` of them and
// `capacity` events per recording warp. Arming clears what an earlier arming recorded; trace_take
// returns it and disarms.
struct TraceOptions {
  std::vector<int> sms;
  uint32_t max_ctas = 64;
  uint32_t capacity = 16384;
};
void trace_arm(const TraceOptions& options);
TraceDump trace_take();

// "emulator: N SMs, seed S (replay: --emu-seed S)"
std::string describe(const Options& options);

}  // namespace gemm::emu
