// AVX2 decode GEMV of matmul_f32_quant for q8 weights in groups of 32 (m == 1) whose rows are not
// whole blocks of 8 groups (K = 288: 9 groups, every 15M-shape projection and the classifier):
// 4 weight rows per pass, one float accumulator per row holding 8 lanes of partial sums, one
// horizontal add per row at the end.
//
// Per step (32 weights = one group) the activation chunk and its scale are loaded once and shared
// by the 4 rows; each row adds cvt(int32 dot) * (sw * sa) with one FMA. Unlike the 8-group row
// kernel (gemm_q8_q4_4x4_avx2.cpp, RowG32) it needs no whole blocks of 8 groups, so such rows run
// without padding work or per-row tail copies: a last partial step is read with a masked load
// when the row's remaining bytes are whole int32s, else from a copy. Measured on the 15M
// classifier (32000 x 288): ~24 GB/s against ~15-21 for the 1 x 8 tiles it replaces. For q4 the
// per-row scale vectors cost more than they save (RowG32 and the tiles stay).
// The weights are one sequential stream (the 4 rows are adjacent), software-prefetched
// kPrefetchBytes ahead, the scales alike.
//
// Bit-level: the int32 group dot products equal the scalar twin's; the float sum runs in another
// order (8 lanes, then the horizontal add), within tests/test_matmul_quant.cpp's bounds.
#include "kernels/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include <immintrin.h>

#include <cstring>

namespace einfer::quant_detail {
namespace {

constexpr int64_t kPrefetchBytes = 8192;  // see kPrefetch in gemm_q8_q4_4x4_avx2.cpp

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

struct Q8 {
  static constexpr int64_t kStep = 32;
  struct A {
    __m256i a;
    __m256 sa;
  };
  static A load_a(const QuantGemm& p, int64_t s) {
    return {load32(p.qa + s * kStep), _mm256_broadcast_ss(p.sa + s)};
  }
  // acc + cvt(dot(w, a)) * sw(s) * sa(s).
  static __m256 fma_dot(__m256 acc, __m256i w, const A& a, const float* sw, int64_t s) {
    const __m256i d = _mm256_madd_epi16(
        _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a.a, w)), _mm256_set1_epi16(1));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_mul_ps(_mm256_broadcast_ss(sw + s), a.sa),
                           acc);
  }
};

inline float hsum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// The row's last partial step (rest < 32 bytes), zero-filled past the row.
inline __m256i load_tail(const uint8_t* b, int64_t rest) {
  if (rest % 4 == 0) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rest / 4)), lane);
    return _mm256_maskload_epi32(reinterpret_cast<const int*>(b), mask);
  }
  alignas(32) uint8_t tmp[32] = {};
  std::memcpy(tmp, b, static_cast<size_t>(rest));
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
}

template <class Q, int NR>
void rows(const QuantGemm& p, int64_t j0, int64_t full_steps, int64_t steps) {
  const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
  const uint8_t* w[NR];
  const float* sw[NR];
  __m256 acc[NR];
  for (int r = 0; r < NR; ++r) {
    w[r] = p.w + (j0 + r) * rb;
    sw[r] = p.sw + (j0 + r) * p.groups;
    acc[r] = _mm256_setzero_ps();
  }
  // Prefetch streams: weights kPrefetchBytes past this block's bytes at the block's pace, scales
  // (NR * 4 bytes per step) one line every 4 steps.
  const uint8_t* const w_end = p.w + p.n * rb;
  const char* const sw_end = reinterpret_cast<const char*>(p.sw + p.n * p.groups);
  const char* pf_w = reinterpret_cast<const char*>(w[0]) + kPrefetchBytes;
  const char* pf_sw = reinterpret_cast<const char*>(sw[0]) + kPrefetchBytes / 8;
  for (int64_t s = 0; s < full_steps; ++s) {
    if (pf_w < reinterpret_cast<const char*>(w_end)) {
      for (int r = 0; r < NR; r += 2) _mm_prefetch(pf_w + 64 * (r / 2), _MM_HINT_T0);
      pf_w += NR * 32;
    }
    if ((s & 3) == 0 && pf_sw < sw_end) {
      _mm_prefetch(pf_sw, _MM_HINT_T0);
      pf_sw += 64;
    }
    const typename Q::A a = Q::load_a(p, s);
    for (int r = 0; r < NR; ++r) {
      acc[r] = Q::fma_dot(acc[r], load32(w[r] + s * 32), a, sw[r], s);
    }
  }
  if (full_steps < steps) {
    const typename Q::A a = Q::load_a(p, full_steps);
    for (int r = 0; r < NR; ++r) {
      const __m256i wt = load_tail(w[r] + full_steps * 32, rb - full_steps * 32);
      acc[r] = Q::fma_dot(acc[r], wt, a, sw[r], full_steps);
    }
  }
  for (int r = 0; r < NR; ++r) p.c[j0 + r] = hsum(acc[r]);
}

template <class Q>
void run(const QuantGemm& p) {
  const int64_t steps = (p.k + Q::kStep - 1) / Q::kStep;
  const int64_t full_steps = p.k / Q::kStep;
  int64_t j = 0;
  for (; j + 4 <= p.n; j += 4) rows<Q, 4>(p, j, full_steps, steps);
  for (; j < p.n; ++j) rows<Q, 1>(p, j, full_steps, steps);
}

}  // namespace

void gemv_q8_1x4_avx2(const QuantGemm& p) {
  run<Q8>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
