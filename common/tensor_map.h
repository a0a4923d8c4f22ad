// TMA tensor maps, the host side: encodes the CUtensorMap that the device wrappers of
// common/tma.cuh take, for a 2D row-major fp16 matrix (A, B or D).
//
// The encoder, cuTensorMapEncodeTiled, is a driver function. It is fetched through the runtime
// (cudaGetDriverEntryPointByVersion), so nothing links libcuda; <cuda.h> is included for its types.
// https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html
//
// Typical maps (docs/hopper.md, "TMA"):
//   operand tile of A or B (K-major):  rows = M or N, cols = K, box {64 cols, 128 rows}, Swizzle::b128
//   epilogue tile of D, swizzled:      rows = M, cols = N, box {64 cols, BM rows},     Swizzle::b128
//   epilogue tile of D, plain:         rows = M, cols = N, box {up to 256 cols, rows},   Swizzle::none
//
// Every rule the driver would reject (and a few it would accept but we never want) is checked
// here first, on the host, so a bad call gets a Status naming the rule instead of
// CUDA_ERROR_INVALID_VALUE.
#pragma once

#include <cuda.h>  // CUtensorMap and the encoder's enums (types only)

#include <cstdint>
#include <string>

#include "common/problem.h"

namespace gemm {

// Shared-memory layout TMA writes (loads) or expects (stores). b128 is the 128-byte swizzle of
// common/swizzle.cuh, the layout wgmma (layout 1) and tcgen05 (layout 2) descriptors describe.
enum class Swizzle { none, b128 };

inline constexpr uint32_t kTmaElementBytes = 2;  // fp16
inline constexpr uint32_t kTmaMaxBoxDim = 256;   // each box dimension, in elements
inline constexpr uint64_t kTmaMaxGlobalDim = uint64_t{1} << 32;
inline constexpr uint64_t kTmaMaxStrideBytes = uint64_t{1} << 40;  // exclusive

// The host-side rules of a 2D fp16 tile map (the arguments of make_tensor_map_2d), checked
// without touching the driver. Plain C++: every build can call it, the emulator's included.
// `cols` is the contiguous (innermost) dimension.
inline Status check_tensor_map_2d(const CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols,
                                  uint32_t box_rows, uint32_t box_cols, Swizzle swizzle) {
  const auto num = [](uint64_t v) { return std::to_string(v); };
  if (out == nullptr) return Status::failure("tensor map: the output CUtensorMap pointer is null");
  // The driver requires it; TMA reads the map as one 64-byte-aligned 128-byte object.
  if (reinterpret_cast<uintptr_t>(out) % 64 != 0)
    return Status::failure("tensor map: the output CUtensorMap must be 64-byte aligned");
  if (base == nullptr) return Status::failure("tensor map: the global base address is null");
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0)
    return Status::failure("tensor map: the global base address must be 16-byte aligned");
  if (rows < 1 || cols < 1 || rows > kTmaMaxGlobalDim || cols > kTmaMaxGlobalDim)
    return Status::failure("tensor map: each global dimension must be in 1..2^32 (got rows " + num(rows) + ", cols " +
                           num(cols) + ")");
  const uint64_t stride = cols * kTmaElementBytes;
  if (stride % 16 != 0)
    return Status::failure("tensor map: the row stride (cols * 2 bytes) must be a multiple of 16 bytes (got " +
                           num(stride) + " bytes; cols must be a multiple of 8)");
  // Implied by cols <= 2^32 for a dense 2D matrix; kept so the driver's rule is stated here.
  if (stride >= kTmaMaxStrideBytes)
    return Status::failure("tensor map: the row stride (cols * 2 bytes) must be below 2^40 bytes (got " + num(stride) +
                           ")");
  if (box_rows < 1 || box_cols < 1 || box_rows > kTmaMaxBoxDim || box_cols > kTmaMaxBoxDim)
    return Status::failure("tensor map: each box dimension must be in 1..256 elements (got box " + num(box_cols) +
                           " cols x " + num(box_rows) + " rows)");
  const uint64_t inner_bytes = uint64_t{box_cols} * kTmaElementBytes;
  if (inner_bytes % 16 != 0)
    return Status::failure(
        "tensor map: the box's inner dimension (box_cols * 2 bytes) must be a multiple of 16 "
        "bytes (got " +
        num(inner_bytes) + ")");
  if (swizzle == Swizzle::b128 && inner_bytes > 128)
    return Status::failure(
        "tensor map: with the 128-byte swizzle the box's inner dimension must be at most 128 "
        "bytes, i.e. 64 fp16 (got " +
        num(box_cols) + " cols = " + num(inner_bytes) + " bytes)");
  return {};
}

}  // namespace gemm

