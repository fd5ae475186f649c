// The fused attention's shape checks and default scale (kernels/attention/attention.h): the same
// on every ISA level, so compiled once; the kernel itself is attention_dispatch.cpp.
#include <cmath>

#include "kernels/attention/attention.h"

namespace einfer {

float attention_default_scale(int32_t head_dim) {
  return head_dim > 0 ? 1.f / std::sqrt(static_cast<float>(head_dim)) : 0.f;
}

Status attention_validate_shape(const AttentionShape& sh) {
  if (sh.n_heads <= 0 || sh.n_kv_heads <= 0 || sh.head_dim <= 0) {
    return make_status(StatusCode::invalid_argument,
                       "attention: head counts and head_dim must be > 0");
  }
  if (sh.n_heads % sh.n_kv_heads != 0) {
    return make_status(StatusCode::shape_mismatch,
                       "attention: n_heads must be a multiple of n_kv_heads", sh.n_heads,
                       sh.n_kv_heads);
  }
  if (sh.window < 0 || sh.sinks < 0) {
    return make_status(StatusCode::invalid_argument, "attention: window and sinks must be >= 0");
  }
  if (sh.window > 0 && sh.sinks >= sh.window) {
    return make_status(StatusCode::invalid_argument, "attention: sinks must be fewer than window",
                       sh.sinks, sh.window);
  }
  if (!sh.causal && sh.window != 0) {
    return make_status(StatusCode::unsupported, "attention: a window needs causal attention");
  }
  if (!std::isfinite(sh.scale)) {
    return make_status(StatusCode::invalid_argument, "attention: scale must be finite");
  }
  if (!(std::isfinite(sh.softcap) && sh.softcap >= 0.f)) {
    return make_status(StatusCode::invalid_argument, "attention: softcap must be finite, >= 0");
  }
  return ok_status();
}

}  // namespace einfer
