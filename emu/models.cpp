#include "emu/models.h"

#include <cstdio>
#include <cstring>

namespace gemm::emu::model {

namespace {
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
uint64_t bits(uint64_t v, int lo, int n) { return (v >> lo) & ((uint64_t{1} << n) - 1); }
}  // namespace

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::none: return "no swizzle";
    case Layout::sw32: return "32-byte swizzle";
    case Layout::sw64: return "64-byte swizzle";
    case Layout::sw128: return "128-byte swizzle";
    case Layout::sw128_base32b: return "128-byte swizzle with 32-byte atomicity";
  }
  return "?";
}

int swizzle_bits(Layout l) {
  switch (l) {
    case Layout::sw32: return 1;
    case Layout::sw64: return 2;
    case Layout::sw128:
    case Layout::sw128_base32b: return 3;
    case Layout::none: break;
  }
  return 0;
}

uint32_t swizzle_row_bytes(Layout l) { return 16u << swizzle_bits(l); }
uint32_t swizzle_atom_bytes(Layout l) { return l == Layout::none ? 128u : 8u * swizzle_row_bytes(l); }

uint32_t swizzle(uint32_t addr, Layout l) {
  const int b = swizzle_bits(l);
  if (b == 0) return addr;
  const uint32_t mask = (1u << b) - 1;
  return addr ^ (((addr >> 7) & mask) << 4);
}

DescDecode decode_wgmma_desc(uint64_t d) {
  DescDecode r;
  r.desc.start = static_cast<uint32_t>(bits(d, 0, 14) << 4);
  r.desc.lbo = static_cast<uint32_t>(bits(d, 16, 14) << 4);
  r.desc.sbo = static_cast<uint32_t>(bits(d, 32, 14) << 4);
  r.desc.base_offset = static_cast<uint32_t>(bits(d, 49, 3));
  switch (bits(d, 62, 2)) {
    case 0: r.desc.layout = Layout::none; break;
    case 1: r.desc.layout = Layout::sw128; break;
    case 2: r.desc.layout = Layout::sw64; break;
    default: r.desc.layout = Layout::sw32; break;
  }
  if (bits(d, 14, 2) || bits(d, 30, 2) || bits(d, 46, 3) || bits(d, 52, 10)) {
    r.error = hex(d) + ": reserved bits (14-15, 30-31, 46-48, 52-61) must be 0";
    return r;
  }
  if (r.desc.base_offset != 0) {
    r.error = hex(d) + ": matrix base offset " + std::to_string(r.desc.base_offset) +
              " is not modelled (keep swizzled tiles on their atom boundary and the base offset 0)";
    return r;
  }
  r.ok = true;
  return r;
}

DescDecode decode_sm100_desc(uint64_t d) {
  DescDecode r;
  r.desc.start = static_cast<uint32_t>(bits(d, 0, 14) << 4);
  r.desc.lbo = static_cast<uint32_t>(bits(d, 16, 14) << 4);
  r.desc.sbo = static_cast<uint32_t>(bits(d, 32, 14) << 4);
  r.desc.base_offset = static_cast<uint32_t>(bits(d, 49, 3));
  const std::string what = hex(d) + ": ";
  if (bits(d, 46, 3) != 1) {
    r.error = what + "bits 46-48 must be the fixed constant 0b001 (got 0b" + std::to_string(bits(d, 48, 1)) +
              std::to_string(bits(d, 47, 1)) + std::to_string(bits(d, 46, 1)) +
              "; the sm90 wgmma descriptor has no such field: a ported descriptor misses bit 46)";
    return r;
  }
  if (bits(d, 14, 2) || bits(d, 30, 2) || bits(d, 53, 8)) {
    r.error = what + "reserved bits (14-15, 30-31, 53-60) must be 0";
    return r;
  }
  switch (bits(d, 61, 3)) {
    case 0: r.desc.layout = Layout::none; break;
    case 1: r.desc.layout = Layout::sw128_base32b; break;
    case 2: r.desc.layout = Layout::sw128; break;
    case 4: r.desc.layout = Layout::sw64; break;
    case 6: r.desc.layout = Layout::sw32; break;
    default:
      r.error = what + "swizzle code " + std::to_string(bits(d, 61, 3)) +
                " (bits 61-63) is invalid: 0 none, 1 128B with 32B atom, 2 128B, 4 64B, 6 32B";
      return r;
  }
  if (r.desc.layout == Layout::sw128_base32b) {
    r.error = what + "the 128-byte swizzle with 32-byte atomicity (code 1) is not modelled";
    return r;
  }
  if (bits(d, 52, 1)) {
    r.error = what + "LBO mode 1 (absolute address, bit 52) is not modelled";
    return r;
  }
  if (r.desc.base_offset != 0) {
    r.error = what + "matrix base offset " + std::to_string(r.desc.base_offset) +
              " is not modelled (keep swizzled tiles on their atom boundary and the base offset 0)";
    return r;
  }
  r.ok = true;
  return r;
}

