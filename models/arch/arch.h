// One description per architecture: which blocks it is made of and what each of its tensors is
// called in every source format. The importers (tools/einfer-pack/import_*.cpp) read the names,
// the forward passes (models/llama.cpp, models/encoder.cpp, models/bert.cpp) bind the roles listed
// here, and the .ein schema (which roles an architecture stores, their shapes and the config
// rules) lives in runtime/format.h and runtime/loader_*.cpp, below this layer, where the loader
// reads it.
//
// Adding an architecture: a new file here with its table (arch_<name>.cpp), a case in
// arch_description(), its ArchKind and rules in runtime/, its forward pass beside llama.cpp.
// Variants of the llama forward pass (Mistral, Qwen2) are descriptions in arch_llama.cpp that set
// config options (ModelConfig qkv_bias, sliding_window, rope_scaling), not new ArchKinds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/model.h"

namespace einfer {

// Names of one tensor role. Per-layer names hold "{}" where the layer index goes; null means the
// format has no such tensor for this architecture.
struct ArchTensorNames {
  TensorRole role;
  const char* hf;     // Hugging Face safetensors (model.safetensors[.index.json])
  const char* gguf;   // llama.cpp GGUF
  const char* torch;  // PyTorch state dict, after the layer prefix ("layers.N." or "")
  // A PyTorch tensor fused from several roles (in_proj_weight = [wq; wk; wv]): this role is row
  // block torch_part of torch_parts equal blocks.
  int8_t torch_part;
  int8_t torch_parts;
  // Hugging Face stores q/k rows in the half-split RoPE layout: permute them to interleaved, per
  // head of this many heads (1: n_heads, 2: n_kv_heads, 0: no permutation).
  int8_t hf_rope_heads;
  // A Hugging Face / GGUF tensor fused from several roles (Phi-3 qkv_proj = [wq; wk; wv],
  // gate_up_proj = [w1; w3]): the parts are listed one after another under the same names, and
  // this role's rows follow those of the parts before it (rows from the .ein shapes). 0: not fused.
  int8_t fused_part = 0;
  int8_t fused_parts = 0;
};

// A hyperparameter and where each format keeps it.
enum class ArchField : uint8_t {
  dim,
  hidden_dim,
  n_layers,
  n_heads,
  n_kv_heads,
  head_dim,
  vocab_size,
  context_length,
  norm_eps,
  rope_theta,
  rope_factor,            // rope_scaling factor (linear, llama3)
  rope_low_freq_factor,   // llama3
  rope_high_freq_factor,  // llama3
  rope_original_context,  // llama3 / longrope original_max_position_embeddings
  sliding_window,         // trained window W (0: none)
  attn_scalar,            // Gemma query_pre_attn_scalar q: attention scale q^-0.5
  attn_softcap,           // score soft-capping (null: none)
  final_softcap,          // logit soft-capping (null: none)
  rope_local_theta,       // the sliding layers' RoPE base (Gemma 3 rope_local_base_freq)
  rope_attn_factor,       // longrope cos/sin factor (GGUF rope.scaling.attn_factor)
  type_vocab_size,        // bert: token-type embedding rows
};
enum class ArchDefault : uint8_t {
  required,         // the key must be there
  constant,         // `fallback`
  same_as_heads,    // n_heads (MHA)
  dim_over_heads,   // dim / n_heads
  same_as_context,  // context_length (read before)
};
struct ArchConfigKey {
  ArchField field;
  // config.json key (null: not read from Hugging Face); "a.b" is key b of object a. An explicit
  // JSON null counts as absent, except for sliding_window and the soft-capping fields, where null
  // means none.
  const char* hf;
  const char* gguf;  // GGUF metadata key, "{}" standing for the description's gguf_arch
  // When the key is absent (the two formats' tools disagree on some defaults).
  ArchDefault hf_rule;
  double hf_fallback;  // the value for ArchDefault::constant
  ArchDefault gguf_rule;
  double gguf_fallback;
};
// Shorthands of the key tables (models/arch/arch_*.cpp).
inline constexpr ArchDefault kReq = ArchDefault::required;
inline constexpr ArchDefault kConst = ArchDefault::constant;
// The size keys Hugging Face and llama.cpp name alike for every transformer they ship (the llama
// family, bert): the first rows of each key table.
#define EINFER_ARCH_SIZE_KEYS                                                                   \
  {ArchField::dim, "hidden_size", "{}.embedding_length", kReq, 0, kReq, 0},                     \
      {ArchField::hidden_dim, "intermediate_size", "{}.feed_forward_length", kReq, 0, kReq, 0}, \
      {ArchField::n_layers, "num_hidden_layers", "{}.block_count", kReq, 0, kReq, 0}, {         \
    ArchField::n_heads, "num_attention_heads", "{}.attention.head_count", kReq, 0, kReq, 0      \
  }

struct ArchDescription {
  ArchKind kind;
  const char* name;  // "llama": also GGUF general.architecture and HF model_type
  // The blocks the forward pass is built from (the config carries them into the .ein file).
  NormKind norm;
  Activation activation;
  RopeMode rope;
  const ArchTensorNames* tensors;  // every role the architecture can have
  size_t tensor_count;
  const ArchConfigKey* config_keys;  // read in this order (defaults may use earlier fields)
  size_t config_key_count;
  // llama2.c checkpoints (v1/v2): the matrices after the embedding, in file order.
  const TensorRole* llama2c_matrices;
  size_t llama2c_matrix_count;
  // Read after config_keys: the keys whose defaults differ within a family (may be null).
  const ArchConfigKey* extra_config_keys;
  size_t extra_config_key_count;
  // Llama family (Hugging Face and GGUF importers):
  const char* hf_model_type;  // config.json model_type (null: none)
  const char* gguf_arch;      // GGUF general.architecture (null: none, e.g. Mistral is "llama")
  RopeMode gguf_rope;         // layout of GGUF q/k rows (llama.cpp permutes llama's, not qwen2's)
  uint32_t qkv_bias;          // q, k, v projections have biases
  // config.json booleans this architecture must not have true (features einfer does not run),
  // refused by name; null-terminated list or null.
  const char* const* hf_refused_if_true;
  // Per-layer sliding window (Qwen2Config): sliding_window counts only when the boolean
  // hf_window_switch is true; then layer_types (hf_layer_types, a list of "full_attention" /
  // "sliding_attention") says which layers slide, or, absent, every layer with index >=
  // hf_window_first_layer (default hf_window_first_layer_default). Null: the window (if any)
  // applies to every layer (Mistral).
  const char* hf_window_switch;
  const char* hf_layer_types;
  const char* hf_window_first_layer;
  int32_t hf_window_first_layer_default;
  // GGUF metadata keys ("{}" = gguf_arch) this architecture refuses when present, each with why
  // (null-terminated pairs: key, reason), or null.
  const char* const* gguf_refused_keys;
  // Issue 32 families (Qwen3, Gemma 2/3, Phi-3); zero / null for the descriptions above.
  ArchFamily family = ArchFamily::unspecified;  // recorded in the .ein file
  uint32_t qk_norm = 0;     // per-head q_norm / k_norm tensors (ModelConfig::qk_norm)
  uint32_t post_norms = 0;  // attn_post_norm / ffn_post_norm tensors (Gemma)
  // Gemma: embeddings times sqrt(dim): from Hugging Face rounded to the stored embedding's dtype
  // (transformers multiplies by embed_scale.to(weight.dtype)), from GGUF in float (llama.cpp).
  uint32_t embed_scale_sqrt_dim = 0;
  // Gemma: Hugging Face RMSNorm weights act as (1 + w) (Gemma2RMSNorm); the importer stores 1 + w
  // in float, as the transformers forward computes it and llama.cpp's converter writes it.
  uint32_t hf_norm_plus_one = 0;
  // config.json keys naming the activation, first present wins (null: "hidden_act"), and the names
  // accepted (null-terminated; null: "silu").
  const char* const* hf_activation_keys = nullptr;
  const char* const* hf_activations = nullptr;
  // Sliding layers by a period P (layer i slides when (i + 1) % P != 0): Gemma 2: 2 (GGUF and
  // Hugging Face without layer_types), Gemma 3: config.json hf_window_period_key, default and GGUF
  // window_period. 0: the hf_window_* rules above (or every layer).
  int32_t window_period = 0;
  const char* hf_window_period_key = nullptr;
  // GGUF (llama.cpp's rule): the attention scale is 1/sqrt(head_dim), or 1/sqrt(dim / n_heads) for
  // the model of this many layers (Gemma 2 and 3 27B); 0: the default scale.
  int32_t gguf_scale_by_dim_layers = 0;
  uint32_t gguf_attn_scale_rule = 0;  // apply the rule above (Gemma)
  uint32_t hf_tied_default = 0;       // tie_word_embeddings when config.json omits it (Gemma)
  // Phi-3: RoPE scaling "longrope" (older name "su") with config.json short_factor / long_factor
  // lists, or GGUF rope_factors_short / _long tensors.
  uint32_t longrope = 0;
};

// RoPE scaling type keys: config.json rope_scaling.rope_type (older files: rope_scaling.type);
// GGUF "{arch}.rope.scaling.type". llama.cpp's converter writes llama3 scaling as the tensor
// rope_freqs.weight instead (TensorRole::rope_freq_factors, in the llama tensor table).
inline constexpr const char* kHfRopeTypeKeys[2] = {"rope_scaling.rope_type", "rope_scaling.type"};
inline constexpr const char* kGgufRopeTypeKey = "{}.rope.scaling.type";
// A RoPE scaling type name ("linear", "llama3"; "none"/"default" mean none; "longrope" and its
// older name "su") to its kind; false for a name einfer does not implement (yarn, dynamic, ...).
// longrope needs per-pair factor lists, which the importers read where the family has them.
bool arch_rope_scaling_from_name(const char* name, RopeScaling* kind);

const ArchDescription& arch_llama();
const ArchDescription& arch_mistral();  // llama + a trained sliding window
const ArchDescription& arch_qwen2();    // llama + q/k/v biases
const ArchDescription& arch_qwen3();    // llama + per-head q/k norm, explicit head_dim
const ArchDescription& arch_gemma2();   // GeGLU, sandwich norms, soft-capping, alternating window
const ArchDescription& arch_gemma3();   // Gemma 2 + q/k norm, local RoPE base, 5:1 window
const ArchDescription& arch_phi3();     // fused qkv / gate_up, longrope, window
const ArchDescription& arch_encoder();
const ArchDescription& arch_bert();  // sentence-embedding encoders (HF BertModel, GGUF "bert")
const ArchDescription& arch_transformer();
// Transformer tables list every per-layer role twice: names beginning "decoder.layers." are the
// decoder layers' (their "{}" counts from the first decoder layer), the others the encoder's.
bool arch_names_decoder_layer(const ArchTensorNames& names);
// The llama-family description whose hf_model_type (hugging_face) or gguf_arch is `name`, or null
// (every llama-family description: arch_llama.cpp's and arch_families.cpp's).
const ArchDescription* arch_by_hf_model_type(const char* name);
const ArchDescription* arch_by_gguf_arch(const char* name);
// The same lookup over every description that has a GGUF form (llama family and bert).
const ArchDescription* arch_any_by_gguf_arch(const char* name);
// The description of `kind`, or null for an unknown kind.
const ArchDescription* arch_description(ArchKind kind);

// Writes `value` into the field of *config. An integer field given a value outside int32 (or NaN)
// gets -1 and a float field outside float's range an infinity, both refused by config validation;
// importers range-check first (tools/einfer-pack/arch_names.cpp).
void arch_set_field(ModelConfig* config, ArchField field, double value);

// Whether `field` holds an integer (dimensions, counts) rather than a float (epsilon, theta).
inline bool arch_field_is_integer(ArchField field) {
  switch (field) {
    case ArchField::norm_eps:
    case ArchField::rope_theta:
    case ArchField::rope_factor:
    case ArchField::rope_low_freq_factor:
    case ArchField::rope_high_freq_factor:
    case ArchField::attn_scalar:
    case ArchField::attn_softcap:
    case ArchField::final_softcap:
    case ArchField::rope_local_theta:
    case ArchField::rope_attn_factor:
      return false;
    default:
      return true;
  }
}

// Whether an explicit null in config.json means "none" (0) for this field rather than "absent".
inline bool arch_field_null_is_none(ArchField field) {
  return field == ArchField::sliding_window || field == ArchField::attn_softcap ||
         field == ArchField::final_softcap;
}

// The llama-family descriptions of arch_families.cpp (for the name lookups).
const ArchDescription* arch_family_by_hf_model_type(const char* name);
const ArchDescription* arch_family_by_gguf_arch(const char* name);

}  // namespace einfer
