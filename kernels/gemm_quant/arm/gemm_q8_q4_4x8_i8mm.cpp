// The 4x8 interleaved layout's kernels on cores with the int8 matrix multiply (Armv8.6 i8mm:
// Cortex-A510/A710/X2+, Neoverse-N2/V1/V2; qemu -cpu max): a weight chunk is 4 rows x 8 values, two
// registers of 2 rows x 8 bytes, exactly SMMLA's second operand; a pair block of activations puts
// 2 tokens x 8 values in one register, its first. One smmla adds 2 x 2 dot products of 8 (32
// products) into [t0 r0, t0 r1, t1 r0, t1 r1]: twice sdot's work per instruction. The twin is
// gemm_q8_q4_interleaved_scalar.cpp, bit for bit: exact int32 group sums (q4: unsigned nibbles,
// started at the pair header's -8 * sum(a), laid out [a0 a0 a1 a1] like the lanes), then
// acc = fma(float(isum), sa * sw, acc) with sa [sa0 sa0 sa1 sa1] from the header and sw
// [sw0 sw1 sw0 sw1] / [sw2 sw3 sw2 sw3] loaded as 8-byte pairs.
//
// GEMM (m > 1, ActOrder::pair): 8 tokens (4 pairs) x 4 rows per tile pass, the weight tile
// outer. GEMV (m == 1, ActOrder::single): the token's 8 values of a chunk in both halves of the
// first operand (ld1r), so lanes 0-1 of the two accumulators are rows 0-3; 4 tiles per pass.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__aarch64__) && defined(__ARM_FEATURE_MATMUL_INT8)

#include <arm_neon.h>

#include "kernels/gemm_quant/arm/gemm_quant_interleaved_neon.h"

