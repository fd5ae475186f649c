#include "models/encoder.h"

#include <cstdint>
#include <cstring>

#include "kernels/rope/rope.h"
#include "kernels/vec/vec.h"
#include "models/attention_variant.h"
#include "runtime/checked.h"
#include "runtime/format.h"
#include "runtime/run_options.h"

namespace einfer {

Status encoder_bind_tensor(const Model& m, TensorRole role, int32_t layer, int64_t d0, int64_t d1,
                           TensorView* out) {
  const char* message = "encoder: tensor shape or dtype disagrees with the config";
  EINFER_TRY(model_tensor_shaped(m, role, layer, d0, d1, message, out));
  if (d1 < 0 && out->dtype != DType::f32)  // vectors (norms, biases) are read as f32
    return make_status(StatusCode::shape_mismatch, message, -1, -1, static_cast<int32_t>(role));
  return ok_status();
}

void encoder_layernorm_rows(float* x, int32_t n, int64_t d, const TensorView& w,
                            const TensorView& b, float eps) {
  for (int32_t i = 0; i < n; ++i) {
    layernorm_f32(x + i * d, w.f32(), b.data ? b.f32() : nullptr, eps, x + i * d,
                  static_cast<size_t>(d));
  }
}

namespace {

// The architecture, then the one config check every model passes (runtime ein_validate_config).
// bert models run their layers here too (models/bert.h).
Status check_config(const ModelConfig& c) {
  return ein_validate_config_for(c, c.arch == ArchKind::encoder || c.arch == ArchKind::bert,
                                 "model is not an encoder");
}

MhaConfig mha_config(const ModelConfig& c) {
  MhaConfig m;
  m.dim = c.dim;
  m.n_heads = c.n_heads;
  m.n_kv_heads = c.n_kv_heads;
  m.head_dim = c.head_dim;
  m.causal = c.causal != 0;
  return m;
}

TensorView weight_like(const ModelConfig& c, int64_t rows, int64_t cols) {
  TensorView w = make_view(c.weight_dtype, nullptr, {rows, cols});
  if (dtype_is_quantized(c.weight_dtype)) w.group_size = c.group_size;
  return w;
}

void activate(Activation a, float* x, size_t n) {
  switch (a) {
    case Activation::relu:
      relu_f32(x, x, n);
      break;
    case Activation::gelu_erf:
      gelu_erf_f32(x, x, n);
      break;
    case Activation::gelu_tanh:
      gelu_tanh_f32(x, x, n);
      break;
    default:
      break;
  }
}

Status layout_state(const ModelConfig& c, int32_t max_seq, Arena& arena, EncoderState* s) {
  if (max_seq == 0) max_seq = c.context_length;  // 0 in the model: no trained limit
  if (max_seq <= 0) {
    return make_status(StatusCode::invalid_argument,
                       "encoder: give the longest sequence to size the state for");
  }
  if (c.context_length > 0 && max_seq > c.context_length) {
    return make_status(StatusCode::out_of_range,
                       "encoder: sequence longer than the model's maximum", max_seq,
                       c.context_length);
  }
  *s = EncoderState{};
  if (max_seq > kMaxRunPositions) {
    return make_status(StatusCode::out_of_range, "encoder: sequence length above its limit",
                       kMaxRunPositions, max_seq);
  }
  s->max_seq = max_seq;
  // Checked: sequence x width wraps a 32-bit size_t for long sequences.
  const CheckedSize S = max_seq, d = c.dim;
  EINFER_TRY(arena.allocate_array(S * d, &s->x));
  EINFER_TRY(arena.allocate_array(S * d, &s->xb));
  EINFER_TRY(arena.allocate_array(S * c.hidden_dim, &s->h));
  EINFER_TRY(arena.allocate_array(S * d, &s->q));
  EINFER_TRY(arena.allocate_array(S * d, &s->k));
  EINFER_TRY(arena.allocate_array(S * d, &s->v));
  EINFER_TRY(arena.allocate_array(S * d, &s->att));
  MhaWeights like{};
  like.wq = like.wk = like.wv = like.wo = weight_like(c, c.dim, c.dim);
  size_t scratch = 0;
  EINFER_TRY(mha_scratch_bytes(mha_config(c), like, max_seq, &scratch));
  if (attention_variant_active(c)) {  // issue 19: sparse pattern or linear attention
    size_t b = 0;
    EINFER_TRY(attention_variant_scratch_bytes(c, max_seq, &b));
    scratch = b > scratch ? b : scratch;
  }
  for (int64_t n : {static_cast<int64_t>(1), static_cast<int64_t>(max_seq)}) {
    size_t b = 0;
    EINFER_TRY(linear_scratch_bytes(n, weight_like(c, c.hidden_dim, c.dim), &b));
    scratch = b > scratch ? b : scratch;
    EINFER_TRY(linear_scratch_bytes(n, weight_like(c, c.dim, c.hidden_dim), &b));
    scratch = b > scratch ? b : scratch;
  }
  s->scratch_bytes = scratch;
  EINFER_TRY(arena.allocate(scratch, kDefaultAlignment, &s->scratch));
  const size_t per_layer = attention_variant_state_floats(c);
  const uint64_t recurrent64 = uint64_t{per_layer} * uint64_t(c.n_layers);
  if (per_layer == SIZE_MAX ||
      recurrent64 > SIZE_MAX / sizeof(float) / 2)  // 32-bit size_t: refuse, never wrap
    return make_status(StatusCode::out_of_memory, "encoder: linear attention state too large");
  const size_t recurrent = static_cast<size_t>(recurrent64);
  if (recurrent > 0) {  // causal linear attention: the per-layer state of encoder_stream_step
    EINFER_TRY(arena.allocate_array(recurrent, &s->recurrent));
  }
  return ok_status();
}

}  // namespace

Status encoder_bind_layer(const Model& m, int32_t l, EncoderLayerWeights* out) {
  const ModelConfig& c = m.config;
  const int64_t d = c.dim, f = c.hidden_dim;
  EncoderLayerWeights& L = *out;
  L = EncoderLayerWeights{};
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::wq, l, d, d, &L.attn.wq));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::wk, l, d, d, &L.attn.wk));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::wv, l, d, d, &L.attn.wv));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::wo, l, d, d, &L.attn.wo));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::w1, l, f, d, &L.w1));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::w2, l, d, f, &L.w2));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::attn_norm, l, d, -1, &L.norm1_w));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::ffn_norm, l, d, -1, &L.norm2_w));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::attn_norm_bias, l, d, -1, &L.norm1_b));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::ffn_norm_bias, l, d, -1, &L.norm2_b));
  if (c.has_bias) {
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::bq, l, d, -1, &L.attn.bq));
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::bk, l, d, -1, &L.attn.bk));
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::bv, l, d, -1, &L.attn.bv));
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::bo, l, d, -1, &L.attn.bo));
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::b1, l, f, -1, &L.b1));
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::b2, l, d, -1, &L.b2));
  }
  return ok_status();
}

