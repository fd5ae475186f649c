// Private to kernels/rope/: the pair rotation shared by rope_scalar.cpp and rope_f32_simd.cpp.
#pragma once

#include <cstdint>

#include "kernels/rope/rope.h"

namespace einfer::rope_detail {

// One pair rotation; both the table and the beyond-table path call this so they round alike.
inline void rotate_pair(float* a, float* b, float c, float s) {
  const float x0 = *a, x1 = *b;
  *a = x0 * c - x1 * s;
  *b = x0 * s + x1 * c;
}

// Element indices of pair i in the given layout.
inline int32_t pair_first(RopeLayout layout, int32_t i) {
  return layout == RopeLayout::interleaved ? 2 * i : i;
}
inline int32_t pair_second(RopeLayout layout, int32_t i, int32_t half) {
  return layout == RopeLayout::interleaved ? 2 * i + 1 : i + half;
}

}  // namespace einfer::rope_detail
