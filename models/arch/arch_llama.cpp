// The llama family: Llama (llama2.c, Hugging Face LlamaForCausalLM incl. SmolLM and TinyLlama,
// llama.cpp GGUF "llama"), Mistral (llama + a trained sliding window) and Qwen2 (llama + q/k/v
// biases, GGUF "qwen2"). RMSNorm, SwiGLU feed-forward, RoPE (interleaved pairs once imported, or
// half-split for GGUF qwen2), optionally tied classifier. Defaults are those of transformers'
// LlamaConfig, MistralConfig and Qwen2Config and of llama.cpp's GGUF loader.
#include <cstring>

#include "models/arch/arch.h"

namespace einfer {

namespace {

// One table for the whole family: a role the config does not store (bq/bk/bv without qkv_bias)
// is skipped by the importers.
constexpr ArchTensorNames kTensors[] = {
    {TensorRole::token_embedding, "model.embed_tokens.weight", "token_embd.weight", nullptr, 0, 1,
     0},
    {TensorRole::attn_norm, "model.layers.{}.input_layernorm.weight", "blk.{}.attn_norm.weight",
     nullptr, 0, 1, 0},
    {TensorRole::wq, "model.layers.{}.self_attn.q_proj.weight", "blk.{}.attn_q.weight", nullptr, 0,
     1, 1},
    {TensorRole::wk, "model.layers.{}.self_attn.k_proj.weight", "blk.{}.attn_k.weight", nullptr, 0,
     1, 2},
    {TensorRole::wv, "model.layers.{}.self_attn.v_proj.weight", "blk.{}.attn_v.weight", nullptr, 0,
     1, 0},
    {TensorRole::wo, "model.layers.{}.self_attn.o_proj.weight", "blk.{}.attn_output.weight",
     nullptr, 0, 1, 0},
    {TensorRole::bq, "model.layers.{}.self_attn.q_proj.bias", "blk.{}.attn_q.bias", nullptr, 0, 1,
     1},
    {TensorRole::bk, "model.layers.{}.self_attn.k_proj.bias", "blk.{}.attn_k.bias", nullptr, 0, 1,
     2},
    {TensorRole::bv, "model.layers.{}.self_attn.v_proj.bias", "blk.{}.attn_v.bias", nullptr, 0, 1,
     0},
    {TensorRole::ffn_norm, "model.layers.{}.post_attention_layernorm.weight",
     "blk.{}.ffn_norm.weight", nullptr, 0, 1, 0},
    {TensorRole::w1, "model.layers.{}.mlp.gate_proj.weight", "blk.{}.ffn_gate.weight", nullptr, 0,
     1, 0},
    {TensorRole::w2, "model.layers.{}.mlp.down_proj.weight", "blk.{}.ffn_down.weight", nullptr, 0,
     1, 0},
    {TensorRole::w3, "model.layers.{}.mlp.up_proj.weight", "blk.{}.ffn_up.weight", nullptr, 0, 1,
     0},
    {TensorRole::final_norm, "model.norm.weight", "output_norm.weight", nullptr, 0, 1, 0},
    {TensorRole::classifier, "lm_head.weight", "output.weight", nullptr, 0, 1, 0},
    // llama.cpp convert_hf_to_gguf.py LlamaModel.generate_extra_tensors: llama3 rope_scaling as
    // one divisor per rotary pair (read only when the GGUF has it; HF folders keep rope_scaling).
    {TensorRole::rope_freq_factors, nullptr, "rope_freqs.weight", nullptr, 0, 1, 0},
};

constexpr ArchConfigKey kConfigKeys[] = {
    EINFER_ARCH_SIZE_KEYS,
    {ArchField::n_kv_heads, "num_key_value_heads", "{}.attention.head_count_kv",
     ArchDefault::same_as_heads, 0, ArchDefault::same_as_heads, 0},
    // llama.cpp: n_embd_head_k = attention.key_length, default n_embd / n_head; its RoPE
    // dimension_count must then equal it (the importer checks: no partial rotary).
    {ArchField::head_dim, "head_dim", "{}.attention.key_length", ArchDefault::dim_over_heads, 0,
     ArchDefault::dim_over_heads, 0},
    {ArchField::norm_eps, "rms_norm_eps", "{}.attention.layer_norm_rms_epsilon", kConst, 1e-6,
     kConst, 1e-5},
    {ArchField::rope_theta, "rope_theta", "{}.rope.freq_base", kConst, 10000.0, kConst, 10000.0},
    // Read only when rope_scaling names a type (the importer checks each type's required keys).
    {ArchField::rope_factor, "rope_scaling.factor", "{}.rope.scaling.factor", kConst, 0, kConst, 0},
    {ArchField::rope_low_freq_factor, "rope_scaling.low_freq_factor", nullptr, kConst, 0, kConst,
     0},
    {ArchField::rope_high_freq_factor, "rope_scaling.high_freq_factor", nullptr, kConst, 0, kConst,
     0},
    {ArchField::rope_original_context, "rope_scaling.original_max_position_embeddings",
     "{}.rope.scaling.original_context_length", kConst, 0, kConst, 0},
    // GGUF "{}.vocab_size" falls back to the rows of token_embd.weight, which the importer
    // reads from the tensor table.
    {ArchField::vocab_size, "vocab_size", nullptr, kReq, 0, kReq, 0},
};

// Per architecture: the trained context's default and the sliding window.
constexpr ArchConfigKey kLlamaKeys[] = {
    {ArchField::context_length, "max_position_embeddings", "{}.context_length", kConst, 2048, kReq,
     0},
    {ArchField::sliding_window, nullptr, "{}.attention.sliding_window", kConst, 0, kConst, 0},
};
// MistralConfig: max_position_embeddings 4096 * 32, sliding_window 4096 (null: none).
constexpr ArchConfigKey kMistralKeys[] = {
    {ArchField::context_length, "max_position_embeddings", nullptr, kConst, 131072, kReq, 0},
    {ArchField::sliding_window, "sliding_window", nullptr, kConst, 4096, kConst, 0},
};
// Qwen2Config: max_position_embeddings 32768; sliding_window 4096 (null: none), which applies
// only with use_sliding_window and only to the layers layer_types / max_window_layers name (the
// description's hf_window_* fields). llama.cpp's qwen2 reads no window (refused below if a GGUF
// has one).
constexpr ArchConfigKey kQwen2Keys[] = {
    {ArchField::context_length, "max_position_embeddings", "{}.context_length", kConst, 32768, kReq,
     0},
    {ArchField::sliding_window, "sliding_window", nullptr, kConst, 4096, kConst, 0},
};

// llama2.c v1/v2 (export.py): norms first, then the embedding, then these, then the classifier.
constexpr TensorRole kLlama2cMatrices[] = {TensorRole::wq, TensorRole::wk, TensorRole::wv,
                                           TensorRole::wo, TensorRole::w1, TensorRole::w2,
                                           TensorRole::w3};

// Biases on o_proj/MLP (LlamaConfig attention_bias, mlp_bias) are not in einfer's llama pass.
constexpr const char* kLlamaRefused[] = {"attention_bias", "mlp_bias", nullptr};
// llama.cpp (llama-model.cpp, LLM_ARCH_QWEN2) reads no sliding window for qwen2 and its converter
// writes none; a qwen2 GGUF that has one does not say which layers slide.
constexpr const char* kQwen2GgufRefused[] = {
    "{}.attention.sliding_window",
    "llama.cpp runs qwen2 without a window and GGUF does not say which layers slide "
    "(pack the Hugging Face folder: use_sliding_window / max_window_layers)",
    nullptr};

constexpr size_t kTensorCount = sizeof kTensors / sizeof kTensors[0];
constexpr size_t kKeyCount = sizeof kConfigKeys / sizeof kConfigKeys[0];

constexpr ArchDescription kLlama = {
    ArchKind::llama,
    "llama",
    NormKind::rmsnorm,
    Activation::swiglu,
    RopeMode::interleaved,
    kTensors,
    kTensorCount,
    kConfigKeys,
    kKeyCount,
    kLlama2cMatrices,
    sizeof kLlama2cMatrices / sizeof kLlama2cMatrices[0],
    kLlamaKeys,
    2,
    "llama",
    "llama",
    RopeMode::interleaved,
    0,
    kLlamaRefused,
    nullptr,
    nullptr,
    nullptr,
    0,
    nullptr,
    ArchFamily::llama,
};

constexpr ArchDescription kMistral = {
    ArchKind::llama,
    "mistral",
    NormKind::rmsnorm,
    Activation::swiglu,
    RopeMode::interleaved,
    kTensors,
    kTensorCount,
    kConfigKeys,
    kKeyCount,
    nullptr,
    0,
    kMistralKeys,
    2,
    "mistral",
    nullptr,
    RopeMode::interleaved,
    0,
    kLlamaRefused,
    nullptr,
    nullptr,
    nullptr,
    0,
    nullptr,
    ArchFamily::mistral,
};

constexpr ArchDescription kQwen2 = {
    ArchKind::llama,
    "qwen2",
    NormKind::rmsnorm,
    Activation::swiglu,
    RopeMode::interleaved,
    kTensors,
    kTensorCount,
    kConfigKeys,
    kKeyCount,
    nullptr,
    0,
    kQwen2Keys,
    2,
    "qwen2",
    "qwen2",
    RopeMode::half_split,
    1,
    nullptr,
    "use_sliding_window",
    "layer_types",
    "max_window_layers",
    28,
    kQwen2GgufRefused,
    ArchFamily::qwen2,
};

bool same(const char* a, const char* b) {
  return a != nullptr && b != nullptr && std::strcmp(a, b) == 0;
}

}  // namespace

const ArchDescription& arch_llama() {
  return kLlama;
}
const ArchDescription& arch_mistral() {
  return kMistral;
}
const ArchDescription& arch_qwen2() {
  return kQwen2;
}

const ArchDescription* arch_by_hf_model_type(const char* name) {
  for (const ArchDescription* a : {&kLlama, &kMistral, &kQwen2})
    if (same(a->hf_model_type, name)) return a;
  return arch_family_by_hf_model_type(name);
}

const ArchDescription* arch_by_gguf_arch(const char* name) {
  for (const ArchDescription* a : {&kLlama, &kMistral, &kQwen2})
    if (same(a->gguf_arch, name)) return a;
  return arch_family_by_gguf_arch(name);
}

bool arch_rope_scaling_from_name(const char* name, RopeScaling* kind) {
  if (same(name, "none") || same(name, "default")) {
    *kind = RopeScaling::none;
  } else if (same(name, "linear")) {
    *kind = RopeScaling::linear;
  } else if (same(name, "llama3")) {
    *kind = RopeScaling::llama3;
  } else if (same(name, "longrope") || same(name, "su")) {
    *kind = RopeScaling::longrope;
  } else {
    return false;
  }
  return true;
}

}  // namespace einfer
