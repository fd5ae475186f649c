// AVX2 twin of quantize_activations_q8 (matmul_quant.cpp): with the integer prefill GEMMs the
// scalar quantization of the activations took ~12% of a 15M-shape projection. Eight lanes per
// step, the group's tail in scalar code: max of |x| (exact, any order), the same scale and
// 1 / scale as the scalar function, x * inv rounded by vcvtps2dq (nearest even in the default
// MXCSR mode, as lrintf), clamped to [-127, 127], narrowed with saturating packs (lossless after
// the clamp). Same bytes and scales as the scalar function (tests/test_matmul_quant.cpp).
#include "kernels/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include <immintrin.h>

#include <cmath>

namespace einfer::quant_detail {

void quantize_activations_q8_avx2(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    const int32_t n = static_cast<int32_t>(k - g0 < group ? k - g0 : group);
    const float* ag = a + g0;
    int8_t* qg = qa + g0;
    const int32_t nv = n / 8 * 8;
    __m256 vmax = _mm256_setzero_ps();
    for (int32_t e = 0; e < nv; e += 8) {
      vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(ag + e), abs_mask));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    float amax = _mm_cvtss_f32(m4);
    for (int32_t e = nv; e < n; ++e) amax = std::fabs(ag[e]) > amax ? std::fabs(ag[e]) : amax;
    const float scale = amax / 127.f;
    const float inv = scale > 0.f ? 1.f / scale : 0.f;
    sa[gi] = scale;
    const __m256 vinv = _mm256_set1_ps(inv);
    for (int32_t e = 0; e < nv; e += 8) {
      __m256i r = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(ag + e), vinv));
      r = _mm256_max_epi32(_mm256_min_epi32(r, hi), lo);
      const __m128i w16 =
          _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(qg + e), _mm_packs_epi16(w16, w16));
    }
    for (int32_t e = nv; e < n; ++e) {
      int32_t r = lrint_small(ag[e] * inv);
      r = r > 127 ? 127 : (r < -127 ? -127 : r);
      qg[e] = static_cast<int8_t>(r);
    }
  }
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
