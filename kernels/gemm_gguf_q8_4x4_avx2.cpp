// AVX2 GGUF block kernels, 4 weight rows x 1-4 activation rows per pass (decode: 4x1, prefill:
// 4x4), for all ten block types. Twins of dot_gguf_q8_scalar.cpp, bit for bit: each block's
// integer sums are the same exact int32 (maddubs pair sums stay below 2^15: unsigned weights
// <= 63 times |a| <= 127, or |w| <= 128 times |a| <= 127 for q8_0's sign trick; madd by the
// sub-block scale widens to int32), and the per-block float expression of the scalar kernel,
// acc += da * (d * sumi - dmin * summ), runs with the four weight rows in the four lanes of one
// SSE register. What the four rows share is done once: the activation loads and their per-block
// sums (mins and offsets are folded with the q8 block's bsums / isum, never per element), the
// horizontal reduction (one hadd tree for four rows), the f16 scale conversion (one vcvtph2ps);
// the 6-bit scale/min unpack runs on 32-bit words. With several activation rows each weight block
// is unpacked once for all of them.
#include "kernels/gguf_quant_internal.h"
#include "kernels/gguf_rows_table.h"

#if defined(EINFER_GGUF_AVX2)

#include <immintrin.h>

#include <cstring>

namespace einfer::gguf_detail {

namespace {

constexpr size_t kPrefetchBytes = 8192;  // as the q4 GEMV (gemm_q8_q4_4x4_avx2.cpp) measured

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
inline __m128i load16(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// [sum(s0), sum(s1), sum(s2), sum(s3)]: one hadd tree for the four weight rows.
inline __m128i reduce4(__m256i s0, __m256i s1, __m256i s2, __m256i s3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// The f16 pair (d, dmin) at byte `at` of each row's block, converted at once.
inline void f16_pairs(const uint8_t* const* b, size_t at, __m128* d, __m128* dmin) {
  const __m256 f = _mm256_cvtph_ps(
      _mm_setr_epi32(static_cast<int>(load_u32(b[0] + at)), static_cast<int>(load_u32(b[1] + at)),
                     static_cast<int>(load_u32(b[2] + at)), static_cast<int>(load_u32(b[3] + at))));
  const __m128 lo = _mm256_castps256_ps128(f), hi = _mm256_extractf128_ps(f, 1);
  *d = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
  *dmin = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
}
// One f16 at byte `at` (a block's last two bytes: no 4-byte load past its end).
inline __m128 f16_single(const uint8_t* const* b, size_t at) {
  return _mm_cvtph_ps(_mm_setr_epi16(static_cast<int16_t>(load_u16(b[0] + at)),
                                     static_cast<int16_t>(load_u16(b[1] + at)),
                                     static_cast<int16_t>(load_u16(b[2] + at)),
                                     static_cast<int16_t>(load_u16(b[3] + at)), 0, 0, 0, 0));
}

// Scale vectors of the types with 16-element sub-blocks (q2_k, q3_k, q6_k): a 32-element chunk
// (h, g) holds sub-blocks 8h + 2g (low 128-bit half) and 8h + 2g + 1 (high half); its madd operand
// is those two int16 scales, each repeated over its half. sc16: the 16 scales as int16.
struct Scales16 {
  __m256i half[2];  // scales 0-7 (resp. 8-15) in both 128-bit halves
  explicit Scales16(__m256i sc16)
      : half{_mm256_permute2x128_si256(sc16, sc16, 0x00),
             _mm256_permute2x128_si256(sc16, sc16, 0x11)} {}
  __m256i pair(int h, int g) const {
    const short lo = static_cast<short>(((4 * g + 1) << 8) | (4 * g));
    const short hi = static_cast<short>(((4 * g + 3) << 8) | (4 * g + 2));
    return _mm256_shuffle_epi8(half[h], _mm256_set_m128i(_mm_set1_epi16(hi), _mm_set1_epi16(lo)));
  }
};

// An opaque point for the accumulator: GCC would otherwise reassociate each row's chain of adds
// into one tree after all products, holding (spilling) every product until the end.
inline __m256i keep(__m256i v) {
  __asm__("" : "+x"(v));
  return v;
}

// sum over 32 bytes of u * a * scale (u unsigned, a signed), as 8 int32 lanes.
inline __m256i scaled_dot(__m256i u, __m256i a, __m256i scale16) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, a), scale16);
}

// Bytes 0xFF where bit e of `bits` is set, element e in byte e (32 elements).
inline __m256i bytes_from_bits(uint32_t bits) {
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                             0x0202020202020202, 0x0303030303030303));
  const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
}

