// Private to kernels/gemm_quant/: tiling of a quantized matmul into MR x NR register tiles, used by
// the NEON microkernels (the x86 ones tile themselves: gemm_q8_q4_4x4_avx2.cpp,
// gemm_quant_prefill_driver.h). K provides `template <int MR, int NR> static void tile(p, i0, j0)`
// computing C[i0 .. i0+MR, j0 .. j0+NR].
//
// GEMV (m == 1) walks W in tiles of 1 x kGemvRows rows sharing each activation load. For m > 1
// the weight tile is the outer loop and blocks of kGemmRows activation rows the inner one, so a
// weight group is loaded once from memory and reused from L1 for every activation row.
#pragma once

#include <cstdint>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {

template <class K, int MR>
void tile_cols(const QuantGemm& p, int64_t i0, int64_t j0, int64_t nr) {
  switch (nr) {
    case 1:
      K::template tile<MR, 1>(p, i0, j0);
      break;
    case 2:
      K::template tile<MR, 2>(p, i0, j0);
      break;
    case 3:
      K::template tile<MR, 3>(p, i0, j0);
      break;
    default:
      K::template tile<MR, 4>(p, i0, j0);
      break;
  }
}

template <class K>
void tile_any(const QuantGemm& p, int64_t i0, int64_t j0, int64_t mr, int64_t nr) {
  switch (mr) {
    case 1:
      tile_cols<K, 1>(p, i0, j0, nr);
      break;
    case 2:
      tile_cols<K, 2>(p, i0, j0, nr);
      break;
    case 3:
      tile_cols<K, 3>(p, i0, j0, nr);
      break;
    default:
      tile_cols<K, 4>(p, i0, j0, nr);
      break;
  }
}

// kGemvRows, kGemmRows (activation rows per tile, <= 4), kGemmCols (weight rows, <= 4).
template <class K, int kGemvRows, int kGemmRows, int kGemmCols>
void run_tiles(const QuantGemm& p) {
  if (p.m == 1) {
    for (int64_t j = 0; j < p.n; j += kGemvRows) {
      tile_any<K>(p, 0, j, 1, p.n - j < kGemvRows ? p.n - j : kGemvRows);
    }
    return;
  }
  for (int64_t j = 0; j < p.n; j += kGemmCols) {
    const int64_t nr = p.n - j < kGemmCols ? p.n - j : kGemmCols;
    for (int64_t i = 0; i < p.m; i += kGemmRows) {
      tile_any<K>(p, i, j, p.m - i < kGemmRows ? p.m - i : kGemmRows, nr);
    }
  }
}

}  // namespace einfer::quant_detail
