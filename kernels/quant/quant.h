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

#include "runtime/layout.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

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

// Interleaved weight layouts of q8/q4 matrices (runtime/layout.h gives the format, quant_layout.cpp
// implements them): conversion from the rows layout (einfer-pack, tests), one row back out
// (embedding lookups, tests), row slices (threads that own whole tiles).

// Writes the rows-layout [n, k] q8/q4 matrix `rows` (values and scales, runtime/tensor.h) in
// `layout` to `out` (layout_data_bytes bytes; every byte is written, padding included, so the
// result is a function of the input alone). invalid_argument when the layout does not fit
// (layout_fit_error) or `out_bytes` is too small.
Status quant_to_layout(const TensorView& rows, WeightLayout layout, void* out, size_t out_bytes);

// The inverse: row `row` of a q8/q4 matrix in any layout, as its rows-layout values (q8:
// quant_row_bytes int8; q4: ceil(k/2) bytes, an odd row's last high nibble 8) and its
// ceil(k/group) scales.
void quant_row_from_layout(const TensorView& w, int64_t row, uint8_t* values, float* scales);

// Row `row` of a q8/q4 matrix in an interleaved layout, dequantized to k floats.
void dequantize_weight_row_interleaved(const TensorView& w, int64_t row, float* out);

// Row `row` of a q8/q4 matrix in any layout, dequantized to k floats.
inline void dequantize_weight_row(const TensorView& w, int64_t row, float* out) {
  if (layout_interleaved(w.layout)) {
    dequantize_weight_row_interleaved(w, row, out);
    return;
  }
  const int64_t k = w.shape[1];
  const unsigned char* v = static_cast<const unsigned char*>(w.data) +
                           static_cast<size_t>(row) * quant_row_bytes(w.dtype, k);
  const float* s = w.scales + row * quant_groups(k, w.group_size);
  if (w.dtype == DType::q8)
    dequantize_row_q8(reinterpret_cast<const int8_t*>(v), s, k, w.group_size, out);
  else
    dequantize_row_q4(v, s, k, w.group_size, out);
}

// Rows [r0, r1) of a 2-D q8/q4 weight view in any layout. Interleaved layouts need r0 on a tile
// boundary (a multiple of layout_tile_rows); r1 may end inside a tile (the kernels compute whole
// tiles and store only the view's rows). invalid_argument otherwise.
Status quant_weight_rows(const TensorView& w, int64_t r0, int64_t r1, TensorView* out);

}  // namespace einfer
