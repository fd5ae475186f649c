// Scalar twins of the f16 / bf16 GEMV and widening kernels (half.h): the path of builds
// without a SIMD kernel for them, and the reference the SIMD kernels are tested against.
#include "kernels/half/half.h"
#include "kernels/quant/quant.h"

namespace einfer::scalar {

namespace {

template <float (*Widen)(uint16_t)>
void gemv(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
  for (int64_t j = 0; j < n; ++j) {
    const uint16_t* row = w + j * w_j;
    // Four partial sums break the add chain (and let the compiler keep them in registers).
    float s[4] = {0.f, 0.f, 0.f, 0.f};
    int64_t p = 0;
    for (; p + 4 <= k; p += 4)
      for (int l = 0; l < 4; ++l) s[l] += Widen(row[p + l]) * x[p + l];
    for (; p < k; ++p) s[0] += Widen(row[p]) * x[p];
    y[j] = (s[0] + s[1]) + (s[2] + s[3]);
  }
}

}  // namespace

void widen_f16_f32(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(src[i]);
}
void widen_bf16_f32(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(src[i]);
}
void gemv_f16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
  gemv<f16_to_f32>(n, k, w, w_j, x, y);
}
void gemv_bf16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
  gemv<bf16_to_f32>(n, k, w, w_j, x, y);
}

}  // namespace einfer::scalar
