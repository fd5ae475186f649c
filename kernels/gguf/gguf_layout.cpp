// Interleaved layouts of GGUF K-quant matrices (runtime/layout.h, "4x4 of GGUF K-quants"): the
// pack-time move from the rows layout and the way back for one row.
#include <cstring>

#include "kernels/gguf/gguf.h"

namespace einfer {

namespace {

// Copies row r's GGUF block into a (tile, superblock) block (to_tile) or back out of one, field by
// field: `from` is the source block of either kind, `to` the destination.
void move_block(DType dtype, int32_t r, bool to_tile, const uint8_t* from, uint8_t* to) {
  KquantField f[4] = {};
  const int32_t n = kquant_layout_fields(dtype, f);
  for (int32_t i = 0; i < n; ++i) {
    const int32_t c = f[i].size < 4 ? f[i].size : 4;
    for (int32_t o = 0; o < f[i].size; o += c) {
      const int32_t in_tile = 4 * f[i].start + o * 4 + r * c, in_row = f[i].start + o;
      std::memcpy(to + (to_tile ? in_tile : in_row), from + (to_tile ? in_row : in_tile),
                  static_cast<size_t>(c));
    }
  }
}

}  // namespace

Status gguf_to_layout(DType dtype, const void* rows, int64_t n, int64_t k, WeightLayout layout,
                      void* out, size_t out_bytes) {
  if (!dtype_is_gguf_block(dtype) || rows == nullptr || n < 0 || k < 0 ||
      k % gguf_block_elems(dtype) != 0)
    return make_status(StatusCode::invalid_argument,
                       "gguf_to_layout: need a GGUF block matrix of whole blocks");
  if (!layout_interleaved(layout))
    return make_status(StatusCode::invalid_argument, "gguf_to_layout: not an interleaved layout");
  if (const char* why = layout_fit_error(dtype, layout, 0))
    return make_status(StatusCode::invalid_argument, why);
  const uint64_t need = layout_data_bytes(dtype, layout, n, k, 0);
  if (out == nullptr || out_bytes < need)
    return make_status(StatusCode::invalid_argument, "gguf_to_layout: output too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(out_bytes));
  std::memset(out, 0, static_cast<size_t>(need));  // padding rows: all-zero blocks (d = 0)
  const int64_t nb = k / gguf_block_elems(dtype);
  const size_t bytes = gguf_block_bytes(dtype);
  const uint64_t block = layout_block_bytes(dtype, layout, 0);
  const int32_t tile_rows = layout_tile_rows(layout);
  for (int64_t j = 0; j < n; ++j) {
    const uint8_t* row = static_cast<const uint8_t*>(rows) + static_cast<size_t>(j) * nb * bytes;
    uint8_t* tile = static_cast<uint8_t*>(out) + static_cast<uint64_t>(j / tile_rows) * nb * block;
    for (int64_t i = 0; i < nb; ++i)
      move_block(dtype, static_cast<int32_t>(j % tile_rows), true, row + i * bytes,
                 tile + i * block);
  }
  return ok_status();
}

void gguf_block_from_layout(DType dtype, const uint8_t* block, int32_t r, uint8_t* out) {
  move_block(dtype, r, false, block, out);
}

void dequantize_row_gguf_view(const TensorView& w, int64_t row, float* out) {
  const int64_t k = w.shape[1];
  const uint8_t* data = static_cast<const uint8_t*>(w.data);
  if (!layout_interleaved(w.layout)) {
    dequantize_row_gguf(w.dtype, data + row * quant_row_bytes(w.dtype, k), k, out);
    return;
  }
  const int64_t per = gguf_block_elems(w.dtype), nb = k / per;
  const int32_t tile_rows = layout_tile_rows(w.layout);
  const uint64_t block = layout_block_bytes(w.dtype, w.layout, 0);
  const uint8_t* tile = data + static_cast<uint64_t>(row / tile_rows) * nb * block;
  uint8_t one[256];  // a GGUF block (at most 210 bytes)
  for (int64_t i = 0; i < nb; ++i) {
    gguf_block_from_layout(w.dtype, tile + i * block, static_cast<int32_t>(row % tile_rows), one);
    dequantize_row_gguf(w.dtype, one, per, out + i * per);
  }
}

}  // namespace einfer
