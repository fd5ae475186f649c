// AVX2 prefill GEMM of matmul_f32_quant (m > 1): tiles of 4 activation rows x 8 weight rows, one
// ymm lane per weight row, bit-identical to the scalar int twin (gemm_q8_q4_1x1_scalar.cpp): each
// output gets the exact int32 dot product of each group, then acc = acc + float(isum) * (sa * sw),
// one multiply and one add (compiled without floating-point contraction, kernels/CMakeLists.txt),
// groups in order. The AVX-512 VNNI twin of the tile is gemm_q8_q4_8x16_avx512vnni.cpp; packing,
// corrections and loops: kernels/gemm_quant/x86/gemm_quant_lanes_driver.h.
//
// maddubs multiplies the packed unsigned weights by a broadcast of 4 signed activations and adds
// pairs into int16 lanes, saturating, so no pair may exceed 32767:
// - q4: the nibble u <= 15: a pair <= 2 * 15 * 127 = 3810, and a chunk's 8 quads (30480) still
//   fit int16 before one madd widens them;
// - q8: w + 128 <= 255 would saturate, so it is split into nibbles, 16 h + l, two maddubs per
//   quad with the q4 bounds, and the chunk's sums widen as 16 dot(h, a) + dot(l, a).
// The multiplies go to the vector multiply ports, the int16 adds to the others: per 4 K elements
// and 8 outputs about one multiply-port cycle, where the f32 GEMM needs two for its four FMAs.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include <immintrin.h>

#include "kernels/gemm_quant/x86/gemm_quant_lanes_driver.h"

namespace einfer::quant_detail {
namespace {

struct Avx2x8 {
  static constexpr int kLanes = 8;  // weight rows per tile
  static constexpr int kMR = 4;     // activation rows per tile
  using Pack = LanePack<kLanes>;

  static __m256i load(const uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }

