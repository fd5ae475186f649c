// Interleaved weight layouts of q8/q4 matrices (declared in quant.h; the format is
// runtime/layout.h): conversion from the rows layout, one row back out, row slices.
#include <cstring>

#include "kernels/quant/quant.h"

namespace einfer {

namespace {

bool is_quant_matrix(const TensorView& w) {
  return dtype_is_quantized(w.dtype) && w.rank == 2 && w.group_size > 0 && w.data != nullptr;
}

}  // namespace

Status quant_to_layout(const TensorView& rows, WeightLayout layout, void* out, size_t out_bytes) {
  if (!is_quant_matrix(rows) || rows.layout != WeightLayout::rows || rows.scales == nullptr)
    return make_status(StatusCode::invalid_argument,
                       "quant_to_layout: need a 2-D q8/q4 matrix in rows layout");
  const DType dt = rows.dtype;
  const int32_t group = rows.group_size;
  if (const char* why = layout_fit_error(dt, layout, group))
    return make_status(StatusCode::invalid_argument, why, -1, group);
  const int64_t n = rows.shape[0], k = rows.shape[1];
  if (!layout_interleaved(layout))
    return make_status(StatusCode::invalid_argument, "quant_to_layout: not an interleaved layout");
  const uint64_t need = layout_data_bytes(dt, layout, n, k, group);
  if (out == nullptr || out_bytes < need)
    return make_status(StatusCode::invalid_argument, "quant_to_layout: output too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(out_bytes));
  const int32_t tile_rows = layout_tile_rows(layout);
  const int64_t groups = quant_groups(k, group);
  const size_t row_bytes = quant_row_bytes(dt, k);
  const uint64_t block = layout_block_bytes(dt, layout, group);
  const bool q4 = dt == DType::q4;
  unsigned char* o = static_cast<unsigned char*>(out);
  // Zero values everywhere first (q4: nibble 8), zero scales: padding rows and padded groups.
  for (int64_t t = 0; t < layout_tiles(layout, n); ++t)
    for (int64_t g = 0; g < groups; ++g) {
      unsigned char* b = o + static_cast<uint64_t>(t * groups + g) * block;
      std::memset(b, 0, static_cast<size_t>(tile_rows) * 4);
      std::memset(b + tile_rows * 4, q4 ? 0x88 : 0, static_cast<size_t>(block) - tile_rows * 4);
    }
  const unsigned char* src = static_cast<const unsigned char*>(rows.data);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t t = j / tile_rows;
    const int32_t r = static_cast<int32_t>(j % tile_rows);
    const unsigned char* row = src + static_cast<size_t>(j) * row_bytes;
    for (int64_t g = 0; g < groups; ++g) {
      unsigned char* b = o + static_cast<uint64_t>(t * groups + g) * block;
      std::memcpy(b + r * 4, rows.scales + j * groups + g, 4);
      unsigned char* values = b + tile_rows * 4;
      const int64_t len = k - g * group < group ? k - g * group : group;
      for (int32_t x = 0; x < len; ++x) {
        const int64_t e = g * group + x;
        const LayoutPlace at = layout_place(dt, layout, group, r, x);
        if (!q4) {
          values[at.byte] = row[e];
        } else {
          const unsigned u = (e & 1) ? (row[e / 2] >> 4) : (row[e / 2] & 0x0F);
          unsigned char& byte = values[at.byte];
          byte = at.nibble ? static_cast<unsigned char>((byte & 0x0F) | (u << 4))
                           : static_cast<unsigned char>((byte & 0xF0) | u);
        }
      }
    }
  }
  return ok_status();
}

void quant_row_from_layout(const TensorView& w, int64_t row, uint8_t* values, float* scales) {
  const DType dt = w.dtype;
  const int64_t k = w.shape[1];
  const int32_t group = w.group_size;
  const int64_t groups = quant_groups(k, group);
  const size_t row_bytes = quant_row_bytes(dt, k);
  if (!layout_interleaved(w.layout)) {
    std::memcpy(values, static_cast<const unsigned char*>(w.data) + row * row_bytes, row_bytes);
    std::memcpy(scales, w.scales + row * groups, static_cast<size_t>(groups) * 4);
    return;
  }
  const WeightLayout l = w.layout;
  const int32_t tile_rows = layout_tile_rows(l);
  const int64_t t = row / tile_rows;
  const int32_t r = static_cast<int32_t>(row % tile_rows);
  const uint64_t block = layout_block_bytes(dt, l, group);
  const bool q4 = dt == DType::q4;
  if (q4) std::memset(values, 0x88, row_bytes);
  for (int64_t g = 0; g < groups; ++g) {
    const unsigned char* b =
        static_cast<const unsigned char*>(w.data) + static_cast<uint64_t>(t * groups + g) * block;
    std::memcpy(scales + g, b + r * 4, 4);
    const unsigned char* v = b + tile_rows * 4;
    const int64_t len = k - g * group < group ? k - g * group : group;
    for (int32_t x = 0; x < len; ++x) {
      const int64_t e = g * group + x;
      const LayoutPlace at = layout_place(dt, l, group, r, x);
      if (!q4) {
        values[e] = v[at.byte];
      } else {
        const unsigned u = at.nibble ? v[at.byte] >> 4 : v[at.byte] & 0x0F;
        uint8_t& byte = values[e / 2];
        byte = (e & 1) ? static_cast<uint8_t>((byte & 0x0F) | (u << 4))
                       : static_cast<uint8_t>((byte & 0xF0) | u);
      }
    }
  }
}

void dequantize_weight_row_interleaved(const TensorView& w, int64_t row, float* out) {
  const int64_t k = w.shape[1];
  const int32_t group = w.group_size;
  // Element by element from the blocks (an embedding lookup: one row per token).
  const WeightLayout l = w.layout;
  const int32_t tile_rows = layout_tile_rows(l);
  const int64_t groups = quant_groups(k, group);
  const int64_t t = row / tile_rows;
  const int32_t r = static_cast<int32_t>(row % tile_rows);
  const uint64_t block = layout_block_bytes(w.dtype, l, group);
  for (int64_t g = 0; g < groups; ++g) {
    const unsigned char* b =
        static_cast<const unsigned char*>(w.data) + static_cast<uint64_t>(t * groups + g) * block;
    float scale;
    std::memcpy(&scale, b + r * 4, 4);
    const unsigned char* v = b + tile_rows * 4;
    const int64_t len = k - g * group < group ? k - g * group : group;
    for (int32_t x = 0; x < len; ++x) {
      const LayoutPlace at = layout_place(w.dtype, l, group, r, x);
      const int q = w.dtype == DType::q8 ? static_cast<int8_t>(v[at.byte])
                                         : (at.nibble ? v[at.byte] >> 4 : v[at.byte] & 0x0F) - 8;
      out[g * group + x] = static_cast<float>(q) * scale;
    }
  }
}

Status quant_weight_rows(const TensorView& w, int64_t r0, int64_t r1, TensorView* out) {
  if (!is_quant_matrix(w) || r0 < 0 || r1 > w.shape[0] || r0 > r1 ||
      layout_fit_error(w.dtype, w.layout, w.group_size) != nullptr)
    return make_status(StatusCode::invalid_argument, "quant_weight_rows: rows outside the matrix",
                       r0, r1);
  const int64_t k = w.shape[1];
  TensorView s = w;
  s.shape[0] = r1 - r0;
  if (!layout_interleaved(w.layout)) {
    s.data =
        static_cast<unsigned char*>(w.data) + static_cast<size_t>(r0) * quant_row_bytes(w.dtype, k);
    s.scales = w.scales + r0 * quant_groups(k, w.group_size);
  } else {
    const int32_t tile_rows = layout_tile_rows(w.layout);
    if (r0 % tile_rows != 0)
      return make_status(StatusCode::invalid_argument,
                         "quant_weight_rows: the first row does not start a tile of the layout",
                         tile_rows, r0);
    s.data =
        static_cast<unsigned char*>(w.data) +
        static_cast<size_t>(r0 / tile_rows) * layout_tile_bytes(w.dtype, w.layout, k, w.group_size);
  }
  set_contiguous_strides(s);
  *out = s;
  return ok_status();
}

}  // namespace einfer
