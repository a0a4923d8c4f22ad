#include "tools/diag/diag.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "common/launch.cuh"  // cuda_failure
#include "harness/check.h"
#include "harness/compare.h"
#include "harness/driver.h"  // the exit codes
#include "harness/rotation.h"
#include "harness/run.h"
#include "harness/shapes.h"
#include "harness/timer.h"

namespace gemm::diag {

const Variant& variant(std::string_view name) {
  for (const Variant& v : variants())
    if (v.name == name) return v;
  throw Error("no step variant '" + std::string(name) + "' in this build (tools/diag/variants.py --list)");
}

Config config(std::string name, StepFn fn) {
  return Config{std::move(name), [fn](const Problem& p, cudaStream_t s) { return fn(p, s); }};
}

Config hopper_step(const StepInfo& info) {
  char name[16];
  std::snprintf(name, sizeof name, "step%02d", info.number);
  if (info.hopper == nullptr) throw Error(std::string(name) + " was built without the hopper track");
  return config(name, info.hopper);
}

Lab::Lab() {
  std::string why;
  if (!gpu_available(&why)) throw NoGpu(why);
  device_ = query_device(0);
  if (device_.cc_major != 9 || device_.cc_minor != 0)
    throw Error("the diagnostics run the hopper track (sm_90a); this GPU is " + describe(device_));
  backend_ = make_cuda_backend(device_.device);
  cublas_ = std::make_unique<CublasReference>(backend_->stream());
}

void Lab::run(const Config& c, const Problem& p) {
  Status s = c.run(p, backend_->stream());
  if (s.ok())
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) s = cuda_failure(e, "after the launch");
  if (s.ok())
    if (cudaError_t e = cudaStreamSynchronize(backend_->stream()); e != cudaSuccess)
      s = cuda_failure(e, "while the kernel ran");
  if (!s.ok()) throw Error(c.name + ": " + s.message());
}

bool Lab::check_same_d(const Shape& shape, const Config& reference, const std::vector<Config>& configs) {
  Operands ops(*backend_, shape, /*seed=*/1, InputMode::float_uniform);
  ops.d.poison();
  run(reference, ops.problem());
  std::vector<__half> got = ops.d.to_host();
  const CompareResult vs_cublas = compare(got, ops.d.guard, cublas_->expected(*backend_, ops.problem()), shape.m,
                                          shape.n, InputMode::float_uniform);
  std::printf("check  %-28s %s (vs cuBLAS)\n", reference.name.c_str(), summary(vs_cublas).c_str());
  if (!vs_cublas.ok) return false;
  const std::vector<__half> want(got.begin() + static_cast<std::ptrdiff_t>(ops.d.guard),
                                 got.end() - static_cast<std::ptrdiff_t>(ops.d.guard));
  for (const Config& c : configs) {
    ops.d.poison();
    run(c, ops.problem());
    got = ops.d.to_host();
    const CompareResult r = compare(got, ops.d.guard, want, shape.m, shape.n, InputMode::exact_int);
    const std::string result = r.ok ? "D == " + reference.name + " bit for bit" : verdict(r);
    std::printf("check  %-28s %s\n", c.name.c_str(), result.c_str());
    if (!r.ok) return false;
  }
  return true;
}

bool Lab::check_against_cublas(const Shape& shape, const std::vector<Config>& configs) {
  Operands ops(*backend_, shape, /*seed=*/1, InputMode::float_uniform);
  const std::vector<__half> want = cublas_->expected(*backend_, ops.problem());
  for (const Config& c : configs) {
    ops.d.poison();
    run(c, ops.problem());
    const CompareResult r = compare(ops.d.to_host(), ops.d.guard, want, shape.m, shape.n, InputMode::float_uniform);
    std::printf("check  %-28s %s (vs cuBLAS)\n", c.name.c_str(), summary(r).c_str());
    if (!r.ok) return false;
  }
  return true;
}

int Lab::set_count(const Shape& shape) const {
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return rotating_set_count(rotating_set_bytes(shape), device_.l2_bytes, free_bytes / 2);
}

