// AVX-512 VNNI prefill GEMM of matmul_f32_quant (m > 1): tiles of 8 activation rows x 16 weight
// rows, one zmm lane per weight row, bit-identical to the scalar int twin
// (gemm_q8_q4_1x1_scalar.cpp): every output gets the exact int32 dot product of each group and
// then acc = acc + float(isum) * (sa * sw), one multiply and one add (this file is compiled
// without floating-point contraction, kernels/CMakeLists.txt), groups in order.
//
// Lanes are weight rows, so a weight tile is packed once per K slice into [quad][16 rows][4 bytes]
// (a stack buffer, reused by every activation tile) and each activation row contributes a
// broadcast of 4 bytes per vpdpbusd (the instruction's m32bcst operand): per 4 K elements one
// 64-byte weight load serves 8 rows of activations, and the 16 outputs of a row are stored
// contiguously at the end. vpdpbusd multiplies unsigned by signed bytes, so the packed weights
// are unsigned, the activations stay signed:
// - q8: w + 128 (xor 0x80): dot(w + 128, a) = dot(w, a) + 128 sum(a);
// - q4: the nibble u itself: dot(u, a) = dot(u - 8, a) + 8 sum(a);
// the accumulator of each (row, group) starts from the negated correction (from the chunk sums
// 8 sum(a) the dispatcher stores beside the quantized rows), so it ends at the exact dot product.
// q4 activations come in the even/odd order of permute_blocks_even_odd64: the low nibbles of 4
// weight bytes meet 4 consecutive activations of a block's first half, the high nibbles 4 of its
// second half; the packing puts each 32-element chunk's 8 quads together, so a group of 32 is 8
// consecutive packed quads whatever the order of its activations.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)

#include <immintrin.h>

#include <cstring>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
// GCC 12 warns about the undefined vector inside its own _mm512_cvtepi32_ps.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace einfer::quant_detail {
namespace {

constexpr int kLanes = 16;           // weight rows per tile
constexpr int kMR = 8;               // activation rows per tile
constexpr int64_t kSliceChunks = 32;  // 32-element chunks per packed K slice: 16 KB of weights

struct PackedTile {
  alignas(64) uint8_t w[kSliceChunks * 8][kLanes][4];  // [chunk * 8 + quad][row][byte]
  alignas(64) float sw[kSliceChunks][kLanes];          // [group in slice][row]
};

// Byte offset in an activation row of quad t (0..7) of 32-element chunk c.
template <bool Q4>
inline int64_t act_offset(int64_t c, int t) {
  if (!Q4) return 32 * c + 4 * t;
  return 64 * (c >> 1) + 16 * (c & 1) + 4 * t + (t >= 4 ? 16 : 0);
}

// The packed byte of weight row `row` (row_bytes bytes, k elements) meeting activation byte `pos`.
template <bool Q4>
inline uint8_t packed_byte(const uint8_t* row, size_t row_bytes, int64_t k, int64_t pos) {
  if (!Q4) return pos < k ? static_cast<uint8_t>(row[pos] ^ 0x80u) : 0;
  const int64_t b = pos / 64, q = pos % 64;
  const int64_t byte = 32 * b + (q < 32 ? q : q - 32);
  if (static_cast<size_t>(byte) >= row_bytes) return 0;  // k padding: the activations are zero
  return static_cast<uint8_t>(q < 32 ? row[byte] & 0x0F : row[byte] >> 4);
}

// 16 rows of 32 bytes (q8 chunk) -> 8 quads [row][4 bytes]: rows r and r + 8 share a register, a
// dword transpose in 128-bit lanes, then one two-source permute per output pair.
inline void transpose_16x32(const uint8_t* const* src, uint8_t (*dst)[kLanes][4]) {
  __m512i z[8], t[8], u[8];
  for (int r = 0; r < 8; ++r) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src[r]));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src[r + 8]));
    z[r] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
  }
  for (int r = 0; r < 8; r += 2) {
    t[r] = _mm512_unpacklo_epi32(z[r], z[r + 1]);
    t[r + 1] = _mm512_unpackhi_epi32(z[r], z[r + 1]);
  }
  for (int h = 0; h < 8; h += 4) {  // rows 0-3 (h = 0) and 4-7 (h = 4) of each half
    u[h] = _mm512_unpacklo_epi64(t[h], t[h + 2]);      // dwords 0 | 4
    u[h + 1] = _mm512_unpackhi_epi64(t[h], t[h + 2]);  // 1 | 5
    u[h + 2] = _mm512_unpacklo_epi64(t[h + 1], t[h + 3]);  // 2 | 6
    u[h + 3] = _mm512_unpackhi_epi64(t[h + 1], t[h + 3]);  // 3 | 7
  }
  const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const __m512i second = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  const __m512i flip = _mm512_set1_epi8(-128);
  for (int d = 0; d < 4; ++d) {
    _mm512_store_si512(dst[d], _mm512_xor_si512(_mm512_permutex2var_epi64(u[d], first, u[d + 4]), flip));
    _mm512_store_si512(dst[d + 4],
                       _mm512_xor_si512(_mm512_permutex2var_epi64(u[d], second, u[d + 4]), flip));
  }
}

