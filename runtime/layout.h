// Weight layouts: how the values of a group-quantized matrix (q8, q4) are arranged in a model image
// (docs/format.md, "Weight layouts"). A layout changes which kernels read the matrix fast, never
// the result: every layout holds the same int8 / int4 values and float32 scales as `rows`, and the
// kernels of every layout compute the same int32 sum per group and the same float chain.
//
// rows     today's layout: row-major values, the scales in a region of their own.
// RxB      R rows interleaved B bytes at a time, one stream: the matrix is cut into tiles of R rows
//          (the last tile padded with zero rows), each tile into its groups, and each (tile, group)
//          is one block: R float32 scales, then the R rows' values of the group in chunks of B
//          values per row, row after row ([chunk][row][B]). q4 pairs the group's first and second
//          halves in one byte (low nibble: an element of the first half; high nibble: the element
//          G/2 later), so a block's bytes are G/(2B) chunks of R x B bytes. A group past the end of
//          a row (K not a multiple of G) is zero-padded to G values.
//          4x4: sdot on Arm (lane = row: 4 rows x 4 bytes is one 128-bit register), any NEON core.
//          4x8: SMMLA on Arm i8mm cores (a register holds 2 rows x 8 bytes, the operand shape).
//          8x4: x86 AVX2 / AVX-512 VNNI (lane = row: 8 rows x 4 bytes is one 256-bit register,
//               each int32 lane one row's sum, the 8 rows' scales one 32-byte load).
// 4x4 of GGUF K-quants (q4_k, q6_k; their superblocks of 256 elements are kept whole): tiles of 4
//          rows (the last padded with zero rows, whose blocks are all zero bytes: d = 0), each tile
//          cut into its superblocks; each (tile, superblock) is one block of 4 x the GGUF block's
//          bytes holding the 4 rows' GGUF blocks field by field in the GGUF block's own field order
//          (q4_k: d, dmin, scales[12], qs[128]; q6_k: ql[128], qh[64], scales[16], d), each field
//          as the 4 rows' copies interleaved in chunks of c = min(4, field bytes) bytes:
//          [chunk][row][c]. A 16-byte load of quants then holds 4 bytes of each row (SDOT by lane:
//          one activation load serves 4 rows), the rows' d / dmin are one 8-byte load. The bytes
//          are the rows layout's, moved: the same values, scales and results.
// Layout values are part of the format: never renumbered.
#pragma once

#include <cstdint>
#include <cstring>

#include "runtime/dtype.h"

// Whether this build has the interleaved layouts (CMake option EINFER_LAYOUTS, off in firmware by
// default: the loader then refuses interleaved images and the code they need is left out).
#ifndef EINFER_LAYOUTS
#define EINFER_LAYOUTS 1
#endif

