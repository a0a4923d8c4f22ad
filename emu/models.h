// The emulator's models of the encodings the kernels use, as pure functions: the shared-memory
// swizzles, the wgmma (sm90) and tcgen05 (sm100) matrix descriptors and the addresses they walk,
// the tcgen05 instruction descriptor, the wgmma accumulator fragment, and the emulator's own
// tensor-map encoding. Written from the PTX ISA tables (docs/emulator.md lists the sections), not
// from common/'s encoders, so that the unit tests (tests/emu/test_models.cpp) check the two against
// each other and against hand-worked cases. Plain host C++; no emulator state.
#pragma once

#include <cstdint>
#include <string>

namespace gemm::emu::model {

// ---------------------------------------------------------------------------------------------
// Swizzling. PTX ISA "Tensor swizzling modes" / the matrix-descriptor layouts: the 16-byte chunk
// index (address bits 4..4+B-1) is XORed with address bits 7..7+B-1 (CUTLASS Swizzle<B,4,3>),
// B = 3 (128B), 2 (64B), 1 (32B). The pattern repeats every 1024, 512, 256 bytes.
// ---------------------------------------------------------------------------------------------
enum class Layout {
  none,           // no swizzle: core matrices of 8 rows x 16 bytes, contiguous
  sw32,           // 32-byte swizzle
  sw64,           // 64-byte swizzle
  sw128,          // 128-byte swizzle
  sw128_base32b,  // sm100 only: 128-byte swizzle with 32-byte atomicity (not modelled)
};

const char* layout_name(Layout l);
int swizzle_bits(Layout l);             // B: 0, 1, 2, 3
uint32_t swizzle_row_bytes(Layout l);   // 16 (none), 32, 64, 128: one row of the swizzle atom
uint32_t swizzle_atom_bytes(Layout l);  // 128 (none: one core matrix), 256, 512, 1024

// The swizzled address of byte address `addr` (an absolute shared-memory address: the pattern is
// a function of the address bits, which is why tiles must start on an atom boundary).
uint32_t swizzle(uint32_t addr, Layout l);

// ---------------------------------------------------------------------------------------------
// Matrix descriptors (64 bits). Decoded as the hardware does, rejecting what the PTX ISA forbids
// and what the emulator does not model, with a message naming the field.
//   wgmma (sm90), PTX "Matrix Descriptor Format": start 0-13, LBO 16-29, SBO 32-45 (all >> 4),
//     base offset 49-51, layout 62-63 (0 interleave, 1 128B, 2 64B, 3 32B).
//   tcgen05 (sm100), PTX "Shared memory descriptor": start 0-13, LBO 16-29, SBO 32-45, fixed
//     0b001 at 46-48, base offset 49-51, LBO mode 52, fixed 0 at 53-60, layout 61-63 (0 none,
//     1 128B with 32B atom, 2 128B, 4 64B, 6 32B; 3, 5, 7 invalid); bits 14-15, 30-31 reserved.
// ---------------------------------------------------------------------------------------------
struct MatrixDesc {
  uint32_t start = 0;        // byte address (the 18-bit shared address, 16-byte aligned)
  uint32_t lbo = 0;          // bytes
  uint32_t sbo = 0;          // bytes
  uint32_t base_offset = 0;  // 0..7
  Layout layout = Layout::none;
};

struct DescDecode {
  bool ok = false;
  std::string error;  // which field is wrong, when !ok
  MatrixDesc desc;
};

DescDecode decode_wgmma_desc(uint64_t d);
DescDecode decode_sm100_desc(uint64_t d);

// The atom rule: with base offset 0 a swizzled operand's pattern starts on an atom boundary, so
// the start address may only step inside the first row of the atom (the k16 steps, +32 bytes).
// Empty when fine, else the message.
std::string check_desc_alignment(const MatrixDesc& d);

// The byte address of the 16-byte chunk that holds K elements [8*kchunk, 8*kchunk + 8) of row
// `row` (the M index of A or the N index of B) of a K-major fp16/bf16 operand described by `d`
// (PTX "Shared Memory Matrix Layout", canonical K-major layouts):
//   none:    start + (row/8)*SBO + (row%8)*16  + kchunk*LBO
//   swizzled: swizzle(start + (row/8)*SBO + (row%8)*R + kchunk*16), R = the swizzle row bytes.
uint32_t kmajor_chunk_addr(const MatrixDesc& d, uint32_t row, uint32_t kchunk);

// ---------------------------------------------------------------------------------------------
// tcgen05 instruction descriptor, .kind::f16 (PTX "Instruction descriptor"): sparsity 0-2,
// saturate 3, dtype 4-5 (F16 0, F32 1), reserved 6, atype 7-9, btype 10-12 (F16 0, BF16 1),
// negate A/B 13/14, transpose A/B 15/16, N>>3 17-22, reserved 23, M>>4 24-28, reserved 29,
// max shift 30-31.
// ---------------------------------------------------------------------------------------------
struct Idesc {
  int m = 0, n = 0;
  int atype = 0, btype = 0;  // 0 f16, 1 bf16
  int dtype = 0;             // 1 f32
  bool negate_a = false, negate_b = false;
};

struct IdescDecode {
  bool ok = false;
  std::string error;
  Idesc idesc;
};

// Rejects reserved bits, what the emulator does not model (sparsity, saturate, an fp16 D,
// transposed (MN-major) operands, .ws shifts, M = 64, cta_group::2 with M = 128) and shapes that
// are illegal for the cta_group. The legal shapes are the project's rule (common/blackwell/
// descriptors.cuh, idesc_f16_shape_ok): cta_group::1 M 64 with N % 8 == 0 or M 128 with
// N % 16 == 0; cta_group::2 M 128 or 256 with N % 16 == 0; N in [8 or 16, 256].
IdescDecode decode_idesc_f16(uint32_t idesc, int cta_group);

// ---------------------------------------------------------------------------------------------
// wgmma m64nNk16 f32 accumulator fragment (PTX "Matrix fragments for wgmma .m64nNk16", register
// D layout): thread t (0..127) of the warpgroup, register i (0..N/2-1).
// ---------------------------------------------------------------------------------------------
struct FragPos {
  int row, col;
};
FragPos wgmma_acc_pos(int t, int i);

// ---------------------------------------------------------------------------------------------
// The emulator's tensor map: its own encoding of the 128-byte CUtensorMap, made on the host with
// no driver (make_tensor_map_2d in an emulated build) and decoded by the emulated TMA.
// ---------------------------------------------------------------------------------------------
struct TensorMap2D {
  uint64_t magic = 0;
  const void* base = nullptr;
  uint64_t rows = 0, cols = 0;  // elements; cols is the contiguous dimension
  uint64_t row_stride = 0;      // bytes
  uint32_t box_rows = 0, box_cols = 0;
  uint32_t elem_bytes = 0;
  Layout swizzle = Layout::none;
};
inline constexpr uint64_t kTensorMapMagic = 0x454D55544D415032ull;  // "EMUTMAP2"

// Encodes `m` into the 128 bytes at `out`; decodes it back (false: not an emulated tensor map).
void encode_tensor_map(void* out, const TensorMap2D& m);
bool decode_tensor_map(const void* in, TensorMap2D* m);

// Where byte `byte_in_row` of box row `r` lands in shared memory for a box written at the
// (atom-aligned) shared address `dst`: rows are box_cols * elem_bytes apart, then swizzled.
uint32_t tma_box_addr(const TensorMap2D& m, uint32_t dst, uint32_t r, uint32_t byte_in_row);

}  // namespace gemm::emu::model
