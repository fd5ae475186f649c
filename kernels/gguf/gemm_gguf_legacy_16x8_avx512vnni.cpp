// AVX-512 VNNI prefill GEMM for the 32-element GGUF block types (q8_0, q4_0, q5_0, q4_1, q5_1;
// m >= 8 activation rows in q8a blocks): 16 weight rows in the int32 lanes of a zmm, 8 activation
// rows a tile, the scalar twin's bits (dot_gguf_q8_scalar.cpp, dot_legacy).
//
// Why: llama-quantize's Q4_K_M keeps a K-quant only where a row is whole 256-element superblocks;
// every other matrix falls back to q5_0 (and q8_0), which at dim 576, 896 or 960 (SmolLM,
// Qwen2.5-0.5B, ...) is most of the model. The 4-row kernel (gemm_gguf_q8_4x4_x86.inc) sums each
// block of each (weight row, activation row) pair horizontally: 70% of a SmolLM-shape Q4_K_M
// prefill on Zen 4. Here a weight tile of 16 rows is unpacked once per K slice into
// [block][quad][16 lanes][4 bytes] of unsigned values u (q4/q5 their stored values, q8_0 w + 128)
// and met by every activation tile: one vpdpbusd per quad and activation row gives each lane's
// exact int32 block sum with no horizontal sums. Each sum starts from -bias * sum(a) (q8_0 128,
// q4_0 8, q5_0 16, the offset types 0), so it ends at the twin's `dot`; then the twin's float
// step lane by lane: t = d * float(dot) (offset types: - dmin * float(sum(a))), acc += da * t,
// blocks in order (a K slice after the first continues from C).
//
// GCC only, with a target pragma like the other AVX-512 VNNI kernels; gguf_dispatch.cpp calls it
// when the ISA selection includes avx512vnni.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#include <immintrin.h>

#include <cstring>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,f16c")
// GCC 12's own avx512fintrin.h (_mm512_undefined_*) trips these at -O3.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace einfer::gguf_detail {
namespace {

constexpr int kLanes = 16;      // weight rows per tile
constexpr int kActRows = 8;     // activation rows per tile
constexpr int64_t kSlice = 64;  // blocks per packed K slice (2048 elements)

// A weight tile's K slice: 40 KB on the stack.
struct alignas(64) Packed {
  uint8_t u[kSlice][8][kLanes][4];  // [block][quad][lane][4 unsigned values]
  float d[kSlice][kLanes];          // each lane's block scale
  float dmin[kSlice][kLanes];       // q4_1 / q5_1: -m (as the twin keeps it)
};

struct Type {
  size_t bytes;  // block bytes
  int32_t bias;  // u - bias is the value
  bool min;      // q4_1 / q5_1: f16 m after d
  bool five;     // q5_0 / q5_1: 4 bytes of fifth bits before the nibbles
  bool eight;    // q8_0: 32 int8
};

Type type_of(DType t) {
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

float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _cvtsh_ss(h);
}

// The 32 unsigned values of one block in element order.
__m256i unpack(const Type& t, const uint8_t* b) {
  if (t.eight) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2)),
                            _mm256_set1_epi8(-128));
  }
  const uint8_t* qh = b + (t.min ? 4 : 2);
  const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qh + (t.five ? 4 : 0)));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m256i u = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(qs, m4)),
                                      _mm_and_si128(_mm_srli_epi16(qs, 4), m4), 1);
  if (t.five) {  // bit e of the 32-bit word is element e's fifth bit
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    u = _mm256_mask_add_epi8(u, static_cast<__mmask32>(bits), u, _mm256_set1_epi8(16));
  }
  return u;
}

// 8 rows of 8 dwords -> out[q]: dword q of rows 0..7.
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
    for (int half = 0; half < 2; ++half) {
      __m256i z[8], out[8];
      for (int r = 0; r < 8; ++r) {
        const int lane = 8 * half + r;
        z[r] =
            lane < nr ? unpack(t, w + (j0 + lane) * w_row + b * t.bytes) : _mm256_setzero_si256();
      }
      transpose8x8(z, out);
      for (int q = 0; q < 8; ++q)
        _mm256_store_si256(reinterpret_cast<__m256i*>(p->u[s][q][8 * half]), out[q]);
    }
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
          int64_t b0, int64_t b1, float* c, int64_t ldc, int64_t j0, __mmask16 live) {
  const BlockQ8A* a[MR];
  __m512 acc[MR];
  for (int i = 0; i < MR; ++i) {
    a[i] = reinterpret_cast<const BlockQ8A*>(act + (i0 + i) * act_bytes);
    acc[i] = b0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(live, c + (i0 + i) * ldc + j0);
  }
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t s = b - b0;
    __m512i sum[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) sum[i] = _mm512_set1_epi32(-t.bias * a[i][b].isum);
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      const __m512i wq = _mm512_load_si512(p.u[s][q]);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i)
        sum[i] = _mm512_dpbusd_epi32(sum[i], wq, _mm512_set1_epi32(load_i32(a[i][b].qs + 4 * q)));
    }
    const __m512 d = _mm512_load_ps(p.d[s]);
    const __m512 dmin = _mm512_load_ps(p.dmin[s]);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      __m512 v = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sum[i]));
      if (t.min)
        v = _mm512_sub_ps(v, _mm512_mul_ps(dmin, _mm512_set1_ps(static_cast<float>(a[i][b].isum))));
      acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_set1_ps(a[i][b].d), v));
    }
  }
  for (int i = 0; i < MR; ++i) _mm512_mask_storeu_ps(c + (i0 + i) * ldc + j0, live, acc[i]);
}

template <int MR>
void tile_rows(int rows, const Type& t, const Packed& p, const uint8_t* act, size_t act_bytes,
               int64_t i0, int64_t b0, int64_t b1, float* c, int64_t ldc, int64_t j0,
               __mmask16 live) {
  if constexpr (MR > 1) {
    if (rows < MR) {
      tile_rows<MR - 1>(rows, t, p, act, act_bytes, i0, b0, b1, c, ldc, j0, live);
      return;
    }
  }
  tile<MR>(t, p, act, act_bytes, i0, b0, b1, c, ldc, j0, live);
}

}  // namespace

void gemm_gguf_legacy_16x8_avx512vnni(DType dtype, const uint8_t* w, size_t w_row, int64_t j0,
                                      int64_t j1, const uint8_t* act, size_t act_bytes, int64_t m,
                                      int64_t nb, float* c, int64_t ldc) {
  const Type t = type_of(dtype);
  Packed p;
  for (int64_t j = j0; j < j1; j += kLanes) {
    const int nr = j1 - j < kLanes ? static_cast<int>(j1 - j) : kLanes;
    const __mmask16 live = static_cast<__mmask16>((1u << nr) - 1u);
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

#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif
