// The generic kernel of the interleaved weight layouts (runtime/layout.h): any layout, q8 or q4,
// any tile of rows, in plain C++. It is the scalar twin every SIMD kernel of an interleaved layout
// is tested against bit for bit, and the path of a CPU that has no fast kernel for the layout the
// image was packed in (correct, slower). Per output element it computes what
// gemm_q8_1x1_scalar computes on the rows layout: the exact int32 sum of each group, then
// acc = group_fma(acc, isum, sa * sw), so a layout changes speed, never bits.
#include <cstdint>
#include <cstring>

#include "kernels/gemm_quant/gemm_quant_internal.h"
#include "kernels/quant/quant.h"

namespace einfer::quant_detail {

namespace {

// The int32 dot product of row r of one block with a group of activations, for one token. One
// function for q8 and q4 (a runtime switch: this is the fallback path, and on Cortex-M every byte
// of code counts).
int32_t block_row_dot(const uint8_t* values, WeightLayout l, int32_t group, int32_t r, bool q4,
                      const int8_t* a) {
  const int32_t rows = layout_tile_rows(l), b = layout_chunk(l);
  const int32_t span = q4 ? group / 2 : group;  // values per row in the block's bytes
  int32_t isum = 0;
  for (int32_t c = 0; c < span / b; ++c) {
    const uint8_t* w = values + (c * rows + r) * b;
    for (int32_t e = 0; e < b; ++e) {
      if (!q4) {
        isum += static_cast<int8_t>(w[e]) * a[c * b + e];
      } else {
        isum += ((w[e] & 0x0F) - 8) * a[c * b + e];
        isum += ((w[e] >> 4) - 8) * a[span + c * b + e];
      }
    }
  }
  return isum;
}

void run(const QuantGemm& p, bool q4) {
  const WeightLayout l = p.layout;
  const int32_t rows = layout_tile_rows(l);
  const size_t block =
      static_cast<size_t>(layout_block_bytes(q4 ? DType::q4 : DType::q8, l, p.group));
  for (int64_t j0 = 0; j0 < p.n; j0 += rows) {
    const uint8_t* tile = p.w + static_cast<size_t>(j0 / rows) * p.w_tile_bytes;
    const int32_t live = static_cast<int32_t>(p.n - j0 < rows ? p.n - j0 : rows);
    for (int32_t r = 0; r < live; ++r) {
      for (int64_t i = 0; i < p.m; ++i) {
        const int8_t* ar = p.qa + i * p.kpad;
        const float* sar = p.sa + i * p.groups;
        float acc = 0.f;
        for (int64_t g = 0; g < p.groups; ++g) {
          const uint8_t* b = tile + static_cast<size_t>(g) * block;
          float sw;
          std::memcpy(&sw, b + r * 4, 4);
          const int32_t isum = block_row_dot(b + rows * 4, l, p.group, r, q4, ar + g * p.group);
          acc = group_fma(acc, isum, sar[g] * sw);
        }
        p.c[i * p.ldc + j0 + r] = acc;
      }
    }
  }
}

}  // namespace

void gemm_q8_interleaved_scalar(const QuantGemm& p) {
  run(p, false);
}
void gemm_q4_interleaved_scalar(const QuantGemm& p) {
  run(p, true);
}

}  // namespace einfer::quant_detail
