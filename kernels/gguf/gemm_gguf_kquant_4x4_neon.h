// Private to gemm_gguf_kquant_4x4_dotprod.cpp and gemm_gguf_kquant_4x4_neon.cpp: the NEON tile
// kernels of the interleaved GGUF block layout (runtime/layout.h, q4_k / q6_k and the Q4_K_M
// fallbacks q8_0 / q5_0 in 4x4), one tile of 4
// weight rows x 1, 2 or 4 activation rows per pass. A 16-byte load of quants holds 4 bytes of each
// of the 4 rows, so one 4-byte activation lane serves the 4 rows (SDOT by element where the core
// has it; the including file supplies the Dot policy: Acc, zero(), pair() adding chunks t and t + 1
// against activation lanes t and t + 1, sum() giving one row's int32 sum per lane) and each int32
// lane is one row's sum: no reduction across rows, one multiply by the rows' sub-block scales. The
// int32 sums equal the scalar twin's (dot_gguf_q8_scalar.cpp) and the per-block float expression is
// its acc += da * (d * sumi - dmin * summ), four rows in one float32x4: bit for bit the scalar
// result.
#pragma once

#include <arm_neon.h>

#include <type_traits>

#include "kernels/gguf/gguf_quant_internal.h"

namespace einfer::gguf_detail {
namespace {

// The 4 rows' f16 at byte `at` of a tile block (4 consecutive f16), as float.
inline float32x4_t rows_f16(const uint8_t* b) {
  return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(b))));
}

// Byte j of each 32-bit lane of x, zero-extended (index 16+ reads zero).
template <int J>
inline int32x4_t byte_lanes_u(uint8x16_t x) {
  constexpr uint8_t z = 0xFF;
  const uint8_t idx[16] = {J, z, z, z, 4 + J, z, z, z, 8 + J, z, z, z, 12 + J, z, z, z};
  return vreinterpretq_s32_u8(vqtbl1q_u8(x, vld1q_u8(idx)));
}
// Byte j of each 32-bit lane of x, sign-extended.
template <int J>
inline int32x4_t byte_lanes_s(uint8x16_t x) {
  constexpr uint8_t z = 0xFF;
  const uint8_t idx[16] = {z, z, z, J, z, z, z, 4 + J, z, z, z, 8 + J, z, z, z, 12 + J};
  return vshrq_n_s32(vreinterpretq_s32_u8(vqtbl1q_u8(x, vld1q_u8(idx))), 24);
}

// Sub-block s's 6-bit scale of each row (lane): byte s % 4 of sc[s / 4]'s lanes (computed where
// used: 8 live vectors would crowd the registers of the 4-row passes).
inline int32x4_t scale_lanes(const uint8x16_t* sc, int s) {
  switch (s) {
    case 0:
      return byte_lanes_u<0>(sc[0]);
    case 1:
      return byte_lanes_u<1>(sc[0]);
    case 2:
      return byte_lanes_u<2>(sc[0]);
    case 3:
      return byte_lanes_u<3>(sc[0]);
    case 4:
      return byte_lanes_u<0>(sc[1]);
    case 5:
      return byte_lanes_u<1>(sc[1]);
    case 6:
      return byte_lanes_u<2>(sc[1]);
    default:
      return byte_lanes_u<3>(sc[1]);
  }
}

