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

// The decode GEMV for groups of 32 in assembly: 4 weight tiles (16 rows) per pass, each tile's
// blocks read in order through its own post-incremented pointer; per group the token's header and
// its 8 k-steps, each broadcast to a register (ld4r), in 3 loads for the 4 tiles. Per group and
// tile: scales and values in 2 loads (q4; q8 3), 16 smull/smlal(2), the int16 sums widened by
// saddlp/sadalp (q8 every 2 steps, q4 once: 8 products of at most 15 x 127 per lane), one addp
// to rows, q4's -8 * sum(a) added, then acc += float(isum) * (sw * sa): about 34 instructions for
// q4 and 32 for q8, where the intrinsics' loops took 91 and 74. Registers: v0-v3 the tiles' float
// accumulators, v4/v5 int16 sums of rows 0-1 / 2-3, v6/v7 their int32 pairs, v8 the nibble mask,
// v9 -8 * sum(a) in 4 lanes, v10/v11 unpacked nibbles, v16 the header (sa, asum8), v19-v26 the 8
// steps broadcast, v27 the scales, v28-v31 the weight registers of a half-group (q4: the raw bytes
// of both halves).
#define EINFER_G16_MUL(OP, W, B) \
  OP " v4.8h, " W ".8b, " B ".8b\n " OP "2 v5.8h, " W ".16b, " B ".16b\n"
#define EINFER_G16_WIDEN(OP) OP " v6.4s, v4.8h\n " OP " v7.4s, v5.8h\n"
#define EINFER_G16_END(ACC) \
  "scvtf v6.4s, v6.4s\n fmul v27.4s, v27.4s, v16.s[0]\n fmla " ACC ".4s, v6.4s, v27.4s\n"
#define EINFER_G16_Q8_HALF(B0, B1, B2, B3, FIRST) \
  EINFER_G16_MUL("smull", "v28", B0)              \
  EINFER_G16_MUL("smlal", "v29", B1)              \
  EINFER_G16_WIDEN(FIRST)                         \
  EINFER_G16_MUL("smull", "v30", B2) EINFER_G16_MUL("smlal", "v31", B3) EINFER_G16_WIDEN("sadalp")
#define EINFER_G16_Q8_TILE(W, ACC)                                                          \
  "ldr q27, [%[" W "]], #16\n ld1 {v28.16b-v31.16b}, [%[" W "]], #64\n" EINFER_G16_Q8_HALF( \
      "v19", "v20", "v21", "v22",                                                           \
      "saddlp") "ld1 {v28.16b-v31.16b}, [%[" W                                              \
                "]], #64\n" EINFER_G16_Q8_HALF(                                             \
                    "v23", "v24", "v25", "v26",                                             \
                    "sadalp") "addp v6.4s, v6.4s, v7.4s\n" EINFER_G16_END(ACC)
// q4 step S: raw register R's low nibbles are step S of the first half (B), its high ones step
// S of the second (B2).
#define EINFER_G16_Q4_STEP(OP, R, B, B2)                                                        \
  "and v10.16b, " R ".16b, v8.16b\n ushr v11.16b, " R ".16b, #4\n" EINFER_G16_MUL(OP, "v10", B) \
      EINFER_G16_MUL("smlal", "v11", B2)
#define EINFER_G16_Q4_TILE(W, ACC)                                                          \
  "ldr q27, [%[" W "]], #16\n ld1 {v28.16b-v31.16b}, [%[" W "]], #64\n" EINFER_G16_Q4_STEP( \
      "smull", "v28", "v19", "v23") EINFER_G16_Q4_STEP("smlal", "v29", "v20", "v24")        \
      EINFER_G16_Q4_STEP("smlal", "v30", "v21", "v25")                                      \
          EINFER_G16_Q4_STEP("smlal", "v31", "v22", "v26") EINFER_G16_WIDEN(                \
              "saddlp") "addp v6.4s, v6.4s, v7.4s\n add v6.4s, v6.4s, v9.4s\n" EINFER_G16_END(ACC)
