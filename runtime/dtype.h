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
};

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
  }
  return "?";
}

// True for the group-quantized types (q8, q4).
constexpr bool dtype_is_quantized(DType d) {
  return d == DType::q8 || d == DType::q4;
}

// Bytes of one element for plain types; for q8 1 and for q4 0 (use quantized_row_bytes).
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
  }
  return 0;
}

}  // namespace einfer
