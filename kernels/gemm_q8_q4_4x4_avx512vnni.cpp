// AVX-512 VNNI prefill GEMM of matmul_f32_quant (m > 1), on 256-bit vectors (AVX512VL: no 512-bit
// frequency penalty, 32 ymm registers): 4 activation rows x 4 weight rows, sixteen float
// accumulators with 8 lanes of partial sums each. Tiling, K chunks and tails are the AVX2 kernel's
// (kernels/gemm_quant_prefill_driver.h); only the int8 dot products differ.
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
// VNNI with a target pragma, and matmul_quant.cpp calls them only when cpu_has_avx512_vnni().
#include "kernels/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#include <cstring>

namespace einfer::quant_detail {

bool cpu_has_avx512_vnni() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

namespace {
bool g_vnni_disallowed = false;  // constant-initialized: no static constructor
}  // namespace

bool use_avx512_vnni() {
  return !g_vnni_disallowed && cpu_has_avx512_vnni();
}

void set_avx512_vnni_allowed(bool allowed) {
  g_vnni_disallowed = !allowed;
}

}  // namespace einfer::quant_detail

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")

#include "kernels/gemm_quant_prefill_driver.h"

namespace einfer::quant_detail {
namespace {

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

struct Q8 {
  static constexpr int64_t kStep = 32;
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
  static __m256 scale(const float* prod, int j) { return _mm256_set1_ps(prod[j]); }
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
  struct A {
    const int8_t* a;  // 32 even then 32 odd elements
    __m256i start;    // [-8 * sum(block 2s), 0, 0, 0 | -8 * sum(block 2s + 1), 0, 0, 0]
  };
  static A load_a(const QuantGemm& p, int64_t i, int64_t s, const int8_t* a) {
    const int32_t* cs = p.csum + i * (p.kpad / kChunk) + 2 * s;
    const __m128i two = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(cs));
    return {a, _mm256_sub_epi32(_mm256_setzero_si256(),
                                _mm256_cvtepu32_epi64(_mm_cvtepu32_epi64(two)))};
  }
  static __m256i dot(const W& w, const A& a) {
    return _mm256_dpbusd_epi32(_mm256_dpbusd_epi32(a.start, w.lo, load32(a.a)), w.hi,
                               load32(a.a + 32));
  }
  static __m256 scale(const float* prod, int j) {
    return _mm256_setr_m128(_mm_broadcast_ss(prod + j), _mm_broadcast_ss(prod + 4 + j));
  }
};

template <class Q>
struct Kernel {
  static constexpr int64_t kStep = Q::kStep;
  static constexpr int kNR = 4;

  template <int MR>
  static void tile(const QuantGemm& p, int64_t i0, const uint8_t* const* w, int64_t s,
                   int64_t steps, const float (*t_sw)[8], const int32_t (*t_g)[2],
                   __m256 (*acc_io)[kPrefillMaxNR]) {
    __m256 acc[MR][kNR];  // a local copy the compiler keeps in registers
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
      const __m256 swv = _mm256_load_ps(t_sw[st]);
      alignas(32) float prod[MR][8];  // [sa(i, g_lo) sw(j, g_lo) | sa(i, g_hi) sw(j, g_hi)]
      for (int i = 0; i < MR; ++i) {
        const __m256 sav = _mm256_setr_m128(_mm_broadcast_ss(sa[i] + t_g[st][0]),
                                            _mm_broadcast_ss(sa[i] + t_g[st][1]));
        _mm256_store_ps(prod[i], _mm256_mul_ps(sav, swv));
      }
      typename Q::W wv[kNR];
      for (int j = 0; j < kNR; ++j) wv[j] = Q::load_w(w[j] + st * 32);
      for (int i = 0; i < MR; ++i) {
        const typename Q::A av = Q::load_a(p, i0 + i, s + st, a[i] + st * Q::kStep);
        for (int j = 0; j < kNR; ++j) {
          const __m256 d = _mm256_cvtepi32_ps(Q::dot(wv[j], av));
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

void gemm_q8_4x4_avx512vnni(const QuantGemm& p) {
  prefill_run<Kernel<Q8>>(p);
}
void gemm_q4_4x4_avx512vnni(const QuantGemm& p) {
  prefill_run<Kernel<Q4>>(p);
}

}  // namespace einfer::quant_detail

#pragma GCC pop_options

#endif
