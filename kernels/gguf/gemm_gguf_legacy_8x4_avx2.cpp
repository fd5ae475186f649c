// AVX2 prefill GEMM for the 4- and 5-bit 32-element GGUF types (q4_0, q5_0, q4_1, q5_1; m >= 8
// activation rows in q8a blocks): 8 weight rows in the int32 lanes of a ymm, 4 activation rows a
// tile, the scalar twin's bits (dot_gguf_q8_scalar.cpp, dot_legacy). The AVX2 side of
// gemm_gguf_legacy_16x8_avx512vnni.cpp (why, and the packing: the same quads of unsigned values u
// <= 31 in lanes); q8_0 stays on the 4-row kernel here (its u = w + 128 would saturate maddubs).
//
// Per block, activation row and 8 lanes: maddubs of u by a broadcast of 4 activations gives int16
// pairs <= 2 * 31 * 127 = 7874, so 4 quads sum in int16 (<= 31496) before one madd by ones widens
// them: 8 maddubs, 2 madds per 256 products, the int32 sum starting from -bias * sum(a). Then the
// twin's float step lane by lane.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2)

#include <immintrin.h>

#include <cstring>

namespace einfer::gguf_detail {
namespace {

constexpr int kLanes = 8;       // weight rows per tile
constexpr int kActRows = 4;     // activation rows per tile
constexpr int64_t kSlice = 64;  // blocks per packed K slice (2048 elements)

// A weight tile's K slice: 20 KB on the stack.
struct alignas(32) Packed {
  uint8_t u[kSlice][8][kLanes][4];  // [block][quad][lane][4 unsigned values]
  float d[kSlice][kLanes];          // each lane's block scale
  float dmin[kSlice][kLanes];       // q4_1 / q5_1: -m (as the twin keeps it)
};

struct Type {
  size_t bytes;  // block bytes
  int32_t bias;  // u - bias is the value
  bool min;      // q4_1 / q5_1: f16 m after d
  bool five;     // q5_0 / q5_1: 4 bytes of fifth bits before the nibbles
};

Type type_of(DType t) {
  switch (t) {
    case DType::q4_0:
      return {18, 8, false, false};
    case DType::q5_0:
      return {22, 16, false, true};
    case DType::q4_1:
      return {20, 0, true, false};
    default:  // q5_1
      return {24, 0, true, true};
  }
}

float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}

// The 32 unsigned values of one block in element order.
__m256i unpack(const Type& t, const uint8_t* b) {
  const uint8_t* qh = b + (t.min ? 4 : 2);
  const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qh + (t.five ? 4 : 0)));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m256i u = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(qs, m4)),
                                      _mm_and_si128(_mm_srli_epi16(qs, 4), m4), 1);
  if (t.five) {  // bit e of the 32-bit word is element e's fifth bit
    int32_t bits;
    std::memcpy(&bits, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(bits), _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                                    0x0202020202020202, 0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    u = _mm256_or_si256(u, _mm256_and_si256(set, _mm256_set1_epi8(16)));
  }
  return u;
}

// 8 rows of 8 dwords -> out[q]: dword q of rows 0..7 (the AVX-512 file's transpose, in its own
// ISA's file).
void transpose8x8(const __m256i (&z)[8], __m256i (&out)[8]) {
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
void pack(const Type& t, const uint8_t* w, size_t w_row, int64_t j0, int nr, int64_t b0, int64_t b1,
          Packed* p) {
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t s = b - b0;
    __m256i z[8], out[8];
    for (int r = 0; r < 8; ++r)
      z[r] = r < nr ? unpack(t, w + (j0 + r) * w_row + b * t.bytes) : _mm256_setzero_si256();
    transpose8x8(z, out);
    for (int q = 0; q < 8; ++q)
      _mm256_store_si256(reinterpret_cast<__m256i*>(p->u[s][q][0]), out[q]);
    for (int lane = 0; lane < kLanes; ++lane) {
      const uint8_t* blk = w + (j0 + lane) * w_row + b * t.bytes;
      p->d[s][lane] = lane < nr ? f16_at(blk) : 0.f;
      p->dmin[s][lane] = lane < nr && t.min ? -f16_at(blk + 2) : 0.f;
    }
  }
}

