// Group quantization of weight rows (q8, q4) and the conversions the packer and tests need.
//
// Layout (see runtime/tensor.h and docs/format.md): a row of K floats becomes
//   q8: K int8 values,            value = q * scale,        q in [-127, 127]
//   q4: ceil(K/2) bytes,          value = (u - 8) * scale,  u in [0, 15], element 2i in the low
//   nibble
// plus ceil(K / group) float32 scales, one per group of `group` consecutive elements (the last
// group may be shorter). Scales are absmax / 127 (q8) and absmax / 7 (q4), so zero stays exactly
// zero.
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer {

void quantize_row_q8(const float* x, int64_t k, int32_t group, int8_t* q, float* scales);
void quantize_row_q4(const float* x, int64_t k, int32_t group, uint8_t* q, float* scales);
void dequantize_row_q8(const int8_t* q, const float* scales, int64_t k, int32_t group, float* y);
void dequantize_row_q4(const uint8_t* q, const float* scales, int64_t k, int32_t group, float* y);

// IEEE binary16 <-> float32 (round to nearest even), portable bit manipulation.
uint16_t f32_to_f16(float x);
float f16_to_f32(uint16_t h);

// bfloat16 <-> float32: bf16 is the top half of a float32. Narrowing rounds to nearest even and
// keeps NaNs NaN (quiet); widening is exact.
uint16_t f32_to_bf16(float x);
float bf16_to_f32(uint16_t h);

}  // namespace einfer