// 16 rows of 16 bytes (q4 half block) -> low nibbles in quads 0-3, high nibbles in quads 4-7: rows
// r, r + 4, r + 8, r + 12 share a register, a 4 x 4 dword transpose in each 128-bit lane.
inline void transpose_16x16_nibbles(const uint8_t* const* src, uint8_t (*dst)[kLanes][4]) {
  __m512i z[4];
  for (int r = 0; r < 4; ++r) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r])));
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r + 4])), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r + 8])), 2);
    z[r] = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r + 12])), 3);
  }
  const __m512i t0 = _mm512_unpacklo_epi32(z[0], z[1]), t1 = _mm512_unpackhi_epi32(z[0], z[1]);
  const __m512i t2 = _mm512_unpacklo_epi32(z[2], z[3]), t3 = _mm512_unpackhi_epi32(z[2], z[3]);
  const __m512i q[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2),
                        _mm512_unpacklo_epi64(t1, t3), _mm512_unpackhi_epi64(t1, t3)};
  const __m512i m = _mm512_set1_epi8(0x0F);
  for (int d = 0; d < 4; ++d) {
    _mm512_store_si512(dst[d], _mm512_and_si512(q[d], m));
    _mm512_store_si512(dst[d + 4], _mm512_and_si512(_mm512_srli_epi16(q[d], 4), m));
  }
}

// Packs weight rows j0 .. j0 + nr (the rest of the tile zero) over chunks [c0, c1) and the scales
// of groups [g0, g1).
template <bool Q4>
void pack_tile(const QuantGemm& p, int64_t j0, int nr, int64_t c0, int64_t c1, int64_t g0,
               int64_t g1, PackedTile* t) {
  const size_t rb = p.w_row_bytes;
  alignas(64) static constexpr uint8_t kZeros[32] = {};  // the rows past n
  const uint8_t* base = p.w + static_cast<size_t>(j0) * rb;
  for (int64_t c = c0; c < c1; ++c) {
    uint8_t(*dst)[kLanes][4] = t->w + (c - c0) * 8;
    // Bytes of row data the chunk reads: q8 32 from 32c, q4 16 from 32 (c / 2) + 16 (c % 2).
    const size_t off = Q4 ? static_cast<size_t>(32 * (c >> 1) + 16 * (c & 1))
                          : static_cast<size_t>(32 * c);
    if (off + (Q4 ? 16 : 32) <= rb) {
      const uint8_t* src[kLanes];
      for (int r = 0; r < kLanes; ++r) src[r] = r < nr ? base + r * rb + off : kZeros;
      if (Q4) {
        transpose_16x16_nibbles(src, dst);
      } else {
        transpose_16x32(src, dst);
      }
      continue;
    }
    for (int q = 0; q < 8; ++q) {  // the row's last, partial chunk
      for (int r = 0; r < kLanes; ++r) {
        for (int e = 0; e < 4; ++e) {
          dst[q][r][e] =
              r < nr ? packed_byte<Q4>(base + r * rb, rb, p.k, act_offset<Q4>(c, q) + e) : 0;
        }
      }
    }
  }
  for (int64_t g = g0; g < g1; ++g) {
    for (int r = 0; r < kLanes; ++r) {
      t->sw[g - g0][r] = r < nr ? p.sw[(j0 + r) * p.groups + g] : 0.f;
    }
  }
}

inline int32_t load_i32(const int8_t* a) {
  int32_t v;
  std::memcpy(&v, a, 4);
  return v;
}

