// The 4x4 interleaved layout's kernels on AArch64 cores without the dot-product extension
// (Cortex-A53, Cortex-A72: Raspberry Pi 3/4, i.MX 8M): a weight register holds 4 rows x 4 values
// of one k-step; the token's 4 values of that step, broadcast to the 4 lanes (dup), meet them in
// smull/smull2 (rows 0-1 / rows 2-3, int16 products) and smlal/smlal2 (the next step: two q8
// products per int16 lane stay below 2 x 128 x 127; q4 nibbles 0..15 let 32 values accumulate,
// 8 products of at most 15 x 127), then sadalp widens into int32 pairs and one addp
// per group gives the 4 rows' sums, lane = row. The twin is gemm_q8_q4_interleaved_scalar.cpp,
// bit for bit (the same int32 group sums, q4 started at -8 * sum(a); acc = fma(float(isum),
// sa * sw, acc)).
//
// GEMM (m > 1, ActOrder::quad): 4 tokens x 8 rows (two weight tiles share each broadcast);
// GEMV (m == 1, ActOrder::single): 4 tiles per pass share each activation load.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__aarch64__) && !defined(__ARM_FEATURE_DOTPROD)

#include <arm_neon.h>

#include "kernels/gemm_quant/arm/gemm_quant_interleaved_neon.h"

namespace einfer::quant_detail {
namespace {

// The 4 values of step kLane of a token, in every 32-bit lane.
template <int kLane>
inline int8x16_t bcast(int8x16_t a) {
  return vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(a), kLane));
}

// Products of one k-step (w: 4 rows x 4 values) with broadcast values b into the int16 partial
// sums of rows 0-1 (lo) and 2-3 (hi): the first step of a pair starts them (smull), the second
// adds (smlal).
template <bool kStart>
inline void mul_step(int16x8_t& lo, int16x8_t& hi, int8x16_t w, int8x16_t b) {
  if constexpr (kStart) {
    lo = vmull_s8(vget_low_s8(w), vget_low_s8(b));
    hi = vmull_high_s8(w, b);
  } else {
    lo = vmlal_s8(lo, vget_low_s8(w), vget_low_s8(b));
    hi = vmlal_high_s8(hi, w, b);
  }
}

// One half-group (4 k-steps, weights w[0..3]) of one token a against kTiles tiles: q8 widens every
// pair of steps (sadalp), q4 keeps int16 sums for the whole group (`first` starts them).
template <bool kQ4, int kTiles>
inline void half_steps(const int8x16_t (*w)[4], int8x16_t a, int32x4_t (*i32)[2],
                       int16x8_t (*i16)[2], bool first) {
  const int8x16_t b0 = bcast<0>(a), b1 = bcast<1>(a), b2 = bcast<2>(a), b3 = bcast<3>(a);
  for (int x = 0; x < kTiles; ++x) {
    if constexpr (kQ4) {
      if (first) {
        mul_step<true>(i16[x][0], i16[x][1], w[x][0], b0);
      } else {
        mul_step<false>(i16[x][0], i16[x][1], w[x][0], b0);
      }
      mul_step<false>(i16[x][0], i16[x][1], w[x][1], b1);
      mul_step<false>(i16[x][0], i16[x][1], w[x][2], b2);
      mul_step<false>(i16[x][0], i16[x][1], w[x][3], b3);
    } else {
      int16x8_t lo, hi;
      mul_step<true>(lo, hi, w[x][0], b0);
      mul_step<false>(lo, hi, w[x][1], b1);
      i32[x][0] = vpadalq_s16(i32[x][0], lo);
      i32[x][1] = vpadalq_s16(i32[x][1], hi);
      mul_step<true>(lo, hi, w[x][2], b2);
      mul_step<false>(lo, hi, w[x][3], b3);
      i32[x][0] = vpadalq_s16(i32[x][0], lo);
      i32[x][1] = vpadalq_s16(i32[x][1], hi);
    }
  }
}

// Weights of half-group h of a group block: q8 loads them, q4 takes the low (first half of the
// group) or high nibbles of the chunk pair.
template <bool kQ4>
inline void weights_half(const uint8_t* wb, int64_t group, int64_t h, int8x16_t* w) {
  if constexpr (kQ4) {
    const int64_t pairs = group / 32;
    const uint8x16x4_t raw = vld1q_u8_x4(wb + 16 + (h % pairs) * 64);
    for (int s = 0; s < 4; ++s)
      w[s] = h < pairs ? vreinterpretq_s8_u8(vandq_u8(raw.val[s], vdupq_n_u8(0x0F)))
                       : vreinterpretq_s8_u8(vshrq_n_u8(raw.val[s], 4));
  } else {
    const int8x16x4_t v = vld1q_s8_x4(reinterpret_cast<const int8_t*>(wb) + 16 + h * 64);
    for (int s = 0; s < 4; ++s) w[s] = v.val[s];
  }
}

