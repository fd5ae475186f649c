// Private to gemm_quant/arm/: what the NEON kernels of the interleaved layouts share (dotprod,
// plain NEON, i8mm files, gemm_q8_q4_4x*_*.cpp beside it): storing tiles of C, and the GEMV's
// passes over the weight tiles. Internal linkage: each including file compiles it for its own ISA.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <type_traits>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {
namespace {

// The first `cols` (1-4) lanes of v to c.
inline void store_row(float* c, float32x4_t v, int cols) {
  if (cols == 4) {
    vst1q_f32(c, v);
    return;
  }
  vst1q_lane_f32(c, v, 0);
  if (cols > 1) vst1q_lane_f32(c + 1, v, 1);
  if (cols > 2) vst1q_lane_f32(c + 2, v, 2);
}

// Rows of C (ldc apart) for the first `tokens` of kT accumulators, unrolled so the accumulators
// stay registers.
template <int kT>
inline void store_tile(float* c, int64_t ldc, const float32x4_t* acc, int tokens, int cols) {
#pragma GCC unroll 16
  for (int t = 0; t < kT; ++t)
    if (t < tokens) store_row(c + t * ldc, acc[t], cols);
}

// A GEMV (m == 1) in passes of 4 weight tiles (16 rows sharing each activation load), then the
// rest one tile at a time: tiles(std::integral_constant<int, kTiles>, first tile, C, columns of
// the last tile).
template <class Tiles>
inline void gemv_passes(const QuantGemm& p, Tiles tiles) {
  int64_t j0 = 0;
  for (; j0 + 16 <= p.n; j0 += 16)
    tiles(std::integral_constant<int, 4>{}, p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes,
          p.c + j0, 4);
  for (; j0 < p.n; j0 += 4)
    tiles(std::integral_constant<int, 1>{}, p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes,
          p.c + j0, static_cast<int>(p.n - j0 < 4 ? p.n - j0 : 4));
}

}  // namespace
}  // namespace einfer::quant_detail
