// Dispatch of the vector primitives. Until the SIMD implementations land these forward to the
// scalar twins; the SIMD versions replace the bodies under `#if EINFER_HAS_SIMD`.
#include "kernels/simd.h"
#include "kernels/vec.h"

namespace einfer {

const char* simd_arch_name() {
#if EINFER_HAS_SIMD
  return xsimd::default_arch::name();
#else
  return "scalar";
#endif
}

int simd_float_lanes() {
#if EINFER_HAS_SIMD
  return static_cast<int>(xsimd::batch<float>::size);
#else
  return 1;
#endif
}

float dot_f32(const float* a, const float* b, size_t n) { return scalar::dot_f32(a, b, n); }
void axpy_f32(float alpha, const float* x, float* y, size_t n) { scalar::axpy_f32(alpha, x, y, n); }
void scale_f32(float* x, float s, size_t n) { scalar::scale_f32(x, s, n); }
void add_f32(const float* a, const float* b, float* y, size_t n) { scalar::add_f32(a, b, y, n); }
void mul_f32(const float* a, const float* b, float* y, size_t n) { scalar::mul_f32(a, b, y, n); }
float max_f32(const float* x, size_t n) { return scalar::max_f32(x, n); }
float sum_f32(const float* x, size_t n) { return scalar::sum_f32(x, n); }
void exp_f32(const float* x, float* y, size_t n) { scalar::exp_f32(x, y, n); }
void softmax_f32(float* x, size_t n) { scalar::softmax_f32(x, n); }
void rmsnorm_f32(const float* x, const float* w, float eps, float* y, size_t n) {
  scalar::rmsnorm_f32(x, w, eps, y, n);
}
void layernorm_f32(const float* x, const float* w, const float* b, float eps, float* y, size_t n) {
  scalar::layernorm_f32(x, w, b, eps, y, n);
}
void silu_f32(const float* x, float* y, size_t n) { scalar::silu_f32(x, y, n); }
void relu_f32(const float* x, float* y, size_t n) { scalar::relu_f32(x, y, n); }
void gelu_erf_f32(const float* x, float* y, size_t n) { scalar::gelu_erf_f32(x, y, n); }
void gelu_tanh_f32(const float* x, float* y, size_t n) { scalar::gelu_tanh_f32(x, y, n); }
void swiglu_f32(float* g, const float* u, size_t n) { scalar::swiglu_f32(g, u, n); }

}  // namespace einfer