Status encoder_feed_forward(const EncoderLayerWeights& L, Activation activation, const float* x,
                            int32_t n, float* h, float* y, void* scratch, size_t scratch_bytes) {
  EINFER_TRY(linear(x, n, L.w1, L.b1, h, scratch, scratch_bytes));
  activate(activation, h, static_cast<size_t>(n) * static_cast<size_t>(L.w1.shape[0]));
  return linear(h, n, L.w2, L.b2, y, scratch, scratch_bytes);
}

Status encoder_bind_weights(const Model& m, Arena& arena, EncoderWeights* w) {
  const ModelConfig& c = m.config;
  EINFER_TRY(check_config(c));
  w->config = c;
  const int64_t d = c.dim;
  EINFER_TRY(arena.allocate_array(static_cast<size_t>(c.n_layers), &w->layers));
  for (int32_t l = 0; l < c.n_layers; ++l) EINFER_TRY(encoder_bind_layer(m, l, &w->layers[l]));
  if (c.final_norm) {
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::final_norm, -1, d, -1, &w->final_w));
    EINFER_TRY(encoder_bind_tensor(m, TensorRole::final_norm_bias, -1, d, -1, &w->final_b));
  }
  return ok_status();
}

Status encoder_state_init(const ModelConfig& c, int32_t max_seq, Arena& arena, EncoderState* s) {
  EINFER_TRY(check_config(c));
  EINFER_TRY(layout_state(c, max_seq, arena, s));
  return s->recurrent ? encoder_stream_reset(c, s) : ok_status();
}

Status encoder_arena_bytes(const ModelConfig& c, int32_t max_seq, size_t* bytes) {
  *bytes = 0;
  EINFER_TRY(check_config(c));
  Arena measure = Arena::measuring();
  EncoderLayerWeights* layers = nullptr;
  EINFER_TRY(measure.allocate_array(static_cast<size_t>(c.n_layers), &layers));
  EncoderState s;
  EINFER_TRY(layout_state(c, max_seq, measure, &s));
  *bytes = measure.high_water();
  return ok_status();
}

