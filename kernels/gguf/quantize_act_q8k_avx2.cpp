// AVX2 activation quantizers of the GGUF block kernels (q8k blocks of 256 with sums of each 16,
// q8a blocks of 32 with their sum): the twins of quantize_row_q8k / quantize_row_q8a in
// dot_gguf_q8_scalar.cpp, value for value: the same absmax (max is exact in any order), the same
// float scale and product x * (1 / d), the same round-to-nearest-even conversion (vcvtps2dq under
// the default rounding mode, as lrintf), the same clamp to [-127, 127]; sums are exact integers.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2)

#include <immintrin.h>

namespace einfer::gguf_detail {

namespace {

// absmax of n floats (n a multiple of 32).
float absmax(const float* x, int n) {
  const __m256 sign = _mm256_set1_ps(-0.f);
  __m256 m0 = _mm256_setzero_ps(), m1 = m0, m2 = m0, m3 = m0;
  for (int e = 0; e < n; e += 32) {
    m0 = _mm256_max_ps(m0, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + e)));
    m1 = _mm256_max_ps(m1, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + e + 8)));
    m2 = _mm256_max_ps(m2, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + e + 16)));
    m3 = _mm256_max_ps(m3, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + e + 24)));
  }
  const __m256 m = _mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3));
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// 32 floats times inv, rounded and clamped, as 32 int8 in element order; *lo / *hi get 8 int32
// lanes whose sum is the sum of elements 0-15 / 16-31.
inline __m256i quantize32(const float* x, __m256 inv, __m256i* q32_lo, __m256i* q32_hi) {
  const __m256i lim = _mm256_set1_epi32(127), nlim = _mm256_set1_epi32(-127);
  __m256i q[4];
  for (int t = 0; t < 4; ++t) {
    const __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * t), inv));
    q[t] = _mm256_max_epi32(_mm256_min_epi32(v, lim), nlim);
  }
  *q32_lo = _mm256_add_epi32(q[0], q[1]);  // elements 0-15, lane by lane
  *q32_hi = _mm256_add_epi32(q[2], q[3]);  // elements 16-31
  const __m256i p =
      _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

inline int32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// A block's scale d = absmax / 127 into *d, and 1 / d (0 for an all-zero block) in every lane.
inline __m256 block_scale(const float* xb, int n, float* d) {
  *d = absmax(xb, n) / 127.f;
  return _mm256_set1_ps(*d > 0.f ? 1.f / *d : 0.f);
}

}  // namespace

void quantize_row_q8k_best(const float* x, int64_t k, BlockQ8K* out) {
  for (int64_t i = 0; i < k / 256; ++i) {
    const float* xb = x + i * 256;
    const __m256 inv = block_scale(xb, 256, &out[i].d);
    for (int c = 0; c < 8; ++c) {
      __m256i lo, hi;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i].qs + 32 * c),
                          quantize32(xb + 32 * c, inv, &lo, &hi));
      out[i].bsums[2 * c] = static_cast<int16_t>(hsum(lo));
      out[i].bsums[2 * c + 1] = static_cast<int16_t>(hsum(hi));
    }
  }
}

void quantize_row_q8a_best(const float* x, int64_t k, BlockQ8A* out) {
  for (int64_t i = 0; i < k / 32; ++i) {
    const float* xb = x + i * 32;
    const __m256 inv = block_scale(xb, 32, &out[i].d);
    __m256i lo, hi;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i].qs), quantize32(xb, inv, &lo, &hi));
    out[i].isum = hsum(_mm256_add_epi32(lo, hi));
  }
}

}  // namespace einfer::gguf_detail

#endif  // EINFER_GGUF_AVX2