// ---- per-type block sums: s[ia] = the four rows' sumi, m[ia] = their summ (types with mins) ----

// q4_k / q5_k: 8 sub-blocks of 32, 6-bit scales and mins, unpacked for the four rows at once on
// 32-bit words (the 12 bytes of each row transposed into lanes).
template <bool kFive>
struct Q45K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = kFive ? 176 : 144;
  static constexpr bool kMin = true;
  static void scales(const uint8_t* const* b, __m128* d, __m128* dmin) { f16_pairs(b, 0, d, dmin); }
  // sc01 / sc23: the 8 scales of rows 0, 1 (resp. 2, 3), bytes 0-7 and 8-15; mn the same for the
  // mins.
  static void unpack_scales(const uint8_t* const* b, __m128i* sc01, __m128i* sc23, __m128i* mn01,
                            __m128i* mn23) {
    const __m128i x0 = load16(b[0] + 4), x1 = load16(b[1] + 4), x2 = load16(b[2] + 4),
                  x3 = load16(b[3] + 4);
    const __m128i t0 = _mm_unpacklo_epi32(x0, x1), t1 = _mm_unpacklo_epi32(x2, x3);
    const __m128i t2 = _mm_unpackhi_epi32(x0, x1), t3 = _mm_unpackhi_epi32(x2, x3);
    const __m128i u0 = _mm_unpacklo_epi64(t0, t1), u1 = _mm_unpackhi_epi64(t0, t1);
    const __m128i u2 = _mm_unpacklo_epi64(t2, t3);  // word k of row r in lane r
    const __m128i m6 = _mm_set1_epi8(0x3F), m4 = _mm_set1_epi8(0x0F), top = _mm_set1_epi8(0x30);
    const __m128i sc_lo = _mm_and_si128(u0, m6), mn_lo = _mm_and_si128(u1, m6);
    const __m128i sc_hi =
        _mm_or_si128(_mm_and_si128(u2, m4), _mm_and_si128(_mm_srli_epi32(u0, 2), top));
    const __m128i mn_hi = _mm_or_si128(_mm_and_si128(_mm_srli_epi32(u2, 4), m4),
                                       _mm_and_si128(_mm_srli_epi32(u1, 2), top));
    *sc01 = _mm_unpacklo_epi32(sc_lo, sc_hi);
    *sc23 = _mm_unpackhi_epi32(sc_lo, sc_hi);
    *mn01 = _mm_unpacklo_epi32(mn_lo, mn_hi);
    *mn23 = _mm_unpackhi_epi32(mn_lo, mn_hi);
  }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, __m128i* s, __m128i* m) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i bit5 = _mm256_set1_epi8(0x10);
    __m128i sc01, sc23, mn01, mn23;
    unpack_scales(b, &sc01, &sc23, &mn01, &mn23);
    // Scale j of row r as the int16 pair (s, s) in scl[r][j], loaded back by broadcasts (memory
    // operands: no shuffle per sub-block). Byte k of a 128-bit half -> int32 lane (k, 0, k, 0).
    alignas(32) int32_t scl[4][8];
    const __m256i lo_rows =
        _mm256_setr_epi8(0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1, 4, -1, 4, -1, 5,
                         -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1);
    const __m256i hi_rows =
        _mm256_setr_epi8(8, -1, 8, -1, 9, -1, 9, -1, 10, -1, 10, -1, 11, -1, 11, -1, 12, -1, 12, -1,
                         13, -1, 13, -1, 14, -1, 14, -1, 15, -1, 15, -1);
    const __m256i s01 = _mm256_broadcastsi128_si256(sc01), s23 = _mm256_broadcastsi128_si256(sc23);
    _mm256_store_si256(reinterpret_cast<__m256i*>(scl[0]), _mm256_shuffle_epi8(s01, lo_rows));
    _mm256_store_si256(reinterpret_cast<__m256i*>(scl[1]), _mm256_shuffle_epi8(s01, hi_rows));
    _mm256_store_si256(reinterpret_cast<__m256i*>(scl[2]), _mm256_shuffle_epi8(s23, lo_rows));
    _mm256_store_si256(reinterpret_cast<__m256i*>(scl[3]), _mm256_shuffle_epi8(s23, hi_rows));
    __asm__("" : "+m"(scl));  // keep the table in memory: broadcasts load from it
    // Mins: rows 0, 1 (resp. 2, 3) in the two 128-bit halves, times the activation sums of each
    // 32-element sub-block, reduced to [r0, r1, r2, r3].
    const __m256i mins01 = _mm256_cvtepu8_epi16(mn01), mins23 = _mm256_cvtepu8_epi16(mn23);
    for (int ia = 0; ia < NA; ++ia) {
      const __m256i pair_sums = _mm256_broadcastsi128_si256(
          _mm_hadd_epi16(load16(a[ia]->bsums), load16(a[ia]->bsums + 8)));
      const __m256i h = _mm256_hadd_epi32(_mm256_madd_epi16(mins01, pair_sums),
                                          _mm256_madd_epi16(mins23, pair_sums));
      const __m256i h2 = _mm256_hadd_epi32(h, h);  // [r0 r2 r0 r2 | r1 r3 r1 r3]
      m[ia] = _mm_unpacklo_epi32(_mm256_castsi256_si128(h2), _mm256_extracti128_si256(h2, 1));
    }
    __m256i acc[NA][4], qh[4];
    for (int r = 0; r < 4; ++r) {
      qh[r] = kFive ? load32(b[r] + 16) : _mm256_setzero_si256();
      for (int ia = 0; ia < NA; ++ia) acc[ia][r] = _mm256_setzero_si256();
    }
    // Chunk j of row r: 64 weights (sub-blocks 2j, 2j + 1) against activation chunk j.
    auto chunk = [&](int r, int j, const __m256i* a_lo, const __m256i* a_hi) {
      const __m256i v = load32(b[r] + (kFive ? 48 : 16) + 32 * j);
      __m256i lo = _mm256_and_si256(v, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      if (kFive) {  // bit 2j of qh is lo's fifth bit, bit 2j + 1 hi's
        lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(qh[r], 4), bit5));
        hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(qh[r], 3), bit5));
        qh[r] = _mm256_srli_epi16(qh[r], 2);
      }
      const __m256i sl = _mm256_set1_epi32(scl[r][2 * j]);
      const __m256i sh = _mm256_set1_epi32(scl[r][2 * j + 1]);
      for (int ia = 0; ia < NA; ++ia) {
        const __m256i p =
            _mm256_add_epi32(scaled_dot(lo, a_lo[ia], sl), scaled_dot(hi, a_hi[ia], sh));
        acc[ia][r] = keep(_mm256_add_epi32(acc[ia][r], p));
      }
    };
    // One activation row: chunks in activation order, the four rows sharing each activation load;
    // several: rows outer (the accumulators of all rows would not fit the 16 registers).
    if constexpr (NA == 1) {
      for (int j = 0; j < 4; ++j) {
        const __m256i a_lo = load32(a[0]->qs + 64 * j), a_hi = load32(a[0]->qs + 64 * j + 32);
        for (int r = 0; r < 4; ++r) chunk(r, j, &a_lo, &a_hi);
      }
    } else {
      for (int r = 0; r < 4; ++r)
        for (int j = 0; j < 4; ++j) {
          __m256i a_lo[NA], a_hi[NA];
          for (int ia = 0; ia < NA; ++ia) {
            a_lo[ia] = load32(a[ia]->qs + 64 * j);
            a_hi[ia] = load32(a[ia]->qs + 64 * j + 32);
          }
          chunk(r, j, a_lo, a_hi);
        }
    }
    for (int ia = 0; ia < NA; ++ia) s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
  }
};

