// AVX2 prefill GEMM of matmul_f32_quant (m > 1): C[m, n] = A_q · W_qᵀ on 4 activation rows x 2
// weight rows, eight float accumulators that each hold 8 lanes of partial sums for one output
// (with the step's weights, the products and the constants: the 16 ymm registers; 4 x 3 spills).
// Tiling, K chunks and tails: kernels/gemm_quant/x86/gemm_quant_prefill_driver.h. Its AVX-512 VNNI
// twin (gemm_q8_q4_4x4_avx512vnni.cpp) repeats the tile's shape with other dot products: one ISA
// per file.
//
// Per K step (q8: 32 weights = one block of 32; q4: 32 bytes = 64 weights = two blocks) every
// (activation row i, weight row j) pair gets one int32 x 8 vector of exact block dot products
// (maddubs + madd, no saturation: see below), converted once and multiplied into its accumulator
// by one FMA with the block's scale product sa(i, g) * sw(j, g). No horizontal add runs inside the
// K loop: each accumulator is reduced once at the end of the tile.
//
// Scales: for each weight tile and K chunk the weight scales of its rows are gathered once into a
// small table (one vector per step, [sw(j0..j3, g_lo) | sw(j0..j3, g_hi)]), reused by every
// activation tile; per (activation row, step) one multiply gives the products for all weight rows,
// stored to the stack and read back by the FMAs as broadcasts.
//
// Signed x signed on AVX2 (q8): maddubs wants an unsigned first operand, so the kernel uses |w|
// and sign(a, w) (|w| <= 128, |a| <= 127: a pair sum <= 32512 never saturates). q4 nibbles u in
// [0, 15] are unsigned already; activations are stored as 32 even then 32 odd elements per
// 64-block (permute_blocks_even_odd64) so the low and high nibbles of one 32-byte load meet their
// activations, and dot(u - 8, a) = dot(u, a) - 8 * sum(a) with the chunk sums precomputed.
// Lanes 0-3 of a q4 step's vector hold the first block (bytes 0-15 = elements 0-31), lanes 4-7
// the second, hence the [lo | hi] scale vectors.
//
// Results differ from the scalar int twin (gemm_q8_q4_1x1_scalar.cpp) only by float rounding: the
// int32 block sums are identical, their scaled sum is accumulated in another order (8 lanes, one
// FMA per 32-element block). tests/test_gemm_quant_dispatch.cpp bounds the difference.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include "kernels/gemm_quant/x86/gemm_quant_prefill_driver.h"

namespace einfer::quant_detail {
namespace {

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

struct Q8 {
  static constexpr int64_t kStep = 32;
  static constexpr int kNR = 2;
  struct W {
    __m256i w, wabs;
  };
  static W load_w(const uint8_t* b) {
    const __m256i w = load32(b);
    return {w, _mm256_abs_epi8(w)};  // |-128| = 128 as unsigned
  }
  using A = __m256i;
  static A load_a(const QuantGemm&, int64_t, int64_t, const int8_t* a) { return load32(a); }
  static __m256i dot(const W& w, const A& a) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w.wabs, _mm256_sign_epi8(a, w.w)),
                             _mm256_set1_epi16(1));
  }
  static __m256 scale(const float* prod, int j) { return prefill_scale_one_block(prod, j); }
};

struct Q4 {
  static constexpr int64_t kStep = 64;
  static constexpr int kNR = 2;
  using W = Nibbles;
  static W load_w(const uint8_t* b) { return prefill_nibbles(b); }
  struct A {
    const int8_t* a;  // 32 even then 32 odd elements
    __m256i corr;     // prefill_q4_corrections
  };
  static A load_a(const QuantGemm& p, int64_t i, int64_t s, const int8_t* a) {
    return {a, prefill_q4_corrections(p, i, s)};
  }
  // u <= 15: four pair sums <= 4 * 1905 fit int16 before the widening madd.
  static __m256i dot(const W& w, const A& a) {
    const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(w.lo, load32(a.a)),
                                       _mm256_maddubs_epi16(w.hi, load32(a.a + 32)));
    return _mm256_sub_epi32(_mm256_madd_epi16(p, _mm256_set1_epi16(1)), a.corr);
  }
  static __m256 scale(const float* prod, int j) { return prefill_scale_two_blocks(prod, j); }
};

}  // namespace

void gemm_q8_4x2_avx2(const QuantGemm& p) {
  prefill_run<Q8>(p);
}
void gemm_q4_4x2_avx2(const QuantGemm& p) {
  prefill_run<Q4>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
