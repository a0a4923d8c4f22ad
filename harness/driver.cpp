#include "harness/driver.h"

#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/emu/emu.h"
#include "harness/backend.h"
#include "harness/device.h"
#include "harness/reference.h"
#include "harness/rotation.h"
#include "harness/run.h"
#include "harness/timer.h"
#include "harness/seed.h"

namespace gemm {
namespace {

constexpr int kWarmup = 2;

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
  const size_t count = static_cast<size_t>(ops.m * ops.n);
  const bool ok = f && std::fwrite(all.data() + ops.d.guard, sizeof(__half), count, f) == count;
  if (f) std::fclose(f);
  if (!ok) print_error("--dump-d: cannot write " + path);
  else std::printf("D written to:   %s (%lld x %lld fp16, row-major, raw)\n", path.c_str(),
                   static_cast<long long>(ops.m), static_cast<long long>(ops.n));
  return ok;
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
    std::printf("shape:          M=%lld N=%lld K=%lld\n", static_cast<long long>(opt.m), static_cast<long long>(opt.n),
                static_cast<long long>(opt.k));
    std::printf("inputs:         %s mode, seed %llu\n", input_mode_name(opt.mode),
                static_cast<unsigned long long>(opt.seed));
    const StepFn fn = info.emulated(track);
    if (fn == nullptr) {
      print_error("step " + std::to_string(info.number) + " has no emulated build of the " + track_name(track) +
                  " track");
      rc = kExitFailure;
      continue;
    }
    const std::unique_ptr<Backend> backend = make_emu_backend(EmuSettings{opt.emu_sms, seed});
    Operands ops(*backend, Problem{opt.m, opt.n, opt.k}, opt.seed, opt.mode);
    CpuReference reference;
    const CheckOutcome out = run_and_check(*backend, fn, ops, reference);
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
    if (!opt.dump_d.empty() && !dump_d(opt.dump_d, ops)) rc = kExitFailure;
    if (!out.result.ok) rc = kExitFailure;
  }
  return rc;
}

// Runs the step once, checks it, and times it and cuBLAS; prints the result block.
int check_and_time(const StepInfo& info, const DriverOptions& opt, const StepTarget& target) {
  std::printf("step %02d (%s), %s track\n", info.number, info.name, track_name(target.track));
  std::printf("GPU:            %s\n", describe(target.device).c_str());
  std::printf("shape:          M=%lld N=%lld K=%lld\n", static_cast<long long>(opt.m), static_cast<long long>(opt.n),
              static_cast<long long>(opt.k));
  std::printf("inputs:         %s mode, seed %llu\n", input_mode_name(opt.mode),
              static_cast<unsigned long long>(opt.seed));

  const std::unique_ptr<Backend> backend = make_cuda_backend(target.device.device);
  Operands ops(*backend, Problem{opt.m, opt.n, opt.k}, opt.seed, opt.mode);
  // cuBLAS is the speed baseline in both modes; with --check-only --exact it is not even created,
  // so a run under compute-sanitizer launches the step's kernels and the harness's own, nothing else.
  std::optional<CublasReference> cublas;
  CpuReference cpu;
  if (!(opt.check_only && opt.mode == InputMode::exact_int)) cublas.emplace(backend->stream());
  Reference& reference = cublas ? reference_for(opt.mode, *cublas) : cpu;

  const CheckOutcome out = run_and_check(*backend, target.launcher, ops, reference);
  if (!out.status.ok()) {
    print_error(out.status.message());
    return kExitFailure;
  }
  std::printf("max abs err:    %.3e (vs %s)\n", out.result.max_abs_err, reference.name());
  std::printf("rel Frobenius:  %.3e\n", out.result.rel_frobenius);
  std::printf("verdict:        %s\n", verdict(out.result).c_str());
  if (!opt.dump_d.empty() && !dump_d(opt.dump_d, ops)) return kExitFailure;
  if (!out.result.ok) {
    std::printf("timing:         skipped (D does not match)\n");
    return kExitFailure;
  }
  if (opt.check_only) {
    std::printf("timing:         skipped (--check-only)\n");
    return kExitMatch;
  }

  // Timing rotates through input sets that together hold at least 3x the L2, as the benchmark
  // does (bench/README.md): a timed call then finds none of its inputs in L2 from the calls just
  // before it, and the two tools measure the same thing. cuBLAS starts half a rotation later.
  const cudaStream_t stream = backend->stream();
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const Problem shape{opt.m, opt.n, opt.k};
  const int sets = rotating_set_count(rotating_set_bytes(shape), target.device.l2_bytes, free_bytes / 2);
  const RotatingOperands rotation(*backend, shape, opt.seed, opt.mode, sets);
  int64_t step_call = 0, cublas_call = sets / 2;
  const double step_ms = median(time_ms(
      stream,
      [&] {
        if (Status s = target.launcher(rotation.problem(step_call++), stream); !s.ok()) throw Error(s.message());
      },
      kWarmup, opt.iters));
  const double cublas_ms =
      median(time_ms(stream, [&] { cublas->run(rotation.problem(cublas_call++)); }, kWarmup, opt.iters));
  const double step_tflops = tflops(opt.m, opt.n, opt.k, step_ms);
  const double cublas_tflops = tflops(opt.m, opt.n, opt.k, cublas_ms);
  std::printf("step time:      %.4f ms, %.2f TFLOPS (median of %d, %d rotating input sets)\n", step_ms, step_tflops,
              opt.iters, sets);
  std::printf("cuBLAS time:    %.4f ms, %.2f TFLOPS (median of %d, %d rotating input sets)\n", cublas_ms,
              cublas_tflops, opt.iters, sets);
  std::printf("ratio:          %.3f (step TFLOPS / cuBLAS TFLOPS)\n", step_tflops / cublas_tflops);
  return kExitMatch;
}

}  // namespace

