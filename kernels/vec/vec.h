// Vector primitives over contiguous float arrays, SIMD through xsimd with a scalar twin each.
//
// The plain names dispatch (at compile time) to the SIMD implementation when the build has one and
// to the scalar twin otherwise; `einfer::scalar::` always names the scalar twin, which is the
// reference the tests compare against. Pointers need no particular alignment; n may be 0.
// In-place use (y == x) is allowed wherever the signature has separate x and y.
#pragma once

#include <cstddef>

namespace einfer {

float dot_f32(const float* a, const float* b, size_t n);           // sum a[i] * b[i]
void axpy_f32(float alpha, const float* x, float* y, size_t n);    // y[i] += alpha * x[i]
void scale_f32(float* x, float s, size_t n);                       // x[i] *= s
void add_f32(const float* a, const float* b, float* y, size_t n);  // y[i] = a[i] + b[i]
void mul_f32(const float* a, const float* b, float* y, size_t n);  // y[i] = a[i] * b[i]
float max_f32(const float* x, size_t n);                           // -inf for n == 0
// Index of the first largest x[i] (the greedy token), NaNs never chosen: the first i with
// x[i] > x[best] for all earlier best, starting from 0 (so 0 when x[0] is NaN or n <= 1).
size_t argmax_f32(const float* x, size_t n);
float sum_f32(const float* x, size_t n);
void exp_f32(const float* x, float* y, size_t n);  // y[i] = exp(x[i])
void softmax_f32(float* x, size_t n);              // in place, max-subtracted
// y = x / sqrt(mean(x^2) + eps) * w
void rmsnorm_f32(const float* x, const float* w, float eps, float* y, size_t n);
// y = (x - mean) / sqrt(var + eps) * w + b   (w or b may be null: 1 and 0)
void layernorm_f32(const float* x, const float* w, const float* b, float eps, float* y, size_t n);
void silu_f32(const float* x, float* y, size_t n);  // x * sigmoid(x)
void relu_f32(const float* x, float* y, size_t n);
void gelu_erf_f32(const float* x, float* y, size_t n);  // 0.5 x (1 + erf(x / sqrt 2))
void gelu_tanh_f32(const float* x, float* y,
                   size_t n);  // 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))
// SwiGLU gate: g[i] = silu(g[i]) * u[i]
void swiglu_f32(float* g, const float* u, size_t n);
// GeGLU gate (Gemma): g[i] = gelu_tanh(g[i]) * u[i]
void geglu_tanh_f32(float* g, const float* u, size_t n);
// Soft-capping (Gemma's attention scores and logits): x[i] = cap * tanh(x[i] / cap), cap > 0.
void softcap_f32(float* x, float cap, size_t n);

namespace scalar {
float dot_f32(const float* a, const float* b, size_t n);
void axpy_f32(float alpha, const float* x, float* y, size_t n);
void scale_f32(float* x, float s, size_t n);
void add_f32(const float* a, const float* b, float* y, size_t n);
void mul_f32(const float* a, const float* b, float* y, size_t n);
float max_f32(const float* x, size_t n);
size_t argmax_f32(const float* x, size_t n);
float sum_f32(const float* x, size_t n);
void exp_f32(const float* x, float* y, size_t n);
void softmax_f32(float* x, size_t n);
void rmsnorm_f32(const float* x, const float* w, float eps, float* y, size_t n);
void layernorm_f32(const float* x, const float* w, const float* b, float eps, float* y, size_t n);
void silu_f32(const float* x, float* y, size_t n);
void relu_f32(const float* x, float* y, size_t n);
void gelu_erf_f32(const float* x, float* y, size_t n);
void gelu_tanh_f32(const float* x, float* y, size_t n);
void swiglu_f32(float* g, const float* u, size_t n);
void geglu_tanh_f32(float* g, const float* u, size_t n);
void softcap_f32(float* x, float cap, size_t n);
}  // namespace scalar

}  // namespace einfer
