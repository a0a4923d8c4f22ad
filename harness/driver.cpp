#include "harness/driver.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>
#include <string_view>
#include <type_traits>
#include <vector>

#include "emu/emu.h"
#include "harness/backend.h"
#include "harness/device.h"
#include "harness/reference.h"
#include "harness/rotation.h"
#include "harness/run.h"
#include "harness/seed.h"
#include "harness/timer.h"
#include "harness/trace.h"

namespace gemm {
namespace {

// Follows the reason when the step cannot run on this machine's GPU (there is none, or no track).
constexpr const char* kEmulatorHint =
    "; --device emu runs the step on the functional emulator instead (no GPU needed, nothing timed)";

// "error: <message>" on stderr, after whatever stdout holds so far (they may share a pipe).
void print_error(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", message.c_str());
}

// The whole of `text` as a T, or an error message naming the flag.
template <class T>
std::string parse_number(std::string_view flag, std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec == std::errc::result_out_of_range) return std::string(flag) + ": '" + std::string(text) + "' is out of range";
  if (ec != std::errc() || end != text.data() + text.size())
    return std::string(flag) + ": '" + std::string(text) + "' is not " +
           (std::is_signed_v<T> ? "an integer" : "a non-negative integer");
  return {};
}

// Writes D (the M x N elements inside the guard band) to `path`: raw fp16, row-major.
bool dump_d(const std::string& path, const Operands& ops) {
  const std::vector<__half> all = ops.d.to_host();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  const size_t count = static_cast<size_t>(ops.shape.m * ops.shape.n);
  const bool ok = f && std::fwrite(all.data() + ops.d.guard, sizeof(__half), count, f) == count;
  if (f) std::fclose(f);
  if (!ok) print_error("--dump-d: cannot write " + path);
  else
    std::printf("D written to:   %s (%lld x %lld fp16, row-major, raw)\n", path.c_str(),
                static_cast<long long>(ops.shape.m), static_cast<long long>(ops.shape.n));
  return ok;
}

TraceRequest trace_request(const DriverOptions& opt) {
  TraceRequest r;
  r.sms = opt.trace_sms;
  r.capacity = opt.trace_capacity;
  return r;
}

// Writes the timeline of the checked run (--trace) and prints where it went.
bool write_trace(const DriverOptions& opt, const StepInfo& info, Track track, const std::string& device,
                 const TraceDump& dump) {
  TraceMeta meta;
  meta.step = info.number;
  meta.step_name = info.name;
  meta.track = track_name(track);
  meta.device = device;
  meta.shape = shape_string(opt.shape);
  meta.date = utc_date();
  meta.sms = opt.trace_sms;
  std::string summary;
  const std::string json = chrome_trace(dump, meta, &summary);
  std::FILE* f = std::fopen(opt.trace.c_str(), "wb");
  bool ok = f && std::fwrite(json.data(), 1, json.size(), f) == json.size();
  if (f && std::fclose(f) != 0) ok = false;
  if (!ok) {
    print_error("--trace: cannot write " + opt.trace);
    return false;
  }
  std::printf("trace:          %s (%s)\n", opt.trace.c_str(), summary.c_str());
  return true;
}

void print_shape_and_inputs(const DriverOptions& opt) {
  std::printf("shape:          M=%lld N=%lld K=%lld\n", static_cast<long long>(opt.shape.m),
              static_cast<long long>(opt.shape.n), static_cast<long long>(opt.shape.k));
  std::printf("inputs:         %s mode, seed %llu\n", input_mode_name(opt.mode),
              static_cast<unsigned long long>(opt.seed));
}

// Runs the step on the emulator, once per track asked for (both by default), against the CPU
// reference; prints one block per track.
int run_emulated(const StepInfo& info, const DriverOptions& opt) {
  const uint64_t seed = opt.emu_seed_given ? opt.emu_seed : fresh_seed();
  std::vector<Track> tracks;
  if (opt.track != TrackRequest::blackwell) tracks.push_back(Track::hopper);
  if (opt.track != TrackRequest::hopper) tracks.push_back(Track::blackwell);
  int rc = kExitMatch;
  for (size_t i = 0; i < tracks.size(); ++i) {
    const Track track = tracks[i];
    if (i > 0) std::printf("\n");
    std::printf("step %02d (%s), %s track, emulated\n", info.number, info.name, track_name(track));
    std::printf("device:         emulator, %d SMs, seed %llu (replay: --emu-seed %llu)\n", opt.emu_sms,
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
    print_shape_and_inputs(opt);
    const StepFn fn = info.emulated(track);
    if (fn == nullptr) {
      print_error("step " + std::to_string(info.number) + " has no emulated build of the " + track_name(track) +
                  " track");
      rc = kExitFailure;
      continue;
    }
    const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{opt.emu_sms, seed});
    Operands ops(*backend, opt.shape, opt.seed, opt.mode);
    CpuReference reference;
    if (!opt.trace.empty()) emu_trace_arm(trace_request(opt));
    const CheckOutcome out = run_and_check(*backend, fn, ops, reference);
    const TraceDump dump = opt.trace.empty() ? TraceDump{} : emu_trace_take();
    if (!out.status.ok()) {
      print_error(out.status.message());
      rc = kExitFailure;
      continue;
    }
    std::printf("max abs err:    %.3e (vs %s)\n", out.result.max_abs_err, reference.name());
    std::printf("rel Frobenius:  %.3e\n", out.result.rel_frobenius);
    std::printf("verdict:        %s\n", verdict(out.result).c_str());
    const emu::LaunchStats& st = emu::last_launch();
    std::printf("emulated:       %llu threads in %llu clusters, %llu fiber switches, %llu async operations\n",
                static_cast<unsigned long long>(st.threads), static_cast<unsigned long long>(st.clusters),
                static_cast<unsigned long long>(st.switches), static_cast<unsigned long long>(st.async_ops));
    std::printf("timing:         not measured (emulator)\n");
    if (!opt.trace.empty() &&
        !write_trace(opt, info, track,
                     "emulator, " + std::to_string(opt.emu_sms) + " SMs, seed " + std::to_string(seed), dump))
      rc = kExitFailure;
    if (!opt.dump_d.empty() && !dump_d(opt.dump_d, ops)) rc = kExitFailure;
    if (!out.result.ok) rc = kExitFailure;
  }
  return rc;
}

// Runs the step once, checks it, and times it and cuBLAS; prints the result block.
int check_and_time(const StepInfo& info, const DriverOptions& opt, const StepTarget& target) {
  std::printf("step %02d (%s), %s track\n", info.number, info.name, track_name(target.track));
  std::printf("GPU:            %s\n", describe(target.device).c_str());
  print_shape_and_inputs(opt);

  const std::unique_ptr<Backend> backend = make_cuda_backend(target.device.device);
  Operands ops(*backend, opt.shape, opt.seed, opt.mode);
  // cuBLAS is the speed baseline in both modes; with --check-only and --exact or --cpu-check it
  // is not even created, so a run under compute-sanitizer launches the step's kernels and the
  // harness's own, nothing else.
  std::optional<CublasReference> cublas;
  CpuReference cpu;
  if (!(opt.check_only && (opt.mode == InputMode::exact_int || opt.cpu_check))) cublas.emplace(backend->stream());
  Reference& reference = cublas ? reference_for(opt.mode, *cublas) : cpu;

  // A traced build (GEMM_TRACE) records with --trace: the checked run's timeline is written, and
  // the timed calls that follow record too (so their times are a traced run's).
  std::optional<GpuTrace> trace;
  if (!opt.trace.empty()) trace.emplace(trace_request(opt));
  const CheckOutcome out = run_and_check(*backend, target.launcher, ops, reference);
  if (!out.status.ok()) {
    print_error(out.status.message());
    return kExitFailure;
  }
  std::printf("max abs err:    %.3e (vs %s)\n", out.result.max_abs_err, reference.name());
  std::printf("rel Frobenius:  %.3e\n", out.result.rel_frobenius);
  std::printf("verdict:        %s\n", verdict(out.result).c_str());
  if (trace && !write_trace(opt, info, target.track, target.device.name, trace->collect())) return kExitFailure;
  if (!opt.dump_d.empty() && !dump_d(opt.dump_d, ops)) return kExitFailure;
  if (!out.result.ok) {
    std::printf("timing:         skipped (D does not match)\n");
    return kExitFailure;
  }
  if (opt.check_only) {
    std::printf("timing:         skipped (--check-only)\n");
    return kExitMatch;
  }

  // Timed as gemm_bench times it, with the same code (PairTimer, harness/timer.h): pairs of calls,
  // the step's then cuBLAS's, each alone after a GPU spin, every call on the next of input sets
  // that together hold at least 3x the L2 (bench/README.md). Timing the step's calls and then
  // cuBLAS's in two blocks would let a GPU that reaches its power limit during the first block
  // slow whichever ran second, and skew the ratio.
  const cudaStream_t stream = backend->stream();
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const int sets = rotating_set_count(rotating_set_bytes(opt.shape), target.device.l2_bytes, free_bytes / 2);
  const RotatingOperands rotation(*backend, opt.shape, opt.seed, opt.mode, sets);
  PairTimer timer(
      stream,
      [&](int64_t call) {
        if (Status s = target.launcher(rotation.problem(call), stream); !s.ok()) throw Error(s.message());
      },
      [&](int64_t call) { cublas->run(rotation.problem(call)); });
  timer.warm_up();
  for (int i = 0; i < opt.iters; ++i) timer.time_pair();
  const PairSummary t = timer.summary();
  std::printf("step time:      %.4f ms, %.2f TFLOPS (median of %d calls)\n", t.step_ms, tflops(opt.shape, t.step_ms),
              opt.iters);
  std::printf("cuBLAS time:    %.4f ms, %.2f TFLOPS (median of %d calls, each paired with one of the step's)\n",
              t.cublas_ms, tflops(opt.shape, t.cublas_ms), opt.iters);
  std::printf("ratio:          %.3f (step TFLOPS / cuBLAS TFLOPS, the median of the %d pairs' ratios)\n", t.ratio,
              opt.iters);
  std::printf(
      "timing:         each call alone after a %u us GPU spin; %d rotating input sets; "
      "%lld late calls redone\n",
      kSpinUs, sets, static_cast<long long>(timer.late()));
  if (kTraceBuild)
    std::printf(
        "traced build:   GEMM_TRACE=ON, the kernels carry the timeline's recorder%s: never publish these times\n",
        trace ? " and recorded every call" : "");
  std::printf("to publish:     %s\n", publish_line(info.number, opt.shape).c_str());
  return kExitMatch;
}

// --- the flags: one table, which both parse_flags and usage() read -----------------------------

// What parse_flags learns besides the options themselves.
struct Parsing {
  DriverOptions& o;
  bool shape_given[3] = {false, false, false};  // --m, --n, --k
  bool emu_flag = false;                        // --emu-sms or --emu-seed
};

// One flag: its name (and a short alias), the value it takes as the synopsis shows it ("" for a
// switch, which takes none), its line in the usage text (`label` empty: described on the line
// before; "%shape%" in `help` is the step's default shape), and `apply`, which stores the value
// ("" for a switch) and returns an error naming the flag, or "".
struct Flag {
  std::string_view name;
  std::string_view alias;
  std::string_view value;
  std::string_view label;
  std::string help;
  std::string (*apply)(Parsing& p, std::string_view flag, std::string_view value);
};

template <int dim>  // 0: M, 1: N, 2: K
std::string set_dim(Parsing& p, std::string_view flag, std::string_view value) {
  int64_t* const dims[] = {&p.o.shape.m, &p.o.shape.n, &p.o.shape.k};
  p.shape_given[dim] = true;
  return parse_number(flag, value, *dims[dim]);
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> table = {
      {"--m", "", "M", "--m, --n, --k", "the shape (default %shape%)", &set_dim<0>},
      {"--n", "", "N", "", "", &set_dim<1>},
      {"--k", "", "K", "", "", &set_dim<2>},
      {"--iters", "", "I", "--iters I",
       "timed pairs of calls, the step's then cuBLAS's (default " + std::to_string(DriverOptions{}.iters) +
           "); medians reported",
       [](Parsing& p, std::string_view flag, std::string_view value) {
         std::string error = parse_number(flag, value, p.o.iters);
         if (error.empty() && p.o.iters < 1)
           error = std::string(flag) + " must be at least 1 (got " + std::to_string(p.o.iters) + ")";
         return error;
       }},
      {"--seed", "", "S", "--seed S", "the inputs are a hash of (seed, index) (default 1)",
       [](Parsing& p, std::string_view flag, std::string_view value) { return parse_number(flag, value, p.o.seed); }},
      {"--exact", "", "", "--exact",
       "integer inputs in [-2, 2], D checked bit for bit against a CPU reference\n(needs K <= " +
           std::to_string(kExactMaxK) + "); default: uniform in [-1, 1), checked against cuBLAS",
       [](Parsing& p, std::string_view, std::string_view) {
         p.o.mode = InputMode::exact_int;
         return std::string();
       }},
      {"--track", "", "auto|hopper|blackwell", "--track T", "auto (default: the GPU's), hopper or blackwell",
       [](Parsing& p, std::string_view flag, std::string_view value) {
         const std::optional<TrackRequest> t = parse_track_request(value);
         p.o.track = t.value_or(TrackRequest::automatic);
         return t ? std::string()
                  : std::string(flag) + ": '" + std::string(value) + "' is not one of auto, hopper, blackwell";
       }},
      {"--device", "", "gpu|emu", "--device D",
       "gpu (default) or emu: the functional emulator runs the step's kernels on the CPU\n(no GPU needed; both "
       "tracks unless --track names one; checked against the CPU\nreference, not timed; default shape 512^3 from "
       "step 3 on)",
       [](Parsing& p, std::string_view flag, std::string_view value) {
         if (value == "gpu") p.o.device = DeviceKind::gpu;
         else if (value == "emu") p.o.device = DeviceKind::emu;
         else return std::string(flag) + ": '" + std::string(value) + "' is not one of gpu, emu";
         return std::string();
       }},
      {"--emu-sms", "", "N", "--emu-sms N", "SMs of the emulated device (default 4): the grid of a persistent step",
       [](Parsing& p, std::string_view flag, std::string_view value) {
         p.emu_flag = true;
         std::string error = parse_number(flag, value, p.o.emu_sms);
         if (error.empty() && (p.o.emu_sms < 1 || p.o.emu_sms > 1024))
           error = std::string(flag) + " must be in 1..1024 (got " + std::to_string(p.o.emu_sms) + ")";
         return error;
       }},
      {"--emu-seed", "", "S", "--emu-seed S",
       "the emulator's schedule (thread order, completion of asynchronous work); default\na fresh one, printed for "
       "replay",
       [](Parsing& p, std::string_view flag, std::string_view value) {
         p.emu_flag = true;
         p.o.emu_seed_given = true;
         return parse_number(flag, value, p.o.emu_seed);
       }},
      {"--dump-d", "", "FILE", "--dump-d FILE",
       "write D to FILE (M x N fp16, row-major, raw): compare devices with cmp",
       [](Parsing& p, std::string_view, std::string_view value) {
         p.o.dump_d = std::string(value);
         return std::string();
       }},
      {"--check-only", "", "", "--check-only",
       "check D and stop: nothing timed (with --exact no cuBLAS either: for compute-sanitizer)",
       [](Parsing& p, std::string_view, std::string_view) {
         p.o.check_only = true;
         return std::string();
       }},
      {"--cpu-check", "", "", "--cpu-check",
       "with --check-only: check D against the CPU reference in float mode too, so that\nno cuBLAS handle is "
       "created (for compute-sanitizer; slow for large shapes)",
       [](Parsing& p, std::string_view, std::string_view) {
         p.o.cpu_check = true;
         return std::string();
       }},
      {"--trace", "", "FILE", "--trace FILE",
       "write the checked run's timeline to FILE, a Chrome trace (docs/timeline.md): on\nthe emulator in any build "
       "(with --track), on a GPU in a GEMM_TRACE=ON build",
       [](Parsing& p, std::string_view, std::string_view value) {
         p.o.trace = std::string(value);
         return std::string();
       }},
      {"--trace-sms", "", "LIST", "--trace-sms L",
       "the SMs whose CTAs --trace records (default 0,1; 0-3 is a range; the emulator\nplaces CTA i on SM i % "
       "--emu-sms)",
       [](Parsing& p, std::string_view flag, std::string_view value) {
         const std::string error = parse_sm_list(std::string(value), &p.o.trace_sms);
         return error.empty() ? error : std::string(flag) + ": " + error;
       }},
      {"--trace-cap", "", "N", "--trace-cap N",
       "events --trace keeps per recording thread (default 8192, at most 65535)",
       [](Parsing& p, std::string_view flag, std::string_view value) {
         std::string error = parse_number(flag, value, p.o.trace_capacity);
         if (error.empty() && (p.o.trace_capacity < 1 || p.o.trace_capacity > 65535))
           error = std::string(flag) + " must be in 1..65535 (got " + std::to_string(p.o.trace_capacity) + ")";
         return error;
       }},
      {"--help", "-h", "", "-h, --help", "this text",
       [](Parsing& p, std::string_view, std::string_view) {
         p.o.help = true;
         return std::string();
       }},
  };
  return table;
}

// The flag an argument names ("--m" of "--m=8"; "-h"), or null.
const Flag* find_flag(std::string_view name) {
  for (const Flag& f : flags())
    if (name == f.name || (!f.alias.empty() && name == f.alias)) return &f;
  return nullptr;
}

}  // namespace

