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

// L2 promotion (the driver's CUtensorMapL2promotion): the granularity in which L2 fills the misses
// of a TMA load from DRAM, 64, 128 or 256 bytes around each requested sector, or none (the
// sectors asked for). b256 is what every map here has used so far; CUTLASS's make_tma_copy
// encodes b128, ThunderKittens none.
enum class L2Promotion { none, b64, b128, b256 };

// The L2 promotion of the steps' maps (unless GEMM_TMA_L2_PROMOTION names one): 256 bytes for a
// row pitch that is a multiple of 128 bytes, 128 bytes otherwise. At a misaligned pitch most box
// rows straddle two 128-byte L2 lines, and the L2 side, not TMA, limits the loads; smaller
// promotion blocks recover part of that and cost nothing there, while at an aligned pitch 256
// measured best for some steps (docs/shape-performance.md).
inline constexpr L2Promotion default_l2_promotion(uint64_t row_pitch_bytes) {
  return row_pitch_bytes % 128 == 0 ? L2Promotion::b256 : L2Promotion::b128;
}

// The settings of a map beyond its shape, box and swizzle. The defaults are those of a map with an
// aligned row pitch (the 7-argument make_tensor_map_2d picks the L2 promotion by the pitch).
struct TensorMapOptions {
  L2Promotion l2_promotion = L2Promotion::b256;
  // Bytes from one row to the next: 0 means dense rows (cols * 2 bytes). A larger pitch (a multiple
  // of 16, at least cols * 2) describes a matrix whose rows are padded, e.g. to a multiple of 128
  // bytes, while `cols` still bounds the loads (TMA fills zeros past it, stores clip there).
  uint64_t row_stride_bytes = 0;
};

// "none", "64", "128" or "256" (what GEMM_TMA_L2_PROMOTION takes); false for anything else.
inline bool parse_l2_promotion(const char* text, L2Promotion* out) {
  if (text == nullptr || out == nullptr) return false;
  const std::string t(text);
  if (t == "none") *out = L2Promotion::none;
  else if (t == "64") *out = L2Promotion::b64;
  else if (t == "128") *out = L2Promotion::b128;
  else if (t == "256") *out = L2Promotion::b256;
  else return false;
  return true;
}

inline const char* l2_promotion_name(L2Promotion p) {
  switch (p) {
    case L2Promotion::none: return "none";
    case L2Promotion::b64: return "64";
    case L2Promotion::b128: return "128";
    case L2Promotion::b256: return "256";
  }
  return "?";
}

inline constexpr uint32_t kTmaElementBytes = 2;  // fp16
inline constexpr uint32_t kTmaMaxBoxDim = 256;   // each box dimension, in elements
inline constexpr uint64_t kTmaMaxGlobalDim = uint64_t{1} << 32;
inline constexpr uint64_t kTmaMaxStrideBytes = uint64_t{1} << 40;  // exclusive

// The host-side rules of a 2D fp16 tile map (the arguments of make_tensor_map_2d), checked
// without touching the driver. Plain C++: every build can call it, the emulator's included.
// `cols` is the contiguous (innermost) dimension.
inline Status check_tensor_map_2d(const CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols,
                                  uint32_t box_rows, uint32_t box_cols, Swizzle swizzle,
                                  const TensorMapOptions& options) {
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
  if (options.row_stride_bytes == 0 && stride % 16 != 0)
    return Status::failure("tensor map: the row stride (cols * 2 bytes) must be a multiple of 16 bytes (got " +
                           num(stride) + " bytes; cols must be a multiple of 8)");
  if (options.row_stride_bytes != 0) {
    if (options.row_stride_bytes % 16 != 0)
      return Status::failure("tensor map: a padded row stride must be a multiple of 16 bytes (got " +
                             num(options.row_stride_bytes) + ")");
    if (options.row_stride_bytes < stride)
      return Status::failure("tensor map: a padded row stride must hold a row, at least cols * 2 = " + num(stride) +
                             " bytes (got " + num(options.row_stride_bytes) + ")");
    if (options.row_stride_bytes >= kTmaMaxStrideBytes)
      return Status::failure("tensor map: a padded row stride must be below 2^40 bytes (got " +
                             num(options.row_stride_bytes) + ")");
  }
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

inline Status check_tensor_map_2d(const CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols,
                                  uint32_t box_rows, uint32_t box_cols, Swizzle swizzle) {
  return check_tensor_map_2d(out, base, rows, cols, box_rows, box_cols, swizzle, TensorMapOptions{});
}

}  // namespace gemm

// Encodes `out` for the row-major fp16 matrix `base` (rows x cols, row stride cols * 2 bytes),
// copied in boxes of box_rows x box_cols elements laid out in shared memory with `swizzle`.
// Out-of-bounds elements of a load are filled with zeros; a store clips them. `out` must be
// 64-byte aligned (a CUtensorMap variable is). Host only, with a CUDA context current on the
// calling thread: the driver's encoder answers CUDA_ERROR_INVALID_CONTEXT without one (a step's
// launcher runs after the backend has made it; a program that has not touched the device yet
// makes it with cudaSetDevice).
//   Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols,
//                             uint32_t box_rows, uint32_t box_cols, Swizzle swizzle);
// The GPU build and the host tests get the definition below, on the driver's encoder; the
// emulated build (GEMM_EMULATED) gets only the declaration, which the emulator defines with its
// own encoding of the map. The GPU build also has an overload taking TensorMapOptions (L2
// promotion, a padded row stride); the emulator does not model either.
#if defined(GEMM_EMULATED)

