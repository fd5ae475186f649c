// Internals shared by einsum_plan.cpp and einsum_execute.cpp (not a public header).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/einsum/einsum.h"

namespace einfer::einsum_internal {

inline Status einsum_error(StatusCode code, const char* msg, int64_t need = -1, int64_t have = -1,
                           int32_t index = -1) {
  return make_status(code, msg, need, have, index);
}

inline size_t align64(size_t n) {
  return (n + 63) / 64 * 64;
}

inline int64_t out_stride_of(const EinsumLabel& l, const int64_t* out_strides) {
  return l.out_axis >= 0 ? out_strides[l.out_axis] : 0;
}

// Row-major strides of the plan's output shape.
inline void contiguous_strides(const EinsumPlan& p, int64_t* strides) {
  int64_t s = 1;
  for (int i = p.out_rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= p.out_shape[i];
  }
}

// Derives the kernel and its loops for the given output strides (einsum_plan.cpp). L must be
// default-initialized.
void derive_layout(const EinsumPlan& p, const int64_t* out_strides, EinsumLayout* L);

}  // namespace einfer::einsum_internal
