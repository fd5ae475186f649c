// Scalar twins of the int8 KV row kernels (kernels/attention/attention_i8_rows.h): the path of
// targets without the AVX2 integer code or a Cortex-M kernel, and the reference for the latter.
#include "kernels/attention/attention_i8_rows.h"

namespace einfer::attention_detail {

int32_t dot_i16_i8_scalar(const int16_t* a, const int8_t* b, int32_t n, int32_t acc) {
  for (int32_t d = 0; d < n; ++d) acc += static_cast<int32_t>(a[d]) * b[d];
  return acc;
}

void axpy_f32_i8_scalar(float w, const int8_t* x, int32_t n, float* y) {
  for (int32_t d = 0; d < n; ++d) y[d] += w * static_cast<float>(x[d]);
}

}  // namespace einfer::attention_detail
