#include "harness/driver.h"

#include <charconv>
#include <cstdio>
#include <exception>
#include <string_view>
#include <type_traits>

#include "harness/backend.h"
#include "harness/device.h"
#include "harness/reference.h"
#include "harness/run.h"
#include "harness/timer.h"

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
  CublasReference cublas(backend->stream());  // the speed baseline in both modes
  Reference& reference = reference_for(opt.mode, cublas);

  const CheckOutcome out = run_and_check(*backend, target.launcher, ops, reference);
  if (!out.status.ok()) {
    print_error(out.status.message());
    return kExitFailure;
  }
  std::printf("max abs err:    %.3e (vs %s)\n", out.result.max_abs_err, reference.name());
  std::printf("rel Frobenius:  %.3e\n", out.result.rel_frobenius);
  std::printf("verdict:        %s\n", verdict(out.result).c_str());
  if (!out.result.ok) {
    std::printf("timing:         skipped (D does not match)\n");
    return kExitFailure;
  }

  const Problem p = ops.problem();
  const cudaStream_t stream = backend->stream();
  const double step_ms = median(time_ms(
      stream,
      [&] {
        if (Status s = target.launcher(p, stream); !s.ok()) throw Error(s.message());
      },
      kWarmup, opt.iters));
  const double cublas_ms = median(time_ms(stream, [&] { cublas.run(p); }, kWarmup, opt.iters));
  const double step_tflops = tflops(opt.m, opt.n, opt.k, step_ms);
  const double cublas_tflops = tflops(opt.m, opt.n, opt.k, cublas_ms);
  std::printf("step time:      %.4f ms, %.2f TFLOPS (median of %d)\n", step_ms, step_tflops, opt.iters);
  std::printf("cuBLAS time:    %.4f ms, %.2f TFLOPS (median of %d)\n", cublas_ms, cublas_tflops, opt.iters);
  std::printf("ratio:          %.3f (step TFLOPS / cuBLAS TFLOPS)\n", step_tflops / cublas_tflops);
  return kExitMatch;
}

}  // namespace

Problem default_shape(Contract contract) {
  switch (contract) {
    case Contract::single_tile: return Problem{128, 128, 64};
    case Contract::k_loop: return Problem{128, 128, 1024};
    case Contract::general: break;
  }
  return Problem{4096, 4096, 4096};
}

std::string usage(int step) {
  const Problem d = default_shape(contract_for_step(step));
  char name[16];
  std::snprintf(name, sizeof name, "step%02d", step);
  return std::string("usage: ") + name +
         " [--m M] [--n N] [--k K] [--iters I] [--seed S] [--exact] [--track auto|hopper|blackwell]\n"
         "\n"
         "Runs step " + std::to_string(step) + " on D[M,N] = A[M,K] * B[N,K]^T (fp16, row-major), checks D\n"
         "and times the step against cuBLAS. A flag's value may also follow '=': --m=4096.\n"
         "  --m, --n, --k  the shape (default " + shape_string(d) + ")\n"
         "  --iters I      timed runs after " + std::to_string(kWarmup) + " warm-ups (default 20); the median is reported\n"
         "  --seed S       the inputs are a hash of (seed, index) (default 1)\n"
         "  --exact        integer inputs in [-2, 2], D checked bit for bit against a CPU reference\n"
         "                 (needs K <= " + std::to_string(kExactMaxK) + "); default: uniform in [-1, 1), checked against cuBLAS\n"
         "  --track T      auto (default: the GPU's), hopper or blackwell\n"
         "Exit status: 0 match, 1 mismatch or failure, 2 bad flag or shape, 3 no GPU or no track for it.\n";
}

ParseResult parse_flags(int step, int argc, const char* const* argv) {
  ParseResult r;
  DriverOptions& o = r.options;
  const Problem d = default_shape(contract_for_step(step));
  o.m = d.m;
  o.n = d.n;
  o.k = d.k;
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
    if (flag != "--m" && flag != "--n" && flag != "--k" && flag != "--iters" && flag != "--seed" && flag != "--track")
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