  // 8 rows of 32 bytes -> 8 quads [row][4 bytes], w + 128: an 8 x 8 dword transpose.
  static void transpose_q8(const uint8_t* const* src, uint8_t (*dst)[kLanes][4]) {
    __m256i t[8], u[8];
    for (int r = 0; r < 8; r += 2) {
      const __m256i z0 = load(src[r]), z1 = load(src[r + 1]);
      t[r] = _mm256_unpacklo_epi32(z0, z1);
      t[r + 1] = _mm256_unpackhi_epi32(z0, z1);
    }
    for (int h = 0; h < 8; h += 4) {
      u[h] = _mm256_unpacklo_epi64(t[h], t[h + 2]);          // dwords 0 | 4
      u[h + 1] = _mm256_unpackhi_epi64(t[h], t[h + 2]);      // 1 | 5
      u[h + 2] = _mm256_unpacklo_epi64(t[h + 1], t[h + 3]);  // 2 | 6
      u[h + 3] = _mm256_unpackhi_epi64(t[h + 1], t[h + 3]);  // 3 | 7
    }
    const __m256i flip = _mm256_set1_epi8(-128);
    for (int d = 0; d < 4; ++d) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d]),
                         _mm256_xor_si256(_mm256_permute2x128_si256(u[d], u[d + 4], 0x20), flip));
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d + 4]),
                         _mm256_xor_si256(_mm256_permute2x128_si256(u[d], u[d + 4], 0x31), flip));
    }
  }

  // 8 rows of 16 bytes -> low nibbles in quads 0-3, high nibbles in quads 4-7: rows r and r + 4
  // share a register, a 4 x 4 dword transpose in each 128-bit lane.
  static void transpose_q4(const uint8_t* const* src, uint8_t (*dst)[kLanes][4]) {
    __m256i z[4];
    for (int r = 0; r < 4; ++r) {
      z[r] = _mm256_inserti128_si256(
          _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r]))),
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r + 4])), 1);
    }
    const __m256i t0 = _mm256_unpacklo_epi32(z[0], z[1]), t1 = _mm256_unpackhi_epi32(z[0], z[1]);
    const __m256i t2 = _mm256_unpacklo_epi32(z[2], z[3]), t3 = _mm256_unpackhi_epi32(z[2], z[3]);
    const __m256i q[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                          _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
    const __m256i m = _mm256_set1_epi8(0x0F);
    for (int d = 0; d < 4; ++d) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d]), _mm256_and_si256(q[d], m));
      _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d + 4]),
                         _mm256_and_si256(_mm256_srli_epi16(q[d], 4), m));
    }
  }

  // Rows i0 .. i0 + MR against the packed tile over groups [g0, g1) (chunks from c_base).
  template <bool Q4, int MR>
  static void tile(const QuantGemm& p, const Pack& t, int64_t i0, int64_t j0, int nr, int64_t g0,
                   int64_t g1, int64_t c_base, int64_t chunks) {
    const __m256i cols =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i nib = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256 acc[MR];
    const int8_t* a[MR];
    for (int i = 0; i < MR; ++i) {
      acc[i] =
          g0 == 0 ? _mm256_setzero_ps() : _mm256_maskload_ps(p.c + (i0 + i) * p.ldc + j0, cols);
      a[i] = p.qa + (i0 + i) * p.kpad;
    }
    for (int64_t g = g0; g < g1; ++g) {
      int64_t c0 = 0, c1 = 0;
      lanes_group_chunks(p, g, chunks, &c0, &c1);
      __m256i isum[MR];
      for (int i = 0; i < MR; ++i) {
        isum[i] = _mm256_set1_epi32(lanes_correction<Q4>(p, i0 + i, c0, c1));
      }
      for (int64_t c = c0; c < c1; ++c) {
        const uint8_t(*wq)[kLanes][4] = t.w + (c - c_base) * 8;
        __m256i lo[MR], hi[MR];
        for (int i = 0; i < MR; ++i) lo[i] = hi[i] = _mm256_setzero_si256();
        for (int q = 0; q < 8; ++q) {
          const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(wq[q]));
          const __m256i wl = Q4 ? w : _mm256_and_si256(w, nib);
          const __m256i wh = _mm256_and_si256(_mm256_srli_epi16(w, 4), nib);
          const int64_t off = act_offset<Q4>(c, q);
          for (int i = 0; i < MR; ++i) {
            const __m256i av = _mm256_set1_epi32(load_i32(a[i] + off));
            lo[i] = _mm256_add_epi16(lo[i], _mm256_maddubs_epi16(wl, av));
            if (!Q4) hi[i] = _mm256_add_epi16(hi[i], _mm256_maddubs_epi16(wh, av));
          }
        }
        for (int i = 0; i < MR; ++i) {
          isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(lo[i], ones));
          if (!Q4) {
            isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(hi[i], _mm256_set1_epi16(16)));
          }
        }
      }
      const __m256 swv = _mm256_load_ps(t.sw[g - g0]);
      for (int i = 0; i < MR; ++i) {
        const __m256 prod = _mm256_mul_ps(_mm256_set1_ps(p.sa[(i0 + i) * p.groups + g]), swv);
        acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(_mm256_cvtepi32_ps(isum[i]), prod));
      }
    }
    for (int i = 0; i < MR; ++i) {
      float* out = p.c + (i0 + i) * p.ldc + j0;
      if (nr == kLanes) {
        _mm256_storeu_ps(out, acc[i]);
      } else {
        _mm256_maskstore_ps(out, cols, acc[i]);
      }
    }
  }
};

}  // namespace

bool gemm_4x8_avx2_supports(const QuantGemm& p) {
  return lanes_supports(p);
}
void gemm_q8_4x8_avx2(const QuantGemm& p) {
  lanes_run<Avx2x8, false>(p);
}
void gemm_q4_4x8_avx2(const QuantGemm& p) {
  lanes_run<Avx2x8, true>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