namespace einfer::quant_detail {
namespace {

// Chunk c of a group's weights, rows 0-1 and 2-3. q8 loads them; q4 holds chunk pairs: chunk c
// of the group's first half is the low nibbles of pair c, chunk c of its second half the high ones.
template <bool kQ4>
inline int8x16x2_t chunk(const uint8_t* values, int64_t c, int64_t chunks) {
  if constexpr (kQ4) {
    const int64_t half = chunks / 2;
    const uint8x16x2_t raw = vld1q_u8_x2(values + (c < half ? c : c - half) * 32);
    if (c < half) {
      const uint8x16_t mask = vdupq_n_u8(0x0F);
      return {vreinterpretq_s8_u8(vandq_u8(raw.val[0], mask)),
              vreinterpretq_s8_u8(vandq_u8(raw.val[1], mask))};
    }
    return {vreinterpretq_s8_u8(vshrq_n_u8(raw.val[0], 4)),
            vreinterpretq_s8_u8(vshrq_n_u8(raw.val[1], 4))};
  } else {
    return vld1q_s8_x2(reinterpret_cast<const int8_t*>(values) + c * 32);
  }
}

inline float32x4_t pair_scales(const float* sw) {  // [sw0 sw1 sw0 sw1]
  return vreinterpretq_f32_f64(vld1q_dup_f64(reinterpret_cast<const double*>(sw)));
}

// [t0 r0, t0 r1, t1 r0, t1 r1] and [t0 r2, t0 r3, t1 r2, t1 r3] of each pair -> each token's 4
// rows, the first `tokens` of them.
template <int kPairs>
inline void store_pairs(const float32x4_t (*acc)[2], float* c, int64_t ldc, int tokens, int cols) {
  for (int q = 0; q < kPairs; ++q)
    for (int t = 0; t < 2 && 2 * q + t < tokens; ++t) {
      const float64x2_t lo = vreinterpretq_f64_f32(acc[q][0]),
                        hi = vreinterpretq_f64_f32(acc[q][1]);
      const float32x4_t row =
          vreinterpretq_f32_f64(t == 0 ? vzip1q_f64(lo, hi) : vzip2q_f64(lo, hi));
      store_row(c + (2 * q + t) * ldc, row, cols);
    }
}

// One tile (4 rows) x kPairs pairs of tokens.
template <bool kQ4, int kPairs>
void gemm_tile(const QuantGemm& p, const uint8_t* wt, const int8_t* act, float* c, int tokens,
               int cols) {
  const int64_t group = p.group, chunks = group / 8;
  const size_t wbb = 16 + static_cast<size_t>(kQ4 ? group / 2 : group) * 4;
  const int64_t abb = p.act_block_bytes, pair_stride = p.groups * abb;
  float32x4_t acc[kPairs][2];
  for (int q = 0; q < kPairs; ++q) acc[q][0] = acc[q][1] = vdupq_n_f32(0.f);
  for (int64_t g = 0; g < p.groups; ++g) {
    const uint8_t* wb = wt + g * wbb;
    int32x4_t isum[kPairs][2];
    for (int q = 0; q < kPairs; ++q) {
      const int8_t* h = act + q * pair_stride + g * abb;
      isum[q][0] = kQ4 ? vld1q_s32(reinterpret_cast<const int32_t*>(h) + 4) : vdupq_n_s32(0);
      isum[q][1] = isum[q][0];
    }
    for (int64_t c = 0; c < chunks; ++c) {
      const int8x16x2_t w = chunk<kQ4>(wb + 16, c, chunks);
      for (int q = 0; q < kPairs; ++q) {
        const int8x16_t a = vld1q_s8(act + q * pair_stride + g * abb + 32 + c * 16);
        isum[q][0] = vmmlaq_s32(isum[q][0], a, w.val[0]);
        isum[q][1] = vmmlaq_s32(isum[q][1], a, w.val[1]);
      }
    }
    const float* sw = reinterpret_cast<const float*>(wb);
    const float32x4_t sw01 = pair_scales(sw), sw23 = pair_scales(sw + 2);
    for (int q = 0; q < kPairs; ++q) {
      const float32x4_t sa =
          vld1q_f32(reinterpret_cast<const float*>(act + q * pair_stride + g * abb));
      acc[q][0] = vfmaq_f32(acc[q][0], vcvtq_f32_s32(isum[q][0]), vmulq_f32(sw01, sa));
      acc[q][1] = vfmaq_f32(acc[q][1], vcvtq_f32_s32(isum[q][1]), vmulq_f32(sw23, sa));
    }
  }
  store_pairs<kPairs>(acc, c, p.ldc, tokens, cols);
}

// gemm_tile<kQ4, 4> for groups of 32 in assembly: 8 tokens (4 pairs) x 4 rows, the group's 8
// weight registers (q4: unpacked once) held while each pair's header and 4 chunks come in 2
// loads, post-incremented through the pair's blocks. Per group: 2 loads of weights (q8 3), 8
// unpacks (q4), the scales paired ([sw0 sw1 sw0 sw1], [sw2 sw3 sw2 sw3]); per pair: its int32
// sums started at the header's -8 * sum(a), 8 smmlas, and acc += float(isum) * (sw * sa) on both
// halves: 82 instructions per group for q4 where the intrinsics took about 190. Registers: v0-v7
// the pairs' float accumulators (rows 0-1 and 2-3 of each), v8-v15 the weight registers of
// chunks 0-3 (rows 0-1, 2-3), v16 the pair's [sa0 sa0 sa1 sa1], v17/v18 its int32 sums, v19-v22
// its chunks, v23/v24 the paired scales, v25/v26 scale products, v27 the nibble mask, v28 the
// block's scales; v16/v17 again the rows of a pair as they are stored.
#define EINFER_P8_PAIR(A, ACC0, ACC1)                                      \
  "ld1 {v16.16b, v17.16b}, [%[" A "]], #32\n ld1 {v19.16b-v22.16b}, [%[" A \
  "]], #64\n"                                                              \
  "mov v18.16b, v17.16b\n"                                                 \
  "smmla v17.4s, v19.16b, v8.16b\n smmla v18.4s, v19.16b, v9.16b\n"        \
  "smmla v17.4s, v20.16b, v10.16b\n smmla v18.4s, v20.16b, v11.16b\n"      \
  "smmla v17.4s, v21.16b, v12.16b\n smmla v18.4s, v21.16b, v13.16b\n"      \
  "smmla v17.4s, v22.16b, v14.16b\n smmla v18.4s, v22.16b, v15.16b\n"      \
  "scvtf v17.4s, v17.4s\n scvtf v18.4s, v18.4s\n"                          \
  "fmul v25.4s, v23.4s, v16.4s\n fmul v26.4s, v24.4s, v16.4s\n"            \
  "fmla " ACC0 ".4s, v17.4s, v25.4s\n fmla " ACC1 ".4s, v18.4s, v26.4s\n"
// q4: 64 bytes; register R (rows 0-1 or 2-3 of chunk pair P) holds chunk P in its low nibbles
// and chunk P + 2 in its high ones.
#define EINFER_P8_Q4_WEIGHTS                                                     \
  "ldr q28, [%[w]], #16\n ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [%[w]], #64\n" \
  "ushr v12.16b, v8.16b, #4\n ushr v13.16b, v9.16b, #4\n"                        \
  "ushr v14.16b, v10.16b, #4\n ushr v15.16b, v11.16b, #4\n"                      \
  "and v8.16b, v8.16b, v27.16b\n and v9.16b, v9.16b, v27.16b\n"                  \
  "and v10.16b, v10.16b, v27.16b\n and v11.16b, v11.16b, v27.16b\n"
#define EINFER_P8_Q8_WEIGHTS                                                     \
  "ldr q28, [%[w]], #16\n ld1 {v8.16b, v9.16b, v10.16b, v11.16b}, [%[w]], #64\n" \
  "ld1 {v12.16b, v13.16b, v14.16b, v15.16b}, [%[w]], #64\n"
// Pair Q's accumulators (A: rows 0-1, B: rows 2-3 of both tokens) to its two rows of C.
#define EINFER_P8_STORE_PAIR(A, B)                              \
  "zip1 v16.2d, " A ".2d, " B ".2d\n zip2 v17.2d, " A ".2d, " B \
  ".2d\n"                                                       \
  "str q16, [%[out]]\n str q17, [%[out], %[ld]]\n add %[out], %[out], %[ld], lsl #1\n"
// Per tile of 8 tokens: the accumulators zeroed, the weights from the tile's first block, the
// groups, the 8 rows stored (`ld` bytes apart); the next tile's pairs start where the 4th ended.
#define EINFER_P8_BODY(WEIGHTS) \
  "movi v27.16b, #0x0f\n"                                                                   \
  "0:\n movi v0.4s, #0\n movi v1.4s, #0\n movi v2.4s, #0\n movi v3.4s, #0\n"              \
  "movi v4.4s, #0\n movi v5.4s, #0\n movi v6.4s, #0\n movi v7.4s, #0\n"                   \
  "mov %[w], %[wt]\n mov %[n], %[groups]\n"                                                 \
  "1:\n" WEIGHTS "dup v23.2d, v28.d[0]\n dup v24.2d, v28.d[1]\n"                           \
  EINFER_P8_PAIR("a0", "v0", "v1") EINFER_P8_PAIR("a1", "v2", "v3")                        \
  EINFER_P8_PAIR("a2", "v4", "v5") EINFER_P8_PAIR("a3", "v6", "v7")                        \
  "subs %[n], %[n], #1\n b.ne 1b\n"                                                        \
  EINFER_P8_STORE_PAIR("v0", "v1") EINFER_P8_STORE_PAIR("v2", "v3")                        \
  EINFER_P8_STORE_PAIR("v4", "v5") EINFER_P8_STORE_PAIR("v6", "v7")                        \
  "mov %[a0], %[a3]\n add %[a1], %[a0], %[ps]\n add %[a2], %[a1], %[ps]\n"                 \
  "add %[a3], %[a2], %[ps]\n subs %[tiles], %[tiles], #1\n b.ne 0b\n"
#define EINFER_P8_OPERANDS                                                                     \
  : [w] "=&r"(w), [n] "=&r"(n), [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),  \
    [out] "+r"(out), [tiles] "+r"(tiles)                                                     \
  : [wt] "r"(wt), [groups] "r"(groups), [ld] "r"(row_bytes), [ps] "r"(pair_stride)           \
  : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",  \
    "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", \
    "v27", "v28", "memory", "cc"

// `tiles` (> 0) tiles of 8 tokens (pairs `pair_stride` apart from `act`) x the weight tile at
// `wt`: each token's 4 rows to out, rows `row_bytes` apart. groups > 0.
template <bool kQ4>
void gemm_tile8_g32(const uint8_t* wt, const int8_t* act, int64_t pair_stride, int64_t groups,
                    float* out, int64_t row_bytes, int64_t tiles) {
  const int8_t *a0 = act, *a1 = act + pair_stride, *a2 = act + 2 * pair_stride,
               *a3 = act + 3 * pair_stride;
  const uint8_t* w;
  int64_t n;
  if constexpr (kQ4) {
    __asm__ volatile(EINFER_P8_BODY(EINFER_P8_Q4_WEIGHTS) EINFER_P8_OPERANDS);
  } else {
    __asm__ volatile(EINFER_P8_BODY(EINFER_P8_Q8_WEIGHTS) EINFER_P8_OPERANDS);
  }
}

template <bool kQ4>
void gemm(const QuantGemm& p) {
  const int64_t pair_stride = p.groups * p.act_block_bytes;
  for (int64_t j0 = 0; j0 < p.n; j0 += 4) {
    const uint8_t* wt = p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes;
    const int cols = static_cast<int>(p.n - j0 < 4 ? p.n - j0 : 4);
    const bool g32 = p.group == 32 && p.groups > 0;
    int64_t i0 = 0;
    if (g32 && cols == 4 && p.m >= 8) {  // whole tiles of 8 tokens straight into C
      gemm_tile8_g32<kQ4>(wt, p.qa, pair_stride, p.groups, p.c + j0,
                          p.ldc * static_cast<int64_t>(sizeof(float)), p.m / 8);
      i0 = p.m / 8 * 8;
    }
    for (; i0 + 6 < p.m; i0 += 8) {
      const int tokens = static_cast<int>(p.m - i0 < 8 ? p.m - i0 : 8);
      if (g32) {
        float32x4_t out[8];
        gemm_tile8_g32<kQ4>(wt, p.qa + i0 / 2 * pair_stride, pair_stride, p.groups,
                            reinterpret_cast<float*>(out), 16, 1);
        store_tile<8>(p.c + i0 * p.ldc + j0, p.ldc, out, tokens, cols);
      } else {
        gemm_tile<kQ4, 4>(p, wt, p.qa + i0 / 2 * pair_stride, p.c + i0 * p.ldc + j0, tokens, cols);
      }
    }
    for (; i0 < p.m; i0 += 2)
      gemm_tile<kQ4, 1>(p, wt, p.qa + i0 / 2 * pair_stride, p.c + i0 * p.ldc + j0,
                        static_cast<int>(p.m - i0 < 2 ? p.m - i0 : 2), cols);
  }
}

// kTiles weight tiles against the one token. kGroup: the group size when known at compile time
// (32: everything unrolled, the accumulators in registers), else 0.
template <bool kQ4, int kTiles, int kGroup>
void gemv_tiles(const QuantGemm& p, const uint8_t* wt, float* c, int cols) {
  const int64_t group = kGroup > 0 ? kGroup : p.group, chunks = group / 8;
  const size_t wbb = 16 + static_cast<size_t>(kQ4 ? group / 2 : group) * 4;
  const uint8x16_t mask = vdupq_n_u8(0x0F);
  float32x4_t acc[kTiles];
#pragma GCC unroll 4
  for (int x = 0; x < kTiles; ++x) acc[x] = vdupq_n_f32(0.f);
  const int8_t* ab = p.qa;
  const uint8_t* wb = wt;
  for (int64_t g = 0; g < p.groups; ++g, ab += p.act_block_bytes, wb += wbb) {
    const int32x4_t start =
        kQ4 ? vld1q_dup_s32(reinterpret_cast<const int32_t*>(ab) + 1) : vdupq_n_s32(0);
    int32x4_t isum[kTiles][2];
#pragma GCC unroll 4
    for (int x = 0; x < kTiles; ++x) isum[x][0] = isum[x][1] = start;
    // Chunk c of the token's values in both halves of the first operand.
    auto act = [&](int64_t c) {
      return vreinterpretq_s8_s64(vld1q_dup_s64(reinterpret_cast<const int64_t*>(ab + 16 + c * 8)));
    };
    if constexpr (kQ4 && kGroup == 32) {
      // The token's 32 values: chunks 0, 1 (first half) and 2, 3, each in both halves.
      const int64x2_t v01 = vld1q_s64(reinterpret_cast<const int64_t*>(ab + 16));
      const int64x2_t v23 = vld1q_s64(reinterpret_cast<const int64_t*>(ab + 32));
      const int8x16_t a0 = vreinterpretq_s8_s64(vdupq_laneq_s64(v01, 0));
      const int8x16_t a1 = vreinterpretq_s8_s64(vdupq_laneq_s64(v01, 1));
      const int8x16_t a2 = vreinterpretq_s8_s64(vdupq_laneq_s64(v23, 0));
      const int8x16_t a3 = vreinterpretq_s8_s64(vdupq_laneq_s64(v23, 1));
#pragma GCC unroll 4
      for (int x = 0; x < kTiles; ++x) {
        // Chunk pairs 0 and 1, rows 0-1 and 2-3: low nibbles chunks 0, 1, high nibbles 2, 3.
        const uint8x16x4_t raw = vld1q_u8_x4(wb + x * p.w_tile_bytes + 16);
        isum[x][0] = vmmlaq_s32(isum[x][0], a0, vreinterpretq_s8_u8(vandq_u8(raw.val[0], mask)));
        isum[x][1] = vmmlaq_s32(isum[x][1], a0, vreinterpretq_s8_u8(vandq_u8(raw.val[1], mask)));
        isum[x][0] = vmmlaq_s32(isum[x][0], a1, vreinterpretq_s8_u8(vandq_u8(raw.val[2], mask)));
        isum[x][1] = vmmlaq_s32(isum[x][1], a1, vreinterpretq_s8_u8(vandq_u8(raw.val[3], mask)));
        isum[x][0] = vmmlaq_s32(isum[x][0], a2, vreinterpretq_s8_u8(vshrq_n_u8(raw.val[0], 4)));
        isum[x][1] = vmmlaq_s32(isum[x][1], a2, vreinterpretq_s8_u8(vshrq_n_u8(raw.val[1], 4)));
        isum[x][0] = vmmlaq_s32(isum[x][0], a3, vreinterpretq_s8_u8(vshrq_n_u8(raw.val[2], 4)));
        isum[x][1] = vmmlaq_s32(isum[x][1], a3, vreinterpretq_s8_u8(vshrq_n_u8(raw.val[3], 4)));
      }
    } else if constexpr (kQ4) {
      const int64_t half = chunks / 2;
#pragma GCC unroll 2
      for (int64_t c = 0; c < half; ++c) {
        const int8x16_t lo = act(c), hi = act(c + half);
#pragma GCC unroll 4
        for (int x = 0; x < kTiles; ++x) {
          const uint8x16x2_t raw = vld1q_u8_x2(wb + x * p.w_tile_bytes + 16 + c * 32);
          isum[x][0] = vmmlaq_s32(isum[x][0], lo, vreinterpretq_s8_u8(vandq_u8(raw.val[0], mask)));
          isum[x][1] = vmmlaq_s32(isum[x][1], lo, vreinterpretq_s8_u8(vandq_u8(raw.val[1], mask)));
          isum[x][0] = vmmlaq_s32(isum[x][0], hi, vreinterpretq_s8_u8(vshrq_n_u8(raw.val[0], 4)));
          isum[x][1] = vmmlaq_s32(isum[x][1], hi, vreinterpretq_s8_u8(vshrq_n_u8(raw.val[1], 4)));
        }
      }
    } else {
#pragma GCC unroll 4
      for (int64_t c = 0; c < chunks; ++c) {
        const int8x16_t a = act(c);
#pragma GCC unroll 4
        for (int x = 0; x < kTiles; ++x) {
          const int8x16x2_t v =
              vld1q_s8_x2(reinterpret_cast<const int8_t*>(wb + x * p.w_tile_bytes) + 16 + c * 32);
          isum[x][0] = vmmlaq_s32(isum[x][0], a, v.val[0]);
          isum[x][1] = vmmlaq_s32(isum[x][1], a, v.val[1]);
        }
      }
    }
    const float sa = *reinterpret_cast<const float*>(ab);
#pragma GCC unroll 4
    for (int x = 0; x < kTiles; ++x) {
      // Lanes 0-1 of each: rows 0-1 and 2-3 (lanes 2-3 repeat them).
      const int32x4_t rows = vreinterpretq_s32_s64(
          vzip1q_s64(vreinterpretq_s64_s32(isum[x][0]), vreinterpretq_s64_s32(isum[x][1])));
      const float32x4_t sw = vld1q_f32(reinterpret_cast<const float*>(wb + x * p.w_tile_bytes));
      acc[x] = vfmaq_f32(acc[x], vcvtq_f32_s32(rows), vmulq_n_f32(sw, sa));
    }
  }
#pragma GCC unroll 4
  for (int x = 0; x < kTiles; ++x) store_row(c + 4 * x, acc[x], x + 1 < kTiles ? 4 : cols);
}

// The decode GEMV for groups of 32 in assembly: 4 weight tiles (16 rows) per pass, each tile's
// blocks read in order through its own post-incremented pointer; per group the token's header
// and its 4 chunks of 8 values, each chunk in both halves of a register, in 2 loads (ld4r).
// Per group and tile: scales and values in 2 loads (q4; q8 3), both int32 sums started at the
// header's -8 * sum(a) (0 for q8), 8 unpacks (q4), 8 smmlas, rows 0-1 and 2-3 zipped, then
// acc += float(isum) * (sw * sa): 24 instructions for q4 and 17 for q8 where the intrinsics'
// loops took 33 and 31. Registers: v0-v3 the tiles' float accumulators, v4/v5 the int32 sums
// of rows 0-1 / 2-3, v6/v7 unpacked high nibbles, v16 the header (sa, asum8), v17-v20 the
// chunks, v21 the nibble mask, v22 the scales, v24-v27 the weight registers.
#define EINFER_G16_TILE_START(W) \
  "ldr q22, [%[" W               \
  "]], #16\n"                    \
  "ld1 {v24.16b-v27.16b}, [%[" W \
  "]], #64\n"                    \
  "dup v4.4s, v16.s[1]\n dup v5.4s, v16.s[1]\n"
#define EINFER_G16_TILE_END(ACC)                    \
  "zip1 v4.2d, v4.2d, v5.2d\n scvtf v4.4s, v4.4s\n" \
  "fmul v22.4s, v22.4s, v16.s[0]\n fmla " ACC ".4s, v4.4s, v22.4s\n"
// q4 register R (chunk pair P's rows 0-1 or 2-3) into sum S: its low nibbles are chunk P (LO),
// its high ones chunk P + 2 (HI).
#define EINFER_G16_Q4_REG(R, S, T, LO, HI)            \
  "ushr " T ".16b, " R ".16b, #4\n and " R ".16b, " R \
  ".16b, v21.16b\n"                                   \
  "smmla " S ".4s, " LO ".16b, " R ".16b\n smmla " S ".4s, " HI ".16b, " T ".16b\n"
#define EINFER_G16_Q4_TILE(W, ACC)                   \
  EINFER_G16_TILE_START(W)                           \
  EINFER_G16_Q4_REG("v24", "v4", "v6", "v17", "v19") \
  EINFER_G16_Q4_REG("v25", "v5", "v7", "v17", "v19") \
  EINFER_G16_Q4_REG("v26", "v4", "v6", "v18", "v20") \
  EINFER_G16_Q4_REG("v27", "v5", "v7", "v18", "v20") EINFER_G16_TILE_END(ACC)
// q8: chunks 0-1 (4 registers), then chunks 2-3 into the same registers.
#define EINFER_G16_Q8_CHUNKS(A, B)                    \
  "smmla v4.4s, " A ".16b, v24.16b\n smmla v5.4s, " A \
  ".16b, v25.16b\n"                                   \
  "smmla v4.4s, " B ".16b, v26.16b\n smmla v5.4s, " B ".16b, v27.16b\n"
#define EINFER_G16_Q8_TILE(W, ACC)                                              \
  EINFER_G16_TILE_START(W)                                                      \
  EINFER_G16_Q8_CHUNKS("v17", "v18")                                            \
  "ld1 {v24.16b-v27.16b}, [%[" W "]], #64\n" EINFER_G16_Q8_CHUNKS("v19", "v20") \
      EINFER_G16_TILE_END(ACC)
// Per pass of 4 tiles: the accumulators zeroed, the token's blocks from the first, the 16 sums
// stored; the next pass's tiles start where the 4th ended.
#define EINFER_G16_BODY(TILE) \
  "movi v21.16b, #0x0f\n"                                                                  \
  "0:\n movi v0.4s, #0\n movi v1.4s, #0\n movi v2.4s, #0\n movi v3.4s, #0\n"             \
  "mov %[a], %[act]\n mov %[n], %[groups]\n"                                               \
  "1:\n ldr q16, [%[a]], #16\n ld4r {v17.2d, v18.2d, v19.2d, v20.2d}, [%[a]], #32\n"      \
  TILE("w0", "v0") TILE("w1", "v1") TILE("w2", "v2") TILE("w3", "v3")                     \
  "subs %[n], %[n], #1\n b.ne 1b\n st1 {v0.4s-v3.4s}, [%[c]], #64\n"                      \
  "mov %[w0], %[w3]\n add %[w1], %[w0], %[tb]\n add %[w2], %[w1], %[tb]\n"               \
  "add %[w3], %[w2], %[tb]\n subs %[passes], %[passes], #1\n b.ne 0b\n"
#define EINFER_G16_OPERANDS                                                                   \
  : [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [a] "=&r"(a), [n] "=&r"(n), \
    [c] "+r"(c), [passes] "+r"(passes)                                                       \
  : [act] "r"(act), [groups] "r"(groups), [tb] "r"(tile_bytes)                               \
  : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20", "v21",  \
    "v22", "v24", "v25", "v26", "v27", "memory", "cc"

// q4 two groups a step: the tile's two blocks (160 bytes) in 3 loads of whole registers, v26 the
// first block's scales and v27-v29 v8 its values, v9 the second's scales and v10 v11 v30 v31 its
// values; the groups' headers in v16 and v14, their chunks in v17-v20 and v22-v25, their sums in
// v4/v5 and v6/v7, v12/v13 high nibbles, v21 the mask. An odd last group goes through the tile
// above. 23.5 instructions a group and tile where one group a step took 24.5 with its loop.
#define EINFER_G16_Q4_TILE2(W, ACC) \
  "ld1 {v26.16b-v29.16b}, [%[" W "]], #64\n ld1 {v8.16b-v11.16b}, [%[" W "]], #64\n"             \
  "ld1 {v30.16b, v31.16b}, [%[" W "]], #32\n"                                                     \
  "dup v4.4s, v16.s[1]\n dup v5.4s, v16.s[1]\n dup v6.4s, v14.s[1]\n dup v7.4s, v14.s[1]\n"       \
  EINFER_G16_Q4_REG("v27", "v4", "v12", "v17", "v19") EINFER_G16_Q4_REG("v10", "v6", "v13", "v22", \
                                                                       "v24")                     \
  EINFER_G16_Q4_REG("v28", "v5", "v12", "v17", "v19") EINFER_G16_Q4_REG("v11", "v7", "v13", "v22", \
                                                                       "v24")                     \
  EINFER_G16_Q4_REG("v29", "v4", "v12", "v18", "v20") EINFER_G16_Q4_REG("v30", "v6", "v13", "v23", \
                                                                       "v25")                     \
  EINFER_G16_Q4_REG("v8", "v5", "v12", "v18", "v20") EINFER_G16_Q4_REG("v31", "v7", "v13", "v23",  \
                                                                      "v25")                      \
  "zip1 v4.2d, v4.2d, v5.2d\n zip1 v6.2d, v6.2d, v7.2d\n scvtf v4.4s, v4.4s\n"                   \
  "scvtf v6.4s, v6.4s\n fmul v26.4s, v26.4s, v16.s[0]\n fmul v9.4s, v9.4s, v14.s[0]\n"          \
  "fmla " ACC ".4s, v4.4s, v26.4s\n fmla " ACC ".4s, v6.4s, v9.4s\n"
#define EINFER_G16_Q4_BODY \
  "movi v21.16b, #0x0f\n"                                                                   \
  "0:\n movi v0.4s, #0\n movi v1.4s, #0\n movi v2.4s, #0\n movi v3.4s, #0\n"                \
  "mov %[a], %[act]\n mov %[n], %[pairs]\n cbz %[n], 2f\n"                                  \
  "1:\n ldr q16, [%[a]], #16\n ld4r {v17.2d, v18.2d, v19.2d, v20.2d}, [%[a]], #32\n"        \
  "ldr q14, [%[a]], #16\n ld4r {v22.2d, v23.2d, v24.2d, v25.2d}, [%[a]], #32\n"             \
  EINFER_G16_Q4_TILE2("w0", "v0") EINFER_G16_Q4_TILE2("w1", "v1")                           \
  EINFER_G16_Q4_TILE2("w2", "v2") EINFER_G16_Q4_TILE2("w3", "v3")                           \
  "subs %[n], %[n], #1\n b.ne 1b\n"                                                         \
  "2:\n cbz %[odd], 3f\n"                                             \
  "ldr q16, [%[a]], #16\n ld4r {v17.2d, v18.2d, v19.2d, v20.2d}, [%[a]], #32\n"             \
  EINFER_G16_Q4_TILE("w0", "v0") EINFER_G16_Q4_TILE("w1", "v1")                             \
  EINFER_G16_Q4_TILE("w2", "v2") EINFER_G16_Q4_TILE("w3", "v3")                             \
  "3:\n st1 {v0.4s-v3.4s}, [%[c]], #64\n"                                                   \
  "mov %[w0], %[w3]\n add %[w1], %[w0], %[tb]\n add %[w2], %[w1], %[tb]\n"                  \
  "add %[w3], %[w2], %[tb]\n subs %[passes], %[passes], #1\n b.ne 0b\n"
#define EINFER_G16_Q4_OPERANDS                                                                 \
  : [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3), [a] "=&r"(a), [n] "=&r"(n),  \
    [c] "+r"(c), [passes] "+r"(passes)                                                        \
  : [act] "r"(act), [pairs] "r"(groups / 2), [odd] "r"(groups % 2), [tb] "r"(tile_bytes)      \
  : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",   \
    "v14", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", \
    "v28", "v29", "v30", "v31", "memory", "cc"

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
    __asm__ volatile(EINFER_G16_Q4_BODY EINFER_G16_Q4_OPERANDS);
  } else {
    __asm__ volatile(EINFER_G16_BODY(EINFER_G16_Q8_TILE) EINFER_G16_OPERANDS);
  }
}

template <bool kQ4, int kGroup>
void gemv_groups(const QuantGemm& p) {
  if (kGroup == 32 && p.groups > 0 && p.n >= 16) {
    const int64_t passes = p.n / 16;
    gemv_passes4_g32<kQ4>(p.w, p.w_tile_bytes, p.qa, p.groups, p.c, passes);
    for (int64_t j0 = passes * 16; j0 < p.n; j0 += 4)
      gemv_tiles<kQ4, 1, kGroup>(p, p.w + static_cast<size_t>(j0 / 4) * p.w_tile_bytes, p.c + j0,
                                 static_cast<int>(p.n - j0 < 4 ? p.n - j0 : 4));
    return;
  }
  gemv_passes(p, [&](auto tiles, const uint8_t* wt, float* c, int cols) {
    gemv_tiles<kQ4, decltype(tiles)::value, kGroup>(p, wt, c, cols);
  });
}

template <bool kQ4>
void gemv(const QuantGemm& p) {
  if (p.group == 32)
    gemv_groups<kQ4, 32>(p);
  else
    gemv_groups<kQ4, 0>(p);
}

}  // namespace

void gemv_q8_4x8_i8mm(const QuantGemm& p) {
  gemv<false>(p);
}
void gemv_q4_4x8_i8mm(const QuantGemm& p) {
  gemv<true>(p);
}
void gemm_q8_4x8_i8mm(const QuantGemm& p) {
  gemm<false>(p);
}
void gemm_q4_4x8_i8mm(const QuantGemm& p) {
  gemm<true>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __aarch64__ && __ARM_FEATURE_MATMUL_INT8