std::string check_desc_alignment(const MatrixDesc& d) {
  if (d.layout == Layout::none) return {};
  const uint32_t atom = swizzle_atom_bytes(d.layout);
  const uint32_t into = d.start % atom;
  if (into < swizzle_row_bytes(d.layout)) return {};
  return "the descriptor's start address " + hex(d.start) + " lies " + std::to_string(into) + " bytes into a " +
         std::to_string(atom) + "-byte " + layout_name(d.layout) +
         " atom, with matrix base offset 0 (a tile must start on a " + std::to_string(atom) +
         "-byte boundary; only the k16 steps, +32 bytes, may move the start inside the atom's first row)";
}

uint32_t kmajor_chunk_addr(const MatrixDesc& d, uint32_t row, uint32_t kchunk) {
  if (d.layout == Layout::none) return d.start + (row / 8) * d.sbo + (row % 8) * 16 + kchunk * d.lbo;
  const uint32_t linear = d.start + (row / 8) * d.sbo + (row % 8) * swizzle_row_bytes(d.layout) + kchunk * 16;
  return swizzle(linear, d.layout);
}

IdescDecode decode_idesc_f16(uint32_t idesc, int cta_group) {
  IdescDecode r;
  Idesc& i = r.idesc;
  const std::string what = hex(idesc) + " (kind::f16, cta_group::" + std::to_string(cta_group) + "): ";
  i.dtype = static_cast<int>(bits(idesc, 4, 2));
  i.atype = static_cast<int>(bits(idesc, 7, 3));
  i.btype = static_cast<int>(bits(idesc, 10, 3));
  i.negate_a = bits(idesc, 13, 1) != 0;
  i.negate_b = bits(idesc, 14, 1) != 0;
  i.n = static_cast<int>(bits(idesc, 17, 6) << 3);
  i.m = static_cast<int>(bits(idesc, 24, 5) << 4);
  if (bits(idesc, 6, 1) || bits(idesc, 23, 1) || bits(idesc, 29, 1)) {
    r.error = what + "reserved bits 6, 23 and 29 must be 0";
    return r;
  }
  if (bits(idesc, 0, 4)) {
    r.error = what + "sparsity and saturate (bits 0-3) are not modelled: must be 0 (dense)";
    return r;
  }
  if (bits(idesc, 30, 2)) {
    r.error = what + "max shift (bits 30-31, .ws only) must be 0";
    return r;
  }
  if (i.dtype != 1) {
    r.error = what + "dtype (bits 4-5) " + std::to_string(i.dtype) + ": only F32 (1) accumulation is modelled";
    return r;
  }
  if (i.atype > 1 || i.btype > 1) {
    r.error = what + "atype/btype (bits 7-9, 10-12) must be F16 (0) or BF16 (1) for kind::f16";
    return r;
  }
  if (i.atype != i.btype) {
    r.error = what + "atype and btype differ: kind::f16 takes f16 x f16 or bf16 x bf16";
    return r;
  }
  if (bits(idesc, 15, 2)) {
    r.error = what + "transposed (MN-major) operands (bits 15-16) are not modelled: A and B must be K-major";
    return r;
  }
  const bool shape_ok = cta_group == 1 ? (i.m == 64 && i.n % 8 == 0 && i.n >= 8 && i.n <= 256) ||
                                             (i.m == 128 && i.n % 16 == 0 && i.n >= 16 && i.n <= 256)
                        : cta_group == 2 ? (i.m == 128 || i.m == 256) && i.n % 16 == 0 && i.n >= 16 && i.n <= 256
                                         : false;
  if (!shape_ok) {
    r.error = what + "illegal shape M=" + std::to_string(i.m) + " N=" + std::to_string(i.n) +
              (cta_group == 1 ? " for cta_group::1 (M 64 with N a multiple of 8, or M 128 with N a multiple of 16; "
                                "N in [8, 256])"
                              : " for cta_group::2 (M 128 or 256, N a multiple of 16 in [16, 256])");
    return r;
  }
  if (cta_group == 1 && i.m == 64) {
    r.error = what + "M=64 (the half-lane TMEM layout) is not modelled";
    return r;
  }
  if (cta_group == 2 && i.m == 128) {
    r.error = what + "M=128 with cta_group::2 (64 rows per CTA) is not modelled";
    return r;
  }
  r.ok = true;
  return r;
}

FragPos wgmma_acc_pos(int t, int i) {
  const int warp = t / 32, lane = t % 32;
  return {16 * warp + lane / 4 + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * (lane % 4) + (i & 1)};
}

static_assert(sizeof(TensorMap2D) <= 128, "the emulated tensor map must fit the 128-byte CUtensorMap");

void encode_tensor_map(void* out, const TensorMap2D& m) {
  std::memset(out, 0, 128);
  TensorMap2D copy = m;
  copy.magic = kTensorMapMagic;
  std::memcpy(out, &copy, sizeof copy);
}

bool decode_tensor_map(const void* in, TensorMap2D* m) {
  std::memcpy(m, in, sizeof *m);
  return m->magic == kTensorMapMagic;
}

uint32_t tma_box_addr(const TensorMap2D& m, uint32_t dst, uint32_t r, uint32_t byte_in_row) {
  const uint32_t pitch = m.box_cols * m.elem_bytes;
  return swizzle(dst + r * pitch + byte_in_row, m.swizzle);
}

}  // namespace gemm::emu::model
