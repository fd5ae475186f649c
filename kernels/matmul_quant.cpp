// Quantized matmul: placeholder dispatch to the dequantizing reference until the int8 kernels land.
#include "kernels/matmul_quant.h"

#include "kernels/quant.h"

namespace einfer {

size_t matmul_quant_scratch_bytes(int64_t m, int64_t k, int32_t group) {
  // int8 activations plus one float scale per group, per row, rounded up to 64 bytes.
  const size_t row = static_cast<size_t>(k) + 4 * static_cast<size_t>(quant_groups(k, group));
  return (static_cast<size_t>(m) * row + 63) / 64 * 64 + 64;
}

Status matmul_f32_quant(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                        int64_t ldc, void* scratch, size_t scratch_bytes) {
  if (!dtype_is_quantized(w.dtype) || w.rank != 2 || w.group_size <= 0) {
    return make_status(StatusCode::invalid_argument, "matmul_f32_quant: weight must be a 2-D q8/q4 view");
  }
  if (scratch_bytes < matmul_quant_scratch_bytes(m, w.shape[1], w.group_size) || !scratch) {
    return make_status(StatusCode::out_of_memory, "matmul_f32_quant: scratch too small",
                       static_cast<int64_t>(matmul_quant_scratch_bytes(m, w.shape[1], w.group_size)),
                       static_cast<int64_t>(scratch_bytes));
  }
  scalar::matmul_f32_quant_reference(a, lda, m, w, c, ldc);
  return ok_status();
}

namespace scalar {
void matmul_f32_quant_reference(const float* a, int64_t lda, int64_t m, const TensorView& w,
                                float* c, int64_t ldc) {
  const int64_t n = w.shape[0], k = w.shape[1];
  const int64_t groups = quant_groups(k, w.group_size);
  const size_t row_bytes = quant_row_bytes(w.dtype, k);
  for (int64_t j = 0; j < n; ++j) {
    const unsigned char* q = static_cast<const unsigned char*>(w.data) + j * row_bytes;
    const float* s = w.scales + j * groups;
    for (int64_t i = 0; i < m; ++i) {
      float acc = 0.f;
      for (int64_t e = 0; e < k; ++e) {
        int v;
        if (w.dtype == DType::q8) {
          v = static_cast<int8_t>(q[e]);
        } else {
          v = ((e & 1) ? (q[e / 2] >> 4) : (q[e / 2] & 0x0F)) - 8;
        }
        acc += a[i * lda + e] * static_cast<float>(v) * s[e / w.group_size];
      }
      c[i * ldc + j] = acc;
    }
  }
}
}  // namespace scalar

}  // namespace einfer
