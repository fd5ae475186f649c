// The llama-family decoders of issue 32: Qwen3, Gemma 2, Gemma 3 and Phi-3. Each runs on the llama
// forward pass (models/llama.cpp) with the ModelConfig features its description sets: per-head q/k
// RMSNorm (Qwen3, Gemma 3), GeGLU, sandwich norms, scaled embeddings, a query scale, soft-capping
// and periodic sliding layers (Gemma), a second RoPE base for the sliding layers (Gemma 3), fused
// projections and longrope (Phi-3). Hugging Face q/k rows keep their half-split RoPE layout (no
// permutation: the half-split rotation is the SIMD one), as llama.cpp's NeoX-style GGUFs of these
// architectures do. Defaults are those of transformers' Qwen3Config, Gemma2Config,
// Gemma3TextConfig and Phi3Config and of llama.cpp's GGUF loader (llama-model.cpp).
#include <algorithm>
#include <array>
#include <cstring>

#include "models/arch/arch.h"

namespace einfer {

namespace {

#define EINFER_HF_LAYER "model.layers.{}."

// One role's names in Hugging Face folders and GGUF files (no PyTorch state dict form, no RoPE
// row permutation: these families keep the half-split rows); a fused source's part `part` of
// `parts`.
constexpr ArchTensorNames names(TensorRole role, const char* hf, const char* gguf, int8_t part = 0,
                                int8_t parts = 0) {
  return {role, hf, gguf, nullptr, 0, 1, 0, part, parts};
}

// The rows every family names alike (Llama's names, llama.cpp's blk.N.*).
#define EINFER_EMBEDDING_ROWS                                                           \
  names(TensorRole::token_embedding, "model.embed_tokens.weight", "token_embd.weight"), \
      names(TensorRole::attn_norm, EINFER_HF_LAYER "input_layernorm.weight",            \
            "blk.{}.attn_norm.weight")
#define EINFER_QKV_ROWS                                                                         \
  names(TensorRole::wq, EINFER_HF_LAYER "self_attn.q_proj.weight", "blk.{}.attn_q.weight"),     \
      names(TensorRole::wk, EINFER_HF_LAYER "self_attn.k_proj.weight", "blk.{}.attn_k.weight"), \
      names(TensorRole::wv, EINFER_HF_LAYER "self_attn.v_proj.weight", "blk.{}.attn_v.weight")
#define EINFER_WO_ROW \
  names(TensorRole::wo, EINFER_HF_LAYER "self_attn.o_proj.weight", "blk.{}.attn_output.weight")
// The token embedding, the attention's input norm and its four projections.
#define EINFER_ATTENTION_ROWS EINFER_EMBEDDING_ROWS, EINFER_QKV_ROWS, EINFER_WO_ROW
#define EINFER_GATED_MLP_ROWS                                                                  \
  names(TensorRole::w1, EINFER_HF_LAYER "mlp.gate_proj.weight", "blk.{}.ffn_gate.weight"),     \
      names(TensorRole::w2, EINFER_HF_LAYER "mlp.down_proj.weight", "blk.{}.ffn_down.weight"), \
      names(TensorRole::w3, EINFER_HF_LAYER "mlp.up_proj.weight", "blk.{}.ffn_up.weight")
#define EINFER_QK_NORM_ROWS                                                \
  names(TensorRole::q_norm, EINFER_HF_LAYER "self_attn.q_norm.weight",     \
        "blk.{}.attn_q_norm.weight"),                                      \
      names(TensorRole::k_norm, EINFER_HF_LAYER "self_attn.k_norm.weight", \
            "blk.{}.attn_k_norm.weight")
#define EINFER_OUTPUT_ROWS                                                  \
  names(TensorRole::final_norm, "model.norm.weight", "output_norm.weight"), \
      names(TensorRole::classifier, "lm_head.weight", "output.weight")

// Qwen3 (modeling_qwen3.py): Qwen2's names without biases, plus q_norm / k_norm; GGUF "qwen3"
// (attn_q_norm / attn_k_norm).
constexpr ArchTensorNames kQwen3Tensors[] = {
    EINFER_ATTENTION_ROWS,
    names(TensorRole::ffn_norm, EINFER_HF_LAYER "post_attention_layernorm.weight",
          "blk.{}.ffn_norm.weight"),
    EINFER_GATED_MLP_ROWS,
    EINFER_QK_NORM_ROWS,
    EINFER_OUTPUT_ROWS,
};

// Gemma 2 and 3 (modeling_gemma2.py, modeling_gemma3.py): four norms per layer. Hugging Face's
// post_attention_layernorm is the attention output's norm (attn_post_norm), not the feed-forward
// input's as in Llama; llama.cpp names them post_attention_norm and post_ffw_norm. Gemma 3 adds
// q_norm / k_norm. The classifier is the embedding (tie_word_embeddings; llama.cpp always ties).
constexpr ArchTensorNames kGemmaTensors[] = {
    EINFER_ATTENTION_ROWS,
    names(TensorRole::attn_post_norm, EINFER_HF_LAYER "post_attention_layernorm.weight",
          "blk.{}.post_attention_norm.weight"),
    names(TensorRole::ffn_norm, EINFER_HF_LAYER "pre_feedforward_layernorm.weight",
          "blk.{}.ffn_norm.weight"),
    EINFER_GATED_MLP_ROWS,
    names(TensorRole::ffn_post_norm, EINFER_HF_LAYER "post_feedforward_layernorm.weight",
          "blk.{}.post_ffw_norm.weight"),
    EINFER_QK_NORM_ROWS,
    EINFER_OUTPUT_ROWS,
};

// Phi-3 (modeling_phi3.py): qkv_proj = [q; k; v] and gate_up_proj = [gate; up] (chunk(2): gate
// first), split at pack time; llama.cpp: attn_qkv and ffn_up the same way, and the longrope
// divisors as two global tensors (rope_factors_short / _long; Hugging Face keeps them in
// config.json rope_scaling).
constexpr ArchTensorNames kPhi3Tensors[] = {
    EINFER_EMBEDDING_ROWS,
    names(TensorRole::wq, EINFER_HF_LAYER "self_attn.qkv_proj.weight", "blk.{}.attn_qkv.weight", 0,
          3),
    names(TensorRole::wk, EINFER_HF_LAYER "self_attn.qkv_proj.weight", "blk.{}.attn_qkv.weight", 1,
          3),
    names(TensorRole::wv, EINFER_HF_LAYER "self_attn.qkv_proj.weight", "blk.{}.attn_qkv.weight", 2,
          3),
    EINFER_WO_ROW,
    names(TensorRole::ffn_norm, EINFER_HF_LAYER "post_attention_layernorm.weight",
          "blk.{}.ffn_norm.weight"),
    names(TensorRole::w1, EINFER_HF_LAYER "mlp.gate_up_proj.weight", "blk.{}.ffn_up.weight", 0, 2),
    names(TensorRole::w2, EINFER_HF_LAYER "mlp.down_proj.weight", "blk.{}.ffn_down.weight"),
    names(TensorRole::w3, EINFER_HF_LAYER "mlp.gate_up_proj.weight", "blk.{}.ffn_up.weight", 1, 2),
    EINFER_OUTPUT_ROWS,
    names(TensorRole::rope_freq_factors, nullptr, "rope_factors_short.weight"),
    names(TensorRole::rope_freq_factors_long, nullptr, "rope_factors_long.weight"),
};

#undef EINFER_EMBEDDING_ROWS
#undef EINFER_QKV_ROWS
#undef EINFER_WO_ROW
#undef EINFER_GATED_MLP_ROWS
#undef EINFER_QK_NORM_ROWS
#undef EINFER_OUTPUT_ROWS
#undef EINFER_HF_LAYER

constexpr ArchDefault kHeads = ArchDefault::same_as_heads;
constexpr ArchDefault kDimOverHeads = ArchDefault::dim_over_heads;

// The keys every family reads alike (the rope_scaling parameters as in arch_llama.cpp: read only
// when rope_scaling names a type).
// Tables joined at compile time (the families share rows; a description keeps a pointer and a
// count).
template <typename T, size_t... N>
constexpr std::array<T, (N + ...)> join(const std::array<T, N>&... parts) {
  std::array<T, (N + ...)> out{};
  size_t i = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + i), i += N), ...);
  return out;
}