int32_t load_i32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Activation rows i0 .. i0 + MR against the packed slice (blocks [b0, b1)), C's lanes `live`.
template <int MR>
void tile(const Type& t, const Packed& p, const uint8_t* act, size_t act_bytes, int64_t i0,
          int64_t b0, int64_t b1, float* c, int64_t ldc, int64_t j0, __m256i live) {
  const BlockQ8A* a[MR];
  __m256 acc[MR];
  for (int i = 0; i < MR; ++i) {
    a[i] = reinterpret_cast<const BlockQ8A*>(act + (i0 + i) * act_bytes);
    acc[i] = b0 == 0 ? _mm256_setzero_ps() : _mm256_maskload_ps(c + (i0 + i) * ldc + j0, live);
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t s = b - b0;
    __m256i sum[MR];
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) sum[i] = _mm256_set1_epi32(-t.bias * a[i][b].isum);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {  // two halves of 4 quads, each summed in int16
      __m256i p16[MR];
#pragma GCC unroll 4
      for (int q = 4 * h; q < 4 * h + 4; ++q) {
        const __m256i wq = _mm256_load_si256(reinterpret_cast<const __m256i*>(p.u[s][q][0]));
#pragma GCC unroll 4
        for (int i = 0; i < MR; ++i) {
          const __m256i prod =
              _mm256_maddubs_epi16(wq, _mm256_set1_epi32(load_i32(a[i][b].qs + 4 * q)));
          p16[i] = q == 4 * h ? prod : _mm256_add_epi16(p16[i], prod);
          __asm__("" : "+x"(p16[i]));  // one running sum per row, not a tree of spilled products
        }
      }
#pragma GCC unroll 4
      for (int i = 0; i < MR; ++i)
        sum[i] = _mm256_add_epi32(sum[i], _mm256_madd_epi16(p16[i], ones));
    }
    const __m256 d = _mm256_load_ps(p.d[s]);
    const __m256 dmin = _mm256_load_ps(p.dmin[s]);
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      __m256 v = _mm256_mul_ps(d, _mm256_cvtepi32_ps(sum[i]));
      if (t.min)
        v = _mm256_sub_ps(v, _mm256_mul_ps(dmin, _mm256_set1_ps(static_cast<float>(a[i][b].isum))));
      acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(_mm256_set1_ps(a[i][b].d), v));
    }
  }
  for (int i = 0; i < MR; ++i) _mm256_maskstore_ps(c + (i0 + i) * ldc + j0, live, acc[i]);
}

template <int MR>
void tile_rows(int rows, const Type& t, const Packed& p, const uint8_t* act, size_t act_bytes,
               int64_t i0, int64_t b0, int64_t b1, float* c, int64_t ldc, int64_t j0,
               __m256i live) {
  if constexpr (MR > 1) {
    if (rows < MR) {
      tile_rows<MR - 1>(rows, t, p, act, act_bytes, i0, b0, b1, c, ldc, j0, live);
      return;
    }
  }
  tile<MR>(t, p, act, act_bytes, i0, b0, b1, c, ldc, j0, live);
}

}  // namespace

bool gemm_gguf_legacy_8x4_avx2_supports(DType dtype) {
  return dtype == DType::q4_0 || dtype == DType::q5_0 || dtype == DType::q4_1 ||
         dtype == DType::q5_1;
}

void gemm_gguf_legacy_8x4_avx2(DType dtype, const uint8_t* w, size_t w_row, int64_t j0, int64_t j1,
                               const uint8_t* act, size_t act_bytes, int64_t m, int64_t nb,
                               float* c, int64_t ldc) {
  const Type t = type_of(dtype);
  Packed p;
  for (int64_t j = j0; j < j1; j += kLanes) {
    const int nr = j1 - j < kLanes ? static_cast<int>(j1 - j) : kLanes;
    const __m256i live =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int64_t b0 = 0; b0 < nb; b0 += kSlice) {
      const int64_t b1 = b0 + kSlice < nb ? b0 + kSlice : nb;
      pack(t, w, w_row, j, nr, b0, b1, &p);
      for (int64_t i0 = 0; i0 < m; i0 += kActRows) {
        const int rows = m - i0 < kActRows ? static_cast<int>(m - i0) : kActRows;
        tile_rows<kActRows>(rows, t, p, act, act_bytes, i0, b0, b1, c, ldc, j, live);
      }
    }
  }
}

}  // namespace einfer::gguf_detail

#endif