// q6_k: values u in [0, 63] (stored value + 32), 16 sub-blocks of 16 with int8 scales; the -32
// is taken out once per block with the activation sums.
struct Q6K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = 210;
  static constexpr bool kMin = false;
  static void scales(const uint8_t* const* b, __m128* d, __m128*) { *d = f16_single(b, 208); }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, __m128i* s, __m128i*) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i top2 = _mm256_set1_epi8(0x30);
    __m256i acc[NA][4];
    for (int r = 0; r < 4; ++r) {
      const uint8_t* sc = b[r] + 192;
      const __m128i sc8 = load16(sc);
      const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
      const Scales16 scales(sc16);
      for (int ia = 0; ia < NA; ++ia)  // - 32 * sum_s scale_s * bsum_s
        acc[ia][r] =
            _mm256_sub_epi32(_mm256_setzero_si256(),
                             _mm256_slli_epi32(_mm256_madd_epi16(sc16, load32(a[ia]->bsums)), 5));
      for (int h = 0; h < 2; ++h) {
        const __m256i q0 = load32(b[r] + 64 * h), q1 = load32(b[r] + 64 * h + 32);
        const __m256i qh = load32(b[r] + 128 + 32 * h);
        // Bit pair 2g of each qh byte moved to bits 4-5 (bits shifted across bytes are masked).
        const __m256i u[4] = {_mm256_or_si256(_mm256_and_si256(q0, m4),
                                              _mm256_and_si256(_mm256_slli_epi16(qh, 4), top2)),
                              _mm256_or_si256(_mm256_and_si256(q1, m4),
                                              _mm256_and_si256(_mm256_slli_epi16(qh, 2), top2)),
                              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q0, 4), m4),
                                              _mm256_and_si256(qh, top2)),
                              _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q1, 4), m4),
                                              _mm256_and_si256(_mm256_srli_epi16(qh, 2), top2))};
        for (int g = 0; g < 4; ++g) {
          const __m256i scale = scales.pair(h, g);
          for (int ia = 0; ia < NA; ++ia)
            acc[ia][r] = keep(_mm256_add_epi32(
                acc[ia][r], scaled_dot(u[g], load32(a[ia]->qs + 128 * h + 32 * g), scale)));
        }
      }
    }
    for (int ia = 0; ia < NA; ++ia) s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
  }
};

