#include "models/transformer.h"

#include <cmath>
#include <cstring>

#include "kernels/attention/attention.h"
#include "kernels/vec/vec.h"
#include "runtime/format.h"

namespace einfer {

namespace {

Status check_config(const ModelConfig& c) {
  return ein_validate_config_for(c, c.arch == ArchKind::transformer,
                                 "model is not an encoder-decoder transformer");
}

Status bind_vector(const Model& m, TensorRole role, int32_t layer, TensorView* out) {
  EINFER_TRY(model_tensor(m, role, layer, out));
  if (out->rank != 1 || out->shape[0] != m.config.dim || out->dtype != DType::f32)
    return make_status(StatusCode::shape_mismatch, "transformer: vector shape disagrees", -1, -1,
                       static_cast<int32_t>(role));
  return ok_status();
}

Status bind_matrix(const Model& m, TensorRole role, int32_t layer, TensorView* out) {
  EINFER_TRY(model_tensor(m, role, layer, out));
  if (out->rank != 2 || out->shape[0] != m.config.dim || out->shape[1] != m.config.dim)
    return make_status(StatusCode::shape_mismatch, "transformer: matrix shape disagrees", -1, -1,
                       static_cast<int32_t>(role));
  return ok_status();
}

TensorView weight_like(const ModelConfig& c, int64_t rows, int64_t cols) {
  TensorView w = make_view(c.weight_dtype, nullptr, {rows, cols});
  if (dtype_is_quantized(c.weight_dtype)) w.group_size = c.group_size;
  return w;
}

// The decoder's attention: causal over target positions; cross-attention runs one query at a
// time as the last position (m - 1) of a cache holding the memory, so it attends every memory row.
AttentionShape attention_shape(const ModelConfig& c) {
  AttentionShape a;
  a.n_heads = a.n_kv_heads = c.n_heads;
  a.head_dim = c.head_dim;
  a.scale = attention_default_scale(c.head_dim);
  a.causal = true;
  return a;
}

KVLayerView layer_view(const ModelConfig& c, const float* k, const float* v, int32_t capacity,
                       int64_t positions) {
  KVLayerView view;
  view.dtype = DType::f32;
  view.n_kv_heads = c.n_heads;
  view.head_dim = c.head_dim;
  view.capacity = capacity;
  view.k = k;
  view.v = v;
  view.head_stride = c.head_dim;
  view.row_stride = c.dim;
  view.n_positions = positions;
  return view;
}

Status layout_state(const ModelConfig& c, int32_t max_source, int32_t max_target, Arena& arena,
                    TransformerState* s) {
  if (max_source == 0) max_source = c.context_length;
  if (max_target == 0) max_target = c.context_length;
  if (max_source <= 0 || max_target <= 0)
    return make_status(StatusCode::invalid_argument,
                       "transformer: give the longest source and target to size the state for");
  if (c.context_length > 0 && (max_source > c.context_length || max_target > c.context_length))
    return make_status(StatusCode::out_of_range,
                       "transformer: sequence longer than the model's maximum",
                       max_source > max_target ? max_source : max_target, c.context_length);
  *s = TransformerState{};
  s->max_source = max_source;
  s->max_target = max_target;
  const int32_t rows = max_source > max_target ? max_source : max_target;
  // The encoder's row buffers and scratch serve the decoder too: the encoder sizes its scratch for
  // `rows` positions, the decoder adds its projections and attention calls.
  EncoderState& e = s->encoder;
  const size_t S = static_cast<size_t>(rows), d = static_cast<size_t>(c.dim);
  e.max_seq = rows;
  EINFER_TRY(arena.allocate_array(S * d, &e.x));
  EINFER_TRY(arena.allocate_array(S * d, &e.xb));
  EINFER_TRY(arena.allocate_array(S * static_cast<size_t>(c.hidden_dim), &e.h));
  EINFER_TRY(arena.allocate_array(S * d, &e.q));
  EINFER_TRY(arena.allocate_array(S * d, &e.k));
  EINFER_TRY(arena.allocate_array(S * d, &e.v));
  EINFER_TRY(arena.allocate_array(S * d, &e.att));
  MhaConfig mc;
  mc.dim = c.dim;
  mc.n_heads = mc.n_kv_heads = c.n_heads;
  mc.head_dim = c.head_dim;
  mc.causal = false;
  MhaWeights like{};
  like.wq = like.wk = like.wv = like.wo = weight_like(c, c.dim, c.dim);
  size_t scratch = 0, b = 0;
  EINFER_TRY(mha_scratch_bytes(mc, like, rows, &scratch));
  const size_t att = attention_scratch_bytes(attention_shape(c), rows, DType::f32);
  scratch = att > scratch ? att : scratch;
  for (int64_t n : {static_cast<int64_t>(1), static_cast<int64_t>(rows)}) {
    EINFER_TRY(linear_scratch_bytes(n, weight_like(c, c.dim, c.dim), &b));
    scratch = b > scratch ? b : scratch;
    EINFER_TRY(linear_scratch_bytes(n, weight_like(c, c.hidden_dim, c.dim), &b));
    scratch = b > scratch ? b : scratch;
    EINFER_TRY(linear_scratch_bytes(n, weight_like(c, c.dim, c.hidden_dim), &b));
    scratch = b > scratch ? b : scratch;
  }
  e.scratch_bytes = scratch;
  EINFER_TRY(arena.allocate(scratch, kDefaultAlignment, &e.scratch));
  const size_t layers = static_cast<size_t>(c.n_decoder_layers);
  EINFER_TRY(arena.allocate_array(layers * static_cast<size_t>(max_source) * d, &s->memory_k));
  EINFER_TRY(arena.allocate_array(layers * static_cast<size_t>(max_source) * d, &s->memory_v));
  EINFER_TRY(arena.allocate_array(layers * static_cast<size_t>(max_target) * d, &s->self_k));
  EINFER_TRY(arena.allocate_array(layers * static_cast<size_t>(max_target) * d, &s->self_v));
  return ok_status();
}

// The decoder stack on n target rows at positions pos0.. (their self-attention keys/values are
// appended to the cache at pos0).
Status run_decoder(const TransformerWeights& w, TransformerState* s, const float* in, int32_t n,
                   int32_t pos0, float* out) {
  const ModelConfig& c = w.config;
  EncoderState& e = s->encoder;
  const int64_t d = c.dim;
  const size_t nd = static_cast<size_t>(n) * static_cast<size_t>(d);
  const AttentionShape shape = attention_shape(c);
  const int32_t m = s->source_rows;
  std::memcpy(e.x, in, nd * sizeof(float));
  for (int32_t l = 0; l < c.n_decoder_layers; ++l) {
    const DecoderLayerWeights& L = w.decoder[l];
    float* self_k = s->self_k + static_cast<size_t>(l) * s->max_target * d;
    float* self_v = s->self_v + static_cast<size_t>(l) * s->max_target * d;
    const float* mem_k = s->memory_k + static_cast<size_t>(l) * s->max_source * d;
    const float* mem_v = s->memory_v + static_cast<size_t>(l) * s->max_source * d;

    // Masked self-attention; keys/values of the earlier rows come from the cache.
    const float* in_rows = e.x;
    if (c.norm_first) {
      std::memcpy(e.xb, e.x, nd * sizeof(float));
      encoder_layernorm_rows(e.xb, n, d, L.base.norm1_w, L.base.norm1_b, c.norm_eps);
      in_rows = e.xb;
    }
    const MhaWeights& sa = L.base.attn;
    EINFER_TRY(linear(in_rows, n, sa.wq, sa.bq, e.q, e.scratch, e.scratch_bytes));
    EINFER_TRY(linear(in_rows, n, sa.wk, sa.bk, e.k, e.scratch, e.scratch_bytes));
    EINFER_TRY(linear(in_rows, n, sa.wv, sa.bv, e.v, e.scratch, e.scratch_bytes));
    const KVLayerView cache = layer_view(c, self_k, self_v, s->max_target, pos0);
    EINFER_TRY(
        attention_f32(shape, e.q, e.k, e.v, n, pos0, &cache, e.att, e.scratch, e.scratch_bytes));
    std::memcpy(self_k + static_cast<size_t>(pos0) * d, e.k, nd * sizeof(float));
    std::memcpy(self_v + static_cast<size_t>(pos0) * d, e.v, nd * sizeof(float));
    EINFER_TRY(linear(e.att, n, sa.wo, sa.bo, e.xb, e.scratch, e.scratch_bytes));
    add_f32(e.x, e.xb, e.x, nd);
    if (!c.norm_first)
      encoder_layernorm_rows(e.x, n, d, L.base.norm1_w, L.base.norm1_b, c.norm_eps);

    // Cross-attention to the memory (its keys/values projected by transformer_encode_memory).
    in_rows = e.x;
    if (c.norm_first) {
      std::memcpy(e.xb, e.x, nd * sizeof(float));
      encoder_layernorm_rows(e.xb, n, d, L.cross_norm_w, L.cross_norm_b, c.norm_eps);
      in_rows = e.xb;
    }
    EINFER_TRY(linear(in_rows, n, L.cross.wq, L.cross.bq, e.q, e.scratch, e.scratch_bytes));
    const KVLayerView memory = layer_view(c, mem_k, mem_v, s->max_source, m - 1);
    for (int32_t i = 0; i < n; ++i) {
      EINFER_TRY(attention_f32(shape, e.q + i * d, mem_k + (m - 1) * d, mem_v + (m - 1) * d, 1,
                               m - 1, &memory, e.att + i * d, e.scratch, e.scratch_bytes));
    }
    EINFER_TRY(linear(e.att, n, L.cross.wo, L.cross.bo, e.xb, e.scratch, e.scratch_bytes));
    add_f32(e.x, e.xb, e.x, nd);
    if (!c.norm_first)
      encoder_layernorm_rows(e.x, n, d, L.cross_norm_w, L.cross_norm_b, c.norm_eps);

    // Feed-forward.
    in_rows = e.x;
    if (c.norm_first) {
      std::memcpy(e.xb, e.x, nd * sizeof(float));
      encoder_layernorm_rows(e.xb, n, d, L.base.norm2_w, L.base.norm2_b, c.norm_eps);
      in_rows = e.xb;
    }
    EINFER_TRY(encoder_feed_forward(L.base, c.activation, in_rows, n, e.h, e.xb, e.scratch,
                                    e.scratch_bytes));
    add_f32(e.x, e.xb, e.x, nd);
    if (!c.norm_first)
      encoder_layernorm_rows(e.x, n, d, L.base.norm2_w, L.base.norm2_b, c.norm_eps);
  }
  encoder_layernorm_rows(e.x, n, d, w.decoder_norm_w, w.decoder_norm_b, c.norm_eps);
  std::memcpy(out, e.x, nd * sizeof(float));
  s->target_rows = pos0 + n;
  return ok_status();
}

Status check_ready(const TransformerState* s, int32_t rows_after) {
  if (s == nullptr) return make_status(StatusCode::invalid_argument, "transformer: state is null");
  if (s->source_rows <= 0)
    return make_status(StatusCode::invalid_argument,
                       "transformer: encode a source (transformer_encode_memory) before decoding");
  if (rows_after > s->max_target)
    return make_status(StatusCode::out_of_range, "transformer: target longer than max_target",
                       rows_after, s->max_target);
  return ok_status();
}

}  // namespace

Status transformer_bind_weights(const Model& m, Arena& arena, TransformerWeights* w) {
  const ModelConfig& c = m.config;
  EINFER_TRY(check_config(c));
  *w = TransformerWeights{};
  w->config = c;
  w->encoder.config = c;
  EINFER_TRY(arena.allocate_array(static_cast<size_t>(c.n_layers), &w->encoder.layers));
  EINFER_TRY(arena.allocate_array(static_cast<size_t>(c.n_decoder_layers), &w->decoder));
  for (int32_t l = 0; l < c.n_layers; ++l)
    EINFER_TRY(encoder_bind_layer(m, l, &w->encoder.layers[l]));
  EINFER_TRY(bind_vector(m, TensorRole::final_norm, -1, &w->encoder.final_w));
  EINFER_TRY(bind_vector(m, TensorRole::final_norm_bias, -1, &w->encoder.final_b));
  for (int32_t i = 0; i < c.n_decoder_layers; ++i) {
    const int32_t l = c.n_layers + i;
    DecoderLayerWeights& L = w->decoder[i];
    L = DecoderLayerWeights{};
    EINFER_TRY(encoder_bind_layer(m, l, &L.base));
    EINFER_TRY(bind_matrix(m, TensorRole::cross_wq, l, &L.cross.wq));
    EINFER_TRY(bind_matrix(m, TensorRole::cross_wk, l, &L.cross.wk));
    EINFER_TRY(bind_matrix(m, TensorRole::cross_wv, l, &L.cross.wv));
    EINFER_TRY(bind_matrix(m, TensorRole::cross_wo, l, &L.cross.wo));
    if (c.has_bias) {
      EINFER_TRY(bind_vector(m, TensorRole::cross_bq, l, &L.cross.bq));
      EINFER_TRY(bind_vector(m, TensorRole::cross_bk, l, &L.cross.bk));
      EINFER_TRY(bind_vector(m, TensorRole::cross_bv, l, &L.cross.bv));
      EINFER_TRY(bind_vector(m, TensorRole::cross_bo, l, &L.cross.bo));
    }
    EINFER_TRY(bind_vector(m, TensorRole::cross_norm, l, &L.cross_norm_w));
    EINFER_TRY(bind_vector(m, TensorRole::cross_norm_bias, l, &L.cross_norm_b));
  }
  EINFER_TRY(bind_vector(m, TensorRole::decoder_norm, -1, &w->decoder_norm_w));
  EINFER_TRY(bind_vector(m, TensorRole::decoder_norm_bias, -1, &w->decoder_norm_b));
  return ok_status();
}

Status transformer_state_init(const ModelConfig& c, int32_t max_source, int32_t max_target,
                              Arena& arena, TransformerState* s) {
  EINFER_TRY(check_config(c));
  return layout_state(c, max_source, max_target, arena, s);
}

Status transformer_arena_bytes(const ModelConfig& c, int32_t max_source, int32_t max_target,
                               size_t* bytes) {
  *bytes = 0;
  EINFER_TRY(check_config(c));
  Arena measure = Arena::measuring();
  EncoderLayerWeights* enc = nullptr;
  DecoderLayerWeights* dec = nullptr;
  EINFER_TRY(measure.allocate_array(static_cast<size_t>(c.n_layers), &enc));
  EINFER_TRY(measure.allocate_array(static_cast<size_t>(c.n_decoder_layers), &dec));
  TransformerState s;
  EINFER_TRY(layout_state(c, max_source, max_target, measure, &s));
  *bytes = measure.high_water();
  return ok_status();
}

Status transformer_encode_memory(const TransformerWeights& w, TransformerState* s, const float* src,
                                 int32_t m) {
  if (s == nullptr) return make_status(StatusCode::invalid_argument, "transformer: state is null");
  s->source_rows = 0;  // no memory until one is complete (a failed encode leaves none)
  s->target_rows = 0;
  if (src == nullptr) return make_status(StatusCode::invalid_argument, "transformer: null source");
  if (m <= 0 || m > s->max_source)
    return make_status(StatusCode::out_of_range, "transformer: source length outside 1..max_source",
                       m, s->max_source);
  EncoderState& e = s->encoder;
  // The encoder's output (the memory) lands in e.att, free until the decoder runs.
  EINFER_TRY(encoder_forward(w.encoder, &e, src, m, e.att));
  const ModelConfig& c = w.config;
  const size_t stride = static_cast<size_t>(s->max_source) * static_cast<size_t>(c.dim);
  for (int32_t l = 0; l < c.n_decoder_layers; ++l) {
    const MhaWeights& x = w.decoder[l].cross;
    EINFER_TRY(linear(e.att, m, x.wk, x.bk, s->memory_k + l * stride, e.scratch, e.scratch_bytes));
    EINFER_TRY(linear(e.att, m, x.wv, x.bv, s->memory_v + l * stride, e.scratch, e.scratch_bytes));
  }
  s->source_rows = m;
  return ok_status();
}

Status transformer_decode(const TransformerWeights& w, TransformerState* s, const float* tgt,
                          int32_t n, float* out) {
  EINFER_TRY(check_ready(s, n));
  if (tgt == nullptr || out == nullptr || n <= 0)
    return make_status(StatusCode::invalid_argument, "transformer: decode needs 1.. target rows");
  return run_decoder(w, s, tgt, n, 0, out);
}

Status transformer_decode_step(const TransformerWeights& w, TransformerState* s, const float* tgt,
                               float* out) {
  if (s == nullptr) return make_status(StatusCode::invalid_argument, "transformer: state is null");
  EINFER_TRY(check_ready(s, s->target_rows + 1));
  if (tgt == nullptr || out == nullptr)
    return make_status(StatusCode::invalid_argument, "transformer: null target row or output");
  return run_decoder(w, s, tgt, 1, s->target_rows, out);
}

}  // namespace einfer
