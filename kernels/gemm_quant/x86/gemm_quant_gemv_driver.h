// Private to kernels/gemm_quant/: the row loop of the x86 decode GEMVs of matmul_f32_quant (m == 1,
// groups of 32; gemm_q8_q4_1x4_avx2.cpp, gemm_q8_q4_4x4_avx512vnni.cpp): 4 weight rows per pass,
// one float accumulator of 8 lanes per row, the weights one sequential stream (the 4 rows are
// adjacent) software-prefetched kPrefetchBytes ahead, the scales alike, a last partial step read
// with masked loads, one horizontal reduction of the 4 rows at the end.
//
// The ISA files provide the step as a class Q: kStep (elements per step; a step reads 32 bytes of
// each weight row), kScaleBytesPerStep (weight scale bytes per row and step), the step's shared
// activation part `A load_a(p, s, last_partial)` and `__m256 fma_dot(acc, w, a, sw, s,
// last_partial)` = acc + the step's scaled dot products of weight row bytes w in 8 lanes;
// last_partial: the step runs past the row's last group (q4, an odd group count).
//
// q4 has its own row loop, gemv_q4_run (below): GemvQ4's step only runs the steps past its blocks.
//
// The float operations and their order are those of gemm_q8_q4_1x4_lanes_scalar.cpp, the scalar
// twin the kernels are tested against bit for bit: change one, change both.
//
// Everything here has internal linkage: each including file compiles it for its own ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {
namespace {

constexpr int64_t kPrefetchBytes = 8192;  // see kPrefetch in gemm_q8_q4_4x4_avx2.cpp

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

inline float hsum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// The row's last partial step (rest < 32 bytes), zero-filled past the row: the whole int32s by a
// masked load, the 1-3 bytes left in a scalar. No copy through memory: a call to memcpy here
// made GCC keep the accumulators on the stack for the whole loop.
inline __m256i load_tail(const uint8_t* b, int64_t rest) {
  if (rest == 16) {  // q4 rows of an odd group count (K = 288): half a step, one 16-byte load
    return _mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b)));
  }
  const int whole = static_cast<int>(rest / 4);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i v = _mm256_maskload_epi32(reinterpret_cast<const int*>(b),
                                    _mm256_cmpgt_epi32(_mm256_set1_epi32(whole), lane));
  if (rest % 4 != 0) {
    uint32_t last = 0;
    for (int64_t e = rest % 4; e-- > 0;) last = last << 8 | b[4 * whole + e];
    const __m256i at = _mm256_cmpeq_epi32(_mm256_set1_epi32(whole), lane);
    v = _mm256_or_si256(v, _mm256_and_si256(at, _mm256_set1_epi32(static_cast<int>(last))));
  }
  return v;
}

// Rows [j0, j0 + NR) of C. The rows are separate named accumulators, not an array (GCC kept an
// array of them on the stack, a store per row and step), and the prefetches are unconditional:
// prefetcht0 never faults, and the few lines past the matrix are not worth a compare per step.
template <class Q, int NR>
inline void gemv_rows(const QuantGemm& p, int64_t j0, int64_t full_steps, int64_t steps) {
  static_assert(NR == 1 || NR == 4);
  const int64_t rb = static_cast<int64_t>(p.w_row_bytes), gs = p.groups;
  const uint8_t* const w = p.w + j0 * rb;
  const float* const sw = p.sw + j0 * gs;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  // Weights kPrefetchBytes ahead at the pass's pace (NR * 32 bytes a step); scales as far ahead
  // in steps, one line per step (some of them repeated for q8, harmless).
  const char* pf_w = reinterpret_cast<const char*>(w) + kPrefetchBytes;
  const char* pf_sw =
      reinterpret_cast<const char*>(sw) + kPrefetchBytes / 32 * Q::kScaleBytesPerStep;
  for (int64_t s = 0; s < full_steps; ++s) {
    _mm_prefetch(pf_w, _MM_HINT_T0);
    if constexpr (NR == 4) _mm_prefetch(pf_w + 64, _MM_HINT_T0);
    _mm_prefetch(pf_sw, _MM_HINT_T0);
    pf_w += NR * 32;
    pf_sw += NR * Q::kScaleBytesPerStep;
    const typename Q::A a = Q::load_a(p, s, false);
    const uint8_t* const ws = w + s * 32;
    acc0 = Q::fma_dot(acc0, load32(ws), a, sw, s, false);
    if constexpr (NR == 4) {
      acc1 = Q::fma_dot(acc1, load32(ws + rb), a, sw + gs, s, false);
      acc2 = Q::fma_dot(acc2, load32(ws + 2 * rb), a, sw + 2 * gs, s, false);
      acc3 = Q::fma_dot(acc3, load32(ws + 3 * rb), a, sw + 3 * gs, s, false);
    }
  }
  if (full_steps < steps) {
    // A partial last step: fewer bytes than 32; for q4 the upper group may not exist.
    const bool last_partial = p.groups < (full_steps + 1) * (Q::kStep / 32);
    const typename Q::A a = Q::load_a(p, full_steps, last_partial);
    const uint8_t* const ws = w + full_steps * 32;
    const int64_t rest = rb - full_steps * 32;
    acc0 = Q::fma_dot(acc0, load_tail(ws, rest), a, sw, full_steps, last_partial);
    if constexpr (NR == 4) {
      acc1 = Q::fma_dot(acc1, load_tail(ws + rb, rest), a, sw + gs, full_steps, last_partial);
      acc2 =
          Q::fma_dot(acc2, load_tail(ws + 2 * rb, rest), a, sw + 2 * gs, full_steps, last_partial);
      acc3 =
          Q::fma_dot(acc3, load_tail(ws + 3 * rb, rest), a, sw + 3 * gs, full_steps, last_partial);
    }
  }
  if constexpr (NR == 4) {  // the 4 rows' horizontal sums at once
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(acc0, acc1), _mm256_hadd_ps(acc2, acc3));
    _mm_storeu_ps(p.c + j0, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
  } else {
    p.c[j0] = hsum(acc0);
  }
}

template <class Q>
void gemv_run(const QuantGemm& p) {
  const int64_t steps = (p.k + Q::kStep - 1) / Q::kStep;
  const int64_t full_steps = p.k / Q::kStep;
  int64_t j = 0;
  for (; j + 4 <= p.n; j += 4) gemv_rows<Q, 4>(p, j, full_steps, steps);
  for (; j < p.n; ++j) gemv_rows<Q, 1>(p, j, full_steps, steps);
}

// start + the products of a q4 step's 32 bytes w: the low nibbles (even elements) against `even`,
// the high nibbles (odd elements) against `odd`; 8 int32 lanes, 4 per group (Dot::dot: the ISA's
// unsigned x signed byte dot products, exact in int32).
template <class Dot>
inline __m256i q4_dot(__m256i w, __m256i even, __m256i odd, __m256i start) {
  const __m256i m = _mm256_set1_epi8(0x0F);
  return Dot::dot(_mm256_and_si256(w, m), even, _mm256_and_si256(_mm256_srli_epi16(w, 4), m), odd,
                  start);
}

