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

// Each group function computes kT tiles' group (blocks `tile` bytes apart) at once, so the tiles
// share the activations' broadcasts; isum[t] gets tile t's 8 row sums.
struct Q4Avx2 {
  template <int32_t kG, int kT>
  static void group(const uint8_t* v, size_t tile, const int8_t* ab, int32_t g_runtime,
                    __m256i* isum) {
    const int32_t g = kG > 0 ? kG : g_runtime;
    const int8_t* a = ab + 16;
    const int32_t half = g / 2;
    const __m256i m = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    for (int t = 0; t < kT; ++t) isum[t] = broadcast4(ab + 4);
#pragma GCC unroll 8
    for (int32_t c0 = 0; c0 < g / 8; c0 += 4, v += 128, a += 16) {  // g / 8 chunks, 4 at a time
      __m256i s16[kT];
      for (int t = 0; t < kT; ++t) s16[t] = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        const __m256i al = broadcast4(a + 4 * c), ah = broadcast4(a + half + 4 * c);
        for (int t = 0; t < kT; ++t) {
          const __m256i w = load32_8x4(v + t * tile + 32 * c);
          s16[t] = _mm256_add_epi16(s16[t], _mm256_maddubs_epi16(_mm256_and_si256(w, m), al));
          s16[t] = _mm256_add_epi16(
              s16[t], _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(w, 4), m), ah));
        }
      }
      for (int t = 0; t < kT; ++t)
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(s16[t], ones));
    }
  }
};

struct Q8Avx2 {
  template <int32_t kG, int kT>
  static void group(const uint8_t* v, size_t tile, const int8_t* ab, int32_t g_runtime,
                    __m256i* isum) {
    const int32_t g = kG > 0 ? kG : g_runtime;
    const int8_t* a = ab + 16;
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s0[kT], s1[kT];  // even and odd chunks (g / 4 is even)
    for (int t = 0; t < kT; ++t) s0[t] = s1[t] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int32_t c = 0; c < g / 4; c += 2, v += 64, a += 8) {
      const __m256i a0 = broadcast4(a), a1 = broadcast4(a + 4);
      for (int t = 0; t < kT; ++t) {
        const __m256i w0 = load32_8x4(v + t * tile), w1 = load32_8x4(v + t * tile + 32);
        s0[t] = _mm256_add_epi32(
            s0[t], _mm256_madd_epi16(
                       _mm256_maddubs_epi16(_mm256_abs_epi8(w0), _mm256_sign_epi8(a0, w0)), ones));
        s1[t] = _mm256_add_epi32(
            s1[t], _mm256_madd_epi16(
                       _mm256_maddubs_epi16(_mm256_abs_epi8(w1), _mm256_sign_epi8(a1, w1)), ones));
      }
    }
    for (int t = 0; t < kT; ++t) isum[t] = _mm256_add_epi32(s0[t], s1[t]);
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
