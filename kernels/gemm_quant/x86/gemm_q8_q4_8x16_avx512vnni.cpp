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
// the accumulator of each (row, group) starts from the negated correction, so it ends at the exact
// dot product. Packing, corrections and loops: kernels/gemm_quant/x86/gemm_quant_lanes_driver.h.
//
// The same tiles read the 8x4 weight layout (gemm_q8/q4_8x4l_8x16_avx512vnni, equal to the
// interleaved scalar twin, whose bits are the rows twin's): two 8-row layout tiles side by side
// are the [quad][16 rows][4 bytes] tile the transposes build from rows, so packing a slice is a
// copy with the offset (q4: the nibble split), and q4 reads the activations in natural order.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)

#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")
// GCC 12 warns about the undefined vector inside its own _mm512_cvtepi32_ps.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/gemm_quant/x86/gemm_quant_lanes_driver.h"

namespace einfer::quant_detail {
namespace {

template <LaneSource S>
struct Vnni16 {
  static constexpr int kLanes = 16;                     // weight rows per tile
  static constexpr LaneSource kSource = S;              // rows (transposed) or 8x4 blocks
  static constexpr Q8Pack kQ8Pack = Q8Pack::offset;     // q8 packed as w + 128
  static constexpr int rows(bool /*q4*/) { return 8; }  // activation rows per tile
  using Pack = LanePack<kLanes>;
  // 16 rows of 32 bytes (q8 chunk) -> 8 quads [row][4 bytes]: rows r and r + 8 share a register, a
  // dword transpose in 128-bit lanes, then one two-source permute per output pair.
  static void transpose_q8(const uint8_t* const* src, uint8_t (*dst)[kLanes][4]) {
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
      u[h] = _mm512_unpacklo_epi64(t[h], t[h + 2]);          // dwords 0 | 4
      u[h + 1] = _mm512_unpackhi_epi64(t[h], t[h + 2]);      // 1 | 5
      u[h + 2] = _mm512_unpacklo_epi64(t[h + 1], t[h + 3]);  // 2 | 6
      u[h + 3] = _mm512_unpackhi_epi64(t[h + 1], t[h + 3]);  // 3 | 7
    }
    const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i second = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    const __m512i flip = _mm512_set1_epi8(-128);
    for (int d = 0; d < 4; ++d) {
      _mm512_store_si512(dst[d],
                         _mm512_xor_si512(_mm512_permutex2var_epi64(u[d], first, u[d + 4]), flip));
      _mm512_store_si512(dst[d + 4],
                         _mm512_xor_si512(_mm512_permutex2var_epi64(u[d], second, u[d + 4]), flip));
    }
  }

  // 16 rows of 16 bytes (q4 half block) -> low nibbles in quads 0-3, high nibbles in quads 4-7:
  // rows r, r + 4, r + 8, r + 12 share a register, a 4 x 4 dword transpose in each 128-bit lane.
  static void transpose_q4(const uint8_t* const* src, uint8_t (*dst)[kLanes][4]) {
    __m512i z[4];
    for (int r = 0; r < 4; ++r) {
      __m512i v = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r])));
      v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r + 4])), 1);
      v = _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r + 8])), 2);
      z[r] =
          _mm512_inserti32x4(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r + 12])), 3);
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

  // Rows i0 .. i0 + MR against the packed tile over groups [g0, g1) (chunks from c_base).
  template <bool Q4, int MR>
  static void tile(const QuantGemm& p, const Pack& t, int64_t i0, int64_t j0, int nr, int64_t g0,
                   int64_t g1, int64_t c_base, int64_t chunks) {
    const __mmask16 cols = static_cast<__mmask16>((1u << nr) - 1u);
    __m512 acc[MR];
    const int8_t* a[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      acc[i] =
          g0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(cols, p.c + (i0 + i) * p.ldc + j0);
      a[i] = p.qa + (i0 + i) * p.kpad;
    }
    for (int64_t g = g0; g < g1; ++g) {
      int64_t c0 = 0, c1 = 0;
      lanes_group_chunks(p, g, chunks, &c0, &c1);
      __m512i isum[MR];
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i)
        isum[i] = _mm512_set1_epi32(lanes_correction<Q4>(p, i0 + i, c0, c1));
      for (int64_t c = c0; c < c1; ++c) {
        const uint8_t(*wq)[kLanes][4] = t.w + (c - c_base) * 8;
        for (int q = 0; q < 8; ++q) {
          const __m512i wv = _mm512_load_si512(wq[q]);
          const int64_t off = lanes_act_offset<Vnni16, Q4>(c, q);
#pragma GCC unroll 8
          for (int i = 0; i < MR; ++i) {
            isum[i] = _mm512_dpbusd_epi32(isum[i], wv, _mm512_set1_epi32(load_i32(a[i] + off)));
          }
        }
      }
      const __m512 swv = _mm512_load_ps(t.sw[g - g0]);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512 prod = _mm512_mul_ps(_mm512_set1_ps(p.sa[(i0 + i) * p.groups + g]), swv);
        acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_cvtepi32_ps(isum[i]), prod));
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) _mm512_mask_storeu_ps(p.c + (i0 + i) * p.ldc + j0, cols, acc[i]);
  }
};

}  // namespace

bool gemm_8x16_avx512vnni_supports(const QuantGemm& p) {
  return lanes_supports(p);
}
void gemm_q8_8x16_avx512vnni(const QuantGemm& p) {
  lanes_run<Vnni16<LaneSource::rows>, false>(p);
}
void gemm_q4_8x16_avx512vnni(const QuantGemm& p) {
  lanes_run<Vnni16<LaneSource::rows>, true>(p);
}
void gemm_q8_8x4l_8x16_avx512vnni(const QuantGemm& p) {
  lanes_run<Vnni16<LaneSource::i8x4>, false>(p);
}
void gemm_q4_8x4l_8x16_avx512vnni(const QuantGemm& p) {
  lanes_run<Vnni16<LaneSource::i8x4>, true>(p);
}

}  // namespace einfer::quant_detail

#pragma GCC pop_options

#endif