// q4: a step is 32 bytes = 64 elements = groups 2s and 2s + 1, the activations stored as the
// block's 32 even then 32 odd elements (permute_blocks_even_odd64), so the low nibbles (even
// elements) and the high nibbles (odd elements) of the 32 bytes meet their activations without a
// shuffle; int32 lanes 0-3 hold group 2s, lanes 4-7 group 2s + 1. dot(u - 8, a) = dot(u, a) -
// 8 sum(a): the chunk sums (chunk_sums_times8), negated, go in lanes 0 and 4 of the step's
// correction, added once per row (Dot::dot: maddubs + madd on AVX2, the accumulator vpdpbusd
// starts from on AVX-512 VNNI). A row ending in half a step (K = 288: 4.5 steps) has no group 2s +
// 1 there: its scale half is zero and never read past the row.
template <class Dot>
struct GemvQ4 {
  static constexpr int64_t kStep = 64;
  static constexpr int64_t kScaleBytesPerStep = 8;
  struct A {
    __m256i even, odd, neg_corr;
    __m256 sa;  // [sa(2s) x 4 | sa(2s + 1) x 4]
  };
  static A load_a(const QuantGemm& p, int64_t s, bool last_partial) {
    const int8_t* a = p.qa + s * kStep;
    const __m128i two = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p.csum + 2 * s));
    const __m256i corr = _mm256_permutevar8x32_epi32(_mm256_zextsi128_si256(two),
                                                     _mm256_setr_epi32(0, 2, 2, 2, 1, 2, 2, 2));
    const __m256i neg_corr = _mm256_sub_epi32(_mm256_setzero_si256(), corr);
    const __m128 lo = _mm_broadcast_ss(p.sa + 2 * s);
    const __m128 hi = last_partial ? _mm_setzero_ps() : _mm_broadcast_ss(p.sa + 2 * s + 1);
    return {load32(a), load32(a + 32), neg_corr, _mm256_setr_m128(lo, hi)};
  }
  static __m256 fma_dot(__m256 acc, __m256i w, const A& a, const float* sw, int64_t s,
                        bool last_partial) {
    const __m256i d = q4_dot<Dot>(w, a.even, a.odd, a.neg_corr);
    const __m128 two =
        last_partial
            ? _mm_load_ss(sw + 2 * s)
            : _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sw + 2 * s)));
    const __m256 swv = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(two),
                                                _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), _mm256_mul_ps(swv, a.sa), acc);
  }
};

// The q4 GEMV's own row loop (gemv_q4_run): 4 rows per pass (8 for rows of one block, q4_pass)
// in blocks of 4 steps (8 groups). A row's 4 step vectors hold 4 int32 partial sums per group;
// they fold with unpacks and adds (not hadd: 2 cycles each on Zen 4) into its 8 group sums, less
// the 8 corrections, then one convert and one FMA with the 8 scale products: one FMA per row and 8
// groups instead of one per 2, the FMA ports left to the dot products. Steps past the last whole
// block take GemvQ4's per-step path; a row ending in half a step (K = 288) takes one 16-byte step
// per row, a pass's rows folded alike. The blocks' steps start from zero (q4_dot), the corrections
// subtracted after the fold.

// [sum of the 4 lanes of each 128-bit half of d0, d1, d2, d3]: lanes [d0.lo d1.lo d2.lo d3.lo |
// d0.hi d1.hi d2.hi d3.hi].
inline __m256i fold4_epi32(__m256i d0, __m256i d1, __m256i d2, __m256i d3) {
  const __m256i x01 =
      _mm256_add_epi32(_mm256_unpacklo_epi32(d0, d1), _mm256_unpackhi_epi32(d0, d1));
  const __m256i x23 =
      _mm256_add_epi32(_mm256_unpacklo_epi32(d2, d3), _mm256_unpackhi_epi32(d2, d3));
  return _mm256_add_epi32(_mm256_unpacklo_epi64(x01, x23), _mm256_unpackhi_epi64(x01, x23));
}
// The 4 rows' horizontal sums [r0 r1 r2 r3]: each row's lanes summed as ((0+2)+(1+3)) +
// ((4+6)+(5+7)).
inline __m128 fold4_ps(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 x01 = _mm256_add_ps(_mm256_unpacklo_ps(a0, a1), _mm256_unpackhi_ps(a0, a1));
  const __m256 x23 = _mm256_add_ps(_mm256_unpacklo_ps(a2, a3), _mm256_unpackhi_ps(a2, a3));
  const __m256 y =
      _mm256_add_ps(_mm256_shuffle_ps(x01, x23, 0x44), _mm256_shuffle_ps(x01, x23, 0xEE));
  return _mm_add_ps(_mm256_castps256_ps128(y), _mm256_extractf128_ps(y, 1));
}

