// Compile-time selection of the Cortex-M kernels (bare-metal M-profile targets, where xsimd has no
// instruction set and EINFER_HAS_SIMD is 0).
//
// EINFER_HAS_MVE: Helium (M-profile Vector Extension, integer lanes at least: Cortex-M55/M85),
//   128-bit vectors of 16 int8 with VMLADAV dot products and tail predication (<arm_mve.h>).
// EINFER_HAS_DSP: the DSP extension's SIMD32 instructions (Cortex-M4/M7/M33/M55...), two 16-bit
//   multiply-adds per SMLAD on halfwords unpacked with SXTB16 (<arm_acle.h>).
// A core with MVE also has the DSP extension; kernels prefer MVE. Both are 0 on A-profile and
// x86 targets, whose SIMD kernels come from xsimd or NEON intrinsics instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FEATURE_MVE) && \
    (__ARM_FEATURE_MVE & 1)
#define EINFER_HAS_MVE 1
#else
#define EINFER_HAS_MVE 0
#endif

#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FEATURE_DSP)
#define EINFER_HAS_DSP 1
#else
#define EINFER_HAS_DSP 0
#endif

namespace einfer {

// std::lrintf for values well inside the int32 range (quantization: |x| <= 128 or so), rounding
// per the current mode like lrintf (to nearest, ties to even, by default). On an M-profile core
// with a single-precision FPU that is one VCVTR instead of a newlib call (~25 instructions, and
// the activation quantizer rounds every element of every projection input).
inline int32_t lrint_small(float x) {
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M' && defined(__ARM_FP) && (__ARM_FP & 4)
  float r;
  __asm__("vcvtr.s32.f32 %0, %1" : "=t"(r) : "t"(x));
  int32_t i;
  std::memcpy(&i, &r, sizeof i);
  return i;
#else
  return static_cast<int32_t>(std::lrintf(x));
#endif
}

}  // namespace einfer
