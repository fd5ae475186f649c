// NEON (AArch64) twin of quantize_activations_q8 (gemm_quant_dispatch.cpp): the scalar quantization
// of the activations cost ~190 K instructions per 15M-shape prefill token on a Cortex-A76, a fifth
// of what the interleaved-layout GEMMs take. Per group: max of |x| four lanes at a time (exact, any
// order), the same scale and 1 / scale as the scalar function, x * inv rounded by fcvtns (nearest
// even, as lrintf in the default rounding mode), clamped to [-127, 127] and narrowed (lossless
// after the clamp); a group's last elements short of 16 in scalar code. Same bytes and scales as
// the scalar function (tests/test_matmul_quant.cpp).
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__aarch64__)

#include <arm_neon.h>

#include <cmath>

namespace einfer::quant_detail {

namespace {

// The group's scale (activation_scale of max |x|: exact in any order) and *inv = 1 / scale (0 for
// an all-zero group).
inline float group_scale(const float* x, int32_t n, float* inv) {
  const int32_t n4 = n / 4 * 4;
  float32x4_t vmax = vdupq_n_f32(0.f);
  for (int32_t e = 0; e < n4; e += 4) vmax = vmaxq_f32(vmax, vabsq_f32(vld1q_f32(x + e)));
  float amax = vmaxvq_f32(vmax);
  for (int32_t e = n4; e < n; ++e) amax = std::fabs(x[e]) > amax ? std::fabs(x[e]) : amax;
  const float scale = activation_scale(amax);
  *inv = scale > 0.f ? 1.f / scale : 0.f;
  return scale;
}

}  // namespace

void quantize_activations_q8_neon(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa) {
  const int32x4_t lo = vdupq_n_s32(-127), hi = vdupq_n_s32(127);
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    const int32_t n = static_cast<int32_t>(k - g0 < group ? k - g0 : group);
    const float* ag = a + g0;
    int8_t* qg = qa + g0;
    const int32_t n16 = n / 16 * 16;
    float inv = 0.f;
    const float scale = group_scale(ag, n, &inv);
    sa[gi] = scale;
    for (int32_t e = 0; e < n16; e += 16) {
      int32x4_t r[4];
      for (int j = 0; j < 4; ++j) {
        r[j] = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(ag + e + 4 * j), inv));
        r[j] = vmaxq_s32(vminq_s32(r[j], hi), lo);
      }
      const int16x8_t h0 = vcombine_s16(vmovn_s32(r[0]), vmovn_s32(r[1]));
      const int16x8_t h1 = vcombine_s16(vmovn_s32(r[2]), vmovn_s32(r[3]));
      vst1q_s8(qg + e, vcombine_s8(vmovn_s16(h0), vmovn_s16(h1)));
    }
    for (int32_t e = n16; e < n; ++e) {
      int32_t r = static_cast<int32_t>(std::lrintf(ag[e] * inv));
      r = r > 127 ? 127 : (r < -127 ? -127 : r);
      qg[e] = static_cast<int8_t>(r);
    }
  }
}

namespace {

// x * inv rounded to nearest even and clamped to [-127, 127], 16 values.
inline int8x16_t quantize16(const float* x, float inv) {
  const int32x4_t lo = vdupq_n_s32(-127), hi = vdupq_n_s32(127);
  int32x4_t r[4];
  for (int j = 0; j < 4; ++j)
    r[j] = vmaxq_s32(vminq_s32(vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + 4 * j), inv)), hi), lo);
  const int16x8_t h0 = vcombine_s16(vmovn_s32(r[0]), vmovn_s32(r[1]));
  const int16x8_t h1 = vcombine_s16(vmovn_s32(r[2]), vmovn_s32(r[3]));
  return vcombine_s8(vmovn_s16(h0), vmovn_s16(h1));
}

}  // namespace

namespace {

// The common case, a whole group of 32 in chunks of kChunk (16: single, quad; 8: pair) bytes: the
// 32 values stay in registers from the max to the bytes; the clamp is done on int16 after a
// saturating narrow (the same result: |x * inv| stays far inside int16).
template <int kChunk>
float quantize_group32_chunked(const float* x, int64_t stride, int8_t* dst, int32_t* sum) {
  const float32x4x4_t a = vld1q_f32_x4(x), b = vld1q_f32_x4(x + 16);
  float32x4_t m0 = vmaxq_f32(vabsq_f32(a.val[0]), vabsq_f32(a.val[1]));
  float32x4_t m1 = vmaxq_f32(vabsq_f32(a.val[2]), vabsq_f32(a.val[3]));
  float32x4_t m2 = vmaxq_f32(vabsq_f32(b.val[0]), vabsq_f32(b.val[1]));
  float32x4_t m3 = vmaxq_f32(vabsq_f32(b.val[2]), vabsq_f32(b.val[3]));
  const float amax = vmaxvq_f32(vmaxq_f32(vmaxq_f32(m0, m1), vmaxq_f32(m2, m3)));
  const float scale = activation_scale(amax);
  const float inv = scale > 0.f ? 1.f / scale : 0.f;
  const int16x8_t lo = vdupq_n_s16(-127), hi = vdupq_n_s16(127);
  auto half = [&](const float32x4x4_t& v) {
    const int32x4_t r0 = vcvtnq_s32_f32(vmulq_n_f32(v.val[0], inv));
    const int32x4_t r1 = vcvtnq_s32_f32(vmulq_n_f32(v.val[1], inv));
    const int32x4_t r2 = vcvtnq_s32_f32(vmulq_n_f32(v.val[2], inv));
    const int32x4_t r3 = vcvtnq_s32_f32(vmulq_n_f32(v.val[3], inv));
    const int16x8_t h0 = vmaxq_s16(vminq_s16(vqmovn_high_s32(vqmovn_s32(r0), r1), hi), lo);
    const int16x8_t h1 = vmaxq_s16(vminq_s16(vqmovn_high_s32(vqmovn_s32(r2), r3), hi), lo);
    return vmovn_high_s16(vmovn_s16(h0), h1);
  };
  const int8x16_t q0 = half(a), q1 = half(b);
  if constexpr (kChunk == 16) {
    vst1q_s8(dst, q0);
    vst1q_s8(dst + stride, q1);
  } else {
    vst1_s8(dst, vget_low_s8(q0));
    vst1_s8(dst + stride, vget_high_s8(q0));
    vst1_s8(dst + 2 * stride, vget_low_s8(q1));
    vst1_s8(dst + 3 * stride, vget_high_s8(q1));
  }
  *sum = vaddlvq_s8(q0) + vaddlvq_s8(q1);
  return scale;
}

// Any group (a multiple of 16) and n <= group. Out of line, so the group-of-32 path called for
// every group of every row saves no registers it does not use.
[[gnu::noinline]] float quantize_group_any(const float* x, int32_t n, int32_t group, int chunk,
                                           int64_t stride, int8_t* dst, int32_t* sum) {
  float inv = 0.f;
  const float scale = group_scale(x, n, &inv);
  int32x4_t total = vdupq_n_s32(0);
  for (int32_t e = 0; e < group; e += 16) {
    int8x16_t q;
    if (e + 16 <= n) {
      q = quantize16(x + e, inv);
    } else {  // the group's end: zeros past n quantize to 0
      float buf[16] = {};
      for (int32_t i = e; i < n; ++i) buf[i - e] = x[i];
      q = quantize16(buf, inv);
    }
    total = vpadalq_s16(total, vpaddlq_s8(q));
    if (chunk == 16) {
      vst1q_s8(dst + e / 16 * stride, q);
    } else {
      vst1_s8(dst + e / 8 * stride, vget_low_s8(q));
      vst1_s8(dst + (e / 8 + 1) * stride, vget_high_s8(q));
    }
  }
  *sum = vaddvq_s32(total);
  return scale;
}

}  // namespace

float quantize_group_chunked_neon(const float* x, int32_t n, int32_t group, int chunk,
                                  int64_t stride, int8_t* dst, int32_t* sum) {
  if (n == 32 && group == 32) {
    return chunk == 16 ? quantize_group32_chunked<16>(x, stride, dst, sum)
                       : quantize_group32_chunked<8>(x, stride, dst, sum);
  }
  return quantize_group_any(x, n, group, chunk, stride, dst, sum);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __aarch64__
