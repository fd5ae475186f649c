// AVX2 twin of quantize_activations_q8 (gemm_quant_dispatch.cpp): with the integer prefill GEMMs
// the scalar quantization of the activations took ~12% of a 15M-shape projection. Eight lanes per
// step, the group's tail in scalar code: max of |x| (exact, any order), the same scale and
// 1 / scale as the scalar function, x * inv rounded by vcvtps2dq (nearest even in the default
// MXCSR mode, as lrintf), clamped to [-127, 127], narrowed with saturating packs (lossless after
// the clamp). Same bytes and scales as the scalar function (tests/test_gemm_quant_dispatch.cpp).
//
// A row of whole groups of 8k elements takes three passes: every group's max, then every group's
// scale and inverse 8 at a time (vdivps rounds as the scalar division does), then the groups'
// bytes. Done group by group, each group waited on its own max -> 1/127 -> 1/x division chain
// (~35 cycles of latency for 32 elements), which made the quantization of a 15M-shape w2 input
// (64 x 768) take 19 us, ~40% of its AMX GEMM.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include <immintrin.h>

#include <cmath>

namespace einfer::quant_detail {

namespace {

constexpr int64_t kMaxBatchedGroups = 512;

inline float max_lanes(__m256 v) {
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  return _mm_cvtss_f32(m4);
}

// x * inv rounded to nearest even, clamped to [-127, 127]: 8 elements in int32 lanes.
inline __m256i quantize8_i32(const float* x, __m256 vinv) {
  const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
  const __m256i r = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), vinv));
  return _mm256_max_epi32(_mm256_min_epi32(r, hi), lo);
}

// The same, narrowed: 8 elements to qg.
inline void quantize8(const float* x, __m256 vinv, int8_t* qg) {
  const __m256i r = quantize8_i32(x, vinv);
  const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(qg), _mm_packs_epi16(w16, w16));
}

// Passes 1 and 2 of the whole-group quantization: every group's scale sa[g] and inverse inv[g].
void group_scales(const float* a, int64_t groups, int32_t group, float* sa, float* inv) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  alignas(32) float amax[kMaxBatchedGroups];
  for (int64_t gi = 0; gi < groups; ++gi) {
    const float* ag = a + gi * group;
    __m256 vmax = _mm256_and_ps(_mm256_loadu_ps(ag), abs_mask);
    for (int32_t e = 8; e < group; e += 8)
      vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(ag + e), abs_mask));
    amax[gi] = max_lanes(vmax);
  }
  // scale = activation_scale(amax) (amax / 127, 0 below 127 FLT_MIN) and inv = scale > 0 ?
  // 1 / scale : 0, exactly as the scalar function.
  int64_t gi = 0;
  const __m256 v127 = _mm256_set1_ps(127.f), one = _mm256_set1_ps(1.f), zero = _mm256_setzero_ps();
  const __m256 least = _mm256_set1_ps(kActivationAmaxMin);
  for (; gi + 8 <= groups; gi += 8) {
    const __m256 am = _mm256_load_ps(amax + gi);
    const __m256 scale =
        _mm256_and_ps(_mm256_div_ps(am, v127), _mm256_cmp_ps(am, least, _CMP_GE_OQ));
    const __m256 positive = _mm256_cmp_ps(scale, zero, _CMP_GT_OQ);
    _mm256_storeu_ps(sa + gi, scale);
    _mm256_storeu_ps(inv + gi, _mm256_and_ps(_mm256_div_ps(one, scale), positive));
  }
  for (; gi < groups; ++gi) {
    const float scale = activation_scale(amax[gi]);
    sa[gi] = scale;
    inv[gi] = scale > 0.f ? 1.f / scale : 0.f;
  }
}

// Whole groups of a multiple of 8 elements (k % group == 0): the three passes.
void quantize_whole_groups(const float* a, int64_t groups, int32_t group, int8_t* qa, float* sa) {
  alignas(32) float inv[kMaxBatchedGroups];
  group_scales(a, groups, group, sa, inv);
  for (int64_t gi = 0; gi < groups; ++gi) {
    const __m256 vinv = _mm256_set1_ps(inv[gi]);
    for (int32_t e = 0; e < group; e += 8) quantize8(a + gi * group + e, vinv, qa + gi * group + e);
  }
}

}  // namespace

void quantize_activations_q8_wide16_avx2(const float* a, int64_t k, int32_t group, int16_t* dst,
                                         float* sa, int32_t* gsum) {
  if (group % 8 == 0 && k % group == 0 && k / group <= kMaxBatchedGroups) {
    const int64_t groups = k / group;
    alignas(32) float inv[kMaxBatchedGroups];
    group_scales(a, groups, group, sa, inv);
    const __m128i bias = _mm_set1_epi16(128);
    for (int64_t gi = 0; gi < groups; ++gi) {
      const __m256 vinv = _mm256_set1_ps(inv[gi]);
      __m256i sum = _mm256_setzero_si256();
      for (int32_t e = 0; e < group; e += 8) {
        const __m256i r = quantize8_i32(a + gi * group + e, vinv);
        sum = _mm256_add_epi32(sum, r);
        const __m128i w16 =
            _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + gi * group + e),
                         _mm_add_epi16(w16, bias));
      }
      __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
      s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
      gsum[gi] = wide16_group_sum(group, _mm_cvtsi128_si32(s4), group);
    }
    return;
  }
  // Other shapes (a last partial group, more groups than the batch): group by group through the
  // int8 path, widened in scalar code (groups <= 1024: the wide16 kernels' limit).
  alignas(32) int8_t tmp[1024];
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    const int64_t len = k - g0 < group ? k - g0 : group;
    quantize_activations_q8_avx2(a + g0, len, group, tmp, sa + gi);
    int32_t sum = 0;
    for (int64_t e = 0; e < len; ++e) {
      dst[g0 + e] = static_cast<int16_t>(tmp[e] + 128);
      sum += tmp[e];
    }
    gsum[gi] = wide16_group_sum(group, sum, static_cast<int32_t>(len));
  }
}

void quantize_activations_q8_avx2(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa) {
  if (group % 8 == 0 && k % group == 0 && k / group <= kMaxBatchedGroups) {
    quantize_whole_groups(a, k / group, group, qa, sa);
    return;
  }
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    const int32_t n = static_cast<int32_t>(k - g0 < group ? k - g0 : group);
    const float* ag = a + g0;
    int8_t* qg = qa + g0;
    const int32_t nv = n / 8 * 8;
    __m256 vmax = _mm256_setzero_ps();
    for (int32_t e = 0; e < nv; e += 8) {
      vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(ag + e), abs_mask));
    }
    float amax = max_lanes(vmax);
    for (int32_t e = nv; e < n; ++e) amax = std::fabs(ag[e]) > amax ? std::fabs(ag[e]) : amax;
    const float scale = activation_scale(amax);
    const float inv = scale > 0.f ? 1.f / scale : 0.f;
    sa[gi] = scale;
    const __m256 vinv = _mm256_set1_ps(inv);
    for (int32_t e = 0; e < nv; e += 8) quantize8(ag + e, vinv, qg + e);
    for (int32_t e = nv; e < n; ++e) {
      int32_t r = lrint_small(ag[e] * inv);
      r = r > 127 ? 127 : (r < -127 ? -127 : r);
      qg[e] = static_cast<int8_t>(r);
    }
  }
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
