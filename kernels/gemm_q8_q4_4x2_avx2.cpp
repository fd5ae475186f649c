// AVX2 prefill GEMM of matmul_f32_quant (m > 1): C[m, n] = A_q · W_qᵀ on 4 activation rows x 2
// weight rows, eight float accumulators that each hold 8 lanes of partial sums for one output
// (with the step's weights, the products and the constants: the 16 ymm registers; 4 x 3 spills).
// Tiling, K chunks and tails: kernels/gemm_quant_prefill_driver.h.
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
// FMA per 32-element block). tests/test_matmul_quant.cpp bounds the difference.
#include "kernels/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include "kernels/gemm_quant_prefill_driver.h"

namespace einfer::quant_detail {
namespace {

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

struct Q8 {
  static constexpr int64_t kStep = 32;
  struct W {
    __m256i w, wabs;
  };
  static W load_w(const uint8_t* b) {
    const __m256i w = load32(b);
    return {w, _mm256_abs_epi8(w)};  // |-128| = 128 as unsigned
  }
  static __m256i dot(const W& w, const int8_t* a, const int32_t* /*corr*/) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w.wabs, _mm256_sign_epi8(load32(a), w.w)),
                             _mm256_set1_epi16(1));
  }
  static void store_correction(const QuantGemm&, int64_t, int64_t, int32_t*) {}
  // One block per step: the same product in all lanes.
  static __m256 scale(const float* prod, int j) { return _mm256_broadcast_ss(prod + j); }
};

struct Q4 {
  static constexpr int64_t kStep = 64;
  struct W {
    __m256i lo, hi;
  };
  static W load_w(const uint8_t* b) {
    const __m256i v = load32(b), m = _mm256_set1_epi8(0x0F);
    return {_mm256_and_si256(v, m), _mm256_and_si256(_mm256_srli_epi16(v, 4), m)};
  }
  // u <= 15: four pair sums <= 4 * 1905 fit int16 before the widening madd.
  static __m256i dot(const W& w, const int8_t* a, const int32_t* corr) {
    const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(w.lo, load32(a)),
                                       _mm256_maddubs_epi16(w.hi, load32(a + 32)));
    return _mm256_sub_epi32(_mm256_madd_epi16(p, _mm256_set1_epi16(1)), load32(corr));
  }
  // [8 * sum(block 2s), 0, 0, 0 | 8 * sum(block 2s + 1), 0, 0, 0] of activation row i: a block's
  // dot product is spread over the 4 lanes of its half, the correction goes into one of them
  // (two zero extensions move the pair of int32 to lanes 0 and 4).
  static void store_correction(const QuantGemm& p, int64_t i, int64_t s, int32_t* out) {
    const int32_t* cs = p.csum + i * (p.kpad / kChunk) + 2 * s;
    const __m128i two = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(cs));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out),
                       _mm256_cvtepu32_epi64(_mm_cvtepu32_epi64(two)));
  }
  // [product of block 2s x 4 | product of block 2s + 1 x 4].
  static __m256 scale(const float* prod, int j) {
    return _mm256_setr_m128(_mm_broadcast_ss(prod + j), _mm_broadcast_ss(prod + 4 + j));
  }
};

// Adds to acc[i][j] the steps [s, s + steps) (absolute step numbers; `t` and `w` point at step s:
// the scale table's row and each weight row's bytes) for activation rows i0 .. i0 + MR.
template <class Q>
struct Kernel {
  static constexpr int64_t kStep = Q::kStep;
  static constexpr int kNR = 2;

  template <int MR>
  static void tile(const QuantGemm& p, int64_t i0, const uint8_t* const* w, int64_t s,
                   int64_t steps, const float (*t_sw)[8], const int32_t (*t_g)[2],
                   __m256 (*acc_io)[kPrefillMaxNR]) {
    // A local copy: the caller's array could alias the scale and activation loads, and the compiler
    // would store every accumulator back to memory after each FMA.
    __m256 acc[MR][kNR];
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < kNR; ++j) acc[i][j] = acc_io[i][j];
    }
    const int8_t* a[MR];
    const float* sa[MR];
    for (int i = 0; i < MR; ++i) {
      a[i] = p.qa + (i0 + i) * p.kpad + s * Q::kStep;
      sa[i] = p.sa + (i0 + i) * p.groups;
    }
    for (int64_t st = 0; st < steps; ++st) {
      // Scale products of the step, [sa(i, g_lo) sw(j0..j3, g_lo) | sa(i, g_hi) sw(j0..j3, g_hi)],
      // and q4's corrections, kept in memory: the loop below reads them as (broadcast) loads, so
      // only the accumulators and the step's weights occupy registers.
      const __m256 swv = _mm256_load_ps(t_sw[st]);
      alignas(32) float prod[MR][8];
      alignas(32) int32_t corr[MR][8];
      for (int i = 0; i < MR; ++i) {
        const __m256 sav = _mm256_setr_m128(_mm_broadcast_ss(sa[i] + t_g[st][0]),
                                            _mm_broadcast_ss(sa[i] + t_g[st][1]));
        _mm256_store_ps(prod[i], _mm256_mul_ps(sav, swv));
        Q::store_correction(p, i0 + i, s + st, corr[i]);
      }
      typename Q::W wv[kNR];
      for (int j = 0; j < kNR; ++j) wv[j] = Q::load_w(w[j] + st * 32);
      for (int i = 0; i < MR; ++i) {
        for (int j = 0; j < kNR; ++j) {
          const __m256 d = _mm256_cvtepi32_ps(Q::dot(wv[j], a[i] + st * Q::kStep, corr[i]));
          acc[i][j] = _mm256_fmadd_ps(d, Q::scale(prod[i], j), acc[i][j]);
        }
      }
    }
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < kNR; ++j) acc_io[i][j] = acc[i][j];
    }
  }
};

}  // namespace

void gemm_q8_4x2_avx2(const QuantGemm& p) {
  prefill_run<Kernel<Q8>>(p);
}
void gemm_q4_4x2_avx2(const QuantGemm& p) {
  prefill_run<Kernel<Q4>>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