template <class Dot>
struct KquantTiles {
  // q4_k: 576-byte blocks: d[4] f16, dmin[4] f16, 3 scale words x 4 rows, qs chunks [32][4][4].
  template <int NA>
  static void q4k(const uint8_t* tile, const BlockQ8K* const* act, int64_t nb, float* out) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    float32x4_t acc[NA];
    for (int ia = 0; ia < NA; ++ia) acc[ia] = vdupq_n_f32(0.f);
    for (int64_t i = 0; i < nb; ++i) {
      const uint8_t* b = tile + i * 576;
      const uint32x4_t u0 = vld1q_u32(reinterpret_cast<const uint32_t*>(b + 16));
      const uint32x4_t u1 = vld1q_u32(reinterpret_cast<const uint32_t*>(b + 32));
      const uint32x4_t u2 = vld1q_u32(reinterpret_cast<const uint32_t*>(b + 48));
      const uint32x4_t k3f = vdupq_n_u32(0x3F3F3F3F), k0f = vdupq_n_u32(0x0F0F0F0F),
                       k30 = vdupq_n_u32(0x30303030);
      // Lane r: row r's 6-bit scales (mins) of sub-blocks 0-3 and 4-7, one per byte.
      const uint8x16_t sc[2] = {
          vreinterpretq_u8_u32(vandq_u32(u0, k3f)),
          vreinterpretq_u8_u32(vorrq_u32(vandq_u32(u2, k0f), vandq_u32(vshrq_n_u32(u0, 2), k30)))};
      const uint8x16_t mn[2] = {
          vreinterpretq_u8_u32(vandq_u32(u1, k3f)),
          vreinterpretq_u8_u32(
              vorrq_u32(vandq_u32(vshrq_n_u32(u2, 4), k0f), vandq_u32(vshrq_n_u32(u1, 2), k30)))};
      const int32x4_t mins[8] = {byte_lanes_u<0>(mn[0]), byte_lanes_u<1>(mn[0]),
                                 byte_lanes_u<2>(mn[0]), byte_lanes_u<3>(mn[0]),
                                 byte_lanes_u<0>(mn[1]), byte_lanes_u<1>(mn[1]),
                                 byte_lanes_u<2>(mn[1]), byte_lanes_u<3>(mn[1])};
      int32x4_t sumi[NA], summ[NA];
      for (int ia = 0; ia < NA; ++ia) {
        const BlockQ8K* a = act[ia] + i;
        // Activation sums of the 8 sub-blocks of 32, widened.
        const int16x8_t ps = vpaddq_s16(vld1q_s16(a->bsums), vld1q_s16(a->bsums + 8));
        const int32x4_t s03 = vmovl_s16(vget_low_s16(ps)), s47 = vmovl_high_s16(ps);
        int32x4_t m = vmulq_laneq_s32(mins[0], s03, 0);
        m = vmlaq_laneq_s32(m, mins[1], s03, 1);
        m = vmlaq_laneq_s32(m, mins[2], s03, 2);
        m = vmlaq_laneq_s32(m, mins[3], s03, 3);
        m = vmlaq_laneq_s32(m, mins[4], s47, 0);
        m = vmlaq_laneq_s32(m, mins[5], s47, 1);
        m = vmlaq_laneq_s32(m, mins[6], s47, 2);
        summ[ia] = vmlaq_laneq_s32(m, mins[7], s47, 3);
        sumi[ia] = vdupq_n_s32(0);
      }
      const uint8_t* qs = b + 64;
      for (int j = 0; j < 4; ++j) {  // qs bytes 32j .. 32j + 31: sub-blocks 2j (low), 2j + 1 (high)
        typename Dot::Acc lo[NA], hi[NA];
        for (int ia = 0; ia < NA; ++ia) lo[ia] = hi[ia] = Dot::zero();
        for (int half = 0; half < 2; ++half) {
          int8x16_t al[NA], ah[NA];
          for (int ia = 0; ia < NA; ++ia) {
            al[ia] = vld1q_s8(act[ia][i].qs + 64 * j + 16 * half);
            ah[ia] = vld1q_s8(act[ia][i].qs + 64 * j + 32 + 16 * half);
          }
          const uint8_t* w = qs + 128 * j + 64 * half;
          // Chunks 4 half + t and t + 1 (row bytes 32j + 16 half + 4t ..) for t = 0, 2, each
          // against a constant activation lane.
          auto chunks = [&](auto tc) {
            constexpr int t = decltype(tc)::value;
            const uint8x16_t v0 = vld1q_u8(w + 16 * t), v1 = vld1q_u8(w + 16 * t + 16);
            const int8x16_t l0 = vreinterpretq_s8_u8(vandq_u8(v0, m4));
            const int8x16_t h0 = vreinterpretq_s8_u8(vshrq_n_u8(v0, 4));
            const int8x16_t l1 = vreinterpretq_s8_u8(vandq_u8(v1, m4));
            const int8x16_t h1 = vreinterpretq_s8_u8(vshrq_n_u8(v1, 4));
            for (int ia = 0; ia < NA; ++ia) {
              Dot::template pair<t>(&lo[ia], l0, l1, al[ia]);
              Dot::template pair<t>(&hi[ia], h0, h1, ah[ia]);
            }
          };
          chunks(std::integral_constant<int, 0>{});
          chunks(std::integral_constant<int, 2>{});
        }
        for (int ia = 0; ia < NA; ++ia)
          sumi[ia] = vmlaq_s32(vmlaq_s32(sumi[ia], Dot::sum(lo[ia]), scale_lanes(sc, 2 * j)),
                               Dot::sum(hi[ia]), scale_lanes(sc, 2 * j + 1));
      }
      const float32x4_t d = rows_f16(b), dmin = rows_f16(b + 8);
      for (int ia = 0; ia < NA; ++ia) {
        const float32x4_t t = vsubq_f32(vmulq_f32(d, vcvtq_f32_s32(sumi[ia])),
                                        vmulq_f32(dmin, vcvtq_f32_s32(summ[ia])));
        acc[ia] = vaddq_f32(acc[ia], vmulq_f32(vdupq_n_f32(act[ia][i].d), t));
      }
    }
    for (int ia = 0; ia < NA; ++ia) vst1q_f32(out + 4 * ia, acc[ia]);
  }

  // q6_k: 840-byte blocks: ql chunks [32][4][4], qh chunks [16][4][4] at 512, scale chunks
  // [4][4][4] at 768, d[4] f16 at 832. Values u in [0, 63] against the activations, and per
  // sub-block scale * (dot(u, a) - 32 * bsum): the scalar twin's sum of scale * dot(u - 32, a),
  // exactly.
  template <int NA>
  static void q6k(const uint8_t* tile, const BlockQ8K* const* act, int64_t nb, float* out) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F), k30 = vdupq_n_u8(0x30);
    float32x4_t acc[NA];
    for (int ia = 0; ia < NA; ++ia) acc[ia] = vdupq_n_f32(0.f);
    for (int64_t i = 0; i < nb; ++i) {
      const uint8_t* b = tile + i * 840;
      int32x4_t scale[16];
      for (int q = 0; q < 4; ++q) {
        const uint8x16_t s = vld1q_u8(b + 768 + 16 * q);
        scale[4 * q] = byte_lanes_s<0>(s);
        scale[4 * q + 1] = byte_lanes_s<1>(s);
        scale[4 * q + 2] = byte_lanes_s<2>(s);
        scale[4 * q + 3] = byte_lanes_s<3>(s);
      }
      int32x4_t sumi[NA];
      for (int ia = 0; ia < NA; ++ia) {
        const BlockQ8K* a = act[ia] + i;
        const int16x8_t b0 = vld1q_s16(a->bsums), b1 = vld1q_s16(a->bsums + 8);
        const int32x4_t bs[4] = {vmovl_s16(vget_low_s16(b0)), vmovl_high_s16(b0),
                                 vmovl_s16(vget_low_s16(b1)), vmovl_high_s16(b1)};
        int32x4_t corr = vmulq_laneq_s32(scale[0], bs[0], 0);
        corr = vmlaq_laneq_s32(corr, scale[1], bs[0], 1);
        corr = vmlaq_laneq_s32(corr, scale[2], bs[0], 2);
        corr = vmlaq_laneq_s32(corr, scale[3], bs[0], 3);
        corr = vmlaq_laneq_s32(corr, scale[4], bs[1], 0);
        corr = vmlaq_laneq_s32(corr, scale[5], bs[1], 1);
        corr = vmlaq_laneq_s32(corr, scale[6], bs[1], 2);
        corr = vmlaq_laneq_s32(corr, scale[7], bs[1], 3);
        corr = vmlaq_laneq_s32(corr, scale[8], bs[2], 0);
        corr = vmlaq_laneq_s32(corr, scale[9], bs[2], 1);
        corr = vmlaq_laneq_s32(corr, scale[10], bs[2], 2);
        corr = vmlaq_laneq_s32(corr, scale[11], bs[2], 3);
        corr = vmlaq_laneq_s32(corr, scale[12], bs[3], 0);
        corr = vmlaq_laneq_s32(corr, scale[13], bs[3], 1);
        corr = vmlaq_laneq_s32(corr, scale[14], bs[3], 2);
        corr = vmlaq_laneq_s32(corr, scale[15], bs[3], 3);
        sumi[ia] = vnegq_s32(vshlq_n_s32(corr, 5));
      }
      for (int h = 0; h < 2; ++h) {
        for (int half = 0; half < 2; ++half) {  // l = 16 half .. 16 half + 15: chunks 4 half + t
          // Sub-block 8h + 2g + half holds u-group g of these chunks (elements 128h + 32g + l).
          typename Dot::Acc s[NA][4];
          int8x16_t a[NA][4];
          for (int ia = 0; ia < NA; ++ia)
            for (int g = 0; g < 4; ++g) {
              s[ia][g] = Dot::zero();
              a[ia][g] = vld1q_s8(act[ia][i].qs + 128 * h + 32 * g + 16 * half);
            }
          auto chunks = [&](auto tc) {  // chunks 4 half + t and t + 1, t = 0, 2
            constexpr int t = decltype(tc)::value;
            int8x16_t u[2][4];
            for (int e = 0; e < 2; ++e) {
              const int c = 4 * half + t + e;
              const uint8x16_t wa = vld1q_u8(b + 16 * (16 * h + c));
              const uint8x16_t wb = vld1q_u8(b + 16 * (16 * h + 8 + c));
              const uint8x16_t wh = vld1q_u8(b + 512 + 16 * (8 * h + c));
              // Bit pairs 0-1, 2-3, 4-5, 6-7 of qh are the top bits of u-groups 0, 1, 2, 3.
              u[e][0] =
                  vreinterpretq_s8_u8(vorrq_u8(vandq_u8(wa, m4), vandq_u8(vshlq_n_u8(wh, 4), k30)));
              u[e][1] =
                  vreinterpretq_s8_u8(vorrq_u8(vandq_u8(wb, m4), vandq_u8(vshlq_n_u8(wh, 2), k30)));
              u[e][2] = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(wa, 4), vandq_u8(wh, k30)));
              u[e][3] = vreinterpretq_s8_u8(
                  vorrq_u8(vshrq_n_u8(wb, 4), vandq_u8(vshrq_n_u8(wh, 2), k30)));
            }
            for (int ia = 0; ia < NA; ++ia)
              for (int g = 0; g < 4; ++g)
                Dot::template pair<t>(&s[ia][g], u[0][g], u[1][g], a[ia][g]);
          };
          chunks(std::integral_constant<int, 0>{});
          chunks(std::integral_constant<int, 2>{});
          for (int ia = 0; ia < NA; ++ia)
            for (int g = 0; g < 4; ++g)
              sumi[ia] = vmlaq_s32(sumi[ia], Dot::sum(s[ia][g]), scale[8 * h + 2 * g + half]);
        }
      }
      const float32x4_t d = rows_f16(b + 832);
      for (int ia = 0; ia < NA; ++ia)
        acc[ia] = vaddq_f32(
            acc[ia], vmulq_f32(vdupq_n_f32(act[ia][i].d), vmulq_f32(d, vcvtq_f32_s32(sumi[ia]))));
    }
    for (int ia = 0; ia < NA; ++ia) vst1q_f32(out + 4 * ia, acc[ia]);
  }

  // q8_0 and q5_0 (blocks of 32, against q8a activation blocks). q8_0: 136-byte blocks, d[4] f16,
  // quant chunks [8][4][4] at 8 (chunk c: bytes 4c .. 4c + 3 of each row). q5_0: 88-byte blocks,
  // d[4] f16, qh [4][4] at 8 (lane r: row r's 32 fifth bits), nibble chunks [4][4][4] at 24 (chunk
  // c: elements 4c .. 4c + 3 in the low nibbles, 16 + 4c .. 16 + 4c + 3 in the high ones). Values
  // signed (q5_0's u - 16 made directly, as the rows kernels do), chunks 0-3 against activation
  // bytes 0-15 and chunks 4-7 against 16-31; per block acc += da * (d * sumi), the scalar twin's.
  template <DType T, int NA>
  static void legacy(const uint8_t* tile, const BlockQ8A* const* act, int64_t nb, float* out) {
    constexpr int64_t kBlock = T == DType::q8_0 ? 136 : 88;
    // Widening sums hold 2 products a lane per pair: q8_0 (|w| <= 128) widens each pair into
    // int32 at once, q5_0 (|w| <= 16, 8 x 16 x 127 < 2^15) sums all four pairs in one int16
    // accumulator; SDOT sums take one chain (blocks overlap in an out-of-order core; no add).
    constexpr bool kPairEach = T == DType::q8_0 && Dot::kInt16Sums;
    // q5_0: byte b of lane r of chunk c reads bit 4 (c % 2) + b of row r's qh byte c / 2 (low
    // nibbles) or 2 + c / 2 (high nibbles).
    constexpr uint8_t kSpread[4][16] = {{0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12},
                                        {1, 1, 1, 1, 5, 5, 5, 5, 9, 9, 9, 9, 13, 13, 13, 13},
                                        {2, 2, 2, 2, 6, 6, 6, 6, 10, 10, 10, 10, 14, 14, 14, 14},
                                        {3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11, 15, 15, 15, 15}};
    constexpr uint8_t kBits[2][16] = {
        {1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8},
        {16, 32, 64, 128, 16, 32, 64, 128, 16, 32, 64, 128, 16, 32, 64, 128}};
    uint8x16_t spread[4], bits[2], low4 = vdupq_n_u8(0x0F);
    if constexpr (T == DType::q5_0) {
      for (int q = 0; q < 4; ++q) spread[q] = vld1q_u8(kSpread[q]);
      bits[0] = vld1q_u8(kBits[0]);
      bits[1] = vld1q_u8(kBits[1]);
    }
    float32x4_t acc[NA];
    for (int ia = 0; ia < NA; ++ia) acc[ia] = vdupq_n_f32(0.f);
    for (int64_t i = 0; i < nb; ++i) {
      const uint8_t* b = tile + i * kBlock;
      int8x16_t w[8];
      if constexpr (T == DType::q8_0) {
        for (int c = 0; c < 8; ++c)
          w[c] = vld1q_s8(reinterpret_cast<const int8_t*>(b + 8 + 16 * c));
      } else {
        // Where an element's fifth bit is clear its value is the nibble minus 16 (0xF0 | nibble
        // as int8), where set the nibble: the inverted bits tested into 0xFF / 0 masks, the low
        // nibbles selected into one (BIT: the mask is the register written, x stays) and the high
        // ones shifted under the other (SRI).
        const uint8x16_t clear = vmvnq_u8(vld1q_u8(b + 8));
        for (int c = 0; c < 4; ++c) {
          const uint8x16_t x = vld1q_u8(b + 24 + 16 * c);
          const uint8x16_t lo = vtstq_u8(vqtbl1q_u8(clear, spread[c / 2]), bits[c % 2]);
          const uint8x16_t hi = vtstq_u8(vqtbl1q_u8(clear, spread[2 + c / 2]), bits[c % 2]);
          w[c] = vreinterpretq_s8_u8(vbslq_u8(low4, x, lo));
          w[4 + c] = vreinterpretq_s8_u8(vsriq_n_u8(hi, x, 4));
        }
      }
      const float32x4_t d = rows_f16(b);
      for (int ia = 0; ia < NA; ++ia) {
        const int8x16_t al = vld1q_s8(act[ia][i].qs), ah = vld1q_s8(act[ia][i].qs + 16);
        int32x4_t sumi;
        if constexpr (kPairEach) {  // each pair's int16 sums widened into int32 at once
          int32x4_t s01 = vdupq_n_s32(0), s23 = vdupq_n_s32(0);
          Dot::template pair_wide<0>(&s01, &s23, w[0], w[1], al);
          Dot::template pair_wide<2>(&s01, &s23, w[2], w[3], al);
          Dot::template pair_wide<0>(&s01, &s23, w[4], w[5], ah);
          Dot::template pair_wide<2>(&s01, &s23, w[6], w[7], ah);
          sumi = vpaddq_s32(s01, s23);
        } else {
          typename Dot::Acc s = Dot::zero();
          Dot::template pair<0>(&s, w[0], w[1], al);
          Dot::template pair<2>(&s, w[2], w[3], al);
          Dot::template pair<0>(&s, w[4], w[5], ah);
          Dot::template pair<2>(&s, w[6], w[7], ah);
          sumi = Dot::sum(s);
        }
        acc[ia] = vaddq_f32(
            acc[ia], vmulq_f32(vdupq_n_f32(act[ia][i].d), vmulq_f32(d, vcvtq_f32_s32(sumi))));
      }
    }
    for (int ia = 0; ia < NA; ++ia) vst1q_f32(out + 4 * ia, acc[ia]);
  }

  // The TileFn entry of q8_0 / q5_0: 4 activation rows a pass where Dot::kFourRows, else 2, then 1.
  template <DType T>
  static void tile32(const uint8_t* tile, const void* act, size_t act_bytes, int na, int64_t nb,
                     float* out) {
    if (na == 1) {  // decode first: no frame for the multi-row passes
      const BlockQ8A* row = static_cast<const BlockQ8A*>(act);
      legacy<T, 1>(tile, &row, nb, out);
      return;
    }
    const uint8_t* a = static_cast<const uint8_t*>(act);
    auto rows_at = [&](int ia, int count, const BlockQ8A** rows) {
      for (int e = 0; e < count; ++e)
        rows[e] = reinterpret_cast<const BlockQ8A*>(a + (ia + e) * act_bytes);
    };
    int ia = 0;
    if (Dot::kFourRows)
      for (; na - ia >= 4; ia += 4) {
        const BlockQ8A* rows[4];
        rows_at(ia, 4, rows);
        legacy<T, 4>(tile, rows, nb, out + 4 * ia);
      }
    for (; na - ia >= 2; ia += 2) {
      const BlockQ8A* rows[2];
      rows_at(ia, 2, rows);
      legacy<T, 2>(tile, rows, nb, out + 4 * ia);
    }
    if (ia < na) {
      const BlockQ8A* rows[1];
      rows_at(ia, 1, rows);
      legacy<T, 1>(tile, rows, nb, out + 4 * ia);
    }
  }

  // The TileFn entry: q4_k takes 4 activation rows a pass where Dot::kFourRows, q6_k 2 where
  // Dot::kSixPairs (registers enough for them); the rest as 2 and 1 (each activation row gets the
  // same operations in every grouping).
  template <bool kSix>
  static void tile(const uint8_t* tile, const void* act, size_t act_bytes, int na, int64_t nb,
                   float* out) {
    const uint8_t* a = static_cast<const uint8_t*>(act);
    int ia = 0;
    if (!kSix && Dot::kFourRows)
      for (; na - ia >= 4; ia += 4) {
        const BlockQ8K* rows[4];
        for (int e = 0; e < 4; ++e)
          rows[e] = reinterpret_cast<const BlockQ8K*>(a + (ia + e) * act_bytes);
        q4k<4>(tile, rows, nb, out + 4 * ia);
      }
    while (ia < na) {
      const BlockQ8K* rows[2] = {
          reinterpret_cast<const BlockQ8K*>(a + ia * act_bytes),
          reinterpret_cast<const BlockQ8K*>(a + (na - ia >= 2 ? ia + 1 : ia) * act_bytes)};
      if (na - ia >= 2 && (!kSix || Dot::kSixPairs)) {
        kSix ? q6k<2>(tile, rows, nb, out + 4 * ia) : q4k<2>(tile, rows, nb, out + 4 * ia);
        ia += 2;
      } else {
        kSix ? q6k<1>(tile, rows, nb, out + 4 * ia) : q4k<1>(tile, rows, nb, out + 4 * ia);
        ia += 1;
      }
    }
  }
};

}  // namespace
}  // namespace einfer::gguf_detail
