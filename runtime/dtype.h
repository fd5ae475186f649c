// Element types of tensors in memory, in model files and in the KV cache.
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer {

// The numeric values are part of the model file format (docs/format.md): never renumber.
enum class DType : uint32_t {
  f32 = 0,
  f16 = 1,  // IEEE binary16, storage only; kernels widen to f32
  i8 = 2,
  i32 = 3,
  q8 = 4,    // int8 values, one float32 scale per group along the last (contiguous) axis
  q4 = 5,    // int4 values two per byte (low nibble first), offset 8, float32 scale per group
  bf16 = 6,  // bfloat16 (top half of a float32), storage only; kernels widen to f32
  // GGUF (ggml) block encodings, kept byte for byte as llama.cpp writes them (docs/gguf-quant.md):
  // a row of K elements is K / gguf_block_elems blocks of gguf_block_bytes, scales inside the
  // blocks (no separate scale region, group_size 0). Numbered from 16 to leave room below.
  q8_0 = 16,  // 32 elements: f16 d, 32 x int8
  q4_0 = 17,  // 32 elements: f16 d, 16 bytes of nibbles, value (u - 8) * d
  q4_1 = 18,  // 32 elements: f16 d, f16 m, 16 bytes of nibbles, value u * d + m
  q5_0 = 19,  // 32 elements: f16 d, 4 bytes of 5th bits, 16 bytes of nibbles, (u - 16) * d
  q5_1 = 20,  // 32 elements: f16 d, f16 m, 4 bytes of 5th bits, 16 bytes of nibbles, u * d + m
  q2_k = 21,  // 256 elements: 16 x (4-bit scale, 4-bit min), 2-bit values, f16 d, f16 dmin
  q3_k = 22,  // 256 elements: 3-bit values (2 low bits + high-bit mask), 16 x 6-bit scales, f16 d
  q4_k = 23,  // 256 elements: f16 d, f16 dmin, 8 x (6-bit scale, 6-bit min), 4-bit values
  q5_k = 24,  // 256 elements: as q4_k plus a 5th bit per value
  q6_k = 25,  // 256 elements: 4 low + 2 high bits per value, 16 x int8 scales, f16 d
};

// True for the GGUF block encodings (q8_0 .. q6_k).
constexpr bool dtype_is_gguf_block(DType d) {
  return static_cast<uint32_t>(d) >= static_cast<uint32_t>(DType::q8_0) &&
         static_cast<uint32_t>(d) <= static_cast<uint32_t>(DType::q6_k);
}

// Elements of one block of a GGUF block type (32 or 256); 0 for other types.
constexpr int64_t gguf_block_elems(DType d) {
  if (!dtype_is_gguf_block(d)) return 0;
  return static_cast<uint32_t>(d) >= static_cast<uint32_t>(DType::q2_k) ? 256 : 32;
}

// Bytes of one block of a GGUF block type; 0 for other types.
constexpr size_t gguf_block_bytes(DType d) {
  switch (d) {
    case DType::q8_0:
      return 34;
    case DType::q4_0:
      return 18;
    case DType::q4_1:
      return 20;
    case DType::q5_0:
      return 22;
    case DType::q5_1:
      return 24;
    case DType::q2_k:
      return 84;
    case DType::q3_k:
      return 110;
    case DType::q4_k:
      return 144;
    case DType::q5_k:
      return 176;
    case DType::q6_k:
      return 210;
    default:
      return 0;
  }
}

// Human-readable name ("f32", "q8", ...); "?" for an unknown value.
constexpr const char* dtype_name(DType d) {
  switch (d) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::i8:
      return "i8";
    case DType::i32:
      return "i32";
    case DType::q8:
      return "q8";
    case DType::q4:
      return "q4";
    case DType::bf16:
      return "bf16";
    case DType::q8_0:
      return "q8_0";
    case DType::q4_0:
      return "q4_0";
    case DType::q4_1:
      return "q4_1";
    case DType::q5_0:
      return "q5_0";
    case DType::q5_1:
      return "q5_1";
    case DType::q2_k:
      return "q2_k";
    case DType::q3_k:
      return "q3_k";
    case DType::q4_k:
      return "q4_k";
    case DType::q5_k:
      return "q5_k";
    case DType::q6_k:
      return "q6_k";
  }
  return "?";
}

// True for the group-quantized types (q8, q4).
constexpr bool dtype_is_quantized(DType d) {
  return d == DType::q8 || d == DType::q4;
}

// Bytes of one element for plain types; for q8 1 and for q4 and GGUF blocks 0 (use
// quant_row_bytes).
constexpr size_t dtype_size(DType d) {
  switch (d) {
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::i8:
      return 1;
    case DType::i32:
      return 4;
    case DType::q8:
      return 1;
    case DType::q4:
      return 0;
    case DType::bf16:
      return 2;
    default:
      return 0;
  }
}

}  // namespace einfer