// Tokens of one activation block (kTokens of its 4; quad order, or the one token of single order)
// x kTiles weight tiles.
template <bool kQ4, int kTokens, int kTiles>
void tile(const QuantGemm& p, const uint8_t* wt, const int8_t* act, float* c, int tokens,
          const int* cols) {
  const int64_t group = p.group, halves = group / 16;
  const size_t wbb = 16 + static_cast<size_t>(kQ4 ? group / 2 : group) * 4;
  const bool single = p.order == ActOrder::single;
  float32x4_t acc[kTiles][kTokens];
  for (int x = 0; x < kTiles; ++x)
    for (int t = 0; t < kTokens; ++t) acc[x][t] = vdupq_n_f32(0.f);
  for (int64_t g = 0; g < p.groups; ++g) {
    const int8_t* ab = act + g * p.act_block_bytes;
    const uint8_t* wb[kTiles];
    for (int x = 0; x < kTiles; ++x) wb[x] = wt + x * p.w_tile_bytes + g * wbb;
    // -8 * sum(a) of token t (single: [sa, asum8, ..]; quad: each token's in 4 lanes).
    const int32_t* asum = reinterpret_cast<const int32_t*>(ab) + (single ? 1 : 4);
    const int asum_step = single ? 1 : 4;
    int32x4_t i32[kTokens][kTiles][2];
    int16x8_t i16[kTokens][kTiles][2];  // q4 only; started by the first step of each 32 values
    for (int t = 0; t < kTokens; ++t)
      for (int x = 0; x < kTiles; ++x) i16[t][x][0] = i16[t][x][1] = vdupq_n_s16(0);
    for (int t = 0; t < kTokens; ++t)
      for (int x = 0; x < kTiles; ++x) {
        // q4: lanes 0 of the pairs carry -8 * sum(a), so addp yields the started sum per row.
        const int32_t start = kQ4 ? asum[t * asum_step] : 0;
        i32[t][x][0] = vsetq_lane_s32(start, vsetq_lane_s32(start, vdupq_n_s32(0), 0), 2);
        i32[t][x][1] = i32[t][x][0];
      }
    for (int64_t h = 0; h < halves; ++h) {
      int8x16_t w[kTiles][4];
      for (int x = 0; x < kTiles; ++x) weights_half<kQ4>(wb[x], group, h, w[x]);
      for (int t = 0; t < kTokens; ++t) {
        const int8x16_t a = vld1q_s8(ab + (single ? 16 + h * 16 : 80 + (h * 4 + t) * 16));
        half_steps<kQ4, kTiles>(w, a, i32[t], i16[t], kQ4 && h % 2 == 0);
      }
      if (kQ4 && h % 2 == 1) {  // 32 values (8 products per int16 lane): widen
        for (int t = 0; t < kTokens; ++t)
          for (int x = 0; x < kTiles; ++x) {
            i32[t][x][0] = vpadalq_s16(i32[t][x][0], i16[t][x][0]);
            i32[t][x][1] = vpadalq_s16(i32[t][x][1], i16[t][x][1]);
          }
      }
    }
    const float32x4_t sa = single ? vld1q_dup_f32(reinterpret_cast<const float*>(ab))
                                  : vld1q_f32(reinterpret_cast<const float*>(ab));
    for (int x = 0; x < kTiles; ++x) {
      const float32x4_t sw = vld1q_f32(reinterpret_cast<const float*>(wb[x]));
      for (int t = 0; t < kTokens; ++t) {
        const int32x4_t isum = vpaddq_s32(i32[t][x][0], i32[t][x][1]);
        float32x4_t s;
        switch (t) {
          case 0:
            s = vmulq_laneq_f32(sw, sa, 0);
            break;
          case 1:
            s = vmulq_laneq_f32(sw, sa, 1);
            break;
          case 2:
            s = vmulq_laneq_f32(sw, sa, 2);
            break;
          default:
            s = vmulq_laneq_f32(sw, sa, 3);
            break;
        }
        acc[x][t] = vfmaq_f32(acc[x][t], vcvtq_f32_s32(isum), s);
      }
    }
  }
  for (int x = 0; x < kTiles; ++x) store_tile<kTokens>(c + 4 * x, p.ldc, acc[x], tokens, cols[x]);
}

template <bool kQ4, int kTokens>
void run(const QuantGemm& p) {
  const int64_t block_stride = p.groups * p.act_block_bytes;
  for (int64_t j0 = 0; j0 < p.n; j0 += 8) {
    const uint8_t* wt = p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes;
    const int64_t left = p.n - j0;
    const int cols[2] = {static_cast<int>(left < 4 ? left : 4),
                         static_cast<int>(left - 4 < 4 ? left - 4 : 4)};
    for (int64_t i0 = 0; i0 < p.m; i0 += kTokens) {
      const int tokens = static_cast<int>(p.m - i0 < kTokens ? p.m - i0 : kTokens);
      const int8_t* act = p.qa + i0 / kTokens * block_stride;
      float* c = p.c + i0 * p.ldc + j0;
      if (left > 4)
        tile<kQ4, kTokens, 2>(p, wt, act, c, tokens, cols);
      else
        tile<kQ4, kTokens, 1>(p, wt, act, c, tokens, cols);
    }
  }
}

}  // namespace

void gemv_q8_4x4_neon(const QuantGemm& p) {
  run<false, 1>(p);
}
void gemv_q4_4x4_neon(const QuantGemm& p) {
  run<true, 1>(p);
}
void gemm_q8_4x4_neon(const QuantGemm& p) {
  run<false, 4>(p);
}
void gemm_q4_4x4_neon(const QuantGemm& p) {
  run<true, 4>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __aarch64__ && !__ARM_FEATURE_DOTPROD
