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

#include "kernels/gguf/gemm_gguf_legacy_lanes.h"
#include "kernels/gguf/gguf_bits_x86.h"

namespace einfer::gguf_detail {
namespace {

struct Avx2x8 {
  static constexpr int kLanes = 8;    // weight rows, one per int32 lane of a ymm
  static constexpr int kActRows = 4;  // activation rows per tile

  // The 32 unsigned values (<= 31) of one block in element order.
  static __m256i unpack(const LegacyType& t, const uint8_t* b) {
    __m256i u = legacy_nibbles(t, b);
    if (t.five) {  // bit e of the 32-bit word is element e's fifth bit
      uint32_t bits;
      std::memcpy(&bits, b + (t.min ? 4 : 2), 4);
      u = _mm256_or_si256(u, _mm256_and_si256(bytes_from_bits(bits), _mm256_set1_epi8(16)));
    }
    return u;
  }

  // Activation rows i0 .. i0 + MR against the packed slice (blocks [b0, b1)), C's lanes < nr.
  template <int MR>
  static void tile(const LegacyType& t, const LegacyPacked<kLanes>& p, const uint8_t* act,
                   size_t act_bytes, int64_t i0, int64_t b0, int64_t b1, float* c, int64_t ldc,
                   int64_t j0, int nr) {
    const __m256i live =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
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
                _mm256_maddubs_epi16(wq, _mm256_set1_epi32(legacy_i32(a[i][b].qs + 4 * q)));
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
          v = _mm256_sub_ps(v,
                            _mm256_mul_ps(dmin, _mm256_set1_ps(static_cast<float>(a[i][b].isum))));
        acc[i] = _mm256_add_ps(acc[i], _mm256_mul_ps(_mm256_set1_ps(a[i][b].d), v));
      }
    }
    for (int i = 0; i < MR; ++i) _mm256_maskstore_ps(c + (i0 + i) * ldc + j0, live, acc[i]);
  }
};

}  // namespace

bool gemm_gguf_legacy_8x4_avx2_supports(DType dtype) {
  return dtype == DType::q4_0 || dtype == DType::q5_0 || dtype == DType::q4_1 ||
         dtype == DType::q5_1;
}

void gemm_gguf_legacy_8x4_avx2(DType dtype, const uint8_t* w, size_t w_row, int64_t j0, int64_t j1,
                               const uint8_t* act, size_t act_bytes, int64_t m, int64_t nb,
                               float* c, int64_t ldc) {
  legacy_run<Avx2x8>(dtype, w, w_row, j0, j1, act, act_bytes, m, nb, c, ldc);
}

}  // namespace einfer::gguf_detail

#endif
