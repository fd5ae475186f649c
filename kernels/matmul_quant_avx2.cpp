// AVX2 microkernels of matmul_f32_quant: int8 x int8 (q8 weights) and int4 x int8 (q4 weights)
// group dot products in int32, scaled once per group into float accumulators.
//
// Signed x signed on AVX2: maddubs wants an unsigned first operand, so q8 uses |w| and sign(a, w)
// (|w| <= 128, |a| <= 127: a pair sum <= 32512 never saturates). q4 nibbles u in [0, 15] are already
// unsigned: dot(u - 8, a) = dot(u, a) - dot(8, a), where dot(8, a) is shared by all weight rows.
// With AVX-VNNI compiled in (__AVXVNNI__) vpdpbusd replaces maddubs + madd.
#include "kernels/matmul_quant_impl.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include <immintrin.h>

#include <cstring>

#include "kernels/matmul_quant_tiles.h"

namespace einfer::quant_detail {
namespace {

float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// int32 x 8 partial sums of u (unsigned bytes) . s (signed bytes), four products per lane.
inline __m256i dot_u8s8(__m256i u, __m256i s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}
inline __m256i dot_u8s8(__m256i acc, __m256i u, __m256i s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  return _mm256_add_epi32(acc, dot_u8s8(u, s));
#endif
}

// q4 partial sums: int16 pairs on plain AVX2 (fits 8 chunks), int32 with VNNI.
inline __m256i dot_u4s8(__m256i u, __m256i s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_maddubs_epi16(u, s);
#endif
}
inline __m256i dot_u4s8(__m256i acc, __m256i u, __m256i s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, s));
#endif
}
// int32 x 8 of dot(u, a) - dot(8, a).
inline __m256i finish_u4s8(__m256i usum, __m256i psum) {
#if defined(__AVXVNNI__)
  return _mm256_sub_epi32(usum, psum);
#else
  return _mm256_madd_epi16(_mm256_sub_epi16(usum, psum), _mm256_set1_epi16(1));
#endif
}

// 32 nibbles of 16 bytes as bytes 0..15 = low nibbles (even elements), 16..31 = high (odd):
// the 16 bytes go to both halves, the upper half shifted right by 4.
inline __m256i unpack_nibbles(const uint8_t* b16) {
  const __m256i both =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b16)));
  const __m256i shifted = _mm256_srlv_epi64(both, _mm256_set_epi64x(4, 4, 0, 0));
  return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
}

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// acc[i][j] += float(isum[i][j]) * sw[j] * sa[i]: the group's one float scaling.
template <int MR, int NR>
inline void scale_group(const QuantGemm& p, int64_t i0, int64_t j0, int64_t g,
                        const __m256i (&isum)[MR][NR], __m256 (&acc)[MR][NR]) {
  __m256 sa[MR];
  for (int i = 0; i < MR; ++i) sa[i] = _mm256_broadcast_ss(p.sa + (i0 + i) * p.groups + g);
  for (int j = 0; j < NR; ++j) {
    const __m256 sw = _mm256_broadcast_ss(p.sw + (j0 + j) * p.groups + g);
    for (int i = 0; i < MR; ++i) {
      acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(isum[i][j]), sw), sa[i], acc[i][j]);
    }
  }
}

template <int MR, int NR>
inline void store_tile(const QuantGemm& p, int64_t i0, int64_t j0, const __m256 (&acc)[MR][NR]) {
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) p.c[(i0 + i) * p.ldc + j0 + j] = hsum(acc[i][j]);
  }
}

struct Q8Avx2 {
  // One 32-element chunk of the tile. The unsigned operand is |w| rather than |a|: sign(w, a)
  // would overflow for w = -128 (outside what quantize_row_q8 writes, but legal int8 data).
  template <int MR, int NR, bool kFirst>
  static void chunk(const QuantGemm& p, int64_t i0, int64_t e, const int8_t* const (&wp)[NR],
                    __m256i (&isum)[MR][NR]) {
    __m256i w[NR], wabs[NR];
    for (int j = 0; j < NR; ++j) {
      w[j] = load32(wp[j]);
      wabs[j] = _mm256_abs_epi8(w[j]);  // |-128| = 128 as unsigned: exact for every int8
    }
    for (int i = 0; i < MR; ++i) {
      const __m256i a = load32(p.qa + (i0 + i) * p.kpad + e);
      for (int j = 0; j < NR; ++j) {
        const __m256i s = _mm256_sign_epi8(a, w[j]);
        isum[i][j] = kFirst ? dot_u8s8(wabs[j], s) : dot_u8s8(isum[i][j], wabs[j], s);
      }
    }
  }