// q2_k: 2-bit values, 16 sub-blocks of 16 with 4-bit scales (low nibble) and mins (high nibble).
struct Q2K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = 84;
  static constexpr bool kMin = true;
  static void scales(const uint8_t* const* b, __m128* d, __m128* dmin) {
    f16_pairs(b, 80, d, dmin);
  }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, __m128i* s, __m128i* m) {
    const __m256i m2 = _mm256_set1_epi8(0x03);
    const __m128i m4 = _mm_set1_epi8(0x0F);
    __m256i acc[NA][4], mins[NA][4];
    for (int r = 0; r < 4; ++r) {
      const __m128i sm = load16(b[r]);
      const __m128i sc8 = _mm_and_si128(sm, m4);
      const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), m4));
      for (int ia = 0; ia < NA; ++ia) mins[ia][r] = _mm256_madd_epi16(mn16, load32(a[ia]->bsums));
      const Scales16 scales(_mm256_cvtepu8_epi16(sc8));
      for (int ia = 0; ia < NA; ++ia) acc[ia][r] = _mm256_setzero_si256();
      for (int h = 0; h < 2; ++h) {
        __m256i q = load32(b[r] + 16 + 32 * h);
        for (int g = 0; g < 4; ++g) {
          const __m256i u = _mm256_and_si256(q, m2);
          q = _mm256_srli_epi16(q, 2);
          const __m256i scale = scales.pair(h, g);
          for (int ia = 0; ia < NA; ++ia)
            acc[ia][r] = keep(_mm256_add_epi32(
                acc[ia][r], scaled_dot(u, load32(a[ia]->qs + 128 * h + 32 * g), scale)));
        }
      }
    }
    for (int ia = 0; ia < NA; ++ia) {
      s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
      m[ia] = reduce4(mins[ia][0], mins[ia][1], mins[ia][2], mins[ia][3]);
    }
  }
};

