// f16 / bf16 GEMV and widening on x86-64-v3 (AVX2 + FMA + F16C): weights are widened in registers
// (vcvtph2ps for f16, zero-extend and shift left 16 for bf16) and never stored as f32. Scalar twins
// in gemv_half_scalar.cpp. The NEON twin, gemv_half_neon.cpp, has the same shape of row loop and
// entry points: one ISA per file, so the two stay apart.
#include "kernels/half/gemv_half_internal.h"

#if defined(EINFER_HALF_AVX2)

#include <immintrin.h>

#include "kernels/quant/quant.h"

namespace einfer::half_detail {

namespace {

struct F16 {
  static __m256 load8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float one(uint16_t h) { return f16_to_f32(h); }
};

struct BF16 {
  static __m256 load8(const uint16_t* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float one(uint16_t h) { return bf16_to_f32(h); }
};

float hsum(__m256 v) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// How far ahead of the weights being read the GEMV requests them. The R rows of a pass are one
// sequential stream (adjacent rows of the matrix), requested at the pass's pace, R * 32 bytes a
// step. A request 512 bytes ahead in each row (less than one 288-element row) left the 15M
// classifier (32000 x 288 f16, from L3) waiting on its loads: 9 GB/s, against ~40 for a
// streaming read of the same bytes.
constexpr int64_t kPrefetchBytes = 8192;

// Rows j..j+R-1, 16 weights per step and row (two accumulators each).
template <typename H, int R>
void rows(int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
  const int64_t k16 = k / 16 * 16;
  __m256 a[R], b[R];
  for (int r = 0; r < R; ++r) a[r] = b[r] = _mm256_setzero_ps();
  const char* ahead = reinterpret_cast<const char*>(w) + kPrefetchBytes;
  int64_t p = 0;
  for (; p < k16; p += 16) {
    const __m256 x0 = _mm256_loadu_ps(x + p), x1 = _mm256_loadu_ps(x + p + 8);
    for (int l = 0; l < R * 32; l += 64) _mm_prefetch(ahead + l, _MM_HINT_T0);
    ahead += R * 32;
    for (int r = 0; r < R; ++r) {
      const uint16_t* wr = w + r * w_j + p;
      a[r] = _mm256_fmadd_ps(H::load8(wr), x0, a[r]);
      b[r] = _mm256_fmadd_ps(H::load8(wr + 8), x1, b[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float s = hsum(_mm256_add_ps(a[r], b[r]));
    for (int64_t q = p; q < k; ++q) s += H::one(w[r * w_j + q]) * x[q];
    y[r] = s;
  }
}

template <typename H>
void gemv(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) rows<H, 4>(k, w + j * w_j, w_j, x, y + j);
  for (; j < n; ++j) rows<H, 1>(k, w + j * w_j, w_j, x, y + j);
}

template <typename H>
void widen(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, H::load8(src + i));
  for (; i < n; ++i) dst[i] = H::one(src[i]);
}

}  // namespace

void gemv_f16_4x1_avx2(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                       float* y) {
  gemv<F16>(n, k, w, w_j, x, y);
}
void gemv_bf16_4x1_avx2(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                        float* y) {
  gemv<BF16>(n, k, w, w_j, x, y);
}
void widen_f16_f32_avx2(const uint16_t* src, float* dst, int64_t n) {
  widen<F16>(src, dst, n);
}
void widen_bf16_f32_avx2(const uint16_t* src, float* dst, int64_t n) {
  widen<BF16>(src, dst, n);
}

}  // namespace einfer::half_detail

#endif
