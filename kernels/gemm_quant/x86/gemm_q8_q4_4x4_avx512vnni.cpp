// AVX-512 VNNI prefill GEMM of matmul_f32_quant (m > 1), on 256-bit vectors (AVX512VL: no 512-bit
// frequency penalty, 32 ymm registers): 4 activation rows x 4 weight rows, sixteen float
// accumulators with 8 lanes of partial sums each. Tiling, K chunks and tails are the AVX2 kernel's
// (kernels/gemm_quant/x86/gemm_quant_prefill_driver.h); only the int8 dot products differ, so the
// tile's shape repeats gemm_q8_q4_4x2_avx2.cpp's: one ISA per file.
//
// vpdpbusd multiplies unsigned by signed bytes and adds four products per int32 lane to the lane,
// without the int16 saturation of maddubs, so:
// - q8: activations are shifted to unsigned once per (row, step), a + 128 (xor 0x80), and the
//   accumulator of each (activation row, weight row) pair starts from -128 * sum(w) of the weight
//   row's lane bytes (one vpdpbusd per weight row and step): dot(a, w) in one instruction per pair.
// - q4: the nibbles u are unsigned; the accumulator starts from -8 * sum(a) of each block (in lane
// 0
//   of its half, as in the AVX2 kernel), then two vpdpbusd add the low and high nibbles' products.
// Then one convert and one FMA with the block's scale product per pair, as in the AVX2 kernel.
// The int32 block sums equal the scalar twin's exactly; only the float accumulation order differs.
//
// The rest of the build may target plain x86-64-v3: this file compiles its kernels for AVX-512
// VNNI with a target pragma, and gemm_quant_dispatch.cpp calls them only when the ISA selection
// includes the avx512vnni extension (kernels/isa/isa.h: CPUID and OS support checked when
// selecting). GCC only: clang has no `#pragma GCC target`, so clang builds (the fuzzers) use the
// AVX2 kernels.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)

#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")

#include "kernels/gemm_quant/x86/gemm_quant_gemv_driver.h"
#include "kernels/gemm_quant/x86/gemm_quant_prefill_driver.h"

namespace einfer::quant_detail {
namespace {

struct Q8 {
  static constexpr int64_t kStep = 32;
  static constexpr int kNR = 4;
  struct W {
    __m256i w, start;  // start: -128 * (sum of the 4 weight bytes of each lane)
  };
  static W load_w(const uint8_t* b) {
    const __m256i w = load32(b);
    const __m256i sum128 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(-128), w);
    return {w, _mm256_sub_epi32(_mm256_setzero_si256(), sum128)};
  }
  using A = __m256i;  // a + 128 as unsigned bytes
  static A load_a(const QuantGemm&, int64_t, int64_t, const int8_t* a) {
    return _mm256_xor_si256(load32(a), _mm256_set1_epi8(-128));
  }
  static __m256i dot(const W& w, const A& a) { return _mm256_dpbusd_epi32(w.start, a, w.w); }
  static __m256 scale(const float* prod, int j) { return prefill_scale_one_block(prod, j); }
};

struct Q4 {
  static constexpr int64_t kStep = 64;
  static constexpr int kNR = 4;
  using W = Nibbles;
  static W load_w(const uint8_t* b) { return prefill_nibbles(b); }
  struct A {
    const int8_t* a;  // 32 even then 32 odd elements
    __m256i start;    // -prefill_q4_corrections
  };
  static A load_a(const QuantGemm& p, int64_t i, int64_t s, const int8_t* a) {
    return {a, _mm256_sub_epi32(_mm256_setzero_si256(), prefill_q4_corrections(p, i, s))};
  }
  static __m256i dot(const W& w, const A& a) {
    return _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(a.start, w.lo, load32(a.a)), w.hi,
                               load32(a.a + 32));
  }
  static __m256 scale(const float* prod, int j) { return prefill_scale_two_blocks(prod, j); }
};

// Decode (m == 1) q4 step (gemm_quant_gemv_driver.h, q4_dot): two vpdpbusd from `start`, no int16
// stage.
struct DotQ4Vnni {
  static __m256i dot(__m256i lo, __m256i even, __m256i hi, __m256i odd, __m256i start) {
    return _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(start, lo, even), hi, odd);
  }
};

// Decode (m == 1) q8 step: the weights turned unsigned, w + 128 (xor 0x80), against the signed
// activations in one vpdpbusd, from -128 sum(a) of each lane's four activations (computed once
// per step for the 4 rows): dot(w + 128, a) - 128 sum(a) = dot(w, a), exact in int32.
struct GemvQ8Vnni {
  static constexpr int64_t kStep = 32;
  static constexpr int64_t kScaleBytesPerStep = 4;
  struct A {
    __m256i a, neg_corr;
    __m256 sa;
  };
  static A load_a(const QuantGemm& p, int64_t s, bool /*last_partial*/) {
    const __m256i a = load32(p.qa + s * kStep);
    const __m256i corr = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(-128), a);
    return {a, _mm256_sub_epi32(_mm256_setzero_si256(), corr), _mm256_broadcast_ss(p.sa + s)};
  }
  static __m256 fma_dot(__m256 acc, __m256i w, const A& a, const float* sw, int64_t s,
                        bool /*last_partial*/) {
    const __m256i d =
        _mm256_dpbusd_epi32(a.neg_corr, _mm256_xor_si256(w, _mm256_set1_epi8(-128)), a.a);
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_mul_ps(_mm256_broadcast_ss(sw + s), a.sa),
                           acc);
  }
};

}  // namespace

void gemv_q4_1x4_avx512vnni(const QuantGemm& p) {
  gemv_q4_run<DotQ4Vnni>(p);
}
void gemv_q8_1x4_avx512vnni(const QuantGemm& p) {
  gemv_run<GemvQ8Vnni>(p);
}
void gemm_q8_4x4_avx512vnni(const QuantGemm& p) {
  prefill_run<Q8>(p);
}
void gemm_q4_4x4_avx512vnni(const QuantGemm& p) {
  prefill_run<Q4>(p);
}

}  // namespace einfer::quant_detail

#pragma GCC pop_options

#endif
