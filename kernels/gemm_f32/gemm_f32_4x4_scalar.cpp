// Scalar twin of the f32 GEMM/GEMV kernels (gemm_f32_simd.cpp): the 4x4 microkernel
// gemm_f32_4x4_scalar under the same packing driver, and a plain GEMV loop. The path of builds
// without SIMD and the reference the tests compare the SIMD kernels with.
#include <cstdint>

#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_f32/gemm_f32_driver.h"

namespace einfer {

using namespace gemm_detail;

namespace {

// Scalar microkernel: 4x4 accumulators.
void gemm_f32_4x4_scalar(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                         bool accumulate) {
  float acc[4][4] = {};
  for (int64_t p = 0; p < kc; ++p) {
    const float* a = ap + p * 4;
    const float* b = bp + p * 4;
    for (int r = 0; r < 4; ++r)
      for (int j = 0; j < 4; ++j) acc[r][j] += a[r] * b[j];
  }
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 4; ++j)
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

void gemm_f32_4x4_scalar_direct(int64_t kc, const float* a, int64_t lda, int64_t mr,
                                const float* bp, float* c, int64_t ldc, bool accumulate,
                                PrefetchStream*) {
  float acc[4][4] = {};
  for (int r = 0; r < 4; ++r) {
    const float* ar = a + (r < mr ? r : mr - 1) * lda;
    for (int64_t p = 0; p < kc; ++p)
      for (int j = 0; j < 4; ++j) acc[r][j] += ar[p] * bp[p * 4 + j];
  }
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 4; ++j)
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

}  // namespace

namespace scalar {
void gemm_f32(const GemmF32Args& args, void* scratch) {
  gemm_driver<4, 4, gemm_f32_4x4_scalar, gemm_f32_4x4_scalar_direct>(args, scratch);
}

void gemv_f32(int64_t n, int64_t k, const float* w, int64_t w_j, int64_t w_p, const float* x,
              float* y, int64_t y_stride, bool accumulate) {
  for (int64_t j = 0; j < n; ++j) {
    float s = 0.f;
    for (int64_t p = 0; p < k; ++p) s += w[j * w_j + p * w_p] * x[p];
    y[j * y_stride] = accumulate ? y[j * y_stride] + s : s;
  }
}
}  // namespace scalar

}  // namespace einfer
