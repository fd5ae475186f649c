// AVX2 GEMV microkernels of matmul_f32_quant (m == 1; prefill shapes: gemm_q8_q4_4x2_avx2.cpp):
// int8 x int8 (q8 weights) and int4 x int8 (q4 weights) dot products in int32, scaled once per
// group into float accumulators.
//
// A tile is 1 activation row x 8 weight rows (two 4-row blocks). Every K step
// (q8: one 32-byte chunk of 32 weights; q4: 32 bytes = 64 nibbles) gives each weight row one ymm
// of int32 partial sums; three hadds fold the 4 rows into [r0 r1 r2 r3 | r0 r1 r2 r3] (lower half:
// sums of the step's first 16 or 32 elements, upper half: the rest). These int vectors accumulate
// while the halves' groups stay the same, then one cvt + one fma scale 4 rows x 2 halves at once,
// with the scale vector [sw(r, g_lo) .. | sw(r, g_hi) ..] loaded from the weight scales.
//
// Signed x signed on AVX2: maddubs wants an unsigned first operand, so q8 uses |w| and sign(a, w)
// (|w| <= 128, |a| <= 127: a pair sum <= 32512 never saturates, exact for every int8 incl. -128).
// q4 nibbles u in [0, 15] are already unsigned: 32 bytes unpack with one AND (low nibbles = even
// elements) and one shift + AND (odd elements) against activations stored as 32 even then 32 odd
// elements per 64-block; dot(u - 8, a) = dot(u, a) - 8 * sum(a), the sums precomputed per chunk.
// With AVX-VNNI compiled in (__AVXVNNI__) vpdpbusd replaces maddubs + madd.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include <immintrin.h>

#include <cstring>

namespace einfer::quant_detail {
namespace {

inline __m256i load32(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

// int32 x 8 partial sums of u (unsigned bytes) . s (signed bytes), four products per lane.
inline __m256i dot_u8s8(__m256i u, __m256i s) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

// Two q4 products u0 . s0 + u1 . s1 (u <= 15: four pair sums <= 4 * 1905 fit int16).
inline __m256i dot2_u4s8(__m256i u0, __m256i s0, __m256i u1, __m256i s1) {
#if defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u0, s0), u1, s1);
#else
  const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(u0, s0), _mm256_maddubs_epi16(u1, s1));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
#endif
}

// [sum v0[0..3], v1[0..3], v2[0..3], v3[0..3] | the same over lanes 4..7].
inline __m256i reduce_rows4(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  return _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
}

// q8: a step is one 32-element chunk; both halves belong to the same group.
struct Q8 {
  static constexpr int64_t kStep = 32;
  static constexpr bool kHalvesShareGroup = true;  // groups are multiples of 32
  struct W {
    __m256i w, wabs;
  };
  using A = __m256i;
  static W load_w(const uint8_t* b) {
    const __m256i w = load32(b);
    return {w, _mm256_abs_epi8(w)};  // |-128| = 128 as unsigned
  }
  static A load_a(const QuantGemm& p, int64_t i, int64_t e) {
    return load32(p.qa + i * p.kpad + e);
  }
  static __m256i dot(const W& w, const A& a) { return dot_u8s8(w.wabs, _mm256_sign_epi8(a, w.w)); }
  static __m256i correction(const QuantGemm&, int64_t, int64_t) { return _mm256_setzero_si256(); }
};

// q4: a step is 32 bytes = 64 elements = two chunks (lower half of the sums: chunk e / 32).
struct Q4 {
  static constexpr int64_t kStep = 64;
  static constexpr bool kHalvesShareGroup = false;
  struct W {
    __m256i lo, hi;
  };
  struct A {
    __m256i even, odd;
  };
  static W load_w(const uint8_t* b) {
    const __m256i v = load32(b), m = _mm256_set1_epi8(0x0F);
    return {_mm256_and_si256(v, m), _mm256_and_si256(_mm256_srli_epi16(v, 4), m)};
  }
  static A load_a(const QuantGemm& p, int64_t i, int64_t e) {
    const int8_t* a = p.qa + i * p.kpad + e;
    return {load32(a), load32(a + 32)};
  }
  static __m256i dot(const W& w, const A& a) { return dot2_u4s8(w.lo, a.even, w.hi, a.odd); }
  // [8 * sum(chunk e/32) x 4 | 8 * sum(chunk e/32 + 1) x 4]
  static __m256i correction(const QuantGemm& p, int64_t i, int64_t e) {
    const int32_t* cs = p.csum + i * (p.kpad / kChunk) + e / kChunk;
    const __m256i two =
        _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cs)));
    return _mm256_permutevar8x32_epi32(two, _mm256_set_epi32(1, 1, 1, 1, 0, 0, 0, 0));
  }
};

