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

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,f16c")
// GCC 12's own avx512fintrin.h (_mm512_undefined_*) trips these at -O3.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/gguf/gemm_gguf_legacy_lanes.h"

namespace einfer::gguf_detail {
namespace {

struct Vnni16 {
  static constexpr int kLanes = 16;   // weight rows, one per int32 lane of a zmm
  static constexpr int kActRows = 8;  // activation rows per tile

  // The 32 unsigned values of one block in element order.
  static __m256i unpack(const LegacyType& t, const uint8_t* b) {
    if (t.eight) {
      return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2)),
                              _mm256_set1_epi8(-128));
    }
    __m256i u = legacy_nibbles(t, b);
    if (t.five) {  // bit e of the 32-bit word is element e's fifth bit
      uint32_t bits;
      std::memcpy(&bits, b + (t.min ? 4 : 2), 4);
      u = _mm256_mask_add_epi8(u, static_cast<__mmask32>(bits), u, _mm256_set1_epi8(16));
    }
    return u;
  }

  // Activation rows i0 .. i0 + MR against the packed slice (blocks [b0, b1)), C's lanes < nr.
  template <int MR>
  static void tile(const LegacyType& t, const LegacyPacked<kLanes>& p, const uint8_t* act,
                   size_t act_bytes, int64_t i0, int64_t b0, int64_t b1, float* c, int64_t ldc,
                   int64_t j0, int nr) {
    const __mmask16 live = static_cast<__mmask16>((1u << nr) - 1u);
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
          sum[i] =
              _mm512_dpbusd_epi32(sum[i], wq, _mm512_set1_epi32(legacy_i32(a[i][b].qs + 4 * q)));
      }
      const __m512 d = _mm512_load_ps(p.d[s]);
      const __m512 dmin = _mm512_load_ps(p.dmin[s]);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        __m512 v = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sum[i]));
        if (t.min)
          v = _mm512_sub_ps(v,
                            _mm512_mul_ps(dmin, _mm512_set1_ps(static_cast<float>(a[i][b].isum))));
        acc[i] = _mm512_add_ps(acc[i], _mm512_mul_ps(_mm512_set1_ps(a[i][b].d), v));
      }
    }
    for (int i = 0; i < MR; ++i) _mm512_mask_storeu_ps(c + (i0 + i) * ldc + j0, live, acc[i]);
  }
};

}  // namespace

void gemm_gguf_legacy_16x8_avx512vnni(DType dtype, const uint8_t* w, size_t w_row, int64_t j0,
                                      int64_t j1, const uint8_t* act, size_t act_bytes, int64_t m,
                                      int64_t nb, float* c, int64_t ldc) {
  legacy_run<Vnni16>(dtype, w, w_row, j0, j1, act, act_bytes, m, nb, c, ldc);
}

}  // namespace einfer::gguf_detail

#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif
