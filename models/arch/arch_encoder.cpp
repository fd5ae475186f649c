// The PyTorch encoder (nn.TransformerEncoder / nn.TransformerEncoderLayer state dicts): LayerNorm
// with biases, ReLU or GELU feed-forward, no RoPE, biases on every projection when the source has
// them, post-norm or pre-norm, an optional final norm. Its configuration is read from the tensor
// shapes and the safetensors metadata (tools/einfer-pack/import_safetensors.cpp), not from keys.
#include <cmath>
#include <cstring>
#include <limits>

#include "models/arch/arch.h"

namespace einfer {

namespace {

constexpr ArchTensorNames kTensors[] = {
    {TensorRole::attn_norm, nullptr, nullptr, "norm1.weight", 0, 1, 0},
    {TensorRole::attn_norm_bias, nullptr, nullptr, "norm1.bias", 0, 1, 0},
    {TensorRole::wq, nullptr, nullptr, "self_attn.in_proj_weight", 0, 3, 0},
    {TensorRole::wk, nullptr, nullptr, "self_attn.in_proj_weight", 1, 3, 0},
    {TensorRole::wv, nullptr, nullptr, "self_attn.in_proj_weight", 2, 3, 0},
    {TensorRole::wo, nullptr, nullptr, "self_attn.out_proj.weight", 0, 1, 0},
    {TensorRole::bq, nullptr, nullptr, "self_attn.in_proj_bias", 0, 3, 0},
    {TensorRole::bk, nullptr, nullptr, "self_attn.in_proj_bias", 1, 3, 0},
    {TensorRole::bv, nullptr, nullptr, "self_attn.in_proj_bias", 2, 3, 0},
    {TensorRole::bo, nullptr, nullptr, "self_attn.out_proj.bias", 0, 1, 0},
    {TensorRole::ffn_norm, nullptr, nullptr, "norm2.weight", 0, 1, 0},
    {TensorRole::ffn_norm_bias, nullptr, nullptr, "norm2.bias", 0, 1, 0},
    {TensorRole::w1, nullptr, nullptr, "linear1.weight", 0, 1, 0},
    {TensorRole::w2, nullptr, nullptr, "linear2.weight", 0, 1, 0},
    {TensorRole::b1, nullptr, nullptr, "linear1.bias", 0, 1, 0},
    {TensorRole::b2, nullptr, nullptr, "linear2.bias", 0, 1, 0},
    // After the stack (nn.TransformerEncoder(norm=...)): named relative to the stack's prefix.
    {TensorRole::final_norm, nullptr, nullptr, "norm.weight", 0, 1, 0},
    {TensorRole::final_norm_bias, nullptr, nullptr, "norm.bias", 0, 1, 0},
};

constexpr ArchDescription kEncoder = {
    ArchKind::encoder,
    "encoder",
    NormKind::layernorm,
    Activation::relu,  // the default; gelu from the metadata or --activation
    RopeMode::none,
    kTensors,
    sizeof kTensors / sizeof kTensors[0],
    nullptr,
    0,
    nullptr,
    0,
    nullptr,
    0,
    nullptr,
    nullptr,
    RopeMode::none,
    0,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    0,
    nullptr,
};

}  // namespace

const ArchDescription& arch_encoder() {
  return kEncoder;
}

const ArchDescription* arch_description(ArchKind kind) {
  switch (kind) {
    case ArchKind::llama:
      return &arch_llama();
    case ArchKind::encoder:
      return &arch_encoder();
    case ArchKind::transformer:
      return &arch_transformer();
    case ArchKind::bert:
      return &arch_bert();
  }
  return nullptr;
}

const ArchDescription* arch_any_by_gguf_arch(const char* name) {
  if (const ArchDescription* a = arch_by_gguf_arch(name)) return a;
  const ArchDescription& bert = arch_bert();
  return name != nullptr && std::strcmp(name, bert.gguf_arch) == 0 ? &bert : nullptr;
}

void arch_set_field(ModelConfig* c, ArchField field, double v) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  // Range first: casting an out-of-range (or NaN) double is undefined. -1 fails config validation.
  const int32_t i = v >= -2147483648.0 && v <= 2147483647.0 ? static_cast<int32_t>(v) : -1;
  // The same for float fields: beyond float's range becomes an infinity, refused by validation.
  const float f =
      v >= -3.4e38 && v <= 3.4e38 ? static_cast<float>(v) : (v < 0 ? -kInfinity : kInfinity);
  switch (field) {
    case ArchField::dim:
      c->dim = i;
      break;
    case ArchField::hidden_dim:
      c->hidden_dim = i;
      break;
    case ArchField::n_layers:
      c->n_layers = i;
      break;
    case ArchField::n_heads:
      c->n_heads = i;
      break;
    case ArchField::n_kv_heads:
      c->n_kv_heads = i;
      break;
    case ArchField::head_dim:
      c->head_dim = i;
      break;
    case ArchField::vocab_size:
      c->vocab_size = i;
      break;
    case ArchField::context_length:
      c->context_length = i;
      break;
    case ArchField::norm_eps:
      c->norm_eps = f;
      break;
    case ArchField::rope_theta:
      c->rope_theta = f;
      break;
    case ArchField::rope_factor:
      c->rope_factor = static_cast<float>(v);
      break;
    case ArchField::rope_low_freq_factor:
      c->rope_low_freq_factor = static_cast<float>(v);
      break;
    case ArchField::rope_high_freq_factor:
      c->rope_high_freq_factor = static_cast<float>(v);
      break;
    case ArchField::rope_original_context:
      c->rope_original_context = i;
      break;
    case ArchField::sliding_window:
      c->sliding_window = i;
      break;
    case ArchField::attn_scalar:  // q^-0.5; 0 and negatives become inf / NaN, refused
      c->attn_scale = static_cast<float>(std::pow(v, -0.5));
      break;
    case ArchField::attn_softcap:
      c->attn_softcap = f;
      break;
    case ArchField::final_softcap:
      c->final_softcap = f;
      break;
    case ArchField::rope_local_theta:
      c->rope_local_theta = f;
      break;
    case ArchField::rope_attn_factor:
      c->rope_attn_factor = f;
      break;
    case ArchField::type_vocab_size:
      c->type_vocab_size = i;
      break;
  }
}

}  // namespace einfer
