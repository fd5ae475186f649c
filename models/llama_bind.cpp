// Llama-family weight binding (see models/llama.h): every tensor the forward pass reads, checked
// against the config's shapes once, so the forward pass can index without checks.
#include "models/llama.h"

namespace einfer {

namespace {

Status bind(const Model& model, TensorRole role, int32_t layer, int64_t d0, int64_t d1,
            TensorView* out) {
  return model_tensor_shaped(model, role, layer, d0, d1,
                             "llama: tensor shape disagrees with the config", out);
}

}  // namespace

Status llama_bind_weights(const Model& model, Arena& arena, LlamaWeights* w) {
  const ModelConfig& c = model.config;
  EINFER_TRY(llama_check_config(c));
  w->config = c;
  const int64_t d = c.dim, f = c.hidden_dim, V = c.vocab_size;
  const int64_t qd = static_cast<int64_t>(c.n_heads) * c.head_dim;
  const int64_t kv = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;
  EINFER_TRY(bind(model, TensorRole::token_embedding, -1, V, d, &w->token_embedding));
  EINFER_TRY(bind(model, TensorRole::final_norm, -1, d, -1, &w->final_norm));
  if (c.tied_classifier) {
    w->classifier = w->token_embedding;
  } else {
    EINFER_TRY(bind(model, TensorRole::classifier, -1, V, d, &w->classifier));
  }
  if (c.rope_freq_factors) {
    EINFER_TRY(
        bind(model, TensorRole::rope_freq_factors, -1, c.head_dim / 2, -1, &w->rope_freq_factors));
    if (w->rope_freq_factors.dtype != DType::f32)
      return make_status(StatusCode::bad_format, "llama: rope_freq_factors must be f32");
  }
  if (c.rope_scaling == RopeScaling::longrope) {
    TensorView v;
    EINFER_TRY(bind(model, TensorRole::rope_freq_factors_long, -1, c.head_dim / 2, -1, &v));
    if (v.dtype != DType::f32)
      return make_status(StatusCode::bad_format, "llama: rope_freq_factors_long must be f32");
    w->rope_freq_factors_long = v.f32();
  }
  (void)arena;
  w->model = &model;
  for (int32_t l = 0; l < c.n_layers; ++l) {
    TensorView v;
    EINFER_TRY(bind(model, TensorRole::attn_norm, l, d, -1, &v));
    EINFER_TRY(bind(model, TensorRole::wq, l, qd, d, &v));
    EINFER_TRY(bind(model, TensorRole::wk, l, kv, d, &v));
    EINFER_TRY(bind(model, TensorRole::wv, l, kv, d, &v));
    EINFER_TRY(bind(model, TensorRole::wo, l, d, qd, &v));
    EINFER_TRY(bind(model, TensorRole::ffn_norm, l, d, -1, &v));
    EINFER_TRY(bind(model, TensorRole::w1, l, f, d, &v));
    EINFER_TRY(bind(model, TensorRole::w2, l, d, f, &v));
    EINFER_TRY(bind(model, TensorRole::w3, l, f, d, &v));
    if (c.qkv_bias) {
      EINFER_TRY(bind(model, TensorRole::bq, l, qd, -1, &v));
      EINFER_TRY(bind(model, TensorRole::bk, l, kv, -1, &v));
      EINFER_TRY(bind(model, TensorRole::bv, l, kv, -1, &v));
    }
    if (c.qk_norm) {
      EINFER_TRY(bind(model, TensorRole::q_norm, l, c.head_dim, -1, &v));
      EINFER_TRY(bind(model, TensorRole::k_norm, l, c.head_dim, -1, &v));
    }
    if (c.post_norms) {
      EINFER_TRY(bind(model, TensorRole::attn_post_norm, l, d, -1, &v));
      EINFER_TRY(bind(model, TensorRole::ffn_post_norm, l, d, -1, &v));
    }
  }
  return ok_status();
}

}  // namespace einfer
