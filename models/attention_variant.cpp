#include "models/attention_variant.h"

#include <cmath>

#include "kernels/attention_variants/attention_variants.h"

namespace einfer {

namespace {
LinearAttentionShape linear_shape(const ModelConfig& c) {
  LinearAttentionShape s;
  s.n_heads = c.n_heads;
  s.head_dim = c.head_dim;
  s.causal = c.causal != 0;
  return s;
}
}  // namespace

AttentionPattern attention_pattern_from_config(const ModelConfig& c) {
  AttentionPattern p;
  p.window = c.pattern_window;
  p.global = c.pattern_global;
  p.stride = c.pattern_stride;
  p.block = c.pattern_block;
  p.block_summary = c.pattern_block_summary;
  p.causal = c.causal != 0;
  return p;
}

bool attention_variant_active(const ModelConfig& c) {
  return c.attention != AttentionKind::softmax || c.pattern_window != 0 || c.pattern_global != 0 ||
         c.pattern_stride != 0 || c.pattern_block != 0;
}

Status attention_variant_scratch_bytes(const ModelConfig& c, int32_t n, size_t* bytes) {
  *bytes = 0;
  if (c.attention == AttentionKind::linear_elu)
    return attention_linear_scratch_bytes(linear_shape(c), n, bytes);
  *bytes = attention_pattern_scratch_bytes(c.n_heads);
  return ok_status();
}

Status attention_variant_forward(const MhaWeights& w, const ModelConfig& c, const float* x,
                                 int32_t n, const MhaBuffers& b, float* out) {
  EINFER_TRY(linear(x, n, w.wq, w.bq, b.q, b.scratch, b.scratch_bytes));
  EINFER_TRY(linear(x, n, w.wk, w.bk, b.k, b.scratch, b.scratch_bytes));
  EINFER_TRY(linear(x, n, w.wv, w.bv, b.v, b.scratch, b.scratch_bytes));
  if (c.attention == AttentionKind::linear_elu) {
    EINFER_TRY(attention_linear_elu_f32(linear_shape(c), b.q, b.k, b.v, n, b.att, b.scratch,
                                        b.scratch_bytes));
  } else {
    const float scale = 1.f / std::sqrt(static_cast<float>(c.head_dim));
    EINFER_TRY(attention_pattern_f32(attention_pattern_from_config(c), c.n_heads, c.head_dim, scale,
                                     b.q, b.k, b.v, n, b.att, b.scratch, b.scratch_bytes));
  }
  return linear(b.att, n, w.wo, w.bo, out, b.scratch, b.scratch_bytes);
}

size_t attention_variant_state_floats(const ModelConfig& c) {
  if (c.attention != AttentionKind::linear_elu || !c.causal) return 0;
  return attention_linear_state_floats(linear_shape(c));
}

Status attention_linear_step_forward(const MhaWeights& w, const ModelConfig& c, const float* x,
                                     const MhaBuffers& b, float* state, float* out) {
  EINFER_TRY(linear(x, 1, w.wq, w.bq, b.q, b.scratch, b.scratch_bytes));
  EINFER_TRY(linear(x, 1, w.wk, w.bk, b.k, b.scratch, b.scratch_bytes));
  EINFER_TRY(linear(x, 1, w.wv, w.bv, b.v, b.scratch, b.scratch_bytes));
  attention_linear_elu_step_f32(linear_shape(c), state, b.q, b.k, b.v, b.att);
  return linear(b.att, 1, w.wo, w.bo, out, b.scratch, b.scratch_bytes);
}

}  // namespace einfer
