// The step driver: the main() of every step executable (cmake/GemmStep.cmake generates it).
//
//   step03 [--m M] [--n N] [--k K] [--iters I] [--seed S] [--exact] ...      (step03 --help: all)
//
// runs the step once on A[M,K], B[N,K] filled from the hash, checks D (float mode against cuBLAS,
// --exact against the CPU reference, bit for bit), times the step and cuBLAS in pairs as gemm_bench
// does (PairTimer, harness/timer.h), and prints one block.
// --device emu runs the step's kernels on the functional emulator instead (emu/, no GPU
// needed; both tracks unless --track names one), checks D against the CPU reference and does not
// time it. --trace FILE writes the checked run's timeline as a Chrome trace (docs/timeline.md): on
// the emulator in any build, on a GPU in a GEMM_TRACE=ON build.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/hash.h"
#include "harness/step.h"
#include "harness/track.h"

namespace gemm {

// The exit codes, stable: scripts and tests rely on them.
enum ExitCode : int {
  kExitMatch = 0,     // D matched the reference
  kExitFailure = 1,   // D did not match, or the step or the harness failed
  kExitUsage = 2,     // a bad flag or a shape outside the step's contract: nothing ran
  kExitNoDevice = 3,  // no GPU, or no track of this step for it: nothing ran
};

// Where the step runs: the GPU, or the functional emulator on the CPU (docs/emulator.md).
enum class DeviceKind { gpu, emu };

struct DriverOptions {
  Shape shape;     // defaults from the step's contract: see default_shape
  int iters = 20;  // timed pairs of calls, the step's and cuBLAS's (after a warm-up: harness/timer.h)
  uint64_t seed = 1;
  InputMode mode = InputMode::float_uniform;
  TrackRequest track = TrackRequest::automatic;
  bool help = false;
  DeviceKind device = DeviceKind::gpu;
  int emu_sms = 4;              // SMs of the emulated device (persistent grids)
  uint64_t emu_seed = 0;        // the emulator's scheduling seed ...
  bool emu_seed_given = false;  // ... or a fresh one, printed for replay
  std::string dump_d;           // write D (M x N fp16, row-major, raw) to this file
  bool check_only = false;      // check D and stop: no timing (and, with --exact, no cuBLAS at all)
  bool cpu_check = false;       // float mode checked against the CPU reference too: no cuBLAS (needs check_only)
  std::string trace;            // write the checked run's timeline (a Chrome trace) to this file
  std::vector<int> trace_sms = {0, 1};  // ... of the CTAs on these SMs
  uint32_t trace_capacity = 8192;       // ... keeping this many events per recording thread
};

struct ParseResult {
  DriverOptions options;
  std::string error;  // empty: parsed
  bool ok() const { return error.empty(); }
};

// The default shape of a step: 128x128x64 (step 1), 128x128x1024 (step 2), 4096^3 otherwise;
// on the emulator 512^3 instead of 4096^3 (a CPU runs the kernels).
Shape default_shape(Contract contract, DeviceKind device = DeviceKind::gpu);

// The driver's last line, after "to publish:": gemm_bench is the comparison to publish (its
// repetitions, JSON and table), and the command that runs it for this step and shape, e.g.
// "gemm_bench, with repetitions: tools/compare.sh --sizes=8192 --benchmark_filter=step10". Steps
// 1 and 2 run in gemm_bench at their default shapes only, which the line then names.
std::string publish_line(int step, const Shape& shape);

// Parses the flags (argv[0] is the program). Accepts "--m 4096" and "--m=4096". Checks the flags
// themselves, not the shape: that is the step contract's job (check_shape).
ParseResult parse_flags(int step, int argc, const char* const* argv);

// The --help text: the synopsis and one line per flag, from the same table as parse_flags.
std::string usage(int step);

// Runs the step executable: returns one of ExitCode.
int driver_main(const StepInfo& info, int argc, const char* const* argv);

}  // namespace gemm
