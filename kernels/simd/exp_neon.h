// exp on 4 float lanes for AArch64 NEON, inline (the xsimd version this replaces on AArch64 made a
// call per batch that GCC does not inline, and every constant was reloaded around it: ~85
// instructions per 4 SwiGLU values, ~20% of a quantized 15M-shape prefill token on a Cortex-A76).
// Cephes-style: n = round(x log2 e), r = x - n ln 2 in two parts, a degree-5 polynomial for
// exp(r) - 1 - r, times 2^n built in two halves so every n of the clamped range is a normal
// scale. Same contract as the xsimd path it replaces (~1 ulp): exactly 0 below ln(FLT_MIN)
// (-87.34, -inf included; results that would be denormal flush to 0), inf above ln(FLT_MAX)
// (88.72), NaN propagates.
#pragma once

#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>

#include <cmath>

namespace einfer::neon {

inline float32x4_t exp4(float32x4_t x) {
  // fmax/fmin propagate NaN; the clamp keeps n within [-127, 129].
  const float32x4_t xc = vminq_f32(vmaxq_f32(x, vdupq_n_f32(-88.f)), vdupq_n_f32(89.f));
  const float32x4_t n = vrndnq_f32(vmulq_n_f32(xc, 1.44269504088896341f));
  float32x4_t r = vfmsq_n_f32(xc, n, 0.693359375f);
  r = vfmsq_n_f32(r, n, -2.12194440e-4f);
  float32x4_t p = vdupq_n_f32(1.9875691500e-4f);
  p = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), p, r);
  p = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), p, r);
  p = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), p, r);
  p = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), p, r);
  float32x4_t y = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.f)), p, vmulq_f32(r, r));
  // 2^n = 2^h * 2^(n - h), h = n / 2: both exponents in [-64, 65].
  const int32x4_t ni = vcvtq_s32_f32(n);
  const int32x4_t h = vshrq_n_s32(ni, 1);
  const int32x4_t bias = vdupq_n_s32(127);
  y = vmulq_f32(y, vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(h, bias), 23)));
  y = vmulq_f32(y, vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vsubq_s32(ni, h), bias), 23)));
  y = vbslq_f32(vcltq_f32(x, vdupq_n_f32(-87.336544751f)), vdupq_n_f32(0.f), y);
  return vbslq_f32(vcgtq_f32(x, vdupq_n_f32(88.722839f)), vdupq_n_f32(INFINITY), y);
}

}  // namespace einfer::neon

#endif