std::string publish_line(int step, const Shape& shape) {
  const Contract contract = contract_for_step(step);
  const Shape at = contract == Contract::general ? shape : default_shape(contract);  // gemm_bench's runs_at
  const std::string size = at.m == at.n && at.n == at.k ? std::to_string(at.m) : shape_string(at);
  char name[16];
  std::snprintf(name, sizeof name, "step%02d", step);
  std::string line = "gemm_bench, with repetitions";
  if (!(at == shape)) line += std::string(" (it times ") + name + " at " + shape_string(at) + " only)";
  return line + ": tools/compare.sh --sizes=" + size + " --benchmark_filter=" + name;
}

Shape default_shape(Contract contract, DeviceKind device) {
  switch (contract) {
    case Contract::single_tile: return Shape{128, 128, 64};
    case Contract::k_loop: return Shape{128, 128, 1024};
    case Contract::general: break;
  }
  if (device == DeviceKind::emu) return Shape{512, 512, 512};
  return Shape{4096, 4096, 4096};
}

std::string usage(int step) {
  char name[16];
  std::snprintf(name, sizeof name, "step%02d", step);
  // The synopsis, wrapped before a flag that would take a line past kWidth columns.
  constexpr size_t kWidth = 110;
  const std::string first = std::string("usage: ") + name + " ", indent(7, ' ');
  std::string text = first, line = first;
  for (const Flag& f : flags()) {
    std::string item = "[";  // "[--m M]", appended piece by piece (GCC 12 warns, -Wrestrict, on "[" + ...)
    item.append(f.name);
    if (!f.value.empty()) item.append(" ").append(f.value);
    item.append("]");
    if (line != first && line.size() + 1 + item.size() > kWidth) {
      text.append("\n").append(indent);
      line = indent;
    } else if (line != first) {
      text += ' ';
      line += ' ';
    }
    text += item;
    line += item;
  }
  text += "\n\nRuns step " + std::to_string(step) +
          " on D[M,N] = A[M,K] * B[N,K]^T (fp16, row-major), checks D\n"
          "and times the step against cuBLAS. A flag's value may also follow '=': --m=4096.\n";
  // One line per flag (continuation lines indented under the text): "  --iters I      timed runs ...".
  constexpr size_t kLabel = 13;
  const std::string shape = shape_string(default_shape(contract_for_step(step)));
  for (const Flag& f : flags()) {
    if (f.label.empty()) continue;
    std::string help = f.help;
    if (const size_t at = help.find("%shape%"); at != std::string::npos) help.replace(at, 7, shape);
    for (size_t at = help.find('\n'); at != std::string::npos; at = help.find('\n', at + 1))
      help.insert(at + 1, std::string(2 + kLabel + 2, ' '));
    std::string label(f.label);
    label.resize(std::max(label.size(), kLabel), ' ');
    text.append("  ").append(label).append("  ").append(help).append("\n");
  }
  return text +
         "Exit status: 0 match, 1 mismatch or failure, 2 bad flag or shape, 3 no GPU or no track for it.\n"
         "See docs/emulator.md for the emulator: what it models and checks, and its deadlock report.\n";
}

