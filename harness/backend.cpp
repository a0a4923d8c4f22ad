// The CUDA backend: one device, one stream of its own; every call checked.
#include "harness/backend.h"

#include "common/launch.cuh"  // cuda_failure
#include "harness/fill.h"

namespace gemm {
namespace {

// The runtime's answers that mean "this machine has no GPU", as opposed to a broken set-up.
bool means_no_gpu(cudaError_t err) { return err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice; }

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) {
    std::string why;
    if (!gpu_available(&why)) throw NoGpu(why);
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (device < 0 || device >= count)
      throw Error("CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) +
                  " device(s) found)");
    CUDA_CHECK(cudaSetDevice(device));
    // Non-blocking: work on the legacy default stream (other libraries') does not serialise with ours.
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    name_ = "cuda:" + std::to_string(device);
  }
  ~CudaBackend() override { cudaStreamDestroy(stream_); }  // nothing to do about a failure here

  std::string name() const override { return name_; }
  cudaStream_t stream() const override { return stream_; }

  void* alloc(size_t bytes) override {
    void* ptr = nullptr;
    CUDA_CHECK(cudaMalloc(&ptr, bytes));
    return ptr;
  }
  void free(void* ptr) noexcept override { cudaFree(ptr); }

  void copy_to_device(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_));
    synchronize();
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
    synchronize();
  }

  void fill(__half* dst, size_t count, uint64_t seed, InputMode mode) override {
    cuda::fill_inputs(dst, count, seed, mode, stream_);
  }
  void poison(__half* dst, size_t count, uint16_t bits) override { cuda::fill_bits(dst, count, bits, stream_); }

  Status run(StepFn step, const Problem& problem) override {
    if (step == nullptr) return Status::failure("no launcher: this step's track was not built");
    if (Status s = step(problem, stream_); !s.ok()) return s;
    // A launch error surfaces at the launch or here; a fault while the kernel runs, at the sync.
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cuda_failure(e, "after the launch");
    if (cudaError_t e = cudaStreamSynchronize(stream_); e != cudaSuccess)
      return cuda_failure(e, "while the kernel ran");
    return {};
  }

  void synchronize() override { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  std::string name_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it, so it does not surface at an unrelated later check
    if (!means_no_gpu(err))
      detail::throw_call_failed("cudaGetDeviceCount(&count)", __FILE__, __LINE__, cudaGetErrorName(err));
    // cudaErrorInsufficientDriver is what a machine without a GPU (and so without the NVIDIA
    // driver) answers: say that, not just the runtime's "driver version is insufficient".
    if (why)
      *why =
          std::string("no GPU: this machine has no CUDA GPU to run on (cudaGetDeviceCount returned ") +
          cudaGetErrorName(err) +
          (err == cudaErrorInsufficientDriver ? ": no NVIDIA driver is loaded, or it is older than this CUDA runtime)"
                                              : ": the driver finds no CUDA device)");
    return false;
  }
  if (count == 0) {
    if (why) *why = "no GPU: this machine has no CUDA GPU to run on (cudaGetDeviceCount found no CUDA device)";
    return false;
  }
  return true;
}

std::unique_ptr<Backend> make_cuda_backend(int device) { return std::make_unique<CudaBackend>(device); }

}  // namespace gemm