// The keys every family reads alike (the rope_scaling parameters as in arch_llama.cpp: read only
// when rope_scaling names a type).
constexpr std::array<ArchConfigKey, 8> kCommonKeys = {{
    EINFER_ARCH_SIZE_KEYS,
    {ArchField::rope_factor, "rope_scaling.factor", "{}.rope.scaling.factor", kConst, 0, kConst, 0},
    {ArchField::rope_low_freq_factor, "rope_scaling.low_freq_factor", nullptr, kConst, 0, kConst,
     0},
    {ArchField::rope_high_freq_factor, "rope_scaling.high_freq_factor", nullptr, kConst, 0, kConst,
     0},
    {ArchField::vocab_size, "vocab_size", nullptr, kReq, 0, kReq, 0},
}};

// Qwen3Config: head_dim 128, rms_norm_eps 1e-6, rope_theta 10000, max_position_embeddings 32768,
// sliding_window 4096 (applied as Qwen2's: use_sliding_window, max_window_layers 28 / layer_types).
// llama.cpp (qwen3): the rms epsilon and context are required, key_length defaults to
// n_embd/n_head.
constexpr auto kQwen3Keys = join(
    kCommonKeys,
    std::array<ArchConfigKey, 7>{{
        {ArchField::n_kv_heads, "num_key_value_heads", "{}.attention.head_count_kv", kHeads, 0,
         kHeads, 0},
        {ArchField::head_dim, "head_dim", "{}.attention.key_length", kConst, 128, kDimOverHeads, 0},
        {ArchField::norm_eps, "rms_norm_eps", "{}.attention.layer_norm_rms_epsilon", kConst, 1e-6,
         kReq, 0},
        {ArchField::rope_theta, "rope_theta", "{}.rope.freq_base", kConst, 10000.0, kConst,
         10000.0},
        {ArchField::rope_original_context, "rope_scaling.original_max_position_embeddings",
         "{}.rope.scaling.original_context_length", kConst, 0, kConst, 0},
        {ArchField::context_length, "max_position_embeddings", "{}.context_length", kConst, 32768,
         kReq, 0},
        {ArchField::sliding_window, "sliding_window", nullptr, kConst, 4096, kConst, 0},
    }});