Problem default_shape(Contract contract, DeviceKind device) {
  switch (contract) {
    case Contract::single_tile: return Problem{128, 128, 64};
    case Contract::k_loop: return Problem{128, 128, 1024};
    case Contract::general: break;
  }
  if (device == DeviceKind::emu) return Problem{512, 512, 512};
  return Problem{4096, 4096, 4096};
}

std::string usage(int step) {
  const Problem d = default_shape(contract_for_step(step));
  char name[16];
  std::snprintf(name, sizeof name, "step%02d", step);
  return std::string("usage: ") + name +
         " [--m M] [--n N] [--k K] [--iters I] [--seed S] [--exact] [--track auto|hopper|blackwell]\n"
         "       [--device gpu|emu] [--emu-sms N] [--emu-seed S] [--dump-d FILE] [--check-only]\n"
         "\n"
         "Runs step " + std::to_string(step) + " on D[M,N] = A[M,K] * B[N,K]^T (fp16, row-major), checks D\n"
         "and times the step against cuBLAS. A flag's value may also follow '=': --m=4096.\n"
         "  --m, --n, --k  the shape (default " + shape_string(d) + ")\n"
         "  --iters I      timed runs after " + std::to_string(kWarmup) + " warm-ups (default 20); the median is reported\n"
         "  --seed S       the inputs are a hash of (seed, index) (default 1)\n"
         "  --exact        integer inputs in [-2, 2], D checked bit for bit against a CPU reference\n"
         "                 (needs K <= " + std::to_string(kExactMaxK) + "); default: uniform in [-1, 1), checked against cuBLAS\n"
         "  --track T      auto (default: the GPU's), hopper or blackwell\n"
         "  --device D     gpu (default) or emu: the functional emulator runs the step's kernels on the CPU\n"
         "                 (no GPU needed; both tracks unless --track names one; checked against the CPU\n"
         "                 reference, not timed; default shape 512^3 for steps 3-10)\n"
         "  --emu-sms N    SMs of the emulated device (default 4): the grid of a persistent step\n"
         "  --emu-seed S   the emulator's schedule (thread order, completion of asynchronous work); default\n"
         "                 a fresh one, printed for replay\n"
         "  --dump-d FILE  write D to FILE (M x N fp16, row-major, raw): compare devices with cmp\n"
         "  --check-only   check D and stop: nothing timed (with --exact no cuBLAS either: for compute-sanitizer)\n"
         "Exit status: 0 match, 1 mismatch or failure, 2 bad flag or shape, 3 no GPU or no track for it.\n"
         "See docs/emulator.md for the emulator: what it models and checks, and its deadlock report.\n";
}

