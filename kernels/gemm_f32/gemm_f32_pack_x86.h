// Private to kernels/gemm_f32/: the x86 panel packer of the f32 GEMM drivers (gemm_f32_simd.cpp's 6
// x 16 AVX2 tiles, gemm_f32_8x32_avx512.cpp's 8 x 32 AVX-512 tiles): B whose columns run along K
// (the rows of a [N, K] weight matrix) packed eight columns at a time with 8 x 8 register
// transposes. Everything here has internal linkage: each including file compiles it for its own
// ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/gemm_f32/gemm_f32_driver.h"

namespace einfer::gemm_detail {
namespace {

// 8 x 8 register transpose: rows r[0..8) of 8 floats -> columns c[0..8).
inline void transpose8x8(const __m256 (&r)[8], __m256 (&c)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int h = 0; h < 2; ++h) {  // rows 0-3, 4-7
    const __m256 *a = t + 4 * h, *b = t + 4 * h + 2;
    u[4 * h + 0] = _mm256_shuffle_ps(a[0], b[0], 0x44);
    u[4 * h + 1] = _mm256_shuffle_ps(a[0], b[0], 0xEE);
    u[4 * h + 2] = _mm256_shuffle_ps(a[1], b[1], 0x44);
    u[4 * h + 3] = _mm256_shuffle_ps(a[1], b[1], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    c[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    c[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}

// The transposed rows stored at dst + t * ld_dst (32-byte aligned).
inline void transpose8x8_store(const __m256 (&r)[8], float* dst, int64_t ld_dst) {
  __m256 c[8];
  transpose8x8(r, c);
  for (int t = 0; t < 8; ++t) _mm256_store_ps(dst + t * ld_dst, c[t]);
}

// store_transposed (gemm_f32_driver.h) for tiles of 8 weight rows whose C columns are contiguous:
// 8 x 8 blocks transposed in registers, each activation row gets its 8 columns in one store.
template <int NR>
void store_transposed_x86(const float* tile, int64_t mr, int64_t nr, const GemmF32Args& g,
                          int64_t i0, int64_t j0, bool accumulate) {
  const bool contiguous = g.c_n == 1 && (g.n_inner <= 0 || (j0 % g.n_inner) + 8 <= g.n_inner);
  if (mr != 8 || !contiguous) return store_transposed<NR>(tile, mr, nr, g, i0, j0, accumulate);
  float* c0 = g.c + i0 * g.c_m + gemm_col_offset(g, j0);
  for (int64_t b = 0; b * 8 < nr; ++b) {
    __m256 r[8], c[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_load_ps(tile + i * NR + b * 8);
    transpose8x8(r, c);
    const int64_t rows = nr - b * 8 < 8 ? nr - b * 8 : 8;
    for (int64_t t = 0; t < rows; ++t) {
      float* dst = c0 + (b * 8 + t) * g.c_m;
      _mm256_storeu_ps(dst, accumulate ? _mm256_add_ps(_mm256_loadu_ps(dst), c[t]) : c[t]);
    }
  }
}

// pack_b<NR> for B whose columns run along K (b_k == 1): eight columns at a time, 8 x 8 blocks
// transposed in registers instead of one scalar store per element (the scalar pack took ~1/4 of
// the prefill GEMM time). Same bytes.
template <int NR>
void pack_b_panel_x86(const GemmF32Args& g, int64_t p0, int64_t kc, int64_t j0, int64_t nr,
                      float* bp) {
  if (g.b_k != 1) return pack_b<NR>(g, p0, kc, j0, nr, bp);
  const int64_t k8 = kc / 8 * 8;
  int64_t j = 0;
  for (; j + 8 <= nr; j += 8) {
    const float* src = g.b + p0 + (j0 + j) * g.b_n;
    for (int64_t p = 0; p < k8; p += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * g.b_n + p);
      transpose8x8_store(r, bp + p * NR + j, NR);
    }
    for (int64_t p = k8; p < kc; ++p)
      for (int i = 0; i < 8; ++i) bp[p * NR + j + i] = src[i * g.b_n + p];
  }
  for (; j < NR; ++j) {  // the panel's last columns, zero past nr
    const float* src = g.b + p0 + (j0 + j) * g.b_n;
    for (int64_t p = 0; p < kc; ++p) bp[p * NR + j] = j < nr ? src[p] : 0.f;
  }
}

}  // namespace
}  // namespace einfer::gemm_detail