// Per pass of 4 tiles: the accumulators zeroed, the token's blocks from the first, the 16 sums
// stored; the next pass's tiles start where the 4th ended.
#define EINFER_G16_BODY(TILE) \
  "movi v8.16b, #0x0f\n"                                                                   \
  "0:\n movi v0.4s, #0\n movi v1.4s, #0\n movi v2.4s, #0\n movi v3.4s, #0\n"             \
  "mov %[a], %[act]\n mov %[n], %[groups]\n"                                               \
  "1:\n ldr q16, [%[a]], #16\n dup v9.4s, v16.s[1]\n"                                     \
  "ld4r {v19.4s, v20.4s, v21.4s, v22.4s}, [%[a]], #16\n"                                   \
  "ld4r {v23.4s, v24.4s, v25.4s, v26.4s}, [%[a]], #16\n"                                   \
  TILE("w0", "v0") TILE("w1", "v1") TILE("w2", "v2") TILE("w3", "v3")                     \
  "subs %[n], %[n], #1\n b.ne 1b\n st1 {v0.4s-v3.4s}, [%[c]], #64\n"                      \
  "mov %[w0], %[w3]\n add %[w1], %[w0], %[tb]\n add %[w2], %[w1], %[tb]\n"               \
  "add %[w3], %[w2], %[tb]\n subs %[passes], %[passes], #1\n b.ne 0b\n"
