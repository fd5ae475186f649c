// f16 / bf16 GEMV and widening on aarch64 NEON: f16 widened with vcvt_f32_f16 (fp16 arithmetic
// would round every product to 11 bits: not exact enough), bf16 by shifting left 16 (vshll). The
// weights are never stored as f32. Scalar twins in gemv_half_scalar.cpp. The AVX2 twin,
// gemv_half_avx2.cpp, has the same shape of row loop and entry points: one ISA per file.
#include "kernels/half/gemv_half_internal.h"

#if defined(EINFER_HALF_NEON)

#include <arm_neon.h>

#include "kernels/quant/quant.h"

namespace einfer::half_detail {

namespace {

struct F16 {
  static float32x4_t lo(uint16x8_t v) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(v)));
  }
  static float32x4_t hi(uint16x8_t v) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vget_high_u16(v)));
  }
  static float one(uint16_t h) { return f16_to_f32(h); }
};

struct BF16 {
  static float32x4_t lo(uint16x8_t v) {
    return vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16));
  }
  static float32x4_t hi(uint16x8_t v) {
    return vreinterpretq_f32_u32(vshll_n_u16(vget_high_u16(v), 16));
  }
  static float one(uint16_t h) { return bf16_to_f32(h); }
};

template <typename H, int R>
void rows(int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
  const int64_t k8 = k / 8 * 8;
  float32x4_t a[R], b[R];
  for (int r = 0; r < R; ++r) a[r] = b[r] = vdupq_n_f32(0.f);
  int64_t p = 0;
  for (; p < k8; p += 8) {
    const float32x4_t x0 = vld1q_f32(x + p), x1 = vld1q_f32(x + p + 4);
    for (int r = 0; r < R; ++r) {
      const uint16x8_t v = vld1q_u16(w + r * w_j + p);
      a[r] = vfmaq_f32(a[r], H::lo(v), x0);
      b[r] = vfmaq_f32(b[r], H::hi(v), x1);
    }
  }
  for (int r = 0; r < R; ++r) {
    float s = vaddvq_f32(vaddq_f32(a[r], b[r]));
    for (int64_t q = p; q < k; ++q) s += H::one(w[r * w_j + q]) * x[q];
    y[r] = s;
  }
}

template <typename H>
void gemv(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) rows<H, 4>(k, w + j * w_j, w_j, x, y + j);
  for (; j < n; ++j) rows<H, 1>(k, w + j * w_j, w_j, x, y + j);
}

template <typename H>
void widen(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t v = vld1q_u16(src + i);
    vst1q_f32(dst + i, H::lo(v));
    vst1q_f32(dst + i + 4, H::hi(v));
  }
  for (; i < n; ++i) dst[i] = H::one(src[i]);
}

}  // namespace

void gemv_f16_4x1_neon(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                       float* y) {
  gemv<F16>(n, k, w, w_j, x, y);
}
void gemv_bf16_4x1_neon(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x,
                        float* y) {
  gemv<BF16>(n, k, w, w_j, x, y);
}
void widen_f16_f32_neon(const uint16_t* src, float* dst, int64_t n) {
  widen<F16>(src, dst, n);
}
void widen_bf16_f32_neon(const uint16_t* src, float* dst, int64_t n) {
  widen<BF16>(src, dst, n);
}

}  // namespace einfer::half_detail

#endif
