// AVX2 decode GEMV of matmul_f32_quant (m == 1) for weights in groups of 32: q8 rows that are
// not whole blocks of 8 groups (K = 288: 9 groups, every 15M-shape projection and the classifier),
// and every q4 row: 4 weight rows per pass, one float accumulator per row holding 8 lanes of
// partial sums, one horizontal add per row at the end.
//
// Per step (q8: 32 weights = one group; q4: 64 weights = two groups) the activations and their
// scales are loaded once and shared by the 4 rows; each row adds cvt(int32 dot) * (sw * sa) with
// one FMA. Unlike the 8-group row kernel (gemm_q8_q4_4x4_avx2.cpp, RowG32) it needs no whole blocks
// of 8 groups, so such rows run without padding work or per-row tail copies: a last partial step is
// read with a masked load when the row's remaining bytes are whole int32s, else from a copy.
// Measured on the 15M classifier (32000 x 288): ~24 GB/s against ~15-21 for the 1 x 8 tiles it
// replaces. q4 (see Q4) replaced the 1 x 8 tiles, whose per-group flush gathered scales with scalar
// loads, and RowG32. The weights are one sequential stream (the 4 rows are adjacent),
// software-prefetched kPrefetchBytes ahead, the scales alike.
//
// q4 runs its own row loop (gemv_q4_run in gemm_quant_gemv_driver.h): blocks of 4 steps whose
// int32 lanes each row folds into its 8 group sums before one convert and one FMA, which took the
// 15M decode's q4 / q8 ratio from 1.1-1.2 to ~1.4 (docs/bench.md).
//
// Bit-level: the int32 group dot products equal the rows twin's; the float sum runs in another
// order (8 lanes, then the horizontal add), fixed and written out in plain C++ by the lane-order
// twin gemm_q8_q4_1x4_lanes_scalar.cpp, which this kernel and its AVX-512 VNNI sibling equal bit
// for bit (tests/test_matmul_quant.cpp).
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include "kernels/gemm_quant/x86/gemm_quant_gemv_driver.h"

namespace einfer::quant_detail {
namespace {

struct Q8 {
  static constexpr int64_t kStep = 32;
  static constexpr int64_t kScaleBytesPerStep = 4;  // per row
  struct A {
    __m256i a;
    __m256 sa;
  };
  static A load_a(const QuantGemm& p, int64_t s, bool /*last_partial*/) {
    return {load32(p.qa + s * kStep), _mm256_broadcast_ss(p.sa + s)};
  }
  // acc + cvt(dot(w, a)) * sw(s) * sa(s).
  static __m256 fma_dot(__m256 acc, __m256i w, const A& a, const float* sw, int64_t s,
                        bool /*last_partial*/) {
    const __m256i d = _mm256_madd_epi16(
        _mm256_maddubs_epi16(_mm256_abs_epi8(w), _mm256_sign_epi8(a.a, w)), _mm256_set1_epi16(1));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_mul_ps(_mm256_broadcast_ss(sw + s), a.sa),
                           acc);
  }
};

// The q4 step's dot products with maddubs: four products of unsigned nibbles (<= 15) and int8
// per int16 lane, |sum| <= 7620, then madd to int32, plus `start`.
struct DotQ4Avx2 {
  static __m256i dot(__m256i lo, __m256i even, __m256i hi, __m256i odd, __m256i start) {
    const __m256i p16 =
        _mm256_add_epi16(_mm256_maddubs_epi16(lo, even), _mm256_maddubs_epi16(hi, odd));
    return _mm256_add_epi32(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)), start);
  }
};

}  // namespace

void gemv_q8_1x4_avx2(const QuantGemm& p) {
  gemv_run<Q8>(p);
}
void gemv_q4_1x4_avx2(const QuantGemm& p) {
  gemv_q4_run<DotQ4Avx2>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
