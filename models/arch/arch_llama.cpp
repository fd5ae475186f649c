// Llama (llama2.c, Hugging Face LlamaForCausalLM, llama.cpp GGUF "llama"): RMSNorm, SwiGLU
// feed-forward, RoPE (interleaved pairs once imported), no biases, optionally tied classifier.
#include "models/arch/arch.h"

namespace einfer {

namespace {

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
};

constexpr ArchDefault kReq = ArchDefault::required;
constexpr ArchDefault kConst = ArchDefault::constant;
constexpr ArchConfigKey kConfigKeys[] = {
    {ArchField::dim, "hidden_size", "llama.embedding_length", kReq, 0, kReq, 0},
    {ArchField::hidden_dim, "intermediate_size", "llama.feed_forward_length", kReq, 0, kReq, 0},
    {ArchField::n_layers, "num_hidden_layers", "llama.block_count", kReq, 0, kReq, 0},
    {ArchField::n_heads, "num_attention_heads", "llama.attention.head_count", kReq, 0, kReq, 0},
    {ArchField::n_kv_heads, "num_key_value_heads", "llama.attention.head_count_kv",
     ArchDefault::same_as_heads, 0, ArchDefault::same_as_heads, 0},
    {ArchField::head_dim, "head_dim", "llama.rope.dimension_count", ArchDefault::dim_over_heads, 0,
     ArchDefault::dim_over_heads, 0},
    {ArchField::context_length, "max_position_embeddings", "llama.context_length", kConst, 2048,
     kReq, 0},
    {ArchField::norm_eps, "rms_norm_eps", "llama.attention.layer_norm_rms_epsilon", kConst, 1e-6,
     kConst, 1e-5},
    {ArchField::rope_theta, "rope_theta", "llama.rope.freq_base", kConst, 10000.0, kConst, 10000.0},
    // GGUF "llama.vocab_size" falls back to the rows of token_embd.weight, which the importer
    // reads from the tensor table.
    {ArchField::vocab_size, "vocab_size", nullptr, kReq, 0, kReq, 0},
};

// llama2.c v1/v2 (export.py): norms first, then the embedding, then these, then the classifier.
constexpr TensorRole kLlama2cMatrices[] = {TensorRole::wq, TensorRole::wk, TensorRole::wv,
                                           TensorRole::wo, TensorRole::w1, TensorRole::w2,
                                           TensorRole::w3};

constexpr ArchDescription kLlama = {
    ArchKind::llama,
    "llama",
    NormKind::rmsnorm,
    Activation::swiglu,
    RopeMode::interleaved,
    kTensors,
    sizeof kTensors / sizeof kTensors[0],
    kConfigKeys,
    sizeof kConfigKeys / sizeof kConfigKeys[0],
    kLlama2cMatrices,
    sizeof kLlama2cMatrices / sizeof kLlama2cMatrices[0],
};

}  // namespace

const ArchDescription& arch_llama() {
  return kLlama;
}

}  // namespace einfer