constexpr auto kHint = _MM_HINT_T1;
// Two lines into L2. In asm: GCC 12 dropped _mm_prefetch calls from q4_pass's unrolled row loop
// (the 110M q4 decode, DRAM-bound, then ran at half speed).
inline void prefetch2(const char* p, int64_t at) {
  asm volatile("prefetcht1 %0\n\tprefetcht1 %1" : : "m"(p[at]), "m"(p[at + 64]));
}

// One step of a block: 32 weight bytes at w against the 64 activations at a (even, then odd).
template <class Dot>
inline __m256i q4_step(const uint8_t* w, const int8_t* a) {
  return q4_dot<Dot>(load32(w), load32(a), load32(a + 32), _mm256_setzero_si256());
}

// acc + the block's 8 group dot products of one row, scaled: w the row's 128 bytes of the block,
// a its 256 activations (4 steps of even then odd), sw the row's 8 scales.
template <class Dot>
[[gnu::always_inline]] inline __m256 q4_block(__m256 acc, const uint8_t* w, const int8_t* a,
                                              const float* sw, __m256 sa, __m256i csum) {
  const __m256i y = fold4_epi32(q4_step<Dot>(w, a), q4_step<Dot>(w + 32, a + 64),
                                q4_step<Dot>(w + 64, a + 128), q4_step<Dot>(w + 96, a + 192));
  // y = [g0 g2 g4 g6 | g1 g3 g5 g7]: to natural order, less 8 sum(a) of each group.
  const __m256i g = _mm256_sub_epi32(
      _mm256_permutevar8x32_epi32(y, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)), csum);
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(g), _mm256_mul_ps(_mm256_loadu_ps(sw), sa), acc);
}

// The shape of a q4 GEMV's rows, shared by its passes.
struct Q4Rows {
  int64_t steps, full_steps, blocks, rb, gs;
  bool half_tail;  // a last step of exactly one whole group (16 bytes, K = 288)
};

// The last half step of a pass's rows at w (half_tail: group 2 full_steps, 16 bytes a row): its
// activations in both halves of a vector, and two rows' dot products at a time.
template <class Dot>
struct HalfStep {
  __m256i even, odd;
  const uint8_t* wt;  // the first row's 16 bytes
  int64_t rb;

  static __m256i both_halves(const int8_t* a) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a)));
  }
  HalfStep(const QuantGemm& p, const Q4Rows& r, const uint8_t* w)
      : even(both_halves(p.qa + r.full_steps * 64)),
        odd(both_halves(p.qa + r.full_steps * 64 + 32)),
        wt(w + r.full_steps * 32),
        rb(r.rb) {}
  // Rows i and i + 1 in one vector, [row i | row i + 1], 4 int32 lanes each.
  __m256i two(int i) const {
    const __m256i v = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wt + i * rb))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(wt + (i + 1) * rb)), 1);
    return q4_dot<Dot>(v, even, odd, _mm256_setzero_si256());
  }
};

// The 4 rows' last half step at w, their scaled products.
template <class Dot>
[[gnu::always_inline]] inline __m128 q4_half_tail(const QuantGemm& p, const Q4Rows& r,
                                                  const uint8_t* w, const float* sw) {
  const int64_t g = 2 * r.full_steps, gs = r.gs;
  const HalfStep<Dot> h(p, r, w);
  const __m256i d01 = h.two(0), d23 = h.two(2);
  // [r0 r2 r0 r2 | r1 r3 r1 r3] (pairs of lanes, then halves), then [r0 r1 r2 r3].
  __m256i x = _mm256_add_epi32(_mm256_unpacklo_epi32(d01, d23), _mm256_unpackhi_epi32(d01, d23));
  x = _mm256_add_epi32(x, _mm256_shuffle_epi32(x, 0x4E));
  const __m128i t =
      _mm_sub_epi32(_mm_unpacklo_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)),
                    _mm_set1_epi32(p.csum[g]));
  const __m128 swv = _mm_setr_ps(sw[g], sw[gs + g], sw[2 * gs + g], sw[3 * gs + g]);
  return _mm_mul_ps(_mm_cvtepi32_ps(t), _mm_mul_ps(swv, _mm_set1_ps(p.sa[g])));
}

