// AVX2 dot kernels for GGUF blocks: q4_k, q5_k, q6_k against q8k activations, q8_0, q4_0,
// q4_1, q5_0 and q5_1 against q8a (q2_k and q3_k run their scalar twins). Twins of
// dot_gguf_q8_scalar.cpp: the integer sums per block are the same integers (maddubs pair sums stay
// below 2^15: unsigned weights <= 63 times |a| <= 127, or |w| <= 128 times |a| <= 127 for q8_0's
// sign trick; madd by the sub-block scale widens to int32). Every K-quant block is scaled with the
// scalar twin's float expression, so those results equal the scalar ones bit for bit; the
// 32-element types keep 8 float lanes across blocks (one FMA per block, no horizontal sum), so
// they agree with their twins to float rounding. Offsets (q6_k's -32, q4_0's -8, q5_0's -16) are
// taken out with the activations' integer sums.
#include "kernels/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2)

#include <immintrin.h>

#include <cstring>

namespace einfer::gguf_detail {

namespace {

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

inline int32_t hsum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// acc + float(p) * scale, lane by lane (the 32-element types keep float lanes across blocks).
inline __m256 scale_add(__m256i p, float scale, __m256 acc) {
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(scale), acc);
}

inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// sum over 32 bytes of u * a * scale (u unsigned, a signed; scale per 16-byte half: lo, hi).
inline __m256i scaled_dot(__m256i u, __m256i a, __m256i scale16) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, a), scale16);
}

inline __m256i splat16(int lo, int hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)),
                          _mm_set1_epi16(static_cast<int16_t>(lo)));
}

// q4_k / q5_k: 8 sub-blocks of 32, 6-bit scales and mins.
template <bool kFive>
float dot_q45k(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8K* a = static_cast<const BlockQ8K*>(act);
  const size_t bytes = kFive ? 176 : 144;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i bit5 = _mm256_set1_epi8(0x10);
  float acc = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * bytes;
    const float d = load_f16(b), dmin = load_f16(b + 2);
    int sc[8], mn[8];
    for (int s = 0; s < 8; ++s) kquant_scale_min(b + 4, s, &sc[s], &mn[s]);
    int32_t summ = 0;
    for (int s = 0; s < 8; ++s) summ += mn[s] * (a[i].bsums[2 * s] + a[i].bsums[2 * s + 1]);
    const uint8_t* qs = b + (kFive ? 48 : 16);
    __m256i qh;
    if (kFive) qh = load32(b + 16);
    __m256i sum = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i v = load32(qs + 32 * j);
      __m256i lo = _mm256_and_si256(v, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
      if (kFive) {
        const __m256i bl = _mm256_set1_epi8(static_cast<char>(1 << (2 * j)));
        const __m256i bh = _mm256_set1_epi8(static_cast<char>(1 << (2 * j + 1)));
        lo = _mm256_or_si256(
            lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bl), bl), bit5));
        hi = _mm256_or_si256(
            hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bh), bh), bit5));
      }
      sum = _mm256_add_epi32(
          sum, scaled_dot(lo, load32(a[i].qs + 64 * j), splat16(sc[2 * j], sc[2 * j])));
      sum = _mm256_add_epi32(sum, scaled_dot(hi, load32(a[i].qs + 64 * j + 32),
                                             splat16(sc[2 * j + 1], sc[2 * j + 1])));
    }
    const int32_t sumi = hsum(sum);
    acc += a[i].d * (d * static_cast<float>(sumi) - dmin * static_cast<float>(summ));
  }
  return acc;
}

