// Private to kernels/attention/: the two row operations of the int8 KV cache path of attention_f32
// (kernels/attention/attention.h) on targets without its AVX2 integer code, one ISA per file:
//   dot_i16_i8: acc + sum_d a[d] * b[d], the int16 query against an int8 key row (exact int32);
//   axpy_f32_i8: y[d] += w * float(x[d]), an int8 V row into a head's float accumulator.
// *_scalar (attention_i8_rows_scalar.cpp) are the plain loops every other target runs and the
// twins the Cortex-M kernels are tested against: the dot is exact, and the MVE axpy does the same
// fused multiply-add per element, so results are bit-identical. attention_dot_i16_i8 and
// attention_axpy_f32_i8 pick the kernel this build has (kernels/simd/simd.h).
#pragma once

#include <cstdint>

#include "kernels/simd/simd.h"

namespace einfer::attention_detail {

int32_t dot_i16_i8_scalar(const int16_t* a, const int8_t* b, int32_t n, int32_t acc);
void axpy_f32_i8_scalar(float w, const int8_t* x, int32_t n, float* y);

#if EINFER_HAS_MVE
int32_t dot_i16_i8_mve(const int16_t* a, const int8_t* b, int32_t n, int32_t acc);
void axpy_f32_i8_mve(float w, const int8_t* x, int32_t n, float* y);
#elif EINFER_HAS_DSP
// SMLAD on int16 pairs; the float axpy stays scalar (the M4's FPU has no vector lanes).
int32_t dot_i16_i8_dsp(const int16_t* a, const int8_t* b, int32_t n, int32_t acc);
#endif

inline int32_t attention_dot_i16_i8(const int16_t* a, const int8_t* b, int32_t n, int32_t acc) {
#if EINFER_HAS_MVE
  return dot_i16_i8_mve(a, b, n, acc);
#elif EINFER_HAS_DSP
  return dot_i16_i8_dsp(a, b, n, acc);
#else
  return dot_i16_i8_scalar(a, b, n, acc);
#endif
}

inline void attention_axpy_f32_i8(float w, const int8_t* x, int32_t n, float* y) {
#if EINFER_HAS_MVE
  axpy_f32_i8_mve(w, x, n, y);
#else
  axpy_f32_i8_scalar(w, x, n, y);
#endif
}

}  // namespace einfer::attention_detail