ParseResult parse_flags(int step, int argc, const char* const* argv) {
  ParseResult r;
  DriverOptions& o = r.options;
  const Problem d = default_shape(contract_for_step(step));
  o.m = d.m;
  o.n = d.n;
  o.k = d.k;
  bool shape_given[3] = {false, false, false};
  bool emu_flag = false;
  auto fail = [&r](std::string message) {
    r.error = std::move(message);
    return r;
  };

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.substr(0, 2) != "--" && arg != "-h") return fail("unexpected argument '" + std::string(arg) + "' (see --help)");
    const size_t eq = arg.find('=');
    const std::string_view flag = arg.substr(0, eq);
    const std::string f(flag);

    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (flag == "--exact") {
      if (eq != std::string_view::npos) return fail("--exact takes no value");
      o.mode = InputMode::exact_int;
      continue;
    }
    if (flag == "--check-only") {
      if (eq != std::string_view::npos) return fail("--check-only takes no value");
      o.check_only = true;
      continue;
    }
    if (flag != "--m" && flag != "--n" && flag != "--k" && flag != "--iters" && flag != "--seed" && flag != "--track" &&
        flag != "--device" && flag != "--emu-sms" && flag != "--emu-seed" && flag != "--dump-d")
      return fail("unknown flag '" + f + "' (see --help)");

    // The value: after '=', or the next argument (unless that is a flag: "--m --n 8" lacks one).
    std::string_view value;
    if (eq != std::string_view::npos)
      value = arg.substr(eq + 1);
    else if (i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--")
      value = argv[++i];
    if (value.empty()) return fail(f + " needs a value");

    std::string error;
    if (flag == "--m") error = parse_number(flag, value, o.m);
    if (flag == "--n") error = parse_number(flag, value, o.n);
    if (flag == "--k") error = parse_number(flag, value, o.k);
    if (flag == "--m" || flag == "--n" || flag == "--k") shape_given[flag == "--m" ? 0 : flag == "--n" ? 1 : 2] = true;
    if (flag == "--device") {
      if (value == "gpu") o.device = DeviceKind::gpu;
      else if (value == "emu") o.device = DeviceKind::emu;
      else error = "--device: '" + std::string(value) + "' is not one of gpu, emu";
    }
    if (flag == "--emu-sms") {
      error = parse_number(flag, value, o.emu_sms);
      if (error.empty() && (o.emu_sms < 1 || o.emu_sms > 1024))
        error = "--emu-sms must be in 1..1024 (got " + std::to_string(o.emu_sms) + ")";
      emu_flag = true;
    }
    if (flag == "--emu-seed") {
      error = parse_number(flag, value, o.emu_seed);
      o.emu_seed_given = true;
      emu_flag = true;
    }
    if (flag == "--dump-d") o.dump_d = std::string(value);
    if (flag == "--seed") error = parse_number(flag, value, o.seed);
    if (flag == "--iters") {
      error = parse_number(flag, value, o.iters);
      if (error.empty() && o.iters < 1) error = "--iters must be at least 1 (got " + std::to_string(o.iters) + ")";
    }
    if (flag == "--track") {
      const std::optional<TrackRequest> t = parse_track_request(value);
      if (!t) error = "--track: '" + std::string(value) + "' is not one of auto, hopper, blackwell";
      o.track = t.value_or(TrackRequest::automatic);
    }
    if (!error.empty()) return fail(error);
  }

  if (o.device == DeviceKind::emu) {  // the emulator's smaller default shape, where none was given
    const Problem e = default_shape(contract_for_step(step), DeviceKind::emu);
    if (!shape_given[0]) o.m = e.m;
    if (!shape_given[1]) o.n = e.n;
    if (!shape_given[2]) o.k = e.k;
  }
  if (emu_flag && o.device != DeviceKind::emu) return fail("--emu-sms and --emu-seed need --device emu");
  if (o.device == DeviceKind::emu && !o.dump_d.empty() && o.track == TrackRequest::automatic)
    return fail("--dump-d with --device emu needs --track hopper or --track blackwell (one D per file)");
  if (o.mode == InputMode::exact_int && o.k > kExactMaxK && !o.help)
    return fail("--exact needs K <= " + std::to_string(kExactMaxK) + " (got K = " + std::to_string(o.k) +
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

  // The shape against the step's contract before the GPU is touched. The pointers are
  // placeholders (non-null, 16-byte aligned), so only a shape rule can fail here.
  alignas(16) static __half placeholder[8];
  const Problem shape{opt.m, opt.n, opt.k, placeholder, placeholder, placeholder};
  if (Status s = check_problem(info.contract(), shape); !s.ok()) {
    print_error(s.message());
    return kExitUsage;
  }

  try {
    if (opt.device == DeviceKind::emu) return run_emulated(info, opt);
    const StepTarget target = find_step_target(info, opt.track);
    if (!target.status.ok()) {
      print_error(target.status.message());
      return kExitNoDevice;
    }
    return check_and_time(info, opt, target);
  } catch (const NoGpu& e) {
    print_error(e.what());
    return kExitNoDevice;
  } catch (const std::exception& e) {  // gemm::Error, and std::bad_alloc for a host buffer
    print_error(e.what());
    return kExitFailure;
  }
}

}  // namespace gemm