namespace {
// The layer stack for n positions starting at absolute position pos0. `stream`: one position of a
// causal linear-attention stack through each layer's recurrent state (encoder_stream_step).
Status run_stack(const EncoderWeights& w, EncoderState* s, const float* in, int32_t n, int64_t pos0,
                 bool stream, float* out) {
  const ModelConfig& c = w.config;
  const int64_t d = c.dim;
  const size_t nd = static_cast<size_t>(n * d);
  const MhaConfig attn = mha_config(c);
  const MhaBuffers buffers{s->q, s->k, s->v, s->att, s->scratch, s->scratch_bytes};
  if (in != s->x) std::memcpy(s->x, in, nd * sizeof(float));
  if (c.positions == PositionsKind::sinusoidal) sinusoidal_encoding_add(s->x, n, c.dim, pos0);
  const bool variant = attention_variant_active(c);
  const size_t state_floats = attention_variant_state_floats(c);

  for (int32_t l = 0; l < c.n_layers; ++l) {
    const EncoderLayerWeights& L = w.layers[l];
    // Self-attention sublayer.
    const float* sa_in = s->x;
    if (c.norm_first) {
      std::memcpy(s->xb, s->x, nd * sizeof(float));
      encoder_layernorm_rows(s->xb, n, d, L.norm1_w, L.norm1_b, c.norm_eps);
      sa_in = s->xb;
    }
    if (stream)
      EINFER_TRY(attention_linear_step_forward(L.attn, c, sa_in, buffers,
                                               s->recurrent + l * state_floats, s->xb));
    else if (variant)
      EINFER_TRY(attention_variant_forward(L.attn, c, sa_in, n, buffers, s->xb));
    else
      EINFER_TRY(mha_forward(L.attn, attn, sa_in, n, 0, nullptr, l, buffers, s->xb));
    add_f32(s->x, s->xb, s->x, nd);
    if (!c.norm_first) encoder_layernorm_rows(s->x, n, d, L.norm1_w, L.norm1_b, c.norm_eps);

    // Feed-forward sublayer.
    const float* ff_in = s->x;
    if (c.norm_first) {
      std::memcpy(s->xb, s->x, nd * sizeof(float));
      encoder_layernorm_rows(s->xb, n, d, L.norm2_w, L.norm2_b, c.norm_eps);
      ff_in = s->xb;
    }
    EINFER_TRY(
        encoder_feed_forward(L, c.activation, ff_in, n, s->h, s->xb, s->scratch, s->scratch_bytes));
    add_f32(s->x, s->xb, s->x, nd);
    if (!c.norm_first) encoder_layernorm_rows(s->x, n, d, L.norm2_w, L.norm2_b, c.norm_eps);
  }
  if (c.final_norm) encoder_layernorm_rows(s->x, n, d, w.final_w, w.final_b, c.norm_eps);
  if (out != s->x) std::memcpy(out, s->x, nd * sizeof(float));
  return ok_status();
}
}  // namespace

Status encoder_forward(const EncoderWeights& w, EncoderState* s, const float* in, int32_t n,
                       float* out) {
  if (n <= 0 || n > s->max_seq) {
    return make_status(StatusCode::out_of_range, "encoder: sequence length outside 1..max_seq", n,
                       s->max_seq);
  }
  return run_stack(w, s, in, n, 0, false, out);
}

Status encoder_stream_reset(const ModelConfig& c, EncoderState* s) {
  if (s->recurrent == nullptr)
    return make_status(StatusCode::unsupported,
                       "encoder: streaming needs a causal linear-elu attention model");
  std::memset(s->recurrent, 0,
              attention_variant_state_floats(c) * static_cast<size_t>(c.n_layers) * sizeof(float));
  s->position = 0;
  return ok_status();
}

Status encoder_stream_step(const EncoderWeights& w, EncoderState* s, const float* in, float* out) {
  if (s->recurrent == nullptr)
    return make_status(StatusCode::unsupported,
                       "encoder: streaming needs a causal linear-elu attention model");
  if (w.config.context_length > 0 && s->position >= w.config.context_length)
    return make_status(StatusCode::out_of_range, "encoder: stream longer than the model's maximum",
                       s->position, w.config.context_length);
  EINFER_TRY(run_stack(w, s, in, 1, s->position, true, out));
  ++s->position;
  return ok_status();
}

}  // namespace einfer
