// Internal to the Cortex-M quantized GEMM kernels (gemm_q8_q4_2x1_dsp.cpp,
// gemm_q8_q4_4x1_mve.cpp): the loops around their step kernels, in 32-bit arithmetic and pointer
// increments (64-bit index products per tile cost as much as a group's arithmetic on these cores).
//
// A step kernel F provides, for kStep elements starting at element e of a weight row (the row
// pointer is at the start of the current group, e counts from there):
//   F::row_bytes(n)               bytes of n weights (a whole group);
//   F::act(a)                     the activation side of a step, loaded once per row tile;
//   F::act_tail(a, n)             the same when only n < kStep elements remain in the group;
//   F::dot(row, e, act, s)        s + the step's int32 dot with the weight row;
//   F::dot_tail(row, e, end, act, s)  the same for the elements [e, end) only, reading no weight
//                                 byte at or past element `end` (the group's or the row's end).
// Per group the int32 sums are scaled exactly as the scalar twins do it, acc += float(isum) *
// (sa[g] * sw[g]), so results are bit-identical to them.
#pragma once

#include <cstdint>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {

// C[i, j .. j+R) for one activation row: a (kpad int8), sa (its group scales), w (R weight rows
// of row_bytes), sw (their group scales, `groups` per row). kGroupSteps > 0: groups of exactly
// kGroupSteps steps are unrolled; other groups, and a short last group, take the loop.
template <class F, int R, int kGroupSteps>
inline void mcu_rows(const int8_t* a, const float* sa, const uint8_t* w, uint32_t row_bytes,
                     const float* sw, int32_t groups, int32_t group, int32_t k, float* c) {
  // Row pointers move to each group's start, so the unrolled steps address the weights, the
  // activations and the scales with constant offsets (no per-load address arithmetic).
  const uint8_t* wr[R];
  float acc[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    wr[r] = w + r * row_bytes;
    acc[r] = 0.f;
  }
  const int32_t group_bytes = F::row_bytes(group);
  for (int32_t g = 0, e0 = 0; g < groups; ++g, e0 += group, a += group, ++sw) {
    const int32_t len = k - e0 < group ? k - e0 : group;  // elements of this group
    int32_t s[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) s[r] = 0;
    if (kGroupSteps > 0 && len == kGroupSteps * F::kStep) {
#pragma GCC unroll 16
      for (int32_t t = 0; t < kGroupSteps; ++t) {
        const typename F::Act av = F::act(a + t * F::kStep);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) s[r] = F::dot(wr[r], t * F::kStep, av, s[r]);
      }
    } else {
      int32_t e = 0;
      for (; e + F::kStep <= len; e += F::kStep) {
        const typename F::Act av = F::act(a + e);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) s[r] = F::dot(wr[r], e, av, s[r]);
      }
      if (e < len) {
        const typename F::Act av = F::act_tail(a + e, len - e);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) s[r] = F::dot_tail(wr[r], e, len, av, s[r]);
      }
    }
    const float sag = sa[g];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      acc[r] += static_cast<float>(s[r]) * (sag * sw[r * groups]);
      wr[r] += group_bytes;
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) c[r] = acc[r];
}

// The whole product in tiles of R weight rows x 1 activation row (then single rows).
template <class F, int R, int kGroupSteps>
void mcu_gemm(const QuantGemm& p) {
  const int32_t k = static_cast<int32_t>(p.k), n = static_cast<int32_t>(p.n);
  const int32_t groups = static_cast<int32_t>(p.groups), group = p.group;
  const uint32_t row_bytes = static_cast<uint32_t>(p.w_row_bytes);
  for (int64_t i = 0; i < p.m; ++i) {
    const int8_t* a = p.qa + i * p.kpad;
    const float* sa = p.sa + i * p.groups;
    float* c = p.c + i * p.ldc;
    const uint8_t* w = p.w;
    const float* sw = p.sw;
    int32_t j = 0;
    for (; j + R <= n; j += R, w += R * row_bytes, sw += R * groups) {
      mcu_rows<F, R, kGroupSteps>(a, sa, w, row_bytes, sw, groups, group, k, c + j);
    }
    for (; j < n; ++j, w += row_bytes, sw += groups) {
      mcu_rows<F, 1, kGroupSteps>(a, sa, w, row_bytes, sw, groups, group, k, c + j);
    }
  }
}

// Groups of 32 (the packer's default) take the unrolled path, any other size the loop.
template <class F, int R>
void mcu_gemm_any_group(const QuantGemm& p) {
  static_assert(32 % F::kStep == 0, "a group of 32 must be whole steps");
  if (p.group == 32) {
    mcu_gemm<F, R, 32 / F::kStep>(p);
  } else {
    mcu_gemm<F, R, 0>(p);
  }
}

}  // namespace einfer::quant_detail