// q4_half_tail for 8 rows [lo 4 | hi 4]: one fold for the 8 rows' 4 vectors.
template <class Dot>
[[gnu::always_inline]] inline __m256 q4_half_tail8(const QuantGemm& p, const Q4Rows& r,
                                                   const uint8_t* w, const float* sw) {
  const int64_t g = 2 * r.full_steps, gs = r.gs;
  const HalfStep<Dot> h(p, r, w);
  // fold4 of [r0|r1] [r2|r3] [r4|r5] [r6|r7] = [r0 r2 r4 r6 | r1 r3 r5 r7], then natural order.
  const __m256i x = fold4_epi32(h.two(0), h.two(2), h.two(4), h.two(6));
  const __m256i t =
      _mm256_sub_epi32(_mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)),
                       _mm256_set1_epi32(p.csum[g]));
  const float* const s = sw + g;
  const __m256 swv =
      _mm256_setr_ps(s[0], s[gs], s[2 * gs], s[3 * gs], s[4 * gs], s[5 * gs], s[6 * gs], s[7 * gs]);
  return _mm256_mul_ps(_mm256_cvtepi32_ps(t), _mm256_mul_ps(swv, _mm256_set1_ps(p.sa[g])));
}

// Rows [j, j + NR), NR = 8 (rows of K < 512) or 4. 8-row passes spread each pass's fixed work
// (the block's activation loads, the final lane folds, the chain from the last block to the store)
// over twice the rows, which pays where a row is one block: per row of K = 288 (Zen 4,
// L2-resident) 16.8 -> 15.1 cycles with AVX-512 VNNI (32 registers), 20.5 -> 19.0 with AVX2 (16:
// the activations come from L1 as operands). From K = 512 they gained nothing in cache, and with
// the weights streaming from DRAM (110M shape, K = 768) 8 rows' interleaved streams decoded about
// 10% slower than 4. Each row's float operations are the same whatever NR.
template <class Dot, int NR>
[[gnu::always_inline]] inline void q4_pass(const QuantGemm& p, const Q4Rows& r, int64_t j) {
  using Q = GemvQ4<Dot>;
  const int64_t rb = r.rb, gs = r.gs;
  const uint8_t* const w = p.w + j * rb;
  const float* const sw = p.sw + j * gs;
  const int64_t pass_bytes = NR * rb, pass_scale_bytes = NR * gs * 4;
  const int64_t passes_ahead = kPrefetchBytes / pass_bytes > 0 ? kPrefetchBytes / pass_bytes : 1;
  const int64_t scale_ahead = passes_ahead * pass_scale_bytes;
  // Prefetch kPrefetchBytes ahead (scales as many passes ahead), two lines per row and block
  // spread over the pass (bunched, they stalled the demand loads from DRAM), the pass's last
  // lines after its blocks: the pass's pace exactly, whatever the row length.
  const char* pf = reinterpret_cast<const char*>(w) + kPrefetchBytes;
  const char* pf_s = reinterpret_cast<const char*>(sw) + scale_ahead;
  __m256 acc[NR];
#pragma GCC unroll 8
  for (int i = 0; i < NR; ++i) acc[i] = _mm256_setzero_ps();
  for (int64_t b = 0; b < r.blocks; ++b) {
    const int8_t* const a = p.qa + b * 4 * Q::kStep;
    const __m256 sa = _mm256_loadu_ps(p.sa + 8 * b);
    const __m256i csum = load32(p.csum + 8 * b);
    const uint8_t* const wb = w + b * 128;
#pragma GCC unroll 8
    for (int i = 0; i < NR; ++i) {
      prefetch2(pf, 128 * i);
      acc[i] = q4_block<Dot>(acc[i], wb + i * rb, a, sw + i * gs + 8 * b, sa, csum);
    }
#pragma GCC unroll 2
    for (int i = 0; i < NR / 4; ++i) prefetch2(pf_s, 128 * i);
    pf += 128 * NR;
    pf_s += 32 * NR;
  }
  for (const char* const end = reinterpret_cast<const char*>(w) + kPrefetchBytes + pass_bytes;
       pf < end; pf += 64)
    _mm_prefetch(pf, kHint);
  for (const char* const end = reinterpret_cast<const char*>(sw) + scale_ahead + pass_scale_bytes;
       pf_s < end; pf_s += 64)
    _mm_prefetch(pf_s, kHint);
  for (int64_t s = r.blocks * 4; s < r.full_steps; ++s) {
    const typename Q::A a = Q::load_a(p, s, false);
    const uint8_t* const ws = w + s * 32;
#pragma GCC unroll 8
    for (int i = 0; i < NR; ++i)
      acc[i] = Q::fma_dot(acc[i], load32(ws + i * rb), a, sw + i * gs, s, false);
  }
  __m128 tail[NR / 4];
#pragma GCC unroll 2
  for (int q = 0; q < NR / 4; ++q) tail[q] = _mm_setzero_ps();
  if (r.half_tail) {
    if constexpr (NR == 8) {
      const __m256 t = q4_half_tail8<Dot>(p, r, w, sw);
      tail[0] = _mm256_castps256_ps128(t);
      tail[NR / 4 - 1] = _mm256_extractf128_ps(t, 1);
    } else {
      tail[0] = q4_half_tail<Dot>(p, r, w, sw);
    }
  } else if (r.full_steps < r.steps) {
    const bool last_partial = p.groups < (r.full_steps + 1) * 2;
    const typename Q::A a = Q::load_a(p, r.full_steps, last_partial);
    const uint8_t* const ws = w + r.full_steps * 32;
    const int64_t rest = rb - r.full_steps * 32;
#pragma GCC unroll 8
    for (int i = 0; i < NR; ++i)
      acc[i] = Q::fma_dot(acc[i], load_tail(ws + i * rb, rest), a, sw + i * gs, r.full_steps,
                          last_partial);
  }
#pragma GCC unroll 2
  for (int q = 0; q < NR / 4; ++q)
    _mm_storeu_ps(
        p.c + j + 4 * q,
        _mm_add_ps(fold4_ps(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]), tail[q]));
}

template <class Dot>
void gemv_q4_run(const QuantGemm& p) {
  using Q = GemvQ4<Dot>;
  Q4Rows r{};
  r.steps = (p.k + Q::kStep - 1) / Q::kStep;
  r.full_steps = p.k / Q::kStep;
  r.blocks = r.full_steps / 4;
  r.rb = static_cast<int64_t>(p.w_row_bytes);
  r.gs = p.groups;
  r.half_tail = r.full_steps < r.steps && r.rb - r.full_steps * 32 == 16;
  int64_t j = 0;
  if (r.blocks <= 1) {  // short rows (K < 512) only: see q4_pass
    for (; j + 8 <= p.n; j += 8) q4_pass<Dot, 8>(p, r, j);
  }
  for (; j + 4 <= p.n; j += 4) q4_pass<Dot, 4>(p, r, j);
  for (; j < p.n; ++j) gemv_rows<Q, 1>(p, j, r.full_steps, r.steps);
}

}  // namespace
}  // namespace einfer::quant_detail
