// AVX2 decode GEMVs (m == 1) of the 8x4 weight layout, bit-identical to
// gemm_q8/q4_interleaved_scalar: the tile loop and float step are gemv_8x4_driver.h's, this file
// has the group's int32 dot products of 8 rows (lane = row) with maddubs, which multiplies unsigned
// by signed bytes into saturating int16 pairs, so each stays exact:
// - q4: the nibbles u <= 15 (low: and; high: shift and and) against int8 activations |a| <= 127:
//   a maddubs lane is at most 2 * 15 * 127 = 3810, so 4 chunks (8 maddubs, 30480 < 32767) add up
//   in int16 before one madd by ones widens them to int32; the sum starts from the header's
//   -8 sum(a) (dot(u - 8, a) = dot(u, a) - 8 sum(a)).
// - q8: the sign trick, maddubs(|w|, sign(a, w)) (|w| <= 128: 2 * 128 * 127 = 32512 per lane), then
//   madd by ones, per chunk.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include "kernels/gemm_quant/x86/gemv_8x4_driver.h"

namespace einfer::quant_detail {
namespace {

// Each group function returns the tile's 8 row sums of one group (v: its values, ab: its
// activation block).
struct Q4Avx2 {
  template <int32_t kG>
  static __m256i group(const uint8_t* v, const int8_t* ab, int32_t g_runtime) {
    const int32_t g = kG > 0 ? kG : g_runtime;
    const int8_t* a = ab + 16;
    const int32_t half = g / 2;
    const __m256i m = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256i isum = broadcast4(ab + 4);
#pragma GCC unroll 8
    for (int32_t c0 = 0; c0 < g / 8; c0 += 4, v += 128, a += 16) {  // g / 8 chunks, 4 at a time
      __m256i s16 = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        const __m256i w = load32_8x4(v + 32 * c);
        s16 = _mm256_add_epi16(s16,
                               _mm256_maddubs_epi16(_mm256_and_si256(w, m), broadcast4(a + 4 * c)));
        s16 =
            _mm256_add_epi16(s16, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(w, 4), m),
                                                       broadcast4(a + half + 4 * c)));
      }
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(s16, ones));
    }
    return isum;
  }
};

struct Q8Avx2 {
  template <int32_t kG>
  static __m256i group(const uint8_t* v, const int8_t* ab, int32_t g_runtime) {
    const int32_t g = kG > 0 ? kG : g_runtime;
    const int8_t* a = ab + 16;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s0 = _mm256_setzero_si256(), s1 = s0;  // even and odd chunks (g / 4 is even)
#pragma GCC unroll 8
    for (int32_t c = 0; c < g / 4; c += 2, v += 64, a += 8) {
      const __m256i a0 = broadcast4(a), a1 = broadcast4(a + 4);
      const __m256i w0 = load32_8x4(v), w1 = load32_8x4(v + 32);
      s0 = _mm256_add_epi32(
          s0, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w0), _mm256_sign_epi8(a0, w0)),
                                ones));
      s1 = _mm256_add_epi32(
          s1, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w1), _mm256_sign_epi8(a1, w1)),
                                ones));
    }
    return _mm256_add_epi32(s0, s1);
  }
};

}  // namespace

void gemv_q8_8x4_avx2(const QuantGemm& p) {
  gemv_8x4_run<Q8Avx2, false>(p);
}
void gemv_q4_8x4_avx2(const QuantGemm& p) {
  gemv_8x4_run<Q4Avx2, true>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
