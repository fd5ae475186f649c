// Interleaved weight layouts of q8/q4 matrices (runtime/layout.h gives the format): conversion
// from the rows layout (einfer-pack, tests), one row back out (embedding lookups, tests), row
// slices (threads that own whole tiles), and the value accessors the generic kernels read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quant.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

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

namespace layout_detail {

// Where element x (0 .. group-1) of row r (0 .. R-1) of a block sits: its byte, and for q4 its
// nibble (0 low, 1 high), counted from the start of the block's values (after the R scales).
struct Place {
  int64_t byte;
  int nibble;
};
constexpr Place place(DType dtype, WeightLayout l, int32_t group, int32_t r, int32_t x) {
  const int32_t rows = layout_tile_rows(l), b = layout_chunk(l);
  int nibble = 0;
  if (dtype == DType::q4) {
    nibble = x >= group / 2 ? 1 : 0;
    x -= nibble * (group / 2);
  }
  return {static_cast<int64_t>((x / b) * rows + r) * b + x % b, nibble};
}

}  // namespace layout_detail

}  // namespace einfer
