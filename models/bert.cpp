// BERT-style sentence-embedding encoders (see models/bert.h).
#include "models/bert.h"

#include <cmath>
#include <cstring>

#include "kernels/vec/vec.h"
#include "models/embedding.h"
#include "runtime/format.h"

namespace einfer {

namespace {

Status check_config(const ModelConfig& c) {
  return ein_validate_config_for(c, c.arch == ArchKind::bert, "model is not a bert encoder");
}

// A table the embeddings add in float32 (positions, token types): [rows, d], f32.
Status bind_table(const Model& m, TensorRole role, int64_t rows, TensorView* out) {
  EINFER_TRY(encoder_bind_tensor(m, role, -1, rows, m.config.dim, out));
  if (out->dtype != DType::f32)
    return make_status(StatusCode::shape_mismatch, "bert: position and token-type tables are f32",
                       -1, -1, static_cast<int32_t>(role));
  return ok_status();
}

}  // namespace

Status bert_bind_weights(const Model& m, Arena& arena, BertWeights* w) {
  const ModelConfig& c = m.config;
  EINFER_TRY(check_config(c));
  *w = BertWeights{};
  EINFER_TRY(encoder_bind_weights(m, arena, &w->encoder));
  const int64_t d = c.dim;
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::token_embedding, -1, c.vocab_size, d,
                                 &w->token_embedding));
  EINFER_TRY(
      bind_table(m, TensorRole::position_embedding, c.context_length, &w->position_embedding));
  if (c.type_vocab_size > 0)
    EINFER_TRY(bind_table(m, TensorRole::token_type_embedding, c.type_vocab_size,
                          &w->token_type_embedding));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::embed_norm, -1, d, -1, &w->embed_norm));
  EINFER_TRY(encoder_bind_tensor(m, TensorRole::embed_norm_bias, -1, d, -1, &w->embed_norm_bias));
  return ok_status();
}

Status bert_arena_bytes(const ModelConfig& c, int32_t max_seq, size_t* bytes) {
  *bytes = 0;
  EINFER_TRY(check_config(c));
  // bert_bind_weights allocates what encoder_bind_weights does: the per-layer views.
  return encoder_arena_bytes(c, max_seq, bytes);
}

Status bert_forward(const BertWeights& w, EncoderState* s, const int32_t* ids,
                    const int32_t* type_ids, int32_t n) {
  const ModelConfig& c = w.encoder.config;
  if (n <= 0 || n > s->max_seq)
    return make_status(StatusCode::out_of_range, "bert: sequence length outside 1..max_seq", n,
                       s->max_seq);
  const int64_t d = c.dim;
  for (int32_t i = 0; i < n; ++i) {
    float* x = s->x + i * d;
    if (ids[i] < 0 || ids[i] >= c.vocab_size)
      return make_status(StatusCode::out_of_range, "bert: token id outside the vocabulary",
                         c.vocab_size, ids[i], i);
    embedding_row(w.token_embedding, ids[i], x);
    // transformers' order: (word + token type) + position.
    const int32_t type = type_ids ? type_ids[i] : 0;
    if (type < 0 || type >= (c.type_vocab_size > 0 ? c.type_vocab_size : 1))
      return make_status(StatusCode::out_of_range, "bert: token type outside the model's types",
                         c.type_vocab_size, type, i);
    if (c.type_vocab_size > 0)
      add_f32(x, w.token_type_embedding.f32() + type * d, x, static_cast<size_t>(d));
    add_f32(x, w.position_embedding.f32() + i * d, x, static_cast<size_t>(d));
  }
  encoder_layernorm_rows(s->x, n, d, w.embed_norm, w.embed_norm_bias, c.norm_eps);
  return encoder_forward(w.encoder, s, s->x, n, s->x);
}

Status bert_pool(const ModelConfig& c, const float* x, int32_t n, float* out) {
  const size_t d = static_cast<size_t>(c.dim);
  if (n <= 0) return make_status(StatusCode::out_of_range, "bert: nothing to pool", 1, n);
  switch (c.pooling) {
    case PoolingKind::mean:
      std::memcpy(out, x, d * sizeof(float));
      for (int32_t i = 1; i < n; ++i) add_f32(out, x + i * d, out, d);
      scale_f32(out, 1.0f / static_cast<float>(n), d);
      break;
    case PoolingKind::cls:
      std::memcpy(out, x, d * sizeof(float));
      break;
    default:
      return make_status(StatusCode::invalid_argument,
                         "bert: the model has no pooling (take the token states instead)");
  }
  if (c.normalize) {  // torch.nn.functional.normalize: x / max(|x|_2, 1e-12)
    double sum = 0;
    for (size_t j = 0; j < d; ++j) sum += static_cast<double>(out[j]) * out[j];
    const double norm = std::sqrt(sum);
    scale_f32(out, static_cast<float>(1.0 / (norm > 1e-12 ? norm : 1e-12)), d);
  }
  return ok_status();
}

Status bert_embed(const BertWeights& w, EncoderState* s, const int32_t* ids,
                  const int32_t* type_ids, int32_t n, float* out) {
  EINFER_TRY(bert_forward(w, s, ids, type_ids, n));
  return bert_pool(w.encoder.config, s->x, n, out);
}

}  // namespace einfer