  template <int MR, int NR>
  static void tile(const QuantGemm& p, int64_t i0, int64_t j0) {
    const int64_t kfull = p.k / kChunk * kChunk;
    const int8_t* wr[NR];
    alignas(32) int8_t wtail[NR][kChunk];  // zero-padded last partial chunk of each weight row
    for (int j = 0; j < NR; ++j) {
      wr[j] = reinterpret_cast<const int8_t*>(p.w + (j0 + j) * p.w_row_bytes);
      if (kfull != p.k) {
        std::memset(wtail[j], 0, kChunk);
        std::memcpy(wtail[j], wr[j] + kfull, static_cast<size_t>(p.k - kfull));
      }
    }
    __m256 acc[MR][NR];
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
    }
    for (int64_t g = 0, g0 = 0; g < p.groups; ++g, g0 += p.group) {
      const int64_t g1 = g0 + p.group < p.k ? g0 + p.group : p.k;
      __m256i isum[MR][NR] = {};  // first chunk assigns; = {} quiets -Wmaybe-uninitialized
      for (int64_t e = g0; e < g1; e += kChunk) {
        const int8_t* wp[NR];
        for (int j = 0; j < NR; ++j) wp[j] = e < kfull ? wr[j] + e : wtail[j];
        if (e == g0) {
          chunk<MR, NR, true>(p, i0, e, wp, isum);
        } else {
          chunk<MR, NR, false>(p, i0, e, wp, isum);
        }
      }
      scale_group<MR, NR>(p, i0, j0, g, isum, acc);
    }
    store_tile<MR, NR>(p, i0, j0, acc);
  }
};

struct Q4Avx2 {
  template <int MR, int NR, bool kFirst>
  static void chunk(const QuantGemm& p, int64_t i0, int64_t e, const uint8_t* const (&wp)[NR],
                    __m256i (&usum)[MR][NR], __m256i (&psum)[MR]) {
    const __m256i eight = _mm256_set1_epi8(8);
    __m256i u[NR];
    for (int j = 0; j < NR; ++j) u[j] = unpack_nibbles(wp[j]);
    for (int i = 0; i < MR; ++i) {
      const __m256i a = load32(p.qa + (i0 + i) * p.kpad + e);  // even/odd chunk order
      psum[i] = kFirst ? dot_u4s8(eight, a) : dot_u4s8(psum[i], eight, a);
      for (int j = 0; j < NR; ++j) {
        usum[i][j] = kFirst ? dot_u4s8(u[j], a) : dot_u4s8(usum[i][j], u[j], a);
      }
    }
  }

  template <int MR, int NR>
  static void tile(const QuantGemm& p, int64_t i0, int64_t j0) {
    const int64_t kfull = p.k / kChunk * kChunk;
    const uint8_t* wr[NR];
    alignas(16) uint8_t wtail[NR][kChunk / 2];
    for (int j = 0; j < NR; ++j) {
      wr[j] = p.w + (j0 + j) * p.w_row_bytes;
      if (kfull != p.k) {
        std::memset(wtail[j], 0, kChunk / 2);
        std::memcpy(wtail[j], wr[j] + kfull / 2, p.w_row_bytes - static_cast<size_t>(kfull / 2));
      }
    }
    __m256 acc[MR][NR];
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
    }
    for (int64_t g = 0, g0 = 0; g < p.groups; ++g, g0 += p.group) {
      const int64_t g1 = g0 + p.group < p.k ? g0 + p.group : p.k;
      __m256i usum[MR][NR] = {}, psum[MR] = {};
      for (int64_t e = g0; e < g1; e += kChunk) {
        const uint8_t* wp[NR];
        for (int j = 0; j < NR; ++j) wp[j] = e < kfull ? wr[j] + e / 2 : wtail[j];
        if (e == g0) {
          chunk<MR, NR, true>(p, i0, e, wp, usum, psum);
        } else {
          chunk<MR, NR, false>(p, i0, e, wp, usum, psum);
        }
      }
      for (int i = 0; i < MR; ++i) {
        for (int j = 0; j < NR; ++j) usum[i][j] = finish_u4s8(usum[i][j], psum[i]);
      }
      scale_group<MR, NR>(p, i0, j0, g, usum, acc);
    }
    store_tile<MR, NR>(p, i0, j0, acc);
  }
};

}  // namespace

void q8q8_matmul_avx2(const QuantGemm& p) { run_tiles<Q8Avx2, 4, 4, 1>(p); }
void q4q8_matmul_avx2(const QuantGemm& p) { run_tiles<Q4Avx2, 4, 4, 1>(p); }

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