// Gemma 2 and 3 alike (Gemma2Config, Gemma3TextConfig): 4 kv heads, head_dim 256, rms 1e-6,
// query_pre_attn_scalar 256 (GGUF: the description's attention scale rule).
constexpr std::array<ArchConfigKey, 5> kGemmaKeys = {{
    {ArchField::n_kv_heads, "num_key_value_heads", "{}.attention.head_count_kv", kConst, 4, kHeads,
     0},
    {ArchField::head_dim, "head_dim", "{}.attention.key_length", kConst, 256, kDimOverHeads, 0},
    {ArchField::norm_eps, "rms_norm_eps", "{}.attention.layer_norm_rms_epsilon", kConst, 1e-6, kReq,
     0},
    {ArchField::rope_original_context, "rope_scaling.original_max_position_embeddings", nullptr,
     kConst, 0, kConst, 0},
    {ArchField::attn_scalar, "query_pre_attn_scalar", nullptr, kConst, 256, kConst, 0},
}};

// Gemma2Config: theta 10000, context 8192, window 4096, soft-capping 50 (attention) and 30
// (logits). llama.cpp (gemma2): window 4096 and soft-capping 50 / 30 unless the keys say
// otherwise.
constexpr auto kGemma2Keys = join(kCommonKeys, kGemmaKeys,
                                  std::array<ArchConfigKey, 5>{{
                                      {ArchField::rope_theta, "rope_theta", "{}.rope.freq_base",
                                       kConst, 10000.0, kConst, 10000.0},
                                      {ArchField::context_length, "max_position_embeddings",
                                       "{}.context_length", kConst, 8192, kReq, 0},
                                      {ArchField::sliding_window, "sliding_window",
                                       "{}.attention.sliding_window", kConst, 4096, kConst, 4096},
                                      {ArchField::attn_softcap, "attn_logit_softcapping",
                                       "{}.attn_logit_softcapping", kConst, 50.0, kConst, 50.0},
                                      {ArchField::final_softcap, "final_logit_softcapping",
                                       "{}.final_logit_softcapping", kConst, 30.0, kConst, 30.0},
                                  }});