bool Lab::check_and_time(const Shape& shape, const std::string& note, const std::vector<Config>& configs, int warmup,
                         int rounds) {
  std::printf("\n== M=%lld N=%lld K=%lld%s: %d rotating input sets (L2 %lld MB)\n", static_cast<long long>(shape.m),
              static_cast<long long>(shape.n), static_cast<long long>(shape.k), note.c_str(), set_count(shape),
              static_cast<long long>(device_.l2_bytes >> 20));
  if (!check_against_cublas(shape, configs)) return false;
  time(shape, configs, warmup, rounds);
  return true;
}

void Lab::time(const Shape& shape, const std::vector<Config>& configs, int warmup, int rounds, int sets) {
  timed(shape, configs, warmup, rounds, sets, /*chain=*/1, kSpinUs);
}

void Lab::time_chained(const Shape& shape, const std::vector<Config>& configs, int chain, int warmup, int rounds,
                       unsigned spin_us) {
  timed(shape, configs, warmup, rounds, /*sets=*/0, chain, spin_us);
}

void Lab::timed(const Shape& shape, const std::vector<Config>& configs, int warmup, int rounds, int sets, int chain,
                unsigned spin_us) {
  const RotatingOperands in(*backend_, shape, /*seed=*/1, InputMode::float_uniform, sets > 0 ? sets : set_count(shape));
  const cudaStream_t stream = backend_->stream();
  std::vector<std::string> names = {"cuBLAS"};
  // Call `call` of time_in_turns runs its configuration `chain` times, on input sets call * chain on.
  std::vector<std::function<void(int64_t)>> calls = {[&](int64_t call) {
    for (int i = 0; i < chain; ++i) cublas_->run(in.problem(call * chain + i));
  }};
  for (const Config& c : configs) {
    names.push_back(c.name);
    calls.push_back([&c, &in, stream, chain](int64_t call) {
      for (int i = 0; i < chain; ++i)
        if (Status s = c.run(in.problem(call * chain + i), stream); !s.ok()) throw Error(c.name + ": " + s.message());
    });
  }
  const std::vector<std::vector<float>> ms = time_in_turns(stream, calls, warmup, rounds, spin_us);
  const double cublas_ms = median(ms[0]) / chain;
  for (size_t i = 0; i < ms.size(); ++i) {
    const double med = median(ms[i]) / chain;
    const auto [lo, hi] = std::minmax_element(ms[i].begin(), ms[i].end());
    std::printf("time   %-20s %8.4f ms  %7.1f TFLOPS  ratio %.3f  (median of %d%s; min %.4f, max %.4f ms)\n",
                names[i].c_str(), med, tflops(shape, med), cublas_ms / med, rounds,
                chain > 1 ? (", per call of " + std::to_string(chain) + " back to back").c_str() : "", *lo / chain,
                *hi / chain);
  }
  std::fflush(stdout);
}

void Lab::time_pairs(const Shape& shape, const Config& config, int pairs) {
  const RotatingOperands in(*backend_, shape, /*seed=*/1, InputMode::float_uniform, set_count(shape));
  const cudaStream_t stream = backend_->stream();
  PairTimer timer(
      stream,
      [&](int64_t call) {
        if (Status s = config.run(in.problem(call), stream); !s.ok()) throw Error(config.name + ": " + s.message());
      },
      [&](int64_t call) { cublas_->run(in.problem(call)); });
  timer.warm_up();
  for (int i = 0; i < pairs; ++i) timer.time_pair();
  const PairSummary t = timer.summary();
  std::printf("pairs  %-20s %8.4f ms, cuBLAS %8.4f ms  ratio %.3f  (medians of %d pairs)\n", config.name.c_str(),
              t.step_ms, t.cublas_ms, t.ratio, pairs);
  std::fflush(stdout);
}

Config Lab::cublas() const {
  CublasReference* cublas = cublas_.get();
  return Config{"cuBLAS", [cublas](const Problem& p, cudaStream_t) {
                  cublas->run(p);
                  return Status{};
                }};
}

