// Private to kernels/gguf/: what the prefill GEMMs of the 32-element GGUF types with weight rows in
// vector lanes share (gemm_gguf_legacy_16x8_avx512vnni.cpp, gemm_gguf_legacy_8x4_avx2.cpp; why and
// the bits: the AVX-512 file's top). A weight tile of Lanes rows is unpacked once per 64-block K
// slice into quads [block][quad][lane][4 bytes] of unsigned values u (value = u - bias), with each
// lane's block scale (and -m for the offset types), then every tile of activation rows meets it.
//
// The ISA file provides K: kLanes, kActRows, unpack(type, block) (the 32 values u in element
// order, one ymm) and tile<MR>(type, packed, act, act_bytes, i0, b0, b1, c, ldc, j0, nr), which
// starts from C for a slice after the first. Internal linkage: each including file compiles this
// for its own ISA (AVX2 at least).
#pragma once

#include <immintrin.h>

#include <cstring>

#include "kernels/gguf/gguf_quant_internal.h"

namespace einfer::gguf_detail {
namespace {

constexpr int64_t kLegacySlice = 64;  // blocks per packed K slice (2048 elements)

template <int Lanes>
struct alignas(64) LegacyPacked {
  uint8_t u[kLegacySlice][8][Lanes][4];  // [block][quad][lane][4 unsigned values]
  float d[kLegacySlice][Lanes];          // each lane's block scale
  float dmin[kLegacySlice][Lanes];       // q4_1 / q5_1: -m (as the twin keeps it)
};

struct LegacyType {
  size_t bytes;  // block bytes
  int32_t bias;  // u - bias is the value
  bool min;      // q4_1 / q5_1: f16 m after d
  bool five;     // q5_0 / q5_1: 4 bytes of fifth bits before the nibbles
  bool eight;    // q8_0: 32 int8, u = w + 128
};

inline LegacyType legacy_type(DType t) {
  switch (t) {
    case DType::q8_0:
      return {34, 128, false, false, true};
    case DType::q4_0:
      return {18, 8, false, false, false};
    case DType::q5_0:
      return {22, 16, false, true, false};
    case DType::q4_1:
      return {20, 0, true, false, false};
    default:  // q5_1
      return {24, 0, true, true, false};
  }
}

inline float legacy_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

inline int32_t legacy_i32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The nibbles of a block: low ones (elements 0-15) in the low 128 bits, high ones (16-31) above.
inline __m256i legacy_nibbles(const LegacyType& t, const uint8_t* b) {
  const uint8_t* qs = b + (t.min ? 4 : 2) + (t.five ? 4 : 0);
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(v, m4)),
                                 _mm_and_si128(_mm_srli_epi16(v, 4), m4), 1);
}

// 8 rows of 8 dwords -> out[q]: dword q of rows 0..7.
inline void legacy_transpose8x8(const __m256i (&z)[8], __m256i (&out)[8]) {
  __m256i t[8], v[8];
  for (int r = 0; r < 8; r += 2) {
    t[r] = _mm256_unpacklo_epi32(z[r], z[r + 1]);
    t[r + 1] = _mm256_unpackhi_epi32(z[r], z[r + 1]);
  }
  for (int h = 0; h < 8; h += 4) {
    v[h] = _mm256_unpacklo_epi64(t[h], t[h + 2]);
    v[h + 1] = _mm256_unpackhi_epi64(t[h], t[h + 2]);
    v[h + 2] = _mm256_unpacklo_epi64(t[h + 1], t[h + 3]);
    v[h + 3] = _mm256_unpackhi_epi64(t[h + 1], t[h + 3]);
  }
  for (int q = 0; q < 4; ++q) {
    out[q] = _mm256_permute2x128_si256(v[q], v[q + 4], 0x20);
    out[q + 4] = _mm256_permute2x128_si256(v[q], v[q + 4], 0x31);
  }
}

// Rows j0 .. j0 + nr (the lanes past nr zero) over blocks [b0, b1).
template <class K>
void legacy_pack(const LegacyType& t, const uint8_t* w, size_t w_row, int64_t j0, int nr,
                 int64_t b0, int64_t b1, LegacyPacked<K::kLanes>* p) {
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t s = b - b0;
    for (int l0 = 0; l0 < K::kLanes; l0 += 8) {
      __m256i z[8], out[8];
      for (int r = 0; r < 8; ++r)
        z[r] = l0 + r < nr ? K::unpack(t, w + (j0 + l0 + r) * w_row + b * t.bytes)
                           : _mm256_setzero_si256();
      legacy_transpose8x8(z, out);
      for (int q = 0; q < 8; ++q)
        _mm256_store_si256(reinterpret_cast<__m256i*>(p->u[s][q][l0]), out[q]);
    }
    for (int lane = 0; lane < K::kLanes; ++lane) {
      const uint8_t* blk = w + (j0 + lane) * w_row + b * t.bytes;
      p->d[s][lane] = lane < nr ? legacy_f16(blk) : 0.f;
      p->dmin[s][lane] = lane < nr && t.min ? -legacy_f16(blk + 2) : 0.f;
    }
  }
}

template <class K, int MR>
void legacy_tile_rows(int rows, const LegacyType& t, const LegacyPacked<K::kLanes>& p,
                      const uint8_t* act, size_t act_bytes, int64_t i0, int64_t b0, int64_t b1,
                      float* c, int64_t ldc, int64_t j0, int nr) {
  if constexpr (MR > 1) {
    if (rows < MR) {
      legacy_tile_rows<K, MR - 1>(rows, t, p, act, act_bytes, i0, b0, b1, c, ldc, j0, nr);
      return;
    }
  }
  K::template tile<MR>(t, p, act, act_bytes, i0, b0, b1, c, ldc, j0, nr);
}

// Weight tiles outside, K slices, then activation tiles (the packed slice stays in L1/L2).
template <class K>
void legacy_run(DType dtype, const uint8_t* w, size_t w_row, int64_t j0, int64_t j1,
                const uint8_t* act, size_t act_bytes, int64_t m, int64_t nb, float* c,
                int64_t ldc) {
  const LegacyType t = legacy_type(dtype);
  LegacyPacked<K::kLanes> p;
  for (int64_t j = j0; j < j1; j += K::kLanes) {
    const int nr = j1 - j < K::kLanes ? static_cast<int>(j1 - j) : K::kLanes;
    for (int64_t b0 = 0; b0 < nb; b0 += kLegacySlice) {
      const int64_t b1 = b0 + kLegacySlice < nb ? b0 + kLegacySlice : nb;
      legacy_pack<K>(t, w, w_row, j, nr, b0, b1, &p);
      for (int64_t i0 = 0; i0 < m; i0 += K::kActRows) {
        const int rows = m - i0 < K::kActRows ? static_cast<int>(m - i0) : K::kActRows;
        legacy_tile_rows<K, K::kActRows>(rows, t, p, act, act_bytes, i0, b0, b1, c, ldc, j, nr);
      }
    }
  }
}

}  // namespace
}  // namespace einfer::gguf_detail