// q6_k: values u in [0, 63] (stored value + 32), 16 sub-blocks of 16 with int8 scales.
float dot_q6k(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8K* a = static_cast<const BlockQ8K*>(act);
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  float acc = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * 210;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    int32_t offset = 0;
    for (int s = 0; s < 16; ++s) offset += sc[s] * a[i].bsums[s];
    __m256i sum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i q0 = load32(b + 64 * h), q1 = load32(b + 64 * h + 32);
      const __m256i qh = load32(b + 128 + 32 * h);
      const __m256i u[4] = {
          _mm256_or_si256(_mm256_and_si256(q0, m4),
                          _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x03)), 4)),
          _mm256_or_si256(_mm256_and_si256(q1, m4),
                          _mm256_slli_epi16(_mm256_and_si256(qh, _mm256_set1_epi8(0x0C)), 2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q0, 4), m4),
                          _mm256_and_si256(qh, _mm256_set1_epi8(0x30))),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q1, 4), m4),
                          _mm256_srli_epi16(
                              _mm256_and_si256(qh, _mm256_set1_epi8(static_cast<char>(0xC0))), 2))};
      for (int g = 0; g < 4; ++g) {
        const int s = 8 * h + 2 * g;
        sum = _mm256_add_epi32(
            sum, scaled_dot(u[g], load32(a[i].qs + 128 * h + 32 * g), splat16(sc[s], sc[s + 1])));
      }
    }
    const int32_t sumi = hsum(sum) - 32 * offset;
    acc += a[i].d * (load_f16(b + 208) * static_cast<float>(sumi));
  }
  return acc;
}

float dot_q8_0(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8A* a = static_cast<const BlockQ8A*>(act);
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * 34;
    const __m256i wv = load32(b + 2);
    const __m256i av = load32(a[i].qs);
    const __m256i p = _mm256_madd_epi16(
        _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(av, wv)), ones);
    acc = scale_add(p, a[i].d * load_f16(b), acc);
  }
  return hsum_ps(acc);
}

float dot_q4_0(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8A* a = static_cast<const BlockQ8A*>(act);
  const __m256i ones = _mm256_set1_epi16(1);
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * 18;
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
    const __m256i u =
        _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(x, 4), m4), _mm_and_si128(x, m4));
    // dot(u - 8, a): the 8 lanes each give back sum(a) (8 * isum in all).
    const __m256i p =
        _mm256_sub_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(u, load32(a[i].qs)), ones),
                         _mm256_set1_epi32(a[i].isum));
    acc = scale_add(p, a[i].d * load_f16(b), acc);
  }
  return hsum_ps(acc);
}

// bytes 0xFF where bit e of `bits` is set, element e in byte e (32 elements).
inline __m256i bytes_from_bits(uint32_t bits) {
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                             0x0202020202020202, 0x0303030303030303));
  const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
}

// q4_1 (kFive false) and q5_0 / q5_1: unsigned values u, then the offset: q5_0 subtracts 16 per
// element (16 * isum), the types with m add m * isum (dmin = -m, as the scalar twin keeps it).
template <bool kFive, bool kMin>
float dot_q45_legacy(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8A* a = static_cast<const BlockQ8A*>(act);
  constexpr size_t bytes = kFive ? (kMin ? 24 : 22) : 20;
  const __m256i ones = _mm256_set1_epi16(1);
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  float offset = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * bytes;
    const uint8_t* qh = b + (kMin ? 4 : 2);
    const uint8_t* qs = qh + (kFive ? 4 : 0);
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    __m256i u = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(x, 4), m4), _mm_and_si128(x, m4));
    if (kFive) {
      uint32_t high;
      std::memcpy(&high, qh, 4);
      u = _mm256_or_si256(u, _mm256_and_si256(bytes_from_bits(high), _mm256_set1_epi8(0x10)));
    }
    __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(u, load32(a[i].qs)), ones);
    if (kMin) {
      offset += a[i].d * (load_f16(b + 2) * static_cast<float>(a[i].isum));
    } else {
      p = _mm256_sub_epi32(p, _mm256_set1_epi32(2 * a[i].isum));  // 16 * isum over 8 lanes
    }
    acc = scale_add(p, a[i].d * load_f16(b), acc);
  }
  return hsum_ps(acc) + offset;
}

}  // namespace

DotFn dot_kernel_simd(DType dtype) {
  switch (dtype) {
    case DType::q4_k:
      return dot_q45k<false>;
    case DType::q5_k:
      return dot_q45k<true>;
    case DType::q6_k:
      return dot_q6k;
    case DType::q8_0:
      return dot_q8_0;
    case DType::q4_0:
      return dot_q4_0;
    case DType::q4_1:
      return dot_q45_legacy<false, true>;
    case DType::q5_0:
      return dot_q45_legacy<true, false>;
    case DType::q5_1:
      return dot_q45_legacy<true, true>;
    default:
      return nullptr;
  }
}

}  // namespace einfer::gguf_detail

#endif  // EINFER_GGUF_AVX2
