// The 4x4 interleaved layout's kernels on cores with the dot-product extension (Cortex-A55/A76,
// Neoverse-N1, Raspberry Pi 5): a 16-byte weight register holds 4 rows x 4 values, so one
// lane-indexed sdot adds 4 products to each row's int32 sum of one token: lane = row, the group
// sums need no horizontal adds. The twin is gemm_q8_q4_interleaved_scalar.cpp, bit for bit: the
// same exact int32 sum per group (q4: unsigned nibbles from and/ushr, the sum started at the
// activation block's -8 * sum(a)), then acc = fma(float(isum), sa * sw, acc) per element.
//
// GEMM (m > 1, ActOrder::quad): tiles of 8 tokens (two quads; one for the last 1-4) x 4 rows, the
// weight tile the outer loop so its blocks stay in L1 for every token. Per group and half-group
// of 16 values: one 64-byte load of 4 tokens' values per quad, 4 weight registers (q8: one 64-byte
// load; q4: the low or high nibbles of 64 bytes loaded once per group pair of halves), 32 sdots.
// GEMV (m == 1, ActOrder::single): 4 weight tiles per pass share each activation load.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)

#include <arm_neon.h>

#include <type_traits>

#include "kernels/gemm_quant/arm/gemm_quant_interleaved_neon.h"