void Lab::time_after(const Shape& shape, const std::vector<Config>& configs, const std::vector<Config>& before,
                     int warmup, int rounds) {
  const RotatingOperands in(*backend_, shape, /*seed=*/1, InputMode::float_uniform, set_count(shape));
  const cudaStream_t stream = backend_->stream();
  std::vector<Config> timed = {cublas()};
  timed.insert(timed.end(), configs.begin(), configs.end());
  const CudaEvents events(2);
  int64_t call = 0, late = 0;
  const auto enqueue = [&](const Config& c) {
    if (Status s = c.run(in.problem(call++), stream); !s.ok()) throw Error(c.name + ": " + s.message());
  };
  // ms[b][t]: the calls of timed[t] that followed one of before[b].
  std::vector<std::vector<std::vector<float>>> ms(before.size(), std::vector<std::vector<float>>(timed.size()));
  for (int round = 0; round < warmup + rounds; ++round)
    for (size_t b = 0; b < before.size(); ++b)
      for (size_t t = 0; t < timed.size(); ++t) {
        enqueue(before[b]);
        const float elapsed = time_alone(
            stream, events, [&] { enqueue(timed[t]); }, kSpinUs, &late);
        if (round >= warmup) ms[b][t].push_back(elapsed);
      }
  for (size_t b = 0; b < before.size(); ++b) {
    const double cublas_ms = median(ms[b][0]);
    for (size_t t = 0; t < timed.size(); ++t) {
      const double med = median(ms[b][t]);
      std::printf("after  %-16s %-16s %8.4f ms  ratio %.3f  (median of %d)\n", before[b].name.c_str(),
                  timed[t].name.c_str(), med, cublas_ms / med, rounds);
    }
  }
  if (late > 0)
    std::printf("timing: %lld call(s) reached the GPU after their spin and were timed again\n",
                static_cast<long long>(late));
  std::fflush(stdout);
}

bool shape_args(int argc, char** argv, const char* tool, const std::vector<Shape>& defaults,
                std::vector<Shape>* shapes) {
  if (argc > 1 && (argc - 1) % 3 != 0) {
    std::string names;
    for (const Shape& s : defaults)
      for (int64_t dim : {s.m, s.n, s.k}) {
        names += ' ';
        names += std::to_string(dim);
      }
    std::fprintf(stderr, "usage: %s [M N K]...   (default:%s)\n", tool, names.c_str());
    return false;
  }
  shapes->clear();
  for (int i = 1; i + 2 < argc; i += 3) {
    const std::string text = std::string(argv[i]) + "x" + argv[i + 1] + "x" + argv[i + 2];
    const ShapeList parsed = parse_shape_list(text);
    Status st = parsed.ok() ? check_shape(Contract::general, parsed.shapes[0]) : Status::failure(parsed.error);
    if (!st.ok()) {
      std::fprintf(stderr, "error: %s\n", st.message().c_str());
      return false;
    }
    shapes->push_back(parsed.shapes[0]);
  }
  if (shapes->empty()) *shapes = defaults;
  return true;
}

int sweep_main(int argc, char** argv, const char* tool, const std::vector<Shape>& defaults, const std::string& note,
               const std::function<std::vector<Config>()>& configs) {
  return tool_main([&] {
    std::vector<Shape> shapes;
    if (!shape_args(argc, argv, tool, defaults, &shapes)) return static_cast<int>(kExitUsage);
    Lab lab;
    std::printf("GPU %s\n", describe(lab.device()).c_str());
    const std::vector<Config> timed = configs();
    for (const Shape& s : shapes)
      if (!lab.check_and_time(s, note, timed, kSweepWarmup, kSweepRounds)) return static_cast<int>(kExitFailure);
    return static_cast<int>(kExitMatch);
  });
}

int tool_main(const std::function<int()>& body) {
  try {
    return body();
  } catch (const NoGpu& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitNoDevice;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitFailure;
  }
}

}  // namespace gemm::diag