// Rows i0 .. i0 + MR against the packed tile over groups [g0, g1) (chunks from c_base).
template <bool Q4, int MR>
void tile(const QuantGemm& p, const PackedTile& t, int64_t i0, int64_t j0, __mmask16 cols,
          int64_t g0, int64_t g1, int64_t c_base, int64_t chunks) {
  const int64_t cpr = p.kpad / kChunk;
  __m512 acc[MR];
  const int8_t* a[MR];
  for (int i = 0; i < MR; ++i) {
    acc[i] = g0 == 0 ? _mm512_setzero_ps()
                     : _mm512_maskz_loadu_ps(cols, p.c + (i0 + i) * p.ldc + j0);
    a[i] = p.qa + (i0 + i) * p.kpad;
  }
  for (int64_t g = g0; g < g1; ++g) {
    const int64_t c0 = g * p.group / kChunk;
    const int64_t c1 = (g + 1) * p.group / kChunk < chunks ? (g + 1) * p.group / kChunk : chunks;
    __m512i isum[MR];
    for (int i = 0; i < MR; ++i) {
      int32_t corr = 0;
      for (int64_t c = c0; c < c1; ++c) corr += p.csum[(i0 + i) * cpr + c];
      isum[i] = _mm512_set1_epi32(Q4 ? -corr : -16 * corr);
    }
    for (int64_t c = c0; c < c1; ++c) {
      const uint8_t(*wq)[kLanes][4] = t.w + (c - c_base) * 8;
      for (int q = 0; q < 8; ++q) {
        const __m512i wv = _mm512_load_si512(wq[q]);
        const int64_t off = act_offset<Q4>(c, q);
        for (int i = 0; i < MR; ++i) {
          isum[i] = _mm512_dpbusd_epi32(isum[i], wv, _mm512_set1_epi32(load_i32(a[i] + off)));
        }
      }
    }
    const __m512 swv = _mm512_load_ps(t.sw[g - g0]);
    for (int i = 0; i < MR; ++i) {
      const __m512 prod = _mm512_mul_ps(_mm512_set1_ps(p.sa[(i0 + i) * p.groups + g]), swv);
      acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_cvtepi32_ps(isum[i]), prod));
    }
  }
  for (int i = 0; i < MR; ++i) _mm512_mask_storeu_ps(p.c + (i0 + i) * p.ldc + j0, cols, acc[i]);
}

template <bool Q4, int MR>
void tile_rows(const QuantGemm& p, const PackedTile& t, int64_t i0, int64_t j0, __mmask16 cols,
               int64_t g0, int64_t g1, int64_t c_base, int64_t chunks, int64_t rows) {
  if constexpr (MR > 1) {
    if (rows < MR) {
      tile_rows<Q4, MR - 1>(p, t, i0, j0, cols, g0, g1, c_base, chunks, rows);
      return;
    }
  }
  tile<Q4, MR>(p, t, i0, j0, cols, g0, g1, c_base, chunks);
}

template <bool Q4>
void run(const QuantGemm& p) {
  PackedTile t;
  const int64_t chunks = (p.k + kChunk - 1) / kChunk;
  const int64_t slice_groups = kSliceChunks * kChunk / p.group;  // >= 1: group <= 1024
  for (int64_t j0 = 0; j0 < p.n; j0 += kLanes) {
    const int nr = static_cast<int>(p.n - j0 < kLanes ? p.n - j0 : kLanes);
    const __mmask16 cols = static_cast<__mmask16>((1u << nr) - 1u);
    for (int64_t g0 = 0; g0 < p.groups; g0 += slice_groups) {
      const int64_t g1 = g0 + slice_groups < p.groups ? g0 + slice_groups : p.groups;
      const int64_t c0 = g0 * p.group / kChunk;
      const int64_t c1 = g1 * p.group / kChunk < chunks ? g1 * p.group / kChunk : chunks;
      pack_tile<Q4>(p, j0, nr, c0, c1, g0, g1, &t);
      for (int64_t i0 = 0; i0 < p.m; i0 += kMR) {
        tile_rows<Q4, kMR>(p, t, i0, j0, cols, g0, g1, c0, chunks, p.m - i0);
      }
    }
  }
}

}  // namespace

bool gemm_8x16_avx512vnni_supports(const QuantGemm& p) {
  return p.group % kChunk == 0 && p.group <= kSliceChunks * kChunk;
}
void gemm_q8_8x16_avx512vnni(const QuantGemm& p) {
  run<false>(p);
}
void gemm_q4_8x16_avx512vnni(const QuantGemm& p) {
  run<true>(p);
}

}  // namespace einfer::quant_detail

#pragma GCC pop_options

#endif
