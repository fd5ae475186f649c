// Compile-time instruction sets: what every microkernel of every op folder includes.
//
// xsimd: EINFER_HAS_SIMD is 1 when the build enabled SIMD (CMake option EINFER_SIMD) and xsimd
// found an instruction set for the target (AVX2+FMA on x86-64, NEON on Arm). Otherwise it is 0
// and every kernel uses its scalar path: xsimd 8.1 defines no batch types at all without a SIMD
// ISA, so no xsimd type may be named outside `#if EINFER_HAS_SIMD`.
//
// Cortex-M (bare-metal M-profile targets, where xsimd has no instruction set and EINFER_HAS_SIMD
// is 0), selected from the core's feature macros:
// EINFER_HAS_MVE: Helium (M-profile Vector Extension, integer lanes at least: Cortex-M55/M85),
//   128-bit vectors of 16 int8 with VMLADAV dot products and tail predication (<arm_mve.h>).
// EINFER_HAS_DSP: the DSP extension's SIMD32 instructions (Cortex-M4/M7/M33/M55...), two 16-bit
//   multiply-adds per SMLAD on halfwords unpacked with SXTB16 (<arm_acle.h>).
// A core with MVE also has the DSP extension; kernels prefer MVE. Both are 0 on A-profile and
// x86 targets, whose SIMD kernels come from xsimd or NEON intrinsics instead.
//
// AMX: the tile configuration the AMX kernels load (gemm_quant/x86, gguf).
// AArch64 NEON: neon::exp4 (exp_neon.h), the inline exp of the softmax and SwiGLU maps.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

// EINFER_FORCE_SCALAR compiles SIMD out of one translation unit: the "scalar" level of runtime
// dispatch (kernels/isa/isa.h) is the per-ISA sources built with it.
#if defined(EINFER_SIMD) && EINFER_SIMD && !defined(EINFER_FORCE_SCALAR)
#include <xsimd/xsimd.hpp>
#if !defined(XSIMD_NO_SUPPORTED_ARCHITECTURE)
#define EINFER_HAS_SIMD 1
#endif
#endif

#ifndef EINFER_HAS_SIMD
#define EINFER_HAS_SIMD 0
#endif

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

// Defined in kernels/vec/vec_f32_simd.cpp, compiled per level.
// Name of the instruction set of the kernels in use (with runtime dispatch: of the selected level):
// "fma3+avx2", "arm64+neon", "arm32+neon" or "scalar".
const char* simd_arch_name();

// Width in floats of the SIMD register the kernels use (1 for scalar).
int simd_float_lanes();

// FMA-peak probe for benchmarks, in the kernels' own instruction set: 12 independent chains of
// simd_float_lanes() lanes each run x = fma(x, m, a) `iterations` times (24 * lanes * iterations
// flops, enough chains to cover FMA latency x throughput on every core we target). Returns the
// sum of the chains, which the caller consumes so the work cannot be optimized away.
float fma_chains_f32(int64_t iterations, float m, float a);

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

// The AMX ldtilecfg operand: palette 1, then bytes per row and rows of tiles 0-15.
struct alignas(64) AmxTileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

}  // namespace einfer

#if EINFER_HAS_SIMD && defined(__aarch64__)
#include "kernels/simd/exp_neon.h"
#endif
