// NEON microkernels of matmul_f32_quant (AArch64 and ARMv7): int8 x int8 (q8 weights) and
// int4 x int8 (q4 weights) group dot products in int32, scaled once per group in float.
//
// Cores with the dot-product extension (__ARM_FEATURE_DOTPROD) use sdot (vdotq_s32); the others
// multiply into int16 with vmull_s8 + vmlal_s8 (two products of |w| <= 128, |a| <= 127 stay below
// 32767) and widen pairwise into int32 with vpadalq_s16. q4 nibbles unpack with and/shift - 8 into
// the even (low nibble) and odd (high nibble) halves that match the even/odd activation chunks.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__ARM_NEON)

#include <arm_neon.h>

#include <cstring>

#include "kernels/gemm_quant/arm/gemm_quant_tiling.h"

namespace einfer::quant_detail {
namespace {

inline float hsum(float32x4_t v) {
#if defined(__aarch64__)
  return vaddvq_f32(v);
#else
  const float32x2_t s = vadd_f32(vget_low_f32(v), vget_high_f32(v));
  return vget_lane_f32(vpadd_f32(s, s), 0);
#endif
}

inline float32x4_t fma_f32(float32x4_t acc, float32x4_t x, float y) {
#if defined(__aarch64__)
  return vfmaq_n_f32(acc, x, y);
#else
  return vmlaq_n_f32(acc, x, y);
#endif
}

// acc (int32 x 4) += sum of 16 products w * a, four per lane.
inline int32x4_t dot16(int32x4_t acc, int8x16_t w, int8x16_t a) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(acc, w, a);
#else
  int16x8_t prod = vmull_s8(vget_low_s8(w), vget_low_s8(a));
  prod = vmlal_s8(prod, vget_high_s8(w), vget_high_s8(a));
  return vpadalq_s16(acc, prod);
#endif
}

struct Q8Neon {
  template <int MR, int NR>
  static void tile(const QuantGemm& p, int64_t i0, int64_t j0) {
    const int64_t kfull = p.k / kChunk * kChunk;
    const int8_t* wr[NR];
    alignas(16) int8_t wtail[NR][kChunk];  // zero-padded last partial chunk of each weight row
    for (int j = 0; j < NR; ++j) {
      wr[j] = reinterpret_cast<const int8_t*>(p.w + (j0 + j) * p.w_row_bytes);
      if (kfull != p.k) {
        std::memset(wtail[j], 0, kChunk);
        std::memcpy(wtail[j], wr[j] + kfull, static_cast<size_t>(p.k - kfull));
      }
    }
    float32x4_t acc[MR][NR];
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) acc[i][j] = vdupq_n_f32(0.f);
    }
    for (int64_t g = 0, g0 = 0; g < p.groups; ++g, g0 += p.group) {
      const int64_t g1 = g0 + p.group < p.k ? g0 + p.group : p.k;
      int32x4_t isum[MR][NR];
      for (int i = 0; i < MR; ++i) {
        for (int j = 0; j < NR; ++j) isum[i][j] = vdupq_n_s32(0);
      }
      for (int64_t e = g0; e < g1; e += kChunk) {
        int8x16_t w0[NR], w1[NR];
        for (int j = 0; j < NR; ++j) {
          const int8_t* src = e < kfull ? wr[j] + e : wtail[j];
          w0[j] = vld1q_s8(src);
          w1[j] = vld1q_s8(src + 16);
        }
        for (int i = 0; i < MR; ++i) {
          const int8_t* ar = p.qa + (i0 + i) * p.kpad + e;
          const int8x16_t a0 = vld1q_s8(ar), a1 = vld1q_s8(ar + 16);
          for (int j = 0; j < NR; ++j) isum[i][j] = dot16(dot16(isum[i][j], w0[j], a0), w1[j], a1);
        }
      }
      for (int i = 0; i < MR; ++i) {
        const float sa = p.sa[(i0 + i) * p.groups + g];
        for (int j = 0; j < NR; ++j) {
          acc[i][j] =
              fma_f32(acc[i][j], vcvtq_f32_s32(isum[i][j]), sa * p.sw[(j0 + j) * p.groups + g]);
        }
      }
    }
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) p.c[(i0 + i) * p.ldc + j0 + j] = hsum(acc[i][j]);
    }
  }
};

struct Q4Neon {
  template <int MR, int NR>
  static void tile(const QuantGemm& p, int64_t i0, int64_t j0) {
    const int64_t kfull = p.k / kChunk * kChunk;
    const uint8_t* wr[NR];
    alignas(16) uint8_t wtail[NR][kChunk / 2];
    for (int j = 0; j < NR; ++j) {
      wr[j] = p.w + (j0 + j) * p.w_row_bytes;
      if (kfull != p.k) {
        std::memset(wtail[j], 0, kChunk / 2);
        std::memcpy(wtail[j], wr[j] + kfull / 2, p.w_row_bytes - static_cast<size_t>(kfull / 2));
      }
    }
    const uint8x16_t mask = vdupq_n_u8(0x0F);
    const int8x16_t eight = vdupq_n_s8(8);
    float32x4_t acc[MR][NR];
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) acc[i][j] = vdupq_n_f32(0.f);
    }
    for (int64_t g = 0, g0 = 0; g < p.groups; ++g, g0 += p.group) {
      const int64_t g1 = g0 + p.group < p.k ? g0 + p.group : p.k;
      int32x4_t isum[MR][NR];
      for (int i = 0; i < MR; ++i) {
        for (int j = 0; j < NR; ++j) isum[i][j] = vdupq_n_s32(0);
      }
      for (int64_t e = g0; e < g1; e += kChunk) {
        int8x16_t we[NR], wo[NR];
        for (int j = 0; j < NR; ++j) {
          const uint8x16_t b = vld1q_u8(e < kfull ? wr[j] + e / 2 : wtail[j]);
          we[j] = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(b, mask)), eight);
          wo[j] = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(b, 4)), eight);
        }
        for (int i = 0; i < MR; ++i) {
          const int8_t* ar = p.qa + (i0 + i) * p.kpad + e;  // even/odd chunk order
          const int8x16_t ae = vld1q_s8(ar), ao = vld1q_s8(ar + 16);
          for (int j = 0; j < NR; ++j) isum[i][j] = dot16(dot16(isum[i][j], we[j], ae), wo[j], ao);
        }
      }
      for (int i = 0; i < MR; ++i) {
        const float sa = p.sa[(i0 + i) * p.groups + g];
        for (int j = 0; j < NR; ++j) {
          acc[i][j] =
              fma_f32(acc[i][j], vcvtq_f32_s32(isum[i][j]), sa * p.sw[(j0 + j) * p.groups + g]);
        }
      }
    }
    for (int i = 0; i < MR; ++i) {
      for (int j = 0; j < NR; ++j) p.c[(i0 + i) * p.ldc + j0 + j] = hsum(acc[i][j]);
    }
  }
};

}  // namespace

void gemm_q8_4x1_neon(const QuantGemm& p) {
  run_tiles<Q8Neon, 4, 4, 1>(p);
}
void gemm_q4_4x1_neon(const QuantGemm& p) {
  run_tiles<Q4Neon, 4, 4, 1>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __ARM_NEON
