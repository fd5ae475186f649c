// Private to kernels/half/: the per-ISA f16/bf16 GEMV and widening kernels behind half.h, one
// ISA per file (gemv_half_avx2.cpp, gemv_half_neon.cpp; the scalar twins in gemv_half_scalar.cpp).
// EINFER_HALF_AVX2 / EINFER_HALF_NEON say which this build compiles.
#pragma once

#include <cstdint>

#if EINFER_SIMD && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define EINFER_HALF_AVX2 1
#elif EINFER_SIMD && defined(__aarch64__) && defined(__ARM_NEON)
#define EINFER_HALF_NEON 1
#endif

namespace einfer::half_detail {

#if defined(EINFER_HALF_AVX2)
void gemv_f16_4x1_avx2(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                       float* y);
void gemv_bf16_4x1_avx2(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                        float* y);
void widen_f16_f32_avx2(const uint16_t* src, float* dst, int64_t n);
void widen_bf16_f32_avx2(const uint16_t* src, float* dst, int64_t n);
#endif

#if defined(EINFER_HALF_NEON)
void gemv_f16_4x1_neon(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                       float* y);
void gemv_bf16_4x1_neon(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                        float* y);
void widen_f16_f32_neon(const uint16_t* src, float* dst, int64_t n);
void widen_bf16_f32_neon(const uint16_t* src, float* dst, int64_t n);
#endif

}  // namespace einfer::half_detail