// GEMV software prefetch. Weight rows are contiguous in memory, so the GEMV kernels prefetch the
// weights as one sequential stream kPrefetch bytes ahead (the tiles: of the tile's start, four
// cache lines, the 8 x 32 bytes a step consumes, per step; the weight scales kPrefetchTiles tiles
// ahead, one line per step). Rows of a decode-sized model are short (768 bytes for q8, 384 for
// q4 at k = 768): per-row streams are too short for the hardware prefetchers, and too few loads
// are in flight to hide DRAM latency. Measured on 64-128 MB of [2048 x 768] / [768 x 2048]
// matrices (einfer-quant-bench): 2 KB ahead ~0.6 of a streaming read, 4 KB ~0.75, 8 KB ~0.9,
// 16 KB about the same as 8 KB.
constexpr int64_t kPrefetch = 8192;
constexpr int64_t kPrefetchTiles = 2;

template <class Q, int MR, int NB>
struct Tile {
  static constexpr int NR = 4 * NB;

  // C[i0 .. i0+mr, j0 .. j0+nr) for mr == MR, nr <= NR (missing weight rows repeat the last one).
  // With `prefetch` (GEMV; GEMM tiles reuse their weights from L1) the weights and scales ahead
  // of this tile are prefetched (see kPrefetch).
  static void run(const QuantGemm& p, int64_t i0, int64_t j0, int64_t nr, bool prefetch) {
    const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
    const int64_t steps = (p.k + Q::kStep - 1) / Q::kStep;
    const int64_t full_steps = p.k / Q::kStep;
    const uint8_t* wr[NR];
    alignas(32) uint8_t wtail[NR][32];  // zero-padded bytes of the last partial step of each row
    for (int r = 0; r < NR; ++r) {
      wr[r] = p.w + (j0 + (r < nr ? r : nr - 1)) * p.w_row_bytes;
      if (full_steps != steps) {
        const size_t done = static_cast<size_t>(full_steps * 32);
        std::memset(wtail[r], 0, 32);
        std::memcpy(wtail[r], wr[r] + done, p.w_row_bytes - done);
      }
    }
    // Offsets of each block's weight scale rows (missing rows repeat the last one).
    int64_t row_off[NB][4];
    for (int b = 0; b < NB; ++b) {
      for (int r = 0; r < 4; ++r) row_off[b][r] = (4 * b + r < nr ? 4 * b + r : nr - 1) * p.groups;
    }
    const float* sw_base = p.sw + j0 * p.groups;

    __m256 acc[MR][NB];
    __m256i isum[MR][NB];
    for (int i = 0; i < MR; ++i) {
      for (int b = 0; b < NB; ++b) {
        acc[i][b] = _mm256_setzero_ps();
        isum[i][b] = _mm256_setzero_si256();
      }
    }
    int64_t cur_lo = -1, cur_hi = -1;  // groups of the two halves accumulated in isum
    auto flush = [&]() {
      __m256 sw[NB];
      for (int b = 0; b < NB; ++b) {
        const int64_t* o = row_off[b];
        const float* q = sw_base + cur_lo;
        const __m128 s_lo = _mm_setr_ps(q[o[0]], q[o[1]], q[o[2]], q[o[3]]);
        if (Q::kHalvesShareGroup) {
          sw[b] = _mm256_set_m128(s_lo, s_lo);
        } else {
          const float* h = sw_base + cur_hi;
          sw[b] = _mm256_set_m128(_mm_setr_ps(h[o[0]], h[o[1]], h[o[2]], h[o[3]]), s_lo);
        }
      }
      for (int i = 0; i < MR; ++i) {
        const float* sa = p.sa + (i0 + i) * p.groups;
        const __m256 sav = Q::kHalvesShareGroup ? _mm256_broadcast_ss(sa + cur_lo)
                                                : _mm256_set_m128(_mm_broadcast_ss(sa + cur_hi),
                                                                  _mm_broadcast_ss(sa + cur_lo));
        for (int b = 0; b < NB; ++b) {
          acc[i][b] =
              _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[i][b]), _mm256_mul_ps(sw[b], sav), acc[i][b]);
          isum[i][b] = _mm256_setzero_si256();
        }
      }
    };

    // Groups of the step's halves, advanced by comparison rather than division.
    int64_t lo = 0, hi = Q::kStep / 2 / p.group, lo_end = p.group, hi_end = (hi + 1) * p.group;
    auto step = [&](int64_t s, const uint8_t* const(&wp)[NR]) {
      const int64_t e = s * Q::kStep;
      while (e >= lo_end) {  // a q4 step may cross two groups of 32
        ++lo;
        lo_end += p.group;
      }
      while (e + Q::kStep / 2 >= hi_end) {
        ++hi;
        hi_end += p.group;
      }
      const int64_t hi_g = hi < p.groups ? hi : p.groups - 1;  // upper half past k: zeros
      if ((lo != cur_lo || hi_g != cur_hi) && cur_lo >= 0) flush();
      cur_lo = lo;
      cur_hi = hi_g;
      typename Q::A a[MR];
      __m256i corr[MR];
      for (int i = 0; i < MR; ++i) {
        a[i] = Q::load_a(p, i0 + i, e);
        corr[i] = Q::correction(p, i0 + i, e);
      }
      for (int b = 0; b < NB; ++b) {
        typename Q::W w[4];
        for (int r = 0; r < 4; ++r) w[r] = Q::load_w(wp[4 * b + r]);
        for (int i = 0; i < MR; ++i) {
          const __m256i d = reduce_rows4(Q::dot(w[0], a[i]), Q::dot(w[1], a[i]), Q::dot(w[2], a[i]),
                                         Q::dot(w[3], a[i]));
          isum[i][b] = _mm256_add_epi32(isum[i][b], _mm256_sub_epi32(d, corr[i]));
        }
      }
    };
    // Weight stream: [pf_w, pf_w_end) bytes still worth prefetching; scale stream likewise.
    const uint8_t* const w_end = p.w + p.n * rb;
    const uint8_t* pf_w = p.w + j0 * rb + kPrefetch;
    const int64_t tile_sw = NR * p.groups * static_cast<int64_t>(sizeof(float));
    const char* const sw_end = reinterpret_cast<const char*>(p.sw + p.n * p.groups);
    const char* pf_sw = reinterpret_cast<const char*>(sw_base) + kPrefetchTiles * tile_sw;
    const char* const pf_sw_stop = pf_sw + tile_sw < sw_end ? pf_sw + tile_sw : sw_end;
    for (int64_t s = 0; s < full_steps; ++s) {
      if (prefetch) {
        if (pf_w < w_end) {
          const char* a = reinterpret_cast<const char*>(pf_w);
          _mm_prefetch(a, _MM_HINT_T0);
          _mm_prefetch(a + 64, _MM_HINT_T0);
          _mm_prefetch(a + 128, _MM_HINT_T0);
          _mm_prefetch(a + 192, _MM_HINT_T0);
          pf_w += 256;
        }
        if (pf_sw < pf_sw_stop) {
          _mm_prefetch(pf_sw, _MM_HINT_T0);
          pf_sw += 64;
        }
      }
      const uint8_t* wp[NR];
      for (int r = 0; r < NR; ++r) wp[r] = wr[r] + s * 32;
      step(s, wp);
    }
    if (full_steps != steps) {
      const uint8_t* wp[NR];
      for (int r = 0; r < NR; ++r) wp[r] = wtail[r];
      step(full_steps, wp);
    }
    if (cur_lo >= 0) flush();

    for (int i = 0; i < MR; ++i) {
      float* c = p.c + (i0 + i) * p.ldc + j0;
      for (int b = 0; b < NB; ++b) {
        const __m128 v =
            _mm_add_ps(_mm256_castps256_ps128(acc[i][b]), _mm256_extractf128_ps(acc[i][b], 1));
        const int64_t left = nr - 4 * b;
        if (left >= 4) {
          _mm_storeu_ps(c + 4 * b, v);
        } else if (left > 0) {
          alignas(16) float tmp[4];
          _mm_store_ps(tmp, v);
          for (int64_t r = 0; r < left; ++r) c[4 * b + r] = tmp[r];
        }
      }
    }
  }
};

