// Private to kernels/gemm_quant/: the K-loop-free parts of the x86 prefill GEMMs of
// matmul_f32_quant (gemm_q8_q4_4x2_avx2.cpp, gemm_q8_q4_4x4_avx512vnni.cpp): weight tiles of K::kNR
// rows outside, activation tiles of up to 4 rows inside (a weight tile is read from memory once and
// reused from L1 for all m rows), K in chunks whose weight scales are gathered once per weight
// tile, the zero-padded last partial step, and the one horizontal reduction per output at the end.
//
// The ISA files provide the int8 dot products as a class Q: kStep (elements per step: 32 for q8,
// 64 for q4; a step reads 32 bytes of each weight row), kNR (weight rows per tile, <= 4), the
// step's weight vectors `W load_w(const uint8_t*)`, an activation row's step
// `A load_a(p, i, s, const int8_t*)`, `__m256i dot(W, A)` (8 int32 lanes whose sum per 128-bit
// half, q4, or in all, q8, is the exact block dot product) and `__m256 scale(prod, j)` (the scale
// products laid out as the dot's lanes). PrefillTile<Q> runs the K loop on them.
//
// Everything here has internal linkage: each including file compiles it for its own ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {
namespace {

constexpr int kPrefillMR = 4;                // activation rows per tile
constexpr int kPrefillMaxNR = 4;             // weight rows per tile, at most
constexpr int64_t kPrefillChunkSteps = 256;  // steps per K chunk: bounds the scale table (10 KB)

// Weight scales of one tile over a chunk of steps.
struct PrefillScales {
  alignas(32) float sw[kPrefillChunkSteps][8];
  int32_t g[kPrefillChunkSteps][2];
};

// Group of 32-element block b, clamped: blocks past k (zero padding of the last step) reuse the
// last group's scales, their products are zero.
inline int64_t prefill_block_group(const QuantGemm& p, int64_t b) {
  const int64_t g = b * kChunk / p.group;
  return g < p.groups ? g : p.groups - 1;
}

template <class K>
void prefill_fill_scales(const QuantGemm& p, int64_t j0, int64_t nr, int64_t s0, int64_t steps,
                         PrefillScales* t) {
  constexpr int64_t kBlocksPerStep = K::kStep / kChunk;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t b = (s0 + s) * kBlocksPerStep;
    const int64_t g_lo = prefill_block_group(p, b);
    const int64_t g_hi = prefill_block_group(p, b + kBlocksPerStep - 1);
    t->g[s][0] = static_cast<int32_t>(g_lo);
    t->g[s][1] = static_cast<int32_t>(g_hi);
    for (int r = 0; r < 4; ++r) {
      const int64_t j = j0 + (r < nr ? r : nr - 1);  // missing rows repeat the last one
      t->sw[s][r] = p.sw[j * p.groups + g_lo];
      t->sw[s][4 + r] = p.sw[j * p.groups + g_hi];
    }
  }
}

// Scale vectors of weight row j from a step's products prod = [sa sw(j0..j3) (g_lo) | (g_hi)]:
// one block per step (q8) in all lanes, or two (q4) in the two halves.
inline __m256 prefill_scale_one_block(const float* prod, int j) {
  return _mm256_broadcast_ss(prod + j);
}
inline __m256 prefill_scale_two_blocks(const float* prod, int j) {
  return _mm256_setr_m128(_mm_broadcast_ss(prod + j), _mm_broadcast_ss(prod + 4 + j));
}

// q4 weight bytes -> low nibbles (even elements) and high nibbles (odd elements), unsigned.
struct Nibbles {
  __m256i lo, hi;
};
inline Nibbles prefill_nibbles(const uint8_t* b) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  const __m256i m = _mm256_set1_epi8(0x0F);
  return {_mm256_and_si256(v, m), _mm256_and_si256(_mm256_srli_epi16(v, 4), m)};
}

// [c(block 2s), 0, 0, 0 | c(block 2s + 1), 0, 0, 0] from 8 * sum(a) of the step's two blocks of
// row i: a block's dot product is spread over the 4 lanes of its half, a correction goes into one
// of them (two zero extensions move the pair of int32 to lanes 0 and 4).
inline __m256i prefill_q4_corrections(const QuantGemm& p, int64_t i, int64_t s) {
  const int32_t* cs = p.csum + i * (p.kpad / kChunk) + 2 * s;
  const __m128i two = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(cs));
  return _mm256_cvtepu32_epi64(_mm_cvtepu32_epi64(two));
}

template <class Q>
struct PrefillTile {
  static constexpr int64_t kStep = Q::kStep;
  static constexpr int kNR = Q::kNR;

