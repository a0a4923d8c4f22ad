// Where a step runs: the Backend interface, RAII device buffers and the guarded output.
//
// The harness talks to the device only through Backend, so a CPU backend (the functional
// emulator) can run the same checks as the CUDA backend: allocation, copies, the hash fill of
// the inputs, the poison of the output, and running a step to completion.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/problem.h"
#include "harness/check.h"
#include "harness/hash.h"
#include "harness/step.h"

namespace gemm {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // The stream steps run on (nullptr for a backend that has none).
  virtual cudaStream_t stream() const = 0;

  virtual void* alloc(size_t bytes) = 0;
  virtual void free(void* ptr) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;

  // dst[i] = input_value(seed, i, mode) for i < count (harness/hash.h); `seed` is the operand's.
  virtual void fill(__half* dst, size_t count, uint64_t seed, InputMode mode) = 0;
  // Every element of dst[0, count) gets the fp16 bit pattern `bits`.
  virtual void poison(__half* dst, size_t count, uint16_t bits) = 0;

  // Runs a step to completion: its own rejection, a launch error or a fault while it runs comes
  // back as a failed Status naming it. Throws only when the backend itself fails.
  virtual Status run(StepFn step, const Problem& problem) = 0;

  // Waits for everything issued on stream().
  virtual void synchronize() = 0;
};

// The CUDA backend on `device`, with a stream of its own. Throws NoGpu when there is no GPU.
std::unique_ptr<Backend> make_cuda_backend(int device = 0);

// The emulator backend (emu/, docs/emulator.md): host memory, the same hash fill and
// poison, and run() calls a step's emulated launcher (StepInfo::emulated), whose launch runs the
// grid on the functional emulator, synchronously. Each run uses `sm_count` and `seed` (the order
// in which threads run and asynchronous work completes), and watches the output allocation for
// writes outside D and elements of D written twice. No GPU is needed; stream() is null.
struct EmuSettings {
  int sm_count = 4;
  uint64_t seed = 1;
};
std::unique_ptr<Backend> make_emu_backend(const EmuSettings& settings = {});

// Whether a CUDA GPU is usable here. False where the runtime finds no device or no driver
// (cudaErrorNoDevice, cudaErrorInsufficientDriver, or none counted), with the reason in *why
// ("no GPU: this machine has no CUDA GPU to run on (cudaGetDeviceCount returned ...)");
// any other failure of cudaGetDeviceCount throws gemm::Error (that is a broken set-up, not a
// machine without a GPU).
bool gpu_available(std::string* why = nullptr);

// `count` elements of T on a backend, freed with it.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend& backend, size_t count)
      : backend_(&backend), data_(static_cast<T*>(count ? backend.alloc(count * sizeof(T)) : nullptr)), size_(count) {}
  ~DeviceBuffer() { reset(); }

  DeviceBuffer(DeviceBuffer&& other) noexcept
      : backend_(other.backend_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      backend_ = other.backend_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  Backend& backend() const { return *backend_; }

  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    if (size_) backend_->copy_to_host(host.data(), data_, bytes());
    return host;
  }
  void from_host(const std::vector<T>& host) {
    if (host.size() != size_) throw Error("DeviceBuffer::from_host: size mismatch");
    if (size_) backend_->copy_to_device(data_, host.data(), bytes());
  }

 private:
  void reset() {
    if (data_) backend_->free(data_);
    data_ = nullptr;
    size_ = 0;
  }
  Backend* backend_ = nullptr;
  T* data_ = nullptr;
  size_t size_ = 0;
};

// The poison patterns. Both are NaNs, so a poisoned element can never pass as a result.
// D: a signalling NaN with an odd payload, which no conversion produces (a NaN converted to fp16
// comes out as 0x7FFF on the GPU and 0x7E00 on x86), so "still 0x7D5A" means "never written".
inline constexpr uint16_t kUnwrittenBits = 0x7D5A;
// The guard band: a different NaN, so a stray write of D's poison into a guard is seen too.
inline constexpr uint16_t kGuardBits = 0xFFFF;
// Elements of guard on each side of D. A multiple of 8, so D stays 16-byte aligned; 1024 covers
// a whole row of a 128x128 tile written one tile too far (or a row pitch off by up to 1024).
inline constexpr size_t kGuardElems = 1024;

// D inside one larger allocation: [guard | D (size elements) | guard]. A step gets d(); the
// guards catch writes just outside it, the poison catches elements it never wrote.
struct GuardedOutput {
  GuardedOutput() = default;
  GuardedOutput(Backend& backend, size_t size, size_t guard = kGuardElems)
      : buffer(backend, size + 2 * guard), size(size), guard(guard) {}

  __half* d() const { return buffer.get() + guard; }

  // Guards get kGuardBits, D gets kUnwrittenBits.
  void poison() {
    buffer.backend().poison(buffer.get(), buffer.size(), kGuardBits);
    buffer.backend().poison(d(), size, kUnwrittenBits);
  }
  // The whole allocation, guards included: what compare() reads.
  std::vector<__half> to_host() const { return buffer.to_host(); }

  DeviceBuffer<__half> buffer;
  size_t size = 0;   // elements of D
  size_t guard = 0;  // elements of guard on each side
};

}  // namespace gemm
