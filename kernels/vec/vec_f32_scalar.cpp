// Scalar twins of the vector primitives: the reference for tests and the path for non-SIMD builds.
#include <cmath>

#include "kernels/vec/vec.h"

namespace einfer::scalar {

float dot_f32(const float* a, const float* b, size_t n) {
  float s = 0.f;
  for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
void axpy_f32(float alpha, const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
void scale_f32(float* x, float s, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] *= s;
}
void add_f32(const float* a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}
void mul_f32(const float* a, const float* b, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}
float max_f32(const float* x, size_t n) {
  float m = -INFINITY;
  for (size_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}
size_t argmax_f32(const float* x, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i) best = x[i] > x[best] ? i : best;
  return best;
}
float sum_f32(const float* x, size_t n) {
  float s = 0.f;
  for (size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
void exp_f32(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
void softmax_f32(float* x, size_t n) {
  if (n == 0) return;
  const float m = max_f32(x, n);
  float s = 0.f;
  for (size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    s += x[i];
  }
  const float inv = 1.f / s;
  for (size_t i = 0; i < n; ++i) x[i] *= inv;
}
void rmsnorm_f32(const float* x, const float* w, float eps, float* y, size_t n) {
  if (n == 0) return;
  float ss = 0.f;
  for (size_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float inv = 1.f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (size_t i = 0; i < n; ++i) y[i] = x[i] * inv * w[i];
}
void layernorm_f32(const float* x, const float* w, const float* b, float eps, float* y, size_t n) {
  if (n == 0) return;
  float mean = 0.f;
  for (size_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<float>(n);
  float var = 0.f;
  for (size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<float>(n);
  const float inv = 1.f / std::sqrt(var + eps);
  for (size_t i = 0; i < n; ++i) {
    const float v = (x[i] - mean) * inv;
    y[i] = v * (w ? w[i] : 1.f) + (b ? b[i] : 0.f);
  }
}
void silu_f32(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] / (1.f + std::exp(-x[i]));
}
void relu_f32(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
void gelu_erf_f32(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.f + std::erf(x[i] * 0.70710678118654752f));
}
void gelu_tanh_f32(const float* x, float* y, size_t n) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  for (size_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.f + std::tanh(k * (v + 0.044715f * v * v * v)));
  }
}
void swiglu_f32(float* g, const float* u, size_t n) {
  for (size_t i = 0; i < n; ++i) g[i] = g[i] / (1.f + std::exp(-g[i])) * u[i];
}
// The decoders' tanh kernels go through std::exp only, as silu does: std::tanh would bring libm's
// tanhf and expm1f (about 0.9 KiB) into every Cortex-M image that links the llama forward pass.
void geglu_tanh_f32(float* g, const float* u, size_t n) {
  // 0.5 (1 + tanh(t)) == sigmoid(2t), as the SIMD twin computes it.
  const float k2 = 2.f * 0.7978845608028654f;  // 2 sqrt(2/pi)
  for (size_t i = 0; i < n; ++i) {
    const float v = g[i];
    g[i] = v / (1.f + std::exp(-k2 * (v + 0.044715f * v * v * v))) * u[i];
  }
}
void softcap_f32(float* x, float cap, size_t n) {
  // tanh(y) = sign(y) (1 - e) / (1 + e), e = exp(-2|y|): within 2 ulp of tanh for |y| >= 1/4
  // (1 - e >= 0.39, so e's rounding stays small); below, the odd series to y^9 (next term under
  // 1e-8 of y).
  for (size_t i = 0; i < n; ++i) {
    const float y = x[i] / cap;
    const float a = std::fabs(y);
    float t;
    if (a < 0.25f) {
      const float y2 = y * y;
      t = y * (1.f + y2 * (-1.f / 3 + y2 * (2.f / 15 + y2 * (-17.f / 315 + y2 * (62.f / 2835)))));
    } else {
      const float e = std::exp(-2.f * a);
      t = std::copysign((1.f - e) / (1.f + e), y);
    }
    x[i] = cap * t;
  }
}

}  // namespace einfer::scalar
