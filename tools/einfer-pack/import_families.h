// What the Hugging Face and GGUF importers do beyond reading an architecture's keys and tensors by
// name (models/arch/arch.h): the per-layer sliding windows (Qwen2/3 layer rules, Gemma's periods),
// the config.json forms of RoPE parameters (rope_scaling, transformers v5's rope_parameters),
// Phi-3's longrope factor lists, Gemma's scaled embeddings, and llama.cpp's rules for the GGUF
// forms of these families. Host only; errors throw PackError.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/arch/arch.h"
#include "tools/einfer-pack/json.h"

namespace einfer::pack {

// config.json's value at a dotted key path ("rope_scaling.factor"), or null. The RoPE keys fall
// back to transformers v5's rope_parameters when the v4 ones are absent: rope_theta and
// rope_scaling.* read rope_parameters (its "full_attention" entry for Gemma 3's per-layer-type
// form), Gemma 3's rope_local_base_freq reads rope_parameters.sliding_attention.rope_theta.
const Json* hf_config_find(const Json& cfg, const char* key);

// The sliding layers as config.json says (layer_types, or the architecture's rule: Qwen's
// use_sliding_window and max_window_layers, Gemma's period) in ModelConfig's terms: every layer
// from a first one on (sliding_window_first_layer) or by a period (sliding_window_period). A list
// einfer cannot express is refused by name; no sliding layer leaves no window.
void hf_apply_layer_windows(const Json& cfg, const ArchDescription& arch, ModelConfig* config);

// Phi-3's longrope parameters from config.json (config->rope_scaling already longrope): the short
// and long factor lists ([head_dim/2] each, finite and > 0), the original context (rope_scaling's,
// else the top-level original_max_position_embeddings already read) and the cos/sin factor
// (rope_scaling.attention_factor, else transformers' default sqrt(1 + ln(s) / ln(original)) with s
// = max_position_embeddings / original, 1 when s <= 1). Refuses a partial rotary factor.
void hf_longrope(const Json& cfg, ModelConfig* config, std::vector<float>* short_factors,
                 std::vector<float>* long_factors);

// Gemma's embedding scale from Hugging Face: sqrt(dim) rounded to the stored embedding's dtype
// ("F32", "F16" or "BF16"), as transformers multiplies by embed_scale.to(weight.dtype).
float hf_embed_scale(int32_t dim, const std::string& stored_dtype);

// The GGUF forms' family rules, after the architecture's keys were read (llama.cpp
// llama-model.cpp): Gemma's float sqrt(dim) embedding scale and attention scale, the sliding
// layers' period, Phi-3's window defaults and longrope (its rope_factors_short / _long tensors,
// original context and attention factor). `has_key(key)` and `has_tensor(name)` say what the file
// holds; `lookup` reads a number as read_arch_config's lookup does.
void gguf_family_config(const ArchDescription& arch,
                        const std::function<bool(const std::string& key)>& has_key,
                        const std::function<bool(const std::string& name)>& has_tensor,
                        const std::function<bool(const char* key, double* value)>& lookup,
                        ModelConfig* config);

// Whether `role` is an RMSNorm weight (Gemma's Hugging Face norms are stored as w of (1 + w)).
bool is_norm_weight(TensorRole role);

}  // namespace einfer::pack
