// Internal to kernels/: the K-loop-free parts of the x86 prefill GEMMs of matmul_f32_quant
// (gemm_q8_q4_4x2_avx2.cpp, gemm_q8_q4_4x4_avx512vnni.cpp): weight tiles of K::kNR rows outside,
// activation tiles of up to 4 rows inside (a weight tile is read from memory once and reused from
// L1 for all m rows), K in chunks whose weight scales are gathered once per weight tile, the
// zero-padded last partial step, and the one horizontal reduction per output at the end.
//
// K provides kStep (elements per step: 32 for q8, 64 for q4; a step reads 32 bytes of each weight
// row), kNR (<= 4) and `template <int MR> static void tile(p, i0, w, s, steps, t_sw, t_g, acc)`
// that adds steps [s, s + steps) of activation rows i0.. and weight rows w[] (pointing at step s)
// to acc[i][j] (8 lanes of partial sums), with t_sw[st] = [sw(j0..j3, g_lo) | sw(j0..j3, g_hi)]
// and t_g[st] = {g_lo, g_hi}: the groups of the step's first and last 32 elements.
//
// Everything here has internal linkage: each including file compiles it for its own ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemm_quant_internal.h"

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

template <class K>
void prefill_run(const QuantGemm& p) {
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
