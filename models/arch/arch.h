// One description per architecture: which blocks it is made of and what each of its tensors is
// called in every source format. The importers (tools/einfer-pack/import_*.cpp) read the names,
// the forward passes (models/llama.cpp, models/encoder.cpp) bind the roles listed here, and the
// .ein schema (which roles an architecture stores, their shapes and the config rules) lives in
// runtime/format.h and runtime/loader.cpp, below this layer, where the loader reads it.
//
// Adding an architecture: a new file here with its table (arch_<name>.cpp), a case in
// arch_description(), its ArchKind and rules in runtime/, its forward pass beside llama.cpp.
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
  rope_theta
};
enum class ArchDefault : uint8_t {
  required,        // the key must be there
  constant,        // `fallback`
  same_as_heads,   // n_heads (MHA)
  dim_over_heads,  // dim / n_heads
};
struct ArchConfigKey {
  ArchField field;
  const char* hf;    // config.json key (null: not read from Hugging Face)
  const char* gguf;  // GGUF metadata key, "{arch}." prefix included
  // When the key is absent (the two formats' tools disagree on some defaults).
  ArchDefault hf_rule;
  double hf_fallback;  // the value for ArchDefault::constant
  ArchDefault gguf_rule;
  double gguf_fallback;
};

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
};

const ArchDescription& arch_llama();
const ArchDescription& arch_encoder();
// The description of `kind`, or null for an unknown kind.
const ArchDescription* arch_description(ArchKind kind);

// Writes `value` into the field of *config. An integer field given a value outside int32 (or NaN)
// gets -1 and a float field outside float's range an infinity, both refused by config validation;
// importers range-check first (tools/einfer-pack/arch_names.cpp).
void arch_set_field(ModelConfig* config, ArchField field, double value);

// Whether `field` holds an integer (dimensions, counts) rather than a float (epsilon, theta).
inline bool arch_field_is_integer(ArchField field) {
  return field != ArchField::norm_eps && field != ArchField::rope_theta;
}

}  // namespace einfer