namespace einfer {

inline constexpr bool kLayoutsBuilt = EINFER_LAYOUTS != 0;
enum class WeightLayout : uint32_t {
  rows = 0,
  i4x4 = 1,  // "4x4"
  i4x8 = 2,  // "4x8"
  i8x4 = 3,  // "8x4"
};
inline constexpr uint32_t kWeightLayoutCount = 4;

// Rows per tile (R) and values per row per chunk (B); rows: 1 and 0.
constexpr int32_t layout_tile_rows(WeightLayout l) {
  switch (l) {
    case WeightLayout::i4x4:
    case WeightLayout::i4x8:
      return 4;
    case WeightLayout::i8x4:
      return 8;
    default:
      return 1;
  }
}
constexpr int32_t layout_chunk(WeightLayout l) {
  switch (l) {
    case WeightLayout::i4x4:
    case WeightLayout::i8x4:
      return 4;
    case WeightLayout::i4x8:
      return 8;
    default:
      return 0;
  }
}
constexpr bool layout_interleaved(WeightLayout l) {
  return kLayoutsBuilt && l != WeightLayout::rows;
}

// "rows", "4x4", "4x8", "8x4"; "?" for an unknown value.
constexpr const char* layout_name(WeightLayout l) {
  switch (l) {
    case WeightLayout::rows:
      return "rows";
    case WeightLayout::i4x4:
      return "4x4";
    case WeightLayout::i4x8:
      return "4x8";
    case WeightLayout::i8x4:
      return "8x4";
  }
  return "?";
}

// The layout named `name` (layout_name); false if none is.
inline bool layout_from_name(const char* name, WeightLayout* out) {
  for (uint32_t i = 0; i < kWeightLayoutCount; ++i) {
    const WeightLayout l = static_cast<WeightLayout>(i);
    if (std::strcmp(name, layout_name(l)) == 0) {
      *out = l;
      return true;
    }
  }
  return false;
}

// Why a [rows, k] matrix of `dtype` with groups of `group` cannot take the layout, or nullptr if
// it can. Interleaved layouts hold q8 and q4 only; q8 needs the group to be whole chunks, q4 whole
// chunk pairs (its two half-groups share bytes).
constexpr const char* layout_fit_error(DType dtype, WeightLayout l, int32_t group) {
  if (l == WeightLayout::rows) return nullptr;
  if (!kLayoutsBuilt) return "interleaved layouts are left out of this build (EINFER_LAYOUTS)";
  if (dtype_is_gguf_block(dtype))
    return (dtype == DType::q4_k || dtype == DType::q6_k || dtype == DType::q8_0 ||
            dtype == DType::q5_0) &&
                   l == WeightLayout::i4x4
               ? nullptr
               : "GGUF block weights take one interleaved layout: q4_k, q6_k, q8_0 and q5_0 in 4x4";
  if (dtype != DType::q8 && dtype != DType::q4)
    return "interleaved layouts hold q8 and q4 weights only";
  const int32_t unit = dtype == DType::q4 ? 2 * layout_chunk(l) : layout_chunk(l);
  if (group <= 0 || group % unit != 0)
    return dtype == DType::q4 ? "the q4 group size must be a multiple of twice the layout's chunk"
                              : "the q8 group size must be a multiple of the layout's chunk";
  return nullptr;
}

// Bytes of one block (one tile's scales and values of one group) and of one tile (all groups).
// GGUF K-quants: a block is one superblock of the tile's rows, group is unused.
constexpr uint64_t layout_block_bytes(DType dtype, WeightLayout l, int32_t group) {
  const uint64_t r = static_cast<uint64_t>(layout_tile_rows(l));
  if (dtype_is_gguf_block(dtype)) return r * gguf_block_bytes(dtype);
  const uint64_t values = dtype == DType::q4 ? static_cast<uint64_t>(group) / 2 : group;
  return r * 4u + r * values;
}
constexpr uint64_t layout_tile_bytes(DType dtype, WeightLayout l, int64_t k, int32_t group) {
  if (dtype_is_gguf_block(dtype))
    return static_cast<uint64_t>(k / gguf_block_elems(dtype)) * layout_block_bytes(dtype, l, 0);
  const uint64_t groups = group > 0 ? static_cast<uint64_t>((k + group - 1) / group) : 0u;
  return groups * layout_block_bytes(dtype, l, group);
}
// Tiles of a matrix of `rows` rows, and the bytes of its one region (interleaved layouts).
constexpr int64_t layout_tiles(WeightLayout l, int64_t rows) {
  const int64_t r = layout_tile_rows(l);
  return (rows + r - 1) / r;
}
constexpr uint64_t layout_data_bytes(DType dtype, WeightLayout l, int64_t rows, int64_t k,
                                     int32_t group) {
  return static_cast<uint64_t>(layout_tiles(l, rows)) * layout_tile_bytes(dtype, l, k, group);
}

// Where element x (0 .. group-1) of row r (0 .. R-1) of a block sits: its byte, and for q4 its
// nibble (0 low, 1 high), counted from the start of the block's values (after the R scales).
struct LayoutPlace {
  int64_t byte;
  int nibble;
};
constexpr LayoutPlace layout_place(DType dtype, WeightLayout l, int32_t group, int32_t r,
                                   int32_t x) {
  const int32_t rows = layout_tile_rows(l), b = layout_chunk(l);
  int nibble = 0;
  if (dtype == DType::q4) {
    nibble = x >= group / 2 ? 1 : 0;
    x -= nibble * (group / 2);
  }
  return {static_cast<int64_t>((x / b) * rows + r) * b + x % b, nibble};
}

// GGUF blocks in 4x4 (q4_k, q6_k and the Q4_K_M fallbacks q8_0, q5_0): where byte `at` of row r's
// GGUF block (0 .. gguf_block_bytes - 1) sits in the (tile, block) block: field (start s, size z)
// moves to 4s, chunks of c = min(4, z).
struct KquantField {
  int32_t start, size;
};
constexpr int32_t kquant_layout_fields(DType dtype, KquantField out[4]) {
  if (dtype == DType::q4_k) {
    out[0] = {0, 2}, out[1] = {2, 2}, out[2] = {4, 12}, out[3] = {16, 128};
    return 4;
  }
  if (dtype == DType::q6_k) {
    out[0] = {0, 128}, out[1] = {128, 64}, out[2] = {192, 16}, out[3] = {208, 2};
    return 4;
  }
  if (dtype == DType::q8_0) {  // d, 32 quants
    out[0] = {0, 2}, out[1] = {2, 32};
    return 2;
  }
  if (dtype == DType::q5_0) {  // d, the 32 fifth bits, 16 bytes of nibbles
    out[0] = {0, 2}, out[1] = {2, 4}, out[2] = {6, 16};
    return 3;
  }
  return 0;
}
constexpr int64_t kquant_layout_place(DType dtype, int32_t r, int32_t at) {
  KquantField f[4] = {};
  const int32_t n = kquant_layout_fields(dtype, f);
  for (int32_t i = 0; i < n; ++i) {
    if (at < f[i].start || at >= f[i].start + f[i].size) continue;
    const int32_t c = f[i].size < 4 ? f[i].size : 4, o = at - f[i].start;
    return 4 * f[i].start + (o / c) * 4 * c + r * c + o % c;
  }
  return -1;
}

}  // namespace einfer