namespace gemm {

// In gemm::emulated (emu/prelude.h), apart from the driver-based inline definition below
// that a GPU build of the same program uses.
inline namespace emulated {
Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                          uint32_t box_cols, Swizzle swizzle);
}  // namespace emulated

}  // namespace gemm

#else  // the driver's encoder

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>

#include <cstdlib>  // std::getenv
#include <utility>

namespace gemm {

namespace detail {

// The driver's encoder, looked up once per process. An ABI version is named (12000), so a newer
// driver keeps giving us the signature we were compiled against.
struct TensorMapEncoder {
  PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  std::string error;  // why `fn` is null
  // The driver's cuGetErrorName, to name the CUresult of a failed encoding (null if not found: the
  // number alone is printed then).
  PFN_cuGetErrorName_v6000 error_name = nullptr;
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
      void* name_fn = nullptr;
      if (cudaGetDriverEntryPointByVersion("cuGetErrorName", &name_fn, 6000, cudaEnableDefault, &query) ==
              cudaSuccess &&
          query == cudaDriverEntryPointSuccess)
        e.error_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(name_fn);
    }
    return e;
  }();
  return encoder;
}

// "CUDA_ERROR_INVALID_CONTEXT (CUresult 201)": the name says what went wrong, the number is what
// the driver's documentation lists.
inline std::string cu_result_string(const TensorMapEncoder& encoder, CUresult r) {
  const char* name = nullptr;
  if (encoder.error_name == nullptr || encoder.error_name(r, &name) != CUDA_SUCCESS || name == nullptr)
    name = "an unnamed CUresult";
  return std::string(name) + " (CUresult " + std::to_string(static_cast<int>(r)) + ")";
}

inline CUtensorMapL2promotion to_driver(L2Promotion p) {
  switch (p) {
    case L2Promotion::none: return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case L2Promotion::b64: return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case L2Promotion::b128: return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case L2Promotion::b256: return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
  return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

}  // namespace detail

// The options the 7-argument make_tensor_map_2d (every step's maps) uses: TensorMapOptions{} with
// the L2 promotion of default_l2_promotion, unless the environment variable GEMM_TMA_L2_PROMOTION
// (none, 64, 128 or 256) sets the L2 promotion of every map. A diagnostic switch, so that one build
// of gemm_bench or a step can be timed with each setting; a bad value is an error naming the
// variable. Read once per process.
inline Status tensor_map_options_from_env(const char* value, TensorMapOptions* options) {
  *options = TensorMapOptions{};
  if (value == nullptr || *value == '\0') return {};
  if (!parse_l2_promotion(value, &options->l2_promotion))
    return Status::failure(std::string("tensor map: GEMM_TMA_L2_PROMOTION must be none, 64, 128 or 256 (got \"") +
                           value + "\")");
  return {};
}

struct EnvTensorMapOptions {
  TensorMapOptions options;
  bool l2_promotion_set = false;  // GEMM_TMA_L2_PROMOTION named one
  Status status;
};
inline const EnvTensorMapOptions& default_tensor_map_options() {
  static const EnvTensorMapOptions options = [] {
    EnvTensorMapOptions o;
    const char* value = std::getenv("GEMM_TMA_L2_PROMOTION");
    o.l2_promotion_set = value != nullptr && *value != '\0';
    o.status = tensor_map_options_from_env(value, &o.options);
    return o;
  }();
  return options;
}

// make_tensor_map_2d with explicit options (L2 promotion, a padded row stride).
inline Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                 uint32_t box_cols, Swizzle swizzle, const TensorMapOptions& options) {
  if (Status s = check_tensor_map_2d(out, base, rows, cols, box_rows, box_cols, swizzle, options); !s.ok()) return s;

  const detail::TensorMapEncoder& encoder = detail::tensor_map_encoder();
  if (encoder.fn == nullptr) return Status::failure(encoder.error);

  const uint64_t stride = options.row_stride_bytes != 0 ? options.row_stride_bytes : cols * kTmaElementBytes;
  const cuuint64_t global_dim[2] = {cols, rows};  // innermost first
  const cuuint64_t global_stride[1] = {stride};   // bytes, dims 1.. only
  const cuuint32_t box_dim[2] = {box_cols, box_rows};
  const cuuint32_t element_stride[2] = {1, 1};  // every element of the box, no striding
  // L2 promotion: L2 fills a miss in blocks of this many bytes (by default 256); zero fill
  // (OOB_FILL_NONE) past the edges is what masks edge tiles.
  const CUresult r = encoder.fn(out, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<void*>(base), global_dim,
                                global_stride, box_dim, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                swizzle == Swizzle::b128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                                detail::to_driver(options.l2_promotion), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return Status::failure("tensor map: cuTensorMapEncodeTiled failed with " + detail::cu_result_string(encoder, r) +
                           " for " + std::to_string(rows) + " x " + std::to_string(cols) + " fp16, box " +
                           std::to_string(box_cols) + " cols x " + std::to_string(box_rows) + " rows");
  return {};
}

inline Status make_tensor_map_2d(CUtensorMap* out, const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                 uint32_t box_cols, Swizzle swizzle) {
  if (Status s = check_tensor_map_2d(out, base, rows, cols, box_rows, box_cols, swizzle); !s.ok()) return s;
  const EnvTensorMapOptions& env = default_tensor_map_options();
  if (!env.status.ok()) return env.status;
  TensorMapOptions options = env.options;
  if (!env.l2_promotion_set) options.l2_promotion = default_l2_promotion(cols * kTmaElementBytes);
  return make_tensor_map_2d(out, base, rows, cols, box_rows, box_cols, swizzle, options);
}

}  // namespace gemm

#endif  // GEMM_EMULATED
