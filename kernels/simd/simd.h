// Compile-time SIMD selection.
//
// EINFER_HAS_SIMD is 1 when the build enabled SIMD (CMake option EINFER_SIMD) and xsimd found an
// instruction set for the target (AVX2+FMA on x86-64, NEON on Arm). Otherwise it is 0 and every
// kernel uses its scalar path: xsimd 8.1 defines no batch types at all without a SIMD ISA, so no
// xsimd type may be named outside `#if EINFER_HAS_SIMD`.
#pragma once

#include <cstdint>

// EINFER_FORCE_SCALAR compiles SIMD out of one translation unit: the "scalar" level of runtime
// dispatch (kernels/isa.h) is the per-ISA sources built with it.
#if defined(EINFER_SIMD) && EINFER_SIMD && !defined(EINFER_FORCE_SCALAR)
#include <xsimd/xsimd.hpp>
#if !defined(XSIMD_NO_SUPPORTED_ARCHITECTURE)
#define EINFER_HAS_SIMD 1
#endif
#endif

#ifndef EINFER_HAS_SIMD
#define EINFER_HAS_SIMD 0
#endif

namespace einfer {

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

// The same probe in the registers of the f32 GEMM's tiles, gemm_f32_lanes() floats wide: the
// selection's widest (16 on an AVX-512 CPU with the avx512vnni extension selected, else
// simd_float_lanes()). The f32 GEMM's fraction of peak is taken against this one.
int gemm_f32_lanes();
float fma_chains_gemm_f32(int64_t iterations, float m, float a);

}  // namespace einfer