ParseResult parse_flags(int step, int argc, const char* const* argv) {
  ParseResult r;
  DriverOptions& o = r.options;
  o.shape = default_shape(contract_for_step(step));
  Parsing p{o};
  auto fail = [&r](std::string message) {
    r.error = std::move(message);
    return r;
  };

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    const Flag* flag = find_flag(name);
    if (flag == nullptr && arg.substr(0, 2) != "--")
      return fail("unexpected argument '" + std::string(arg) + "' (see --help)");
    if (flag == nullptr) return fail("unknown flag '" + std::string(name) + "' (see --help)");

    // The value: after '=', or the next argument (unless that is a flag: "--m --n 8" lacks one).
    std::string_view value;
    if (flag->value.empty()) {
      if (eq != std::string_view::npos) return fail(std::string(name) + " takes no value");
    } else {
      if (eq != std::string_view::npos) value = arg.substr(eq + 1);
      else if (i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--") value = argv[++i];
      if (value.empty()) return fail(std::string(name) + " needs a value");
    }
    if (std::string error = flag->apply(p, flag->name, value); !error.empty()) return fail(error);
  }

  if (o.device == DeviceKind::emu) {  // the emulator's smaller default shape, where none was given
    const Shape e = default_shape(contract_for_step(step), DeviceKind::emu);
    if (!p.shape_given[0]) o.shape.m = e.m;
    if (!p.shape_given[1]) o.shape.n = e.n;
    if (!p.shape_given[2]) o.shape.k = e.k;
  }
  if (p.emu_flag && o.device != DeviceKind::emu) return fail("--emu-sms and --emu-seed need --device emu");
  if (o.cpu_check && !o.check_only) return fail("--cpu-check needs --check-only (a timed run is compared with cuBLAS)");
  if (o.device == DeviceKind::emu && !o.dump_d.empty() && o.track == TrackRequest::automatic)
    return fail("--dump-d with --device emu needs --track hopper or --track blackwell (one D per file)");
  if (o.device == DeviceKind::emu && !o.trace.empty() && o.track == TrackRequest::automatic)
    return fail("--trace with --device emu needs --track hopper or --track blackwell (one timeline per file)");
  if (o.device == DeviceKind::gpu && !o.trace.empty() && !kTraceBuild && !o.help)
    return fail(
        "--trace on a GPU needs a traced build (cmake -DGEMM_TRACE=ON, as tools/timeline makes); "
        "--device emu records in any build");
  if (o.mode == InputMode::exact_int && o.shape.k > kExactMaxK && !o.help)
    return fail("--exact needs K <= " + std::to_string(kExactMaxK) + " (got K = " + std::to_string(o.shape.k) +
                "): beyond it sums are no longer exact in fp16; add --k " + std::to_string(kExactMaxK));
  return r;
}

int driver_main(const StepInfo& info, int argc, const char* const* argv) {
  const ParseResult parsed = parse_flags(info.number, argc, argv);
  if (!parsed.ok()) {
    print_error(parsed.error);
    return kExitUsage;
  }
  const DriverOptions& opt = parsed.options;
  if (opt.help) {
    std::fputs(usage(info.number).c_str(), stdout);
    return kExitMatch;
  }

  // The shape against the step's contract before the GPU is touched.
  if (Status s = check_shape(info.contract(), opt.shape); !s.ok()) {
    print_error(s.message());
    return kExitUsage;
  }

  try {
    if (opt.device == DeviceKind::emu) return run_emulated(info, opt);
    const StepTarget target = find_step_target(info, opt.track);
    if (!target.status.ok()) {
      print_error(target.status.message() + kEmulatorHint);
      return kExitNoDevice;
    }
    return check_and_time(info, opt, target);
  } catch (const NoGpu& e) {
    print_error(e.what() + std::string(kEmulatorHint));
    return kExitNoDevice;
  } catch (const std::exception& e) {  // gemm::Error, and std::bad_alloc for a host buffer
    print_error(e.what());
    return kExitFailure;
  }
}

}  // namespace gemm
