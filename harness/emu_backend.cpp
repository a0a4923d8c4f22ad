// The emulator backend: host memory; steps run on the functional emulator (emu/).
#include <cstdlib>
#include <cstring>
#include <map>

#include "emu/emu.h"
#include "harness/backend.h"

namespace gemm {
namespace {

class EmuBackend final : public Backend {
 public:
  explicit EmuBackend(const EmuSettings& settings) : settings_(settings) {}
  ~EmuBackend() override {
    for (auto& [ptr, bytes] : allocations_) std::free(ptr);
  }

  std::string name() const override { return "emu"; }
  cudaStream_t stream() const override { return nullptr; }

  void* alloc(size_t bytes) override {
    // 256-byte aligned, like cudaMalloc; rounded up as aligned_alloc requires.
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) throw Error("emulator backend: cannot allocate " + std::to_string(bytes) + " bytes");
    allocations_[p] = bytes;
    return p;
  }
  void free(void* ptr) noexcept override {
    allocations_.erase(ptr);
    std::free(ptr);
  }
  void copy_to_device(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fill(__half* dst, size_t count, uint64_t seed, InputMode mode) override { fill_host(dst, count, seed, mode); }
  void poison(__half* dst, size_t count, uint16_t bits) override {
    for (size_t i = 0; i < count; ++i) dst[i] = half_from_bits(bits);
  }

  Status run(StepFn step, const Problem& problem) override {
    if (step == nullptr) return Status::failure("no launcher: this step has no emulated build");
    emu::Options o = emu::options();
    o.sm_count = settings_.sm_count;
    o.seed = settings_.seed;
    emu::set_options(o);
    // Watch the allocation that holds D (the harness's guard band around it).
    const auto* d = reinterpret_cast<const unsigned char*>(problem.d);
    for (auto& [ptr, bytes] : allocations_) {
      const auto* base = static_cast<const unsigned char*>(ptr);
      const size_t d_bytes = static_cast<size_t>(problem.m * problem.n) * sizeof(__half);
      if (d >= base && d + d_bytes <= base + bytes && problem.m > 0 && problem.n > 0)
        emu::watch_output(ptr, bytes, problem.d, problem.m, problem.n, sizeof(__half));
    }
    Status s = step(problem, nullptr);
    emu::clear_output_watch();
    return s;
  }

  void synchronize() override {}

 private:
  EmuSettings settings_;
  std::map<void*, size_t> allocations_;
};

}  // namespace

std::unique_ptr<Backend> make_emu_backend(const EmuSettings& settings) {
  return std::make_unique<EmuBackend>(settings);
}

}  // namespace gemm
