// Scalar twin of rope_apply (rope_f32_simd.cpp): the reference the tests compare it with bit for
// bit, and the path of builds without SIMD. Compiled with -ffp-contract=off
// (kernels/CMakeLists.txt) so each rotation is two multiplies and an add/subtract, rounded like the
// SIMD lanes.
#include <cmath>

#include "kernels/rope/rope.h"
#include "kernels/rope/rope_internal.h"

namespace einfer::scalar {

void rope_apply(const RopeTable& table, RopeLayout layout, float* x, int32_t n_heads, int64_t pos) {
  const int32_t half = table.head_dim / 2;
  if (pos >= 0 && pos < table.n_positions) {
    const float* c = table.cos + static_cast<size_t>(pos) * half;
    const float* s = table.sin + static_cast<size_t>(pos) * half;
    for (int32_t h = 0; h < n_heads; ++h) {
      float* xh = x + static_cast<size_t>(h) * table.head_dim;
      for (int32_t i = 0; i < half; ++i) {
        rope_detail::rotate_pair(xh + rope_detail::pair_first(layout, i),
                                 xh + rope_detail::pair_second(layout, i, half), c[i], s[i]);
      }
    }
    return;
  }
  // Beyond the table: the same formula per pair, no scratch needed (at most 2 floats at a time).
  for (int32_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * table.inv_freq[i];
    const float c = static_cast<float>(std::cos(angle) * table.mscale);
    const float s = static_cast<float>(std::sin(angle) * table.mscale);
    for (int32_t h = 0; h < n_heads; ++h) {
      float* xh = x + static_cast<size_t>(h) * table.head_dim;
      rope_detail::rotate_pair(xh + rope_detail::pair_first(layout, i),
                               xh + rope_detail::pair_second(layout, i, half), c, s);
    }
  }
}

}  // namespace einfer::scalar