// Gemma3TextConfig: theta 1e6, context 131072, no soft-capping, and the sliding layers' RoPE base
// rope_local_base_freq 10000 (rope_scaling applies to the full layers only). llama.cpp (gemma3):
// window required, local base 10000, no soft-capping keys.
constexpr auto kGemma3Keys = join(
    kCommonKeys, kGemmaKeys,
    std::array<ArchConfigKey, 6>{{
        {ArchField::rope_theta, "rope_theta", "{}.rope.freq_base", kConst, 1e6, kConst, 10000.0},
        {ArchField::context_length, "max_position_embeddings", "{}.context_length", kConst, 131072,
         kReq, 0},
        {ArchField::sliding_window, "sliding_window", "{}.attention.sliding_window", kConst, 4096,
         kReq, 0},
        {ArchField::attn_softcap, "attn_logit_softcapping", nullptr, kConst, 0, kConst, 0},
        {ArchField::final_softcap, "final_logit_softcapping", nullptr, kConst, 0, kConst, 0},
        {ArchField::rope_local_theta, "rope_local_base_freq", nullptr, kConst, 10000.0, kConst,
         10000.0},
    }});

// Phi3Config: kv heads = heads, head_dim hidden/heads, rms 1e-5, theta 10000, context 4096,
// original_max_position_embeddings 4096, no window. llama.cpp (phi3): the original context is
// rope.scaling.original_context_length (default the context), the longrope cos/sin factor
// rope.scaling.attn_factor (default 1); the window's defaults are the importer's
// (tools/einfer-pack/import_families.cpp).
constexpr auto kPhi3Keys = join(
    kCommonKeys,
    std::array<ArchConfigKey, 8>{{
        {ArchField::n_kv_heads, "num_key_value_heads", "{}.attention.head_count_kv", kHeads, 0,
         kHeads, 0},
        {ArchField::head_dim, "head_dim", "{}.attention.key_length", kDimOverHeads, 0,
         kDimOverHeads, 0},
        {ArchField::norm_eps, "rms_norm_eps", "{}.attention.layer_norm_rms_epsilon", kConst, 1e-5,
         kReq, 0},
        {ArchField::rope_theta, "rope_theta", "{}.rope.freq_base", kConst, 10000.0, kConst,
         10000.0},
        {ArchField::context_length, "max_position_embeddings", "{}.context_length", kConst, 4096,
         kReq, 0},
        {ArchField::rope_original_context, "original_max_position_embeddings",
         "{}.rope.scaling.original_context_length", kConst, 4096, ArchDefault::same_as_context, 0},
        {ArchField::rope_attn_factor, "rope_scaling.attention_factor",
         "{}.rope.scaling.attn_factor", kConst, 0, kConst, 1.0},
        {ArchField::sliding_window, "sliding_window", "{}.attention.sliding_window", kConst, 0,
         kConst, 0},
    }});

// config.json options einfer does not run (biases on the projections, Gemma 3's bidirectional
// attention of EmbeddingGemma), refused by name.
constexpr const char* kBiasRefused[] = {"attention_bias", "mlp_bias", nullptr};
constexpr const char* kGemma3Refused[] = {"attention_bias", "use_bidirectional_attention", nullptr};
// llama.cpp's qwen3 reads no window (and GGUF does not say which layers slide), as qwen2.
constexpr const char* kQwen3GgufRefused[] = {
    "{}.attention.sliding_window",
    "llama.cpp runs qwen3 without a window and GGUF does not say which layers slide "
    "(pack the Hugging Face folder: use_sliding_window / max_window_layers)",
    nullptr};
// llama.cpp's gemma3 has no soft-capping.
constexpr const char* kGemma3GgufRefused[] = {
    "{}.attn_logit_softcapping", "llama.cpp's gemma3 applies no attention soft-capping",
    "{}.final_logit_softcapping", "llama.cpp's gemma3 applies no logit soft-capping", nullptr};
// Activations: transformers' ACT2FN names of gelu's tanh approximation (gelu_pytorch_tanh,
// gelu_new: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))), in Gemma's hidden_activation key.
constexpr const char* kGemmaActivationKeys[] = {"hidden_activation", "hidden_act", nullptr};
constexpr const char* kGeluTanh[] = {"gelu_pytorch_tanh", "gelu_new", nullptr};