  // Adds steps [s, s + steps) of activation rows i0 .. i0 + MR and weight rows w[] (pointing at
  // step s) to acc[i][j]; t_sw[st] = [sw(j0..j3, g_lo) | sw(j0..j3, g_hi)], t_g[st] = {g_lo, g_hi}
  // (the groups of the step's first and last 32 elements).
  template <int MR>
  static void tile(const QuantGemm& p, int64_t i0, const uint8_t* const* w, int64_t s,
                   int64_t steps, const float (*t_sw)[8], const int32_t (*t_g)[2],
                   __m256 (*acc_io)[kPrefillMaxNR]) {
    // A local copy: the caller's array could alias the loads below, and the compiler would store
    // every accumulator back to memory after each FMA.
    __m256 acc[MR][kNR];
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < kNR; ++j) acc[i][j] = acc_io[i][j];
    }
    const int8_t* a[MR];
    const float* sa[MR];
    for (int i = 0; i < MR; ++i) {
      a[i] = p.qa + (i0 + i) * p.kpad + s * kStep;
      sa[i] = p.sa + (i0 + i) * p.groups;
    }
    for (int64_t st = 0; st < steps; ++st) {
      // The step's scale products [sa(i, g_lo) sw(j0..j3, g_lo) | sa(i, g_hi) sw(j0..j3, g_hi)]
      // stay in memory: the FMAs read them as broadcast loads, and the registers hold only the
      // accumulators, the step's weights and one activation row.
      const __m256 swv = _mm256_load_ps(t_sw[st]);
      alignas(32) float prod[MR][8];
      for (int i = 0; i < MR; ++i) {
        const __m256 sav = _mm256_setr_m128(_mm_broadcast_ss(sa[i] + t_g[st][0]),
                                            _mm_broadcast_ss(sa[i] + t_g[st][1]));
        _mm256_store_ps(prod[i], _mm256_mul_ps(sav, swv));
      }
      typename Q::W wv[kNR];
      for (int j = 0; j < kNR; ++j) wv[j] = Q::load_w(w[j] + st * 32);
      for (int i = 0; i < MR; ++i) {
        const typename Q::A av = Q::load_a(p, i0 + i, s + st, a[i] + st * kStep);
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

inline float prefill_hsum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  return _mm_cvtss_f32(h);
}

// One weight tile's chunk of steps [s0, s0 + chunk): `in_place` of them read from the rows `wr`,
// the rest (the rows' last, partial step) from the zero-padded copies `wt`.
struct PrefillChunk {
  int64_t j0, nr, s0, chunk, in_place;
  const uint8_t* const* wr;
  const uint8_t* const* wt;
  const PrefillScales* table;
};

template <class K, int MR>
void prefill_tile_chunk(const QuantGemm& p, int64_t i0, const PrefillChunk& c) {
  __m256 acc[kPrefillMR][kPrefillMaxNR];
  for (auto& row : acc) {
    for (auto& v : row) v = _mm256_setzero_ps();
  }
  K::template tile<MR>(p, i0, c.wr, c.s0, c.in_place, c.table->sw, c.table->g, acc);
  if (c.in_place < c.chunk) {
    K::template tile<MR>(p, i0, c.wt, c.s0 + c.in_place, c.chunk - c.in_place,
                         c.table->sw + c.in_place, c.table->g + c.in_place, acc);
  }
  for (int i = 0; i < MR; ++i) {
    float* out = p.c + (i0 + i) * p.ldc + c.j0;
    for (int64_t j = 0; j < c.nr; ++j) {
      const float v = prefill_hsum(acc[i][j]);
      out[j] = c.s0 > 0 ? out[j] + v : v;
    }
  }
}

template <class Q>
void prefill_run(const QuantGemm& p) {
  using K = PrefillTile<Q>;
  constexpr int kNR = K::kNR;
  const int64_t steps = (p.k + K::kStep - 1) / K::kStep;
  const int64_t full_steps = p.k / K::kStep;
  const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
  PrefillScales table;
  alignas(32) uint8_t wtail[kNR][32];  // the last partial step of each row, zero-padded
  for (int64_t j0 = 0; j0 < p.n; j0 += kNR) {
    const int64_t nr = p.n - j0 < kNR ? p.n - j0 : kNR;
    const uint8_t* rows[kNR];
    for (int r = 0; r < kNR; ++r) {
      rows[r] = p.w + (j0 + (r < nr ? r : nr - 1)) * rb;  // missing rows repeat the last one
      if (full_steps != steps) {
        const size_t done = static_cast<size_t>(full_steps * 32);
        std::memset(wtail[r], 0, 32);
        std::memcpy(wtail[r], rows[r] + done, p.w_row_bytes - done);
      }
    }
    for (int64_t s0 = 0; s0 < steps; s0 += kPrefillChunkSteps) {
      const int64_t chunk = steps - s0 < kPrefillChunkSteps ? steps - s0 : kPrefillChunkSteps;
      prefill_fill_scales<K>(p, j0, nr, s0, chunk, &table);
      const uint8_t* wr[kNR];
      const uint8_t* wt[kNR];
      for (int r = 0; r < kNR; ++r) {
        wr[r] = rows[r] + s0 * 32;
        wt[r] = wtail[r];
      }
      const int64_t in_place = s0 + chunk <= full_steps ? chunk : full_steps - s0;
      const PrefillChunk c{j0, nr, s0, chunk, in_place, wr, wt, &table};
      for (int64_t i0 = 0; i0 < p.m; i0 += kPrefillMR) {
        switch (p.m - i0 < kPrefillMR ? p.m - i0 : kPrefillMR) {
          case 1:
            prefill_tile_chunk<K, 1>(p, i0, c);
            break;
          case 2:
            prefill_tile_chunk<K, 2>(p, i0, c);
            break;
          case 3:
            prefill_tile_chunk<K, 3>(p, i0, c);
            break;
          default:
            prefill_tile_chunk<K, 4>(p, i0, c);
            break;
        }
      }
    }
  }
}

}  // namespace
}  // namespace einfer::quant_detail