namespace einfer::quant_detail {
namespace {

// isum[t] += w (4 rows x 4 values) . token t's 4 values at lane kLane of a[t].
template <int kLane, int kTokens>
inline void dot_lane(int32x4_t* isum, int8x16_t w, const int8x16_t* a) {
#pragma GCC unroll 16
  for (int t = 0; t < kTokens; ++t) isum[t] = vdotq_laneq_s32(isum[t], w, a[t], kLane);
}

// The 4 k-steps of one half-group: w[s] holds values 4s..4s+3 of the half for the 4 rows.
template <int kTokens>
inline void dot_half(int32x4_t* isum, const int8x16_t* w, const int8x16_t* a) {
  dot_lane<0, kTokens>(isum, w[0], a);
  dot_lane<1, kTokens>(isum, w[1], a);
  dot_lane<2, kTokens>(isum, w[2], a);
  dot_lane<3, kTokens>(isum, w[3], a);
}

// Tokens [i0, i0 + 4 * kQuads) x rows of one weight tile. kGroup: the group size when known at
// compile time (32: every half-group unrolled, so the accumulators stay in registers), else 0.
template <bool kQ4, int kQuads, int kGroup>
void gemm_tile(const QuantGemm& p, const uint8_t* wt, const int8_t* act, float* c, int tokens,
               int cols) {
  constexpr int kT = 4 * kQuads;
  const int64_t group = kGroup > 0 ? kGroup : p.group, halves = group / 16;
  const size_t wbb = 16 + static_cast<size_t>(kQ4 ? group / 2 : group) * 4;
  const int64_t abb = p.act_block_bytes, quad_stride = p.groups * abb;
  const uint8x16_t mask = vdupq_n_u8(0x0F);
  float32x4_t acc[kT];
#pragma GCC unroll 16
  for (int t = 0; t < kT; ++t) acc[t] = vdupq_n_f32(0.f);
  const uint8_t* wb = wt;
  const int8_t* ab = act;
  for (int64_t g = 0; g < p.groups; ++g, wb += wbb, ab += abb) {
    int32x4_t isum[kT];
#pragma GCC unroll 16
    for (int q = 0; q < kQuads; ++q) {
      // Each token's -8 * sum(a) in 4 lanes (zero for q8).
      const int32x4x4_t s =
          vld1q_s32_x4(reinterpret_cast<const int32_t*>(ab + q * quad_stride) + 4);
      isum[4 * q + 0] = s.val[0];
      isum[4 * q + 1] = s.val[1];
      isum[4 * q + 2] = s.val[2];
      isum[4 * q + 3] = s.val[3];
    }
    // The 4 tokens' 16 values of half h, per quad.
    auto acts = [&](int64_t h, int8x16_t* a) {
#pragma GCC unroll 16
      for (int q = 0; q < kQuads; ++q) {
        const int8x16x4_t v = vld1q_s8_x4(ab + q * quad_stride + 80 + h * 64);
        a[4 * q + 0] = v.val[0];
        a[4 * q + 1] = v.val[1];
        a[4 * q + 2] = v.val[2];
        a[4 * q + 3] = v.val[3];
      }
    };
    // Step s of a half: one weight register against every token.
    auto step_lo = [&](uint8x16_t raw, const int8x16_t* a, auto lane) {
      dot_lane<decltype(lane)::value, kT>(isum, vreinterpretq_s8_u8(vandq_u8(raw, mask)), a);
    };
    auto step_hi = [&](uint8x16_t raw, const int8x16_t* a, auto lane) {
      dot_lane<decltype(lane)::value, kT>(isum, vreinterpretq_s8_u8(vshrq_n_u8(raw, 4)), a);
    };
    using L0 = std::integral_constant<int, 0>;
    using L1 = std::integral_constant<int, 1>;
    using L2 = std::integral_constant<int, 2>;
    using L3 = std::integral_constant<int, 3>;
    if constexpr (kQ4) {
      // 64 bytes = 4 chunks: their low nibbles are half hp, their high nibbles half hp + halves/2.
      for (int64_t hp = 0; hp < halves / 2; ++hp) {
        const uint8x16x4_t raw = vld1q_u8_x4(wb + 16 + hp * 64);
        int8x16_t a[kT];
        acts(hp, a);
        step_lo(raw.val[0], a, L0{});
        step_lo(raw.val[1], a, L1{});
        step_lo(raw.val[2], a, L2{});
        step_lo(raw.val[3], a, L3{});
        acts(hp + halves / 2, a);
        step_hi(raw.val[0], a, L0{});
        step_hi(raw.val[1], a, L1{});
        step_hi(raw.val[2], a, L2{});
        step_hi(raw.val[3], a, L3{});
      }
    } else {
      for (int64_t h = 0; h < halves; ++h) {
        const int8x16x4_t wv = vld1q_s8_x4(reinterpret_cast<const int8_t*>(wb) + 16 + h * 64);
        int8x16_t a[kT];
        acts(h, a);
        dot_half<kT>(isum, wv.val, a);
      }
    }
    const float32x4_t sw = vld1q_f32(reinterpret_cast<const float*>(wb));
#pragma GCC unroll 16
    for (int q = 0; q < kQuads; ++q) {
      const float32x4_t sa = vld1q_f32(reinterpret_cast<const float*>(ab + q * quad_stride));
      acc[4 * q + 0] =
          vfmaq_f32(acc[4 * q + 0], vcvtq_f32_s32(isum[4 * q + 0]), vmulq_laneq_f32(sw, sa, 0));
      acc[4 * q + 1] =
          vfmaq_f32(acc[4 * q + 1], vcvtq_f32_s32(isum[4 * q + 1]), vmulq_laneq_f32(sw, sa, 1));
      acc[4 * q + 2] =
          vfmaq_f32(acc[4 * q + 2], vcvtq_f32_s32(isum[4 * q + 2]), vmulq_laneq_f32(sw, sa, 2));
      acc[4 * q + 3] =
          vfmaq_f32(acc[4 * q + 3], vcvtq_f32_s32(isum[4 * q + 3]), vmulq_laneq_f32(sw, sa, 3));
    }
  }
  store_tile<kT>(c, p.ldc, acc, tokens, cols);
}

// gemm_tile<kQ4, 2, 32> in assembly, its 8 x 4 float and 8 x 4 int32 accumulators, 8 token
// registers and the 4 weight registers of a half-group held in the 32 vector registers from the
// first group to the last (from intrinsics GCC spilled some every group). Per group: 6 loads of
// activations (headers and both halves of both quads, post-incremented through the blocks), 1-2
// of weights, 8 unpacks (q4), 64 sdots, the scale, convert and fma of each of the 8 accumulators.
// `act0`/`act1` are the two quads' first blocks; the 8 rows of 4 floats go to `out`, `row_bytes`
// apart.
// The pieces of gemm_tile8_g32's assembly. Registers: v0-v7 the 8 tokens' float accumulators,
// v8-v15 their int32 group sums, v16-v23 the 8 tokens' 16 values of a half-group, v24-v27 the 4
// weight registers of a half (q4: the 64 raw bytes of both halves), v28 a weight register
// unpacked / the scales, v29 the nibble mask, v30/v31 the two quads' activation scales.
#define EINFER_T8_ZERO                                                  \
  "movi v0.4s, #0\n movi v1.4s, #0\n movi v2.4s, #0\n movi v3.4s, #0\n" \
  "movi v4.4s, #0\n movi v5.4s, #0\n movi v6.4s, #0\n movi v7.4s, #0\n"
// A group's start: both quads' headers (scales; -8 * sum(a) starting each int32 sum) and the
// first half of their values, post-incremented through the blocks; the first 64 bytes of weight
// values, the pointer moved by WINC (q4: %[step], to the next block's values).
#define EINFER_T8_GROUP_START(WINC)                               \
  "1:\n"                                                          \
  "ldr q30, [%[a0]], #16\n ld1 {v8.16b-v11.16b}, [%[a0]], #64\n"  \
  "ld1 {v16.16b-v19.16b}, [%[a0]], #64\n"                         \
  "ldr q31, [%[a1]], #16\n ld1 {v12.16b-v15.16b}, [%[a1]], #64\n" \
  "ld1 {v20.16b-v23.16b}, [%[a1]], #64\n"                         \
  "ld1 {v24.16b-v27.16b}, [%[w]], " WINC "\n"
// The second half of both quads' values.
#define EINFER_T8_SECOND_HALF \
  "ld1 {v16.16b-v19.16b}, [%[a0]], #64\n ld1 {v20.16b-v23.16b}, [%[a1]], #64\n"
// Weight register W against value lane L of the 8 tokens.
#define EINFER_T8_SDOTS(W, L)                                                 \
  "sdot v8.4s, " W ".16b, v16.4b[" L "]\n sdot v9.4s, " W ".16b, v17.4b[" L   \
  "]\n"                                                                       \
  "sdot v10.4s, " W ".16b, v18.4b[" L "]\n sdot v11.4s, " W ".16b, v19.4b[" L \
  "]\n"                                                                       \
  "sdot v12.4s, " W ".16b, v20.4b[" L "]\n sdot v13.4s, " W ".16b, v21.4b[" L \
  "]\n"                                                                       \
  "sdot v14.4s, " W ".16b, v22.4b[" L "]\n sdot v15.4s, " W ".16b, v23.4b[" L "]\n"
#define EINFER_T8_HALF(W0, W1, W2, W3) \
  EINFER_T8_SDOTS(W0, "0")             \
  EINFER_T8_SDOTS(W1, "1") EINFER_T8_SDOTS(W2, "2") EINFER_T8_SDOTS(W3, "3")
// q4: a weight register from raw register R's low (and) or high (ushr) nibbles into v28.
#define EINFER_T8_LO(R) "and v28.16b, " R ".16b, v29.16b\n"
#define EINFER_T8_HI(R) "ushr v28.16b, " R ".16b, #4\n"
// A group's end: this block's weight scales (OFF bytes back: the weight pointer is at the next
// block's values already, so no add skips the scales), then per token
// acc += float(isum) * (sw * sa), and the next group.
#define EINFER_T8_GROUP_END(OFF)                                                            \
  "ldur q28, [%[w], #" OFF                                                                  \
  "]\n"                                                                                     \
  "scvtf v8.4s, v8.4s\n scvtf v9.4s, v9.4s\n scvtf v10.4s, v10.4s\n scvtf v11.4s, v11.4s\n" \
  "scvtf v12.4s, v12.4s\n scvtf v13.4s, v13.4s\n scvtf v14.4s, v14.4s\n"                    \
  "scvtf v15.4s, v15.4s\n"                                                                  \
  "fmul v16.4s, v28.4s, v30.s[0]\n fmul v17.4s, v28.4s, v30.s[1]\n"                         \
  "fmul v18.4s, v28.4s, v30.s[2]\n fmul v19.4s, v28.4s, v30.s[3]\n"                         \
  "fmul v20.4s, v28.4s, v31.s[0]\n fmul v21.4s, v28.4s, v31.s[1]\n"                         \
  "fmul v22.4s, v28.4s, v31.s[2]\n fmul v23.4s, v28.4s, v31.s[3]\n"                         \
  "fmla v0.4s, v8.4s, v16.4s\n fmla v1.4s, v9.4s, v17.4s\n fmla v2.4s, v10.4s, v18.4s\n"    \
  "fmla v3.4s, v11.4s, v19.4s\n fmla v4.4s, v12.4s, v20.4s\n fmla v5.4s, v13.4s, v21.4s\n"  \
  "fmla v6.4s, v14.4s, v22.4s\n fmla v7.4s, v15.4s, v23.4s\n"                               \
  "subs %[n], %[n], #1\n b.ne 1b\n"
// A tile's start: the accumulators zeroed, the weights and group count from the first.
#define EINFER_T8_TILE_START "0:\n" EINFER_T8_ZERO "mov %[w], %[wt]\n mov %[n], %[groups]\n"
// The 8 rows of 4 floats, `ld` bytes apart, then the next 8 tokens: their first quad starts where
// the second quad of these ended.
#define EINFER_T8_STORE                                                              \
  "str q0, [%[out]]\n str q1, [%[out], %[ld]]\n add %[out], %[out], %[ld], lsl #1\n" \
  "str q2, [%[out]]\n str q3, [%[out], %[ld]]\n add %[out], %[out], %[ld], lsl #1\n" \
  "str q4, [%[out]]\n str q5, [%[out], %[ld]]\n add %[out], %[out], %[ld], lsl #1\n" \
  "str q6, [%[out]]\n str q7, [%[out], %[ld]]\n add %[out], %[out], %[ld], lsl #1\n" \
  "mov %[a0], %[a1]\n add %[a1], %[a1], %[qs]\n subs %[tiles], %[tiles], #1\n b.ne 0b\n"
#define EINFER_T8_OPERANDS                                                          \
  : [w] "=&r"(w), [n] "=&r"(n), [a0] "+r"(act0), [a1] "+r"(act1), [out] "+r"(out),          \
    [tiles] "+r"(tiles)                                                                     \
  : [wt] "r"(wt + 16), [groups] "r"(groups), [ld] "r"(row_bytes), [step] "r"(step),         \
    [qs] "r"(quad_stride)                                                                   \
  : EINFER_T8_CLOBBERS
#define EINFER_T8_CLOBBERS                                                                       \
  "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", \
      "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", \
      "v28", "v29", "v30", "v31", "memory", "cc"

// gemm_tile<kQ4, 2, 32> in assembly, its 8 x 4 float and 8 x 4 int32 accumulators, 8 token
// registers and the 4 weight registers of a half-group held in the 32 vector registers from the
// first group to the last (from intrinsics GCC spilled some every group). Per group: 6 loads of
// activations (headers and both halves of both quads), 1-2 of weights, 8 unpacks (q4), 64 sdots,
// the scale, convert and fma of each of the 8 accumulators. `act0`/`act1` are the two quads'
// first blocks; the 8 rows of 4 floats go to `out`, `row_bytes` apart. `tiles` (> 0) such tiles
// of 8 tokens one after the other (quads `quad_stride` apart), out on 8 rows each. groups > 0.
template <bool kQ4>
void gemm_tile8_g32(const uint8_t* wt, const int8_t* act0, int64_t quad_stride, int64_t groups,
                    float* out, int64_t row_bytes, int64_t tiles) {
  const int8_t* act1 = act0 + quad_stride;
  const uint8_t* w;         // the block's values; its scales come after the sdots
  int64_t n;                // groups left
  const int64_t step = 80;  // the last weight load's post-increment: past the next scales
  if constexpr (kQ4) {
    // One 64-byte load: chunk c's low nibbles are values 4c..4c+3 of the first half, its high
    // nibbles those of the second.
    __asm__ volatile(
        "movi v29.16b, #0x0f\n" EINFER_T8_TILE_START EINFER_T8_GROUP_START("%[step]")
            EINFER_T8_LO("v24") EINFER_T8_SDOTS("v28", "0") EINFER_T8_LO("v25") EINFER_T8_SDOTS(
                "v28", "1") EINFER_T8_LO("v26") EINFER_T8_SDOTS("v28", "2") EINFER_T8_LO("v27")
                EINFER_T8_SDOTS("v28", "3") EINFER_T8_SECOND_HALF EINFER_T8_HI("v24")
                    EINFER_T8_SDOTS("v28", "0") EINFER_T8_HI("v25") EINFER_T8_SDOTS("v28", "1")
                        EINFER_T8_HI("v26") EINFER_T8_SDOTS("v28", "2") EINFER_T8_HI("v27")
                            EINFER_T8_SDOTS("v28", "3") EINFER_T8_GROUP_END("-96")
                                EINFER_T8_STORE EINFER_T8_OPERANDS);
  } else {
    __asm__ volatile(EINFER_T8_TILE_START EINFER_T8_GROUP_START("#64") EINFER_T8_HALF(
        "v24", "v25", "v26", "v27") "ld1 {v24.16b-v27.16b}, [%[w]], %[step]\n" EINFER_T8_SECOND_HALF
                         EINFER_T8_HALF("v24", "v25", "v26", "v27") EINFER_T8_GROUP_END("-160")
                             EINFER_T8_STORE EINFER_T8_OPERANDS);
  }
}

template <bool kQ4, int kGroup>
void gemm_groups(const QuantGemm& p) {
  const int64_t quad_stride = p.groups * p.act_block_bytes;
  for (int64_t j0 = 0; j0 < p.n; j0 += 4) {
    const uint8_t* wt = p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes;
    const int cols = static_cast<int>(p.n - j0 < 4 ? p.n - j0 : 4);
    int64_t i0 = 0;
    if (kGroup == 32 && cols == 4 && p.m >= 8) {  // whole tiles of 8 tokens straight into C
      gemm_tile8_g32<kQ4>(wt, p.qa, quad_stride, p.groups, p.c + j0,
                          p.ldc * static_cast<int64_t>(sizeof(float)), p.m / 8);
      i0 = p.m / 8 * 8;
    }
    for (; i0 + 4 < p.m; i0 += 8) {
      const int tokens = static_cast<int>(p.m - i0 < 8 ? p.m - i0 : 8);
      const int8_t* act = p.qa + i0 / 4 * quad_stride;
      float* c = p.c + i0 * p.ldc + j0;
      if constexpr (kGroup == 32) {
        float32x4_t out[8];
        gemm_tile8_g32<kQ4>(wt, act, quad_stride, p.groups, reinterpret_cast<float*>(out), 16, 1);
        store_tile<8>(c, p.ldc, out, tokens, cols);
      } else {
        gemm_tile<kQ4, 2, kGroup>(p, wt, act, c, tokens, cols);
      }
    }
    if (i0 < p.m)
      gemm_tile<kQ4, 1, kGroup>(p, wt, p.qa + i0 / 4 * quad_stride, p.c + i0 * p.ldc + j0,
                                static_cast<int>(p.m - i0), cols);
  }
}

template <bool kQ4>
void gemm(const QuantGemm& p) {
  if (p.group == 32 && p.groups > 0)
    gemm_groups<kQ4, 32>(p);
  else
    gemm_groups<kQ4, 0>(p);
}

// kTiles weight tiles (4 rows each) against the one token.
template <bool kQ4, int kTiles>
void gemv_tiles(const QuantGemm& p, const uint8_t* wt, float* c, int cols) {
  const int64_t group = p.group, halves = group / 16;
  const size_t wbb = 16 + static_cast<size_t>(kQ4 ? group / 2 : group) * 4;
  const uint8x16_t mask = vdupq_n_u8(0x0F);
  float32x4_t acc[kTiles];
#pragma GCC unroll 16
  for (int x = 0; x < kTiles; ++x) acc[x] = vdupq_n_f32(0.f);
  for (int64_t g = 0; g < p.groups; ++g) {
    const int8_t* ab = p.qa + g * p.act_block_bytes;
    int32x4_t isum[kTiles];
    const int32x4_t start =
        kQ4 ? vld1q_dup_s32(reinterpret_cast<const int32_t*>(ab) + 1) : vdupq_n_s32(0);
#pragma GCC unroll 16
    for (int x = 0; x < kTiles; ++x) isum[x] = start;
    const uint8_t* wb = wt + g * wbb;
    if constexpr (kQ4) {
      for (int64_t hp = 0; hp < halves / 2; ++hp) {
        const int8x16_t lo = vld1q_s8(ab + 16 + hp * 16);
        const int8x16_t hi = vld1q_s8(ab + 16 + (hp + halves / 2) * 16);
#pragma GCC unroll 16
        for (int x = 0; x < kTiles; ++x) {
          const uint8x16x4_t raw = vld1q_u8_x4(wb + x * p.w_tile_bytes + 16 + hp * 64);
          int8x16_t w[4];
#pragma GCC unroll 16
          for (int s = 0; s < 4; ++s) w[s] = vreinterpretq_s8_u8(vandq_u8(raw.val[s], mask));
          dot_half<1>(&isum[x], w, &lo);
#pragma GCC unroll 16
          for (int s = 0; s < 4; ++s) w[s] = vreinterpretq_s8_u8(vshrq_n_u8(raw.val[s], 4));
          dot_half<1>(&isum[x], w, &hi);
        }
      }
    } else {
      for (int64_t h = 0; h < halves; ++h) {
        const int8x16_t a = vld1q_s8(ab + 16 + h * 16);
#pragma GCC unroll 16
        for (int x = 0; x < kTiles; ++x) {
          const int8x16x4_t wv =
              vld1q_s8_x4(reinterpret_cast<const int8_t*>(wb + x * p.w_tile_bytes) + 16 + h * 64);
          dot_half<1>(&isum[x], wv.val, &a);
        }
      }
    }
    const float sa = *reinterpret_cast<const float*>(ab);
#pragma GCC unroll 16
    for (int x = 0; x < kTiles; ++x) {
      const float32x4_t sw = vld1q_f32(reinterpret_cast<const float*>(wb + x * p.w_tile_bytes));
      acc[x] = vfmaq_f32(acc[x], vcvtq_f32_s32(isum[x]), vmulq_n_f32(sw, sa));
    }
  }
#pragma GCC unroll 16
  for (int x = 0; x < kTiles; ++x) store_row(c + 4 * x, acc[x], x + 1 < kTiles ? 4 : cols);
}

// The decode GEMV for groups of 32 in assembly: 4 weight tiles (16 rows) per pass, each tile's
// blocks read in order through its own post-incremented pointer, two groups per step. A tile's
// two blocks (q4 160 bytes, q8 288) come in 3 loads (q8 5) of whole registers whatever the
// scales' place among them, the token's two blocks (header, 32 values) in 2. Per group and tile:
// the int32 sum started at the header's -8 * sum(a) (q8 0), 8 unpacks (q4), 8 sdots, then
// acc += float(isum) * (sw * sa), the two groups in order: 21.5 instructions for q4 and 14.5 for
// q8 where the intrinsics' loops took 28 and 23. An odd last group goes alone. Registers: v0-v3
// the tiles' float accumulators, v4/v5 the two groups' int32 sums, v6/v7 unpacked nibbles, v8
// the nibble mask (q4), v16-v18 / v19-v21 the groups' header (sa, asum8) and two halves of
// values, the rest the tile's blocks.
#define EINFER_G2_SDOT(S, W, A, L) "sdot " S ".4s, " W ".16b, " A ".4b[" L "]\n"
// q4 step L of group 0 (raw register R0, values v17/v18) and group 1 (R1, v20/v21).
#define EINFER_G2_Q4_STEP(R0, R1, L)                                                         \
  "and v6.16b, " R0 ".16b, v8.16b\n and v7.16b, " R1                                         \
  ".16b, v8.16b\n" EINFER_G2_SDOT("v4", "v6", "v17", L)                                      \
      EINFER_G2_SDOT("v5", "v7", "v20", L) "ushr v6.16b, " R0 ".16b, #4\n ushr v7.16b, " R1  \
                                           ".16b, #4\n" EINFER_G2_SDOT("v4", "v6", "v18", L) \
                                               EINFER_G2_SDOT("v5", "v7", "v21", L)
// acc += float(isum) * (sw * sa) for group 0 (scales S0), then group 1 (S1).
#define EINFER_G2_END(S0, S1, ACC)                            \
  "scvtf v4.4s, v4.4s\n scvtf v5.4s, v5.4s\n"                 \
  "fmul " S0 ".4s, " S0 ".4s, v16.s[0]\n fmul " S1 ".4s, " S1 \
  ".4s, v19.s[0]\n"                                           \
  "fmla " ACC ".4s, v4.4s, " S0 ".4s\n fmla " ACC ".4s, v5.4s, " S1 ".4s\n"
// q4, two blocks: v22 scales 0, v23-v26 values 0, v27 scales 1, v28-v31 values 1.
#define EINFER_G2_Q4_TILE(W, ACC)                                                    \
  "ld1 {v22.16b-v25.16b}, [%[" W "]], #64\n ld1 {v26.16b-v29.16b}, [%[" W            \
  "]], #64\n"                                                                        \
  "ld1 {v30.16b, v31.16b}, [%[" W                                                    \
  "]], #32\n"                                                                        \
  "dup v4.4s, v16.s[1]\n dup v5.4s, v19.s[1]\n" EINFER_G2_Q4_STEP("v23", "v28", "0") \
      EINFER_G2_Q4_STEP("v24", "v29", "1") EINFER_G2_Q4_STEP("v25", "v30", "2")      \
          EINFER_G2_Q4_STEP("v26", "v31", "3") EINFER_G2_END("v22", "v27", ACC)
// q8, two blocks: v22 scales 0, v23-v29 v8 values 0, v9 scales 1, v10-v15 v30 v31 values 1.
#define EINFER_G2_Q8_STEP(W00, W01, W10, W11, L) \
  EINFER_G2_SDOT("v4", W00, "v17", L)            \
  EINFER_G2_SDOT("v5", W10, "v20", L)            \
  EINFER_G2_SDOT("v4", W01, "v18", L) EINFER_G2_SDOT("v5", W11, "v21", L)
#define EINFER_G2_Q8_TILE(W, ACC)                                                        \
  "ld1 {v22.16b-v25.16b}, [%[" W "]], #64\n ld1 {v26.16b-v29.16b}, [%[" W                \
  "]], #64\n"                                                                            \
  "ld1 {v8.16b-v11.16b}, [%[" W "]], #64\n ld1 {v12.16b-v15.16b}, [%[" W                 \
  "]], #64\n"                                                                            \
  "ld1 {v30.16b, v31.16b}, [%[" W                                                        \
  "]], #32\n"                                                                            \
  "movi v4.4s, #0\n movi v5.4s, #0\n" EINFER_G2_Q8_STEP("v23", "v27", "v10", "v14", "0") \
      EINFER_G2_Q8_STEP("v24", "v28", "v11", "v15", "1")                                 \
          EINFER_G2_Q8_STEP("v25", "v29", "v12", "v30", "2")                             \
              EINFER_G2_Q8_STEP("v26", "v8", "v13", "v31", "3") EINFER_G2_END("v22", "v9", ACC)
// One block alone (an odd last group): group 0's registers of the above.
#define EINFER_G1_Q4_TILE(W, ACC) \
  "ldr q22, [%[" W "]], #16\n ld1 {v23.16b-v26.16b}, [%[" W "]], #64\n"                     \
  "dup v4.4s, v16.s[1]\n"                                                                   \
  "and v6.16b, v23.16b, v8.16b\n" EINFER_G2_SDOT("v4", "v6", "v17", "0")                    \
  "and v6.16b, v24.16b, v8.16b\n" EINFER_G2_SDOT("v4", "v6", "v17", "1")                    \
  "and v6.16b, v25.16b, v8.16b\n" EINFER_G2_SDOT("v4", "v6", "v17", "2")                    \
  "and v6.16b, v26.16b, v8.16b\n" EINFER_G2_SDOT("v4", "v6", "v17", "3")                    \
  "ushr v6.16b, v23.16b, #4\n" EINFER_G2_SDOT("v4", "v6", "v18", "0")                       \
  "ushr v6.16b, v24.16b, #4\n" EINFER_G2_SDOT("v4", "v6", "v18", "1")                       \
  "ushr v6.16b, v25.16b, #4\n" EINFER_G2_SDOT("v4", "v6", "v18", "2")                       \
  "ushr v6.16b, v26.16b, #4\n" EINFER_G2_SDOT("v4", "v6", "v18", "3")                       \
  "scvtf v4.4s, v4.4s\n fmul v22.4s, v22.4s, v16.s[0]\n fmla " ACC ".4s, v4.4s, v22.4s\n"
#define EINFER_G1_Q8_TILE(W, ACC)                                                                  \
  "ldr q22, [%[" W "]], #16\n ld1 {v23.16b-v26.16b}, [%[" W                                        \
  "]], #64\n"                                                                                      \
  "ld1 {v27.16b-v30.16b}, [%[" W                                                                   \
  "]], #64\n movi v4.4s, #0\n" EINFER_G2_SDOT("v4", "v23", "v17", "0") EINFER_G2_SDOT(             \
      "v4", "v24", "v17", "1") EINFER_G2_SDOT("v4", "v25", "v17", "2")                             \
      EINFER_G2_SDOT("v4", "v26", "v17", "3") EINFER_G2_SDOT("v4", "v27", "v18", "0")              \
          EINFER_G2_SDOT("v4", "v28", "v18", "1") EINFER_G2_SDOT("v4", "v29", "v18", "2")          \
              EINFER_G2_SDOT("v4", "v30", "v18",                                                   \
                             "3") "scvtf v4.4s, v4.4s\n fmul v22.4s, v22.4s, v16.s[0]\n fmla " ACC \
                                  ".4s, v4.4s, v22.4s\n"
// Per pass of 4 tiles: the accumulators zeroed, the token's blocks from the first, the groups in
// pairs then an odd last one, the 16 sums stored; the next pass's tiles start where the 4th ended.
#define EINFER_G2_BODY(TILE2, TILE1) \
  "movi v8.16b, #0x0f\n"                                                                  \
  "0:\n movi v0.4s, #0\n movi v1.4s, #0\n movi v2.4s, #0\n movi v3.4s, #0\n"            \
  "mov %[a], %[act]\n mov %[left], %[pairs]\n cbz %[left], 2f\n"                         \
  "1:\n ld1 {v16.16b-v18.16b}, [%[a]], #48\n ld1 {v19.16b-v21.16b}, [%[a]], #48\n"       \
  TILE2("w0", "v0") TILE2("w1", "v1") TILE2("w2", "v2") TILE2("w3", "v3")                \
  "subs %[left], %[left], #1\n b.ne 1b\n"                                               \
  "2:\n cbz %[odd], 3f\n ld1 {v16.16b-v18.16b}, [%[a]], #48\n"                           \
  TILE1("w0", "v0") TILE1("w1", "v1") TILE1("w2", "v2") TILE1("w3", "v3")                \
  "3:\n st1 {v0.4s-v3.4s}, [%[c]], #64\n"                                                \
  "mov %[w0], %[w3]\n add %[w1], %[w0], %[tb]\n add %[w2], %[w1], %[tb]\n"              \
  "add %[w3], %[w2], %[tb]\n subs %[passes], %[passes], #1\n b.ne 0b\n"
#define EINFER_G2_OPERANDS                                                                  \
  : [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [a] "=&r"(a),               \
    [left] "=&r"(left), [c] "+r"(c), [passes] "+r"(passes)                                  \
  : [act] "r"(act), [pairs] "r"(groups / 2), [odd] "r"(groups % 2), [tb] "r"(tile_bytes)    \
  : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", \
    "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25",     \
    "v26", "v27", "v28", "v29", "v30", "v31", "memory", "cc"

// `passes` (> 0) passes of 4 tiles from `wt` (tiles `tile_bytes` apart) against the token's
// blocks at `act`; 16 sums a pass to c on.
template <bool kQ4>
void gemv_passes4_g32(const uint8_t* wt, size_t tile_bytes, const int8_t* act, int64_t groups,
                      float* c, int64_t passes) {
  const uint8_t *w0 = wt, *w1 = wt + tile_bytes, *w2 = wt + 2 * tile_bytes,
                *w3 = wt + 3 * tile_bytes;
  const int8_t* a;
  int64_t left;
  if constexpr (kQ4) {
    __asm__ volatile(EINFER_G2_BODY(EINFER_G2_Q4_TILE, EINFER_G1_Q4_TILE) EINFER_G2_OPERANDS);
  } else {
    __asm__ volatile(EINFER_G2_BODY(EINFER_G2_Q8_TILE, EINFER_G1_Q8_TILE) EINFER_G2_OPERANDS);
  }
}

template <bool kQ4>
void gemv(const QuantGemm& p) {
  if (p.group != 32 || p.groups <= 0 || p.n < 16) {
    gemv_passes(p, [&](auto tiles, const uint8_t* wt, float* c, int cols) {
      gemv_tiles<kQ4, decltype(tiles)::value>(p, wt, c, cols);
    });
    return;
  }
  const int64_t passes = p.n / 16;
  gemv_passes4_g32<kQ4>(p.w, p.w_tile_bytes, p.qa, p.groups, p.c, passes);
  for (int64_t j0 = passes * 16; j0 < p.n; j0 += 4)
    gemv_tiles<kQ4, 1>(p, p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes, p.c + j0,
                       static_cast<int>(p.n - j0 < 4 ? p.n - j0 : 4));
}

}  // namespace

void gemv_q8_4x4_dotprod(const QuantGemm& p) {
  gemv<false>(p);
}
void gemv_q4_4x4_dotprod(const QuantGemm& p) {
  gemv<true>(p);
}
void gemm_q8_4x4_dotprod(const QuantGemm& p) {
  gemm<false>(p);
}
void gemm_q4_4x4_dotprod(const QuantGemm& p) {
  gemm<true>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __aarch64__ && __ARM_FEATURE_DOTPROD