// q3_k: u = low 2 bits | high bit << 2 in [0, 7], value u - 4; sixteen signed 6-bit scales
// unpacked on 32-bit words; the -4 is taken out once per block with the activation sums.
struct Q3K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = 110;
  static constexpr bool kMin = false;
  static void scales(const uint8_t* const* b, __m128* d, __m128*) { *d = f16_single(b, 108); }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, __m128i* s, __m128i*) {
    const __m256i m2 = _mm256_set1_epi8(0x03);
    const __m256i bit3 = _mm256_set1_epi8(0x04);
    __m256i acc[NA][4];
    for (int r = 0; r < 4; ++r) {
      const uint8_t* sb = b[r] + 96;
      const uint32_t w0 = load_u32(sb), w1 = load_u32(sb + 4), w2 = load_u32(sb + 8);
      const __m128i sc8 = _mm_sub_epi8(
          _mm_setr_epi32(static_cast<int>((w0 & 0x0F0F0F0F) | ((w2 << 4) & 0x30303030)),
                         static_cast<int>((w1 & 0x0F0F0F0F) | ((w2 << 2) & 0x30303030)),
                         static_cast<int>(((w0 >> 4) & 0x0F0F0F0F) | (w2 & 0x30303030)),
                         static_cast<int>(((w1 >> 4) & 0x0F0F0F0F) | ((w2 >> 2) & 0x30303030))),
          _mm_set1_epi8(32));
      const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
      const Scales16 scales(sc16);
      for (int ia = 0; ia < NA; ++ia)  // - 4 * sum_s scale_s * bsum_s
        acc[ia][r] =
            _mm256_sub_epi32(_mm256_setzero_si256(),
                             _mm256_slli_epi32(_mm256_madd_epi16(sc16, load32(a[ia]->bsums)), 2));
      __m256i hm = load32(b[r]);
      for (int h = 0; h < 2; ++h) {
        __m256i q = load32(b[r] + 32 + 32 * h);
        for (int g = 0; g < 4; ++g) {  // hmask bit 4h + g is the high bit of chunk (h, g)
          const __m256i u = _mm256_or_si256(_mm256_and_si256(q, m2),
                                            _mm256_and_si256(_mm256_slli_epi16(hm, 2), bit3));
          q = _mm256_srli_epi16(q, 2);
          hm = _mm256_srli_epi16(hm, 1);
          const __m256i scale = scales.pair(h, g);
          for (int ia = 0; ia < NA; ++ia)
            acc[ia][r] = keep(_mm256_add_epi32(
                acc[ia][r], scaled_dot(u, load32(a[ia]->qs + 128 * h + 32 * g), scale)));
        }
      }
    }
    for (int ia = 0; ia < NA; ++ia) s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
  }
};

// The 32-element types against q8a: unsigned values u (q8_0: the sign trick), offsets taken out
// with the block's activation sum: q4_0 -8 * isum, q5_0 -16 * isum; q4_1 / q5_1 keep m as
// dmin = -m with summ = isum, as the scalar twin does.
template <DType T>
struct Legacy {
  using Act = BlockQ8A;
  static constexpr bool kFive = T == DType::q5_0 || T == DType::q5_1;
  static constexpr bool kMin = T == DType::q4_1 || T == DType::q5_1;
  static constexpr size_t kBytes = gguf_block_bytes(T);
  static constexpr int32_t kBias = T == DType::q4_0 ? 8 : (T == DType::q5_0 ? 16 : 0);
  static void scales(const uint8_t* const* b, __m128* d, __m128* dmin) {
    if (kMin) {
      __m128 m;
      f16_pairs(b, 0, d, &m);
      *dmin = _mm_sub_ps(_mm_setzero_ps(), m);
    } else {
      *d = f16_single(b, 0);
    }
  }
  static __m256i unpack(const uint8_t* b) {
    if (T == DType::q8_0) return load32(b + 2);
    const uint8_t* qh = b + (kMin ? 4 : 2);
    // The 16 bytes in both halves (a broadcast load), the upper half shifted down a nibble: low
    // nibbles are elements 0-15, high nibbles 16-31 (bits shifted in from the next byte masked).
    const __m256i x = _mm256_broadcastsi128_si256(load16(qh + (kFive ? 4 : 0)));
    __m256i u = _mm256_and_si256(_mm256_srlv_epi32(x, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)),
                                 _mm256_set1_epi8(0x0F));
    if (kFive)
      u = _mm256_or_si256(u,
                          _mm256_and_si256(bytes_from_bits(load_u32(qh)), _mm256_set1_epi8(0x10)));
    return u;
  }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, __m128i* s, __m128i* m) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[NA][4];
    for (int r = 0; r < 4; ++r) {
      const __m256i u = unpack(b[r]);
      for (int ia = 0; ia < NA; ++ia) {
        const __m256i av = load32(a[ia]->qs);
        acc[ia][r] =
            T == DType::q8_0
                ? _mm256_madd_epi16(
                      _mm256_maddubs_epi16(_mm256_sign_epi8(u, u), _mm256_sign_epi8(av, u)), ones)
                : _mm256_madd_epi16(_mm256_maddubs_epi16(u, av), ones);
      }
    }
    for (int ia = 0; ia < NA; ++ia) {
      s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
      if (kBias) s[ia] = _mm_sub_epi32(s[ia], _mm_set1_epi32(kBias * a[ia]->isum));
      if (kMin) m[ia] = _mm_set1_epi32(a[ia]->isum);
    }
  }
};