// Group-32 q8 GEMV, one weight row at a time in blocks of 8 groups (256 elements): each step's dot
// vector holds partial sums of one group; an hadd tree turns a block's vectors into the 8 group
// sums [g0 .. g7] of the row, which one cvt + fma scale by the contiguous weight and activation
// scales of those groups. Against the tiles this needs no gather of scales across rows and no
// per-group flush, and the weights are read as one sequential stream (software-prefetched kPrefetch
// bytes ahead, scales alike).
template <class Q>
struct RowG32 {
  static_assert(Q::kStep == 32, "q4 GEMVs in groups of 32 run gemv_q4_1x4");
  static constexpr int kSteps = 256 / Q::kStep;  // steps per block of 8 groups
  static constexpr int64_t kBlockBytes = kSteps * 32;

  static __m256i group_sums(const __m256i (&v)[kSteps]) {
    const __m256i x = reduce_rows4(v[0], v[1], v[2], v[3]);  // [g0..g3 lo | g0..g3 hi]
    const __m256i y = reduce_rows4(v[4], v[5], v[6], v[7]);
    return _mm256_add_epi32(_mm256_permute2x128_si256(x, y, 0x20),
                            _mm256_permute2x128_si256(x, y, 0x31));
  }

  static void run(const QuantGemm& p) {
    const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
    const int64_t full_steps = p.k / Q::kStep;
    const int64_t steps = (p.k + Q::kStep - 1) / Q::kStep;
    const int64_t full_blocks = full_steps / kSteps;
    const bool has_rest = full_blocks * kSteps < steps;
    const uint8_t* const w_end = p.w + p.n * rb;
    // Scales stream 32 bytes per block against kBlockBytes of weights: prefetch as far ahead.
    constexpr int64_t kPrefetchScales = kPrefetch * 32 / kBlockBytes;
    // Last, partial block: its activation scales zero-padded to 8 groups.
    const int64_t rest_g0 = full_blocks * 8;
    const int64_t rest_groups = p.groups - rest_g0;
    alignas(32) float sa_rest[8] = {};
    if (has_rest) {
      for (int64_t g = 0; g < rest_groups; ++g) sa_rest[g] = p.sa[rest_g0 + g];
    }
    for (int64_t j = 0; j < p.n; ++j) {
      const uint8_t* wr = p.w + j * rb;
      const float* swr = p.sw + j * p.groups;
      __m256 acc = _mm256_setzero_ps();
      for (int64_t b = 0; b < full_blocks; ++b) {
        const uint8_t* wb = wr + b * kBlockBytes;
        if (wb + kPrefetch < w_end) {
          for (int64_t l = 0; l < kBlockBytes; l += 64) {
            _mm_prefetch(reinterpret_cast<const char*>(wb + kPrefetch + l), _MM_HINT_T0);
          }
          _mm_prefetch(reinterpret_cast<const char*>(swr + 8 * b) + kPrefetchScales, _MM_HINT_T0);
        }
        __m256i v[kSteps];
        for (int t = 0; t < kSteps; ++t) {
          v[t] = Q::dot(Q::load_w(wb + t * 32), Q::load_a(p, 0, (b * kSteps + t) * Q::kStep));
        }
        const __m256i sums = group_sums(v);
        const __m256 scale =
            _mm256_mul_ps(_mm256_loadu_ps(swr + 8 * b), _mm256_loadu_ps(p.sa + 8 * b));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc);
      }
      if (has_rest) {
        alignas(32) uint8_t wtail[32] = {};
        alignas(32) float sw_rest[8] = {};
        for (int64_t g = 0; g < rest_groups; ++g) sw_rest[g] = swr[rest_g0 + g];
        __m256i v[kSteps];
        for (int t = 0; t < kSteps; ++t) {
          const int64_t st = full_blocks * kSteps + t;
          if (st < full_steps) {
            v[t] = Q::dot(Q::load_w(wr + st * 32), Q::load_a(p, 0, st * Q::kStep));
          } else if (st < steps) {  // the row's last bytes, zero-padded (activations are too)
            std::memcpy(wtail, wr + st * 32, static_cast<size_t>(rb - st * 32));
            v[t] = Q::dot(Q::load_w(wtail), Q::load_a(p, 0, st * Q::kStep));
          } else {
            v[t] = _mm256_setzero_si256();
          }
        }
        const __m256i sums = group_sums(v);
        const __m256 scale = _mm256_mul_ps(_mm256_load_ps(sw_rest), _mm256_load_ps(sa_rest));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), scale, acc);
      }
      __m128 h = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
      h = _mm_add_ps(h, _mm_movehl_ps(h, h));
      h = _mm_add_ss(h, _mm_movehdup_ps(h));
      p.c[j] = _mm_cvtss_f32(h);
    }
  }
};

// GEMV only (m == 1): prefill shapes run the 4x2 / VNNI 4x4 kernels (gemm_q8_q4_4x2_avx2.cpp), q4
// in groups of 32 gemv_q4_1x4 (gemm_q8_q4_1x4_avx2.cpp).
template <class Q>
void run(const QuantGemm& p) {
  // The row kernel works in whole blocks of 8 groups; a partial last block costs a full one, so it
  // only pays when that tail is small against the row (K = 288, 9 groups, would double the work).
  if constexpr (Q::kStep == 32) {
    if (p.m == 1 && p.group == 32 && (p.groups % 8 == 0 || p.groups >= 32)) {
      RowG32<Q>::run(p);
      return;
    }
  }
  for (int64_t j = 0; j < p.n; j += 8) {
    const int64_t nr = p.n - j < 8 ? p.n - j : 8;
    if (nr > 4) {
      Tile<Q, 1, 2>::run(p, 0, j, nr, true);
    } else {
      Tile<Q, 1, 1>::run(p, 0, j, nr, true);
    }
  }
}

}  // namespace

void gemm_q8_4x4_avx2(const QuantGemm& p) {
  run<Q8>(p);
}
void gemm_q4_4x4_avx2(const QuantGemm& p) {
  run<Q4>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