// Encodes `out` for the row-major fp16 matrix `base` (rows x cols, row stride cols * 2 bytes),
// copied in boxes of box_rows x box_cols elements laid out in shared memory with `swizzle`.
// Out-of-bounds elements of a load are filled with zeros; a store clips them. `out` must be
// 64-byte aligned (a CUtensorMap variable is). Host only.
//   Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols,
//                             uint32_t box_rows, uint32_t box_cols, Swizzle swizzle);
// The GPU build and the host tests get the definition below, on the driver's encoder; the
// emulated build (GEMM_EMULATED) gets only the declaration, which the emulator defines with its
// own encoding of the map.
#if defined(GEMM_EMULATED)

namespace gemm {

// In gemm::emulated (common/emu/prelude.h), apart from the driver-based inline definition below
// that a GPU build of the same program uses.
inline namespace emulated {
Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                          uint32_t box_cols, Swizzle swizzle);
}  // namespace emulated

}  // namespace gemm

#else  // the driver's encoder

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>

namespace gemm {

namespace detail {

// The driver's encoder, looked up once per process. An ABI version is named (12000), so a newer
// driver keeps giving us the signature we were compiled against.
struct TensorMapEncoder {
  PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  std::string error;  // why `fn` is null
};

inline const TensorMapEncoder& tensor_map_encoder() {
  static const TensorMapEncoder encoder = [] {
    TensorMapEncoder e;
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &query);
    if (err != cudaSuccess) {
      e.error = std::string("tensor map: cannot reach the CUDA driver to get cuTensorMapEncodeTiled: ") +
                cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    } else if (query != cudaDriverEntryPointSuccess || fn == nullptr) {
      e.error = query == cudaDriverEntryPointVersionNotSufficent
                    ? "tensor map: the CUDA driver is too old for cuTensorMapEncodeTiled (needs CUDA 12.0)"
                    : "tensor map: the CUDA driver has no cuTensorMapEncodeTiled entry point";
    } else {
      e.fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }
    return e;
  }();
  return encoder;
}

}  // namespace detail

inline Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                 uint32_t box_cols, Swizzle swizzle) {
  if (Status s = check_tensor_map_2d(out, base, rows, cols, box_rows, box_cols, swizzle); !s.ok()) return s;

  const detail::TensorMapEncoder& encoder = detail::tensor_map_encoder();
  if (encoder.fn == nullptr) return Status::failure(encoder.error);

  const cuuint64_t global_dim[2] = {cols, rows};                  // innermost first
  const cuuint64_t global_stride[1] = {cols * kTmaElementBytes};  // bytes, dims 1.. only
  const cuuint32_t box_dim[2] = {box_cols, box_rows};
  const cuuint32_t element_stride[2] = {1, 1};  // every element of the box, no striding
  // L2 promotion: TMA fetches whole 256-byte L2 lines around each box row (CUTLASS's default for
  // its TMA maps); zero fill (OOB_FILL_NONE) past the edges is what masks edge tiles.
  const CUresult r = encoder.fn(out, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(base), global_dim,
                                global_stride, box_dim, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                swizzle == Swizzle::b128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return Status::failure("tensor map: cuTensorMapEncodeTiled failed with CUresult " +
                           std::to_string(static_cast<int>(r)) + " for " + std::to_string(rows) + " x " +
                           std::to_string(cols) + " fp16, box " + std::to_string(box_cols) + " cols x " +
                           std::to_string(box_rows) + " rows");
  return {};
}

}  // namespace gemm

#endif  // GEMM_EMULATED
