// AVX-512 VNNI decode GEMVs (m == 1) of the 8x4 weight layout, bit-identical to
// gemm_q8/q4_interleaved_scalar: the tile loop and float step are gemv_8x4_driver.h's, this file
// has the group's int32 dot products of 8 rows (lane = row) with vpdpbusd on ymm, which adds four
// unsigned x signed byte products to each int32 lane without an int16 stage:
// - q4: the low nibbles (and 0x0F) against the group's first half of activations, in a sum
//   started from the header's -8 sum(a); the high nibbles left in place (and 0xF0, 16 u) against
//   the second half, in a second sum that is exactly 16 times theirs, shifted back right by 4.
//   Four instructions per 32 weight bytes, no shift per chunk.
// - q8: the weights turned unsigned, w + 128 (xor 0x80), against the activations in one vpdpbusd
//   per chunk, from the header's -128 sum(a): dot(w + 128, a) - 128 sum(a) = dot(w, a).
// The 4 activation bytes of a chunk are a 32-bit broadcast (EVEX embedded broadcast).
//
// The rest of the build may target plain x86-64-v3: this file compiles its kernels for AVX-512
// VNNI with a target pragma, and gemm_quant_dispatch.cpp calls them only when the ISA selection
// includes the avx512vnni extension. GCC only (clang has no `#pragma GCC target`).
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)

#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")

#include "kernels/gemm_quant/x86/gemv_8x4_driver.h"

namespace einfer::quant_detail {
namespace {

// acc + the dot products of u (unsigned bytes) with the 4 signed activation bytes at a, broadcast
// by the instruction itself (EVEX {1to8}): GCC emits a separate vpbroadcastd for the intrinsic
// form, a dispatched operation per dot product.
inline __m256i dpbusd_bcast(__m256i acc, __m256i u, const int8_t* a) {
  asm("vpdpbusd %2%{1to8%}, %1, %0"
      : "+v"(acc)
      : "v"(u), "m"(*reinterpret_cast<const int32_t*>(a)));
  return acc;
}

// Each group function returns the tile's 8 row sums of one group (v: its values, ab: its
// activation block). Even and odd chunks go to separate sums: the chains of dependent vpdpbusd
// stay short (2 for a group of 32), or the group's convert waited on them with the scheduler full.
struct Q4Vnni {
  template <int32_t kG>
  static __m256i group(const uint8_t* v, const int8_t* ab, int32_t g_runtime) {
    const int32_t g = kG > 0 ? kG : g_runtime;
    const int8_t* a = ab + 16;
    const int32_t half = g / 2;
    const __m256i m = _mm256_set1_epi8(0x0F), zero = _mm256_setzero_si256();
    __m256i lo0 = broadcast4(ab + 4), lo1 = zero, hi0 = zero, hi1 = zero;
#pragma GCC unroll 4
    for (int32_t c = 0; c < g / 8; c += 2, v += 64, a += 8) {  // g / 8 chunks, 2 at a time
      __m256i w0 = load32_8x4(v), w1 = load32_8x4(v + 32);
      asm("" : "+v"(w0), "+v"(w1));  // one load each, not one per mask
      lo0 = dpbusd_bcast(lo0, _mm256_and_si256(w0, m), a);
      hi0 = dpbusd_bcast(hi0, _mm256_andnot_si256(m, w0), a + half);
      lo1 = dpbusd_bcast(lo1, _mm256_and_si256(w1, m), a + 4);
      hi1 = dpbusd_bcast(hi1, _mm256_andnot_si256(m, w1), a + half + 4);
    }
    return _mm256_add_epi32(_mm256_add_epi32(lo0, lo1),
                            _mm256_srai_epi32(_mm256_add_epi32(hi0, hi1), 4));
  }
};

struct Q8Vnni {
  template <int32_t kG>
  static __m256i group(const uint8_t* v, const int8_t* ab, int32_t g_runtime) {
    const int32_t g = kG > 0 ? kG : g_runtime;
    const int8_t* a = ab + 16;
    const __m256i x80 = _mm256_set1_epi8(-128), zero = _mm256_setzero_si256();
    __m256i s[4] = {broadcast4(ab + 8), zero, zero, zero};  // chunks 4i + q in s[q]
#pragma GCC unroll 4
    for (int32_t c = 0; c < g / 4; c += 4, v += 128, a += 16) {  // g / 4 is a multiple of 4
      for (int q = 0; q < 4; ++q)
        s[q] = dpbusd_bcast(s[q], _mm256_xor_si256(load32_8x4(v + 32 * q), x80), a + 4 * q);
    }
    return _mm256_add_epi32(_mm256_add_epi32(s[0], s[1]), _mm256_add_epi32(s[2], s[3]));
  }
};

}  // namespace

void gemv_q8_8x4_avx512vnni(const QuantGemm& p) {
  gemv_8x4_run<Q8Vnni, false>(p);
}
void gemv_q4_8x4_avx512vnni(const QuantGemm& p) {
  gemv_8x4_run<Q4Vnni, true>(p);
}

}  // namespace einfer::quant_detail

#pragma GCC pop_options

#endif