// What every family here shares: a llama decoder, RMSNorm, SwiGLU, half-split RoPE in both
// formats, its tables and names; the family functions below set the rest.
template <size_t T, size_t K>
constexpr ArchDescription family(const char* name, const char* hf_model_type, const char* gguf_arch,
                                 const ArchTensorNames (&tensors)[T],
                                 const std::array<ArchConfigKey, K>& keys, ArchFamily id) {
  ArchDescription d{};
  d.kind = ArchKind::llama;
  d.name = name;
  d.norm = NormKind::rmsnorm;
  d.activation = Activation::swiglu;
  d.rope = RopeMode::half_split;
  d.tensors = tensors;
  d.tensor_count = T;
  d.config_keys = keys.data();
  d.config_key_count = K;
  d.hf_model_type = hf_model_type;
  d.gguf_arch = gguf_arch;
  d.gguf_rope = RopeMode::half_split;
  d.hf_refused_if_true = kBiasRefused;
  d.family = id;
  return d;
}

constexpr ArchDescription qwen3_description() {
  ArchDescription d =
      family("qwen3", "qwen3", "qwen3", kQwen3Tensors, kQwen3Keys, ArchFamily::qwen3);
  d.qk_norm = 1;
  // Qwen2's per-layer window (Qwen3Config.__post_init__ is Qwen2Config's).
  d.hf_window_switch = "use_sliding_window";
  d.hf_layer_types = "layer_types";
  d.hf_window_first_layer = "max_window_layers";
  d.hf_window_first_layer_default = 28;
  d.gguf_refused_keys = kQwen3GgufRefused;
  return d;
}

// Gemma 2: GeGLU, sandwich norms, sqrt(d) embeddings, 1 + w norms, every other layer sliding.
constexpr ArchDescription gemma2_description() {
  ArchDescription d =
      family("gemma2", "gemma2", "gemma2", kGemmaTensors, kGemma2Keys, ArchFamily::gemma2);
  d.activation = Activation::geglu_tanh;
  d.hf_layer_types = "layer_types";
  d.post_norms = 1;
  d.embed_scale_sqrt_dim = 1;
  d.hf_norm_plus_one = 1;
  d.hf_activation_keys = kGemmaActivationKeys;
  d.hf_activations = kGeluTanh;
  d.window_period = 2;
  d.gguf_scale_by_dim_layers = 46;  // Gemma 2 27B
  d.gguf_attn_scale_rule = 1;
  d.hf_tied_default = 1;
  return d;
}

// Gemma 3: Gemma 2's with its own keys, q/k norm, a 5:1 period and GGUF refusals.
constexpr ArchDescription gemma3_description() {
  ArchDescription d = gemma2_description();
  d.name = "gemma3";
  d.config_keys = kGemma3Keys.data();
  d.config_key_count = kGemma3Keys.size();
  d.hf_model_type = "gemma3_text";
  d.gguf_arch = "gemma3";
  d.hf_refused_if_true = kGemma3Refused;
  d.gguf_refused_keys = kGemma3GgufRefused;
  d.family = ArchFamily::gemma3;
  d.qk_norm = 1;
  d.window_period = 6;
  d.hf_window_period_key = "sliding_window_pattern";
  d.gguf_scale_by_dim_layers = 62;  // Gemma 3 27B
  return d;
}

// Phi-3: fused projections (the tensor table), a window on every layer, longrope.
constexpr ArchDescription phi3_description() {
  ArchDescription d = family("phi3", "phi3", "phi3", kPhi3Tensors, kPhi3Keys, ArchFamily::phi3);
  d.longrope = 1;
  return d;
}

constexpr ArchDescription kQwen3 = qwen3_description();
constexpr ArchDescription kGemma2 = gemma2_description();
constexpr ArchDescription kGemma3 = gemma3_description();
constexpr ArchDescription kPhi3 = phi3_description();

bool same(const char* a, const char* b) {
  return a != nullptr && b != nullptr && std::strcmp(a, b) == 0;
}

constexpr const ArchDescription* kFamilies[] = {&kQwen3, &kGemma2, &kGemma3, &kPhi3};

}  // namespace

const ArchDescription& arch_qwen3() {
  return kQwen3;
}
const ArchDescription& arch_gemma2() {
  return kGemma2;
}
const ArchDescription& arch_gemma3() {
  return kGemma3;
}
const ArchDescription& arch_phi3() {
  return kPhi3;
}

const ArchDescription* arch_family_by_hf_model_type(const char* name) {
  for (const ArchDescription* a : kFamilies)
    if (same(a->hf_model_type, name)) return a;
  return nullptr;
}

const ArchDescription* arch_family_by_gguf_arch(const char* name) {
  for (const ArchDescription* a : kFamilies)
    if (same(a->gguf_arch, name)) return a;
  return nullptr;
}

}  // namespace einfer