#define EINFER_G16_OPERANDS                                                                    \
  : [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [a] "=&r"(a), [n] "=&r"(n), \
    [c] "+r"(c), [passes] "+r"(passes)                                                       \
  : [act] "r"(act), [groups] "r"(groups), [tb] "r"(tile_bytes)                               \
  : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v16", "v17",  \
    "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", \
    "v31", "memory", "cc"

// `passes` (> 0) passes of 4 tiles from `wt` (tiles `tile_bytes` apart) against the token's
// blocks at `act`; 16 sums a pass to c on. groups > 0.
template <bool kQ4>
void gemv_passes4_g32(const uint8_t* wt, size_t tile_bytes, const int8_t* act, int64_t groups,
                      float* c, int64_t passes) {
  const uint8_t *w0 = wt, *w1 = wt + tile_bytes, *w2 = wt + 2 * tile_bytes,
                *w3 = wt + 3 * tile_bytes;
  const int8_t* a;
  int64_t n;
  if constexpr (kQ4) {
    __asm__ volatile(EINFER_G16_BODY(EINFER_G16_Q4_TILE) EINFER_G16_OPERANDS);
  } else {
    __asm__ volatile(EINFER_G16_BODY(EINFER_G16_Q8_TILE) EINFER_G16_OPERANDS);
  }
}

// tile<kQ4, 4, 1> for groups of 32 in assembly: 4 tokens (one quad) x 4 rows, the group's 8
// weight registers (q4: unpacked once) held for the 4 tokens, each token's 8 k-steps broadcast by
// 2 ld4r from its 16-byte halves. Per group: scales and values in 2 loads (q8 3), 8 unpacks (q4),
// the header; per token 2 ld4r, 16 smull/smlal(2), the int16 sums widened (q4 once in place, q8
// every 2 steps into int32), addp to rows, q4's -8 * sum(a), then acc += float(isum) * (sw * sa):
// about 29 instructions per token, tile and group for q4 (32 q8) where the intrinsics took 73
// (57). Registers: v0-v3 the tokens' float accumulators, v4/v5 int16 sums of rows 0-1 / 2-3,
// v6/v7 their int32 pairs (q8), v8-v15 the weight registers (q4: low nibbles of steps 0-3, then
// high), v16-v23 a token's 8 steps broadcast, v24 the sa of the quad, v25 the scales, v26 a scale
// product, v27 the nibble mask, v28-v31 each token's -8 * sum(a) (q4).
#define EINFER_Q4T_MUL(OP, W, B) \
  OP " v4.8h, " W ".8b, " B ".8b\n " OP "2 v5.8h, " W ".16b, " B ".16b\n"
// Token T's steps: 2 ld4r (the pointer goes +64 to its second half, then -48 to the next token).
#define EINFER_Q4T_BCAST                                   \
  "ld4r {v16.4s, v17.4s, v18.4s, v19.4s}, [%[a]], %[up]\n" \
  "ld4r {v20.4s, v21.4s, v22.4s, v23.4s}, [%[a]], %[back]\n"
#define EINFER_Q4T_END(T, ACC) \
  "scvtf v4.4s, v4.4s\n fmul v26.4s, v25.4s, v24.s[" T "]\n fmla " ACC ".4s, v4.4s, v26.4s\n"
#define EINFER_Q4T_Q4_TOKEN(T, ACC, START) \
  EINFER_Q4T_BCAST                         \
  EINFER_Q4T_MUL("smull", "v8", "v16") EINFER_Q4T_MUL("smlal", "v9", "v17")                     \
  EINFER_Q4T_MUL("smlal", "v10", "v18") EINFER_Q4T_MUL("smlal", "v11", "v19")                   \
  EINFER_Q4T_MUL("smlal", "v12", "v20") EINFER_Q4T_MUL("smlal", "v13", "v21")                   \
  EINFER_Q4T_MUL("smlal", "v14", "v22") EINFER_Q4T_MUL("smlal", "v15", "v23")                   \
  "saddlp v4.4s, v4.8h\n saddlp v5.4s, v5.8h\n addp v4.4s, v4.4s, v5.4s\n"                      \
  "add v4.4s, v4.4s, " START ".4s\n" EINFER_Q4T_END(T, ACC)
#define EINFER_Q4T_Q8_TOKEN(T, ACC, START) \
  EINFER_Q4T_BCAST                         \
  EINFER_Q4T_MUL("smull", "v8", "v16") EINFER_Q4T_MUL("smlal", "v9", "v17")                     \
  "saddlp v6.4s, v4.8h\n saddlp v7.4s, v5.8h\n"                                                 \
  EINFER_Q4T_MUL("smull", "v10", "v18") EINFER_Q4T_MUL("smlal", "v11", "v19")                   \
  "sadalp v6.4s, v4.8h\n sadalp v7.4s, v5.8h\n"                                                 \
  EINFER_Q4T_MUL("smull", "v12", "v20") EINFER_Q4T_MUL("smlal", "v13", "v21")                   \
  "sadalp v6.4s, v4.8h\n sadalp v7.4s, v5.8h\n"                                                 \
  EINFER_Q4T_MUL("smull", "v14", "v22") EINFER_Q4T_MUL("smlal", "v15", "v23")                   \
  "sadalp v6.4s, v4.8h\n sadalp v7.4s, v5.8h\n addp v4.4s, v6.4s, v7.4s\n" EINFER_Q4T_END(T, ACC)
// The block starts: q4 the raw values (v8-v11: low nibbles steps 0-3 of the first half, high
// nibbles the same steps of the second) and the tokens' -8 * sum(a); q8 both halves' registers.
#define EINFER_Q4T_Q4_START                                         \
  "ldr q25, [%[w]], #16\n ld1 {v8.16b-v11.16b}, [%[w]], #64\n"      \
  "ushr v12.16b, v8.16b, #4\n ushr v13.16b, v9.16b, #4\n"           \
  "ushr v14.16b, v10.16b, #4\n ushr v15.16b, v11.16b, #4\n"         \
  "and v8.16b, v8.16b, v27.16b\n and v9.16b, v9.16b, v27.16b\n"     \
  "and v10.16b, v10.16b, v27.16b\n and v11.16b, v11.16b, v27.16b\n" \
  "ldr q24, [%[a]], #16\n ld1 {v28.4s-v31.4s}, [%[a]], #64\n"
#define EINFER_Q4T_Q8_START                                    \
  "ldr q25, [%[w]], #16\n ld1 {v8.16b-v11.16b}, [%[w]], #64\n" \
  "ld1 {v12.16b-v15.16b}, [%[w]], #64\n ldr q24, [%[a]], #80\n"
// Per quad: the accumulators zeroed, the weights from the tile's first block, the groups, the 4
// rows stored (`ld` bytes apart); the next quad's blocks follow this one's.
#define EINFER_Q4T_BODY(START, TOKEN) \
  "movi v27.16b, #0x0f\n"                                                                    \
  "0:\n movi v0.4s, #0\n movi v1.4s, #0\n movi v2.4s, #0\n movi v3.4s, #0\n"               \
  "mov %[w], %[wt]\n mov %[n], %[groups]\n"                                                  \
  "1:\n" START TOKEN("0", "v0", "v28") TOKEN("1", "v1", "v29") TOKEN("2", "v2", "v30")      \
  TOKEN("3", "v3", "v31") "add %[a], %[a], #64\n subs %[n], %[n], #1\n b.ne 1b\n"           \
  "str q0, [%[out]]\n str q1, [%[out], %[ld]]\n add %[out], %[out], %[ld], lsl #1\n"         \
  "str q2, [%[out]]\n str q3, [%[out], %[ld]]\n add %[out], %[out], %[ld], lsl #1\n"         \
  "subs %[quads], %[quads], #1\n b.ne 0b\n"
#define EINFER_Q4T_OPERANDS                                                                    \
  : [w] "=&r"(w), [n] "=&r"(n), [a] "+r"(act), [out] "+r"(out), [quads] "+r"(quads)          \
  : [wt] "r"(wt), [groups] "r"(groups), [ld] "r"(row_bytes), [up] "r"(up), [back] "r"(back)  \
  : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",   \
    "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26",  \
    "v27", "v28", "v29", "v30", "v31", "memory", "cc"

// `quads` (> 0) quads of tokens, their blocks one after the other from `act`, x the tile at
// `wt`: each token's 4 rows to out, rows `row_bytes` apart. groups > 0.
template <bool kQ4>
void gemm_tile4_g32(const uint8_t* wt, const int8_t* act, int64_t groups, float* out,
                    int64_t row_bytes, int64_t quads) {
  const int64_t up = 64, back = -48;
  const uint8_t* w;
  int64_t n;
  if constexpr (kQ4) {
    __asm__ volatile(EINFER_Q4T_BODY(EINFER_Q4T_Q4_START, EINFER_Q4T_Q4_TOKEN) EINFER_Q4T_OPERANDS);
  } else {
    __asm__ volatile(EINFER_Q4T_BODY(EINFER_Q4T_Q8_START, EINFER_Q4T_Q8_TOKEN) EINFER_Q4T_OPERANDS);
  }
}

// A GEMV (m == 1): 16 rows per pass in assembly for groups of 32, the rest in tile().
template <bool kQ4>
void gemv(const QuantGemm& p) {
  int64_t j0 = 0;
  if (p.group == 32 && p.groups > 0 && p.n >= 16) {
    gemv_passes4_g32<kQ4>(p.w, p.w_tile_bytes, p.qa, p.groups, p.c, p.n / 16);
    j0 = p.n / 16 * 16;
  }
  for (; j0 < p.n; j0 += 8) {
    const uint8_t* wt = p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes;
    const int64_t left = p.n - j0;
    const int cols[2] = {static_cast<int>(left < 4 ? left : 4),
                         static_cast<int>(left - 4 < 4 ? left - 4 : 4)};
    if (left > 4)
      tile<kQ4, 1, 2>(p, wt, p.qa, p.c + j0, 1, cols);
    else
      tile<kQ4, 1, 1>(p, wt, p.qa, p.c + j0, 1, cols);
  }
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

// A GEMM (m > 1): quads of tokens x single tiles in assembly for groups of 32, else tile().
template <bool kQ4>
void gemm(const QuantGemm& p) {
  if (p.group != 32 || p.groups <= 0) return run<kQ4, 4>(p);
  const int64_t block_stride = p.groups * p.act_block_bytes;
  for (int64_t j0 = 0; j0 < p.n; j0 += 4) {
    const uint8_t* wt = p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes;
    const int cols = static_cast<int>(p.n - j0 < 4 ? p.n - j0 : 4);
    int64_t i0 = 0;
    if (cols == 4 && p.m >= 4) {  // whole quads straight into C
      gemm_tile4_g32<kQ4>(wt, p.qa, p.groups, p.c + j0, p.ldc * static_cast<int64_t>(sizeof(float)),
                          p.m / 4);
      i0 = p.m / 4 * 4;
    }
    for (; i0 < p.m; i0 += 4) {
      float32x4_t out[4];
      gemm_tile4_g32<kQ4>(wt, p.qa + i0 / 4 * block_stride, p.groups, reinterpret_cast<float*>(out),
                          16, 1);
      store_tile<4>(p.c + i0 * p.ldc + j0, p.ldc, out,
                    static_cast<int>(p.m - i0 < 4 ? p.m - i0 : 4), cols);
    }
  }
}

}  // namespace

void gemv_q8_4x4_neon(const QuantGemm& p) {
  gemv<false>(p);
}
void gemv_q4_4x4_neon(const QuantGemm& p) {
  gemv<true>(p);
}
void gemm_q8_4x4_neon(const QuantGemm& p) {
  gemm<false>(p);
}
void gemm_q4_4x4_neon(const QuantGemm& p) {
  gemm<true>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __aarch64__ && !__ARM_FEATURE_DOTPROD