// out[ia * 4 + r] = dot(weight row w[r], activation row ia) over nb blocks; per block
// acc += da * (d * sumi - dmin * summ) (or da * (d * sumi)), the scalar twin's expression.
template <class T, int NA>
void rows_kernel(const uint8_t* const* w, const void* act, size_t act_bytes, int64_t nb,
                 float* out) {
  using Act = typename T::Act;
  const Act* arow[NA];
  for (int ia = 0; ia < NA; ++ia)
    arow[ia] = reinterpret_cast<const Act*>(static_cast<const uint8_t*>(act) + ia * act_bytes);
  __m128 acc[NA];
  for (int ia = 0; ia < NA; ++ia) acc[ia] = _mm_setzero_ps();
  // Rows are short (a few blocks) and read four at a time, too short for the hardware prefetcher
  // to follow: the four rows are one sequential stream (rows are consecutive in the matrix), each
  // block step prefetches its share of it kPrefetchBytes ahead (past the end is harmless).
  constexpr size_t kShare = 4 * T::kBytes;
  const char* next = reinterpret_cast<const char*>(w[0]) + kPrefetchBytes;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b[4];
    for (int r = 0; r < 4; ++r) b[r] = w[r] + i * T::kBytes;
    for (size_t o = 0; o <= kShare; o += 64) _mm_prefetch(next + i * kShare + o, _MM_HINT_T0);
    const Act* a[NA];
    for (int ia = 0; ia < NA; ++ia) a[ia] = arow[ia] + i;
    __m128i s[NA], m[NA];
    T::template sums<NA>(b, a, s, m);
    __m128 d, dmin = _mm_setzero_ps();
    T::scales(b, &d, &dmin);
    for (int ia = 0; ia < NA; ++ia) {
      __m128 t = _mm_mul_ps(d, _mm_cvtepi32_ps(s[ia]));
      if (T::kMin) t = _mm_sub_ps(t, _mm_mul_ps(dmin, _mm_cvtepi32_ps(m[ia])));
      acc[ia] = _mm_add_ps(acc[ia], _mm_mul_ps(_mm_set1_ps(a[ia]->d), t));
    }
  }
  for (int ia = 0; ia < NA; ++ia) _mm_storeu_ps(out + 4 * ia, acc[ia]);
}

// The names gguf_rows_table.h builds the entry points from.
struct Isa {
  using K2 = Q2K;
  using K3 = Q3K;
  template <bool kFive>
  using K45 = Q45K<kFive>;
  using K6 = Q6K;
  template <DType T>
  using Legacy32 = Legacy<T>;
  template <class T, int NA>
  static void kernel(const uint8_t* const* w, const void* act, size_t act_bytes, int64_t nb,
                     float* out) {
    rows_kernel<T, NA>(w, act, act_bytes, nb, out);
  }
};

}  // namespace

RowsFn rows_kernel_simd(DType dtype) {
  return RowsTable<Isa>::for_type(dtype).rows;
}

DotFn dot_kernel_simd(DType dtype) {
  return RowsTable<Isa>::for_type(dtype).dot;
}

}  // namespace einfer::gguf_detail

#endif  // EINFER_GGUF_AVX2
