#include "tools/einfer-pack/import_families.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/quant/quant.h"
#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

namespace {

// `key` as a dotted path from `root`.
const Json* at_path(const Json& root, const char* key) {
  const Json* v = &root;
  for (const char* part = key; v && part;) {
    const char* dot = std::strchr(part, '.');
    v = v->find(dot ? std::string(part, dot) : std::string(part));
    part = dot ? dot + 1 : nullptr;
  }
  return v;
}

const Json* object_or_null(const Json* v) {
  return v && v->type == Json::Type::object ? v : nullptr;
}

}  // namespace

const Json* hf_config_find(const Json& cfg, const char* key) {
  if (const Json* v = at_path(cfg, key)) return v;
  // transformers v5: rope_parameters = {rope_type, rope_theta, factor, ...}, or per layer type
  // {"full_attention": {...}, "sliding_attention": {...}} (Gemma 3).
  const Json* rp = object_or_null(cfg.find("rope_parameters"));
  if (rp == nullptr) return nullptr;
  const Json* full = object_or_null(rp->find("full_attention"));
  const Json* main = full ? full : rp;
  const std::string k = key;
  if (k == "rope_theta") return main->find("rope_theta");
  if (k.rfind("rope_scaling.", 0) == 0) return at_path(*main, key + std::strlen("rope_scaling."));
  if (k == "rope_local_base_freq") {
    const Json* sliding = object_or_null(rp->find("sliding_attention"));
    if (sliding == nullptr) return nullptr;
    const Json* type = sliding->find("rope_type");
    if (type && !(type->type == Json::Type::string && type->str == "default"))
      throw PackError(
          "config.json: rope_parameters.sliding_attention must be of rope_type default (the "
          "sliding layers' RoPE takes no scaling)");
    return sliding->find("rope_theta");
  }
  return nullptr;
}

void hf_apply_layer_windows(const Json& cfg, const ArchDescription& arch, ModelConfig* c) {
  const std::string what = "config.json: ";
  if (arch.hf_window_switch != nullptr) {
    // Qwen2Config / Qwen3Config: sliding_window counts only with use_sliding_window.
    const Json* on = cfg.find(arch.hf_window_switch);
    if (on && on->type != Json::Type::boolean && on->type != Json::Type::null)
      throw PackError(what + arch.hf_window_switch + " must be a boolean");
    if (!(on && on->type == Json::Type::boolean && on->b)) c->sliding_window = 0;
  }
  const size_t n = static_cast<size_t>(c->n_layers);
  std::vector<bool> sliding(n, false);
  const Json* types = arch.hf_layer_types ? cfg.find(arch.hf_layer_types) : nullptr;
  if (types && types->type != Json::Type::null) {
    if (types->type != Json::Type::array || types->items.size() != n)
      throw PackError(what + arch.hf_layer_types + " must be a list of " +
                      std::to_string(c->n_layers) + " layer types");
    for (size_t i = 0; i < n; ++i) {
      const std::string& t = types->items[i].str;
      if (types->items[i].type != Json::Type::string ||
          (t != "full_attention" && t != "sliding_attention"))
        throw PackError(what + arch.hf_layer_types + "[" + std::to_string(i) + "] '" + t +
                        "' is not supported (full_attention or sliding_attention)");
      sliding[i] = t == "sliding_attention";
    }
  } else if (arch.window_period > 0) {
    // Gemma2Config: even layers slide; Gemma3TextConfig: sliding_window_pattern (default 6), a
    // layer full when (i + 1) % pattern == 0.
    int64_t period = arch.window_period;
    if (arch.hf_window_period_key)
      if (const Json* v = cfg.find(arch.hf_window_period_key); v && v->type != Json::Type::null)
        period = json_to_int(*v, what + arch.hf_window_period_key, 1, 1 << 20);
    for (size_t i = 0; i < n; ++i)
      sliding[i] = c->sliding_window > 0 && (static_cast<int64_t>(i) + 1) % period != 0;
  } else if (arch.hf_window_first_layer != nullptr) {
    int64_t first = arch.hf_window_first_layer_default;
    if (const Json* v = cfg.find(arch.hf_window_first_layer); v && v->type != Json::Type::null)
      first = json_to_int(*v, what + arch.hf_window_first_layer, 0, INT32_MAX);
    for (size_t i = 0; i < n; ++i)
      sliding[i] = c->sliding_window > 0 && static_cast<int64_t>(i) >= first;
  } else {
    std::fill(sliding.begin(), sliding.end(), c->sliding_window > 0);
  }
  c->sliding_window_first_layer = 0;
  c->sliding_window_period = 0;
  const auto first = std::find(sliding.begin(), sliding.end(), true);
  if (first == sliding.end()) {  // no layer slides
    c->sliding_window = 0;
    return;
  }
  const std::string list = arch.hf_layer_types ? arch.hf_layer_types : "the layer rule";
  if (c->sliding_window == 0)
    throw PackError(what + list + " has sliding_attention layers but there is no sliding_window" +
                    (arch.hf_window_switch ? std::string(" (") + arch.hf_window_switch +
                                                 " false or sliding_window null)"
                                           : std::string(" (sliding_window null)")));
  // Every layer from the first sliding one on (Qwen2's max_window_layers).
  if (std::find(first, sliding.end(), false) == sliding.end()) {
    c->sliding_window_first_layer = static_cast<int32_t>(first - sliding.begin());
    return;
  }
  // A period P: the first full layer is P - 1, and the list repeats (Gemma's patterns).
  const auto full = std::find(sliding.begin(), sliding.end(), false);
  const int64_t period = (full - sliding.begin()) + 1;
  bool periodic = period >= 2;
  for (size_t i = 0; periodic && i < n; ++i)
    periodic = sliding[i] == ((static_cast<int64_t>(i) + 1) % period != 0);
  if (!periodic)
    throw PackError(what + list +
                    " is not supported: einfer slides every layer from the first sliding one on, "
                    "or all but every P-th layer (layers P-1, 2P-1, ... full); this list is "
                    "neither");
  c->sliding_window_period = static_cast<int32_t>(period);
}

void hf_longrope(const Json& cfg, ModelConfig* c, std::vector<float>* short_factors,
                 std::vector<float>* long_factors) {
  const std::string what = "config.json: rope_scaling ";
  const size_t pairs = static_cast<size_t>(c->head_dim / 2);
  auto list = [&](const char* name, std::vector<float>* out) {
    const Json* v = hf_config_find(cfg, (std::string("rope_scaling.") + name).c_str());
    if (!v || v->type != Json::Type::array)
      throw PackError(what + "longrope needs a " + name + " list");
    if (v->items.size() != pairs)
      throw PackError(what + name + " has " + std::to_string(v->items.size()) +
                      " entries, expected " + std::to_string(pairs) + " (head_dim / 2)");
    out->clear();
    for (const Json& e : v->items) {
      const float f = e.is_number() ? static_cast<float>(e.num) : 0.f;
      if (!(e.is_number() && std::isfinite(f) && f > 0.f))
        throw PackError(what + name + " entries must be finite numbers > 0");
      out->push_back(f);
    }
  };
  list("short_factor", short_factors);
  list("long_factor", long_factors);
  if (const Json* o = hf_config_find(cfg, "rope_scaling.original_max_position_embeddings");
      o && o->type != Json::Type::null)
    c->rope_original_context = static_cast<int32_t>(
        json_to_int(*o, what + "original_max_position_embeddings", 1, 1 << 24));
  if (c->rope_attn_factor == 0.f) {
    // _compute_longrope_parameters: the ratio of the extended to the original context.
    const double s = static_cast<double>(c->context_length) / c->rope_original_context;
    c->rope_attn_factor = static_cast<float>(
        s <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(s) / std::log(c->rope_original_context)));
  }
  c->rope_freq_factors = 1;
}

float hf_embed_scale(int32_t dim, const std::string& stored) {
  const float f = static_cast<float>(std::sqrt(static_cast<double>(dim)));
  if (stored == "BF16") return bf16_to_f32(f32_to_bf16(f));
  if (stored == "F16") return f16_to_f32(f32_to_f16(f));
  return f;
}

void gguf_family_config(const ArchDescription& arch,
                        const std::function<bool(const std::string& key)>& has_key,
                        const std::function<bool(const std::string& name)>& has_tensor,
                        const std::function<bool(const char* key, double* value)>& lookup,
                        ModelConfig* c) {
  const std::string prefix = arch.gguf_arch ? arch.gguf_arch : "";
  // llama.cpp: ggml_scale(inp, sqrtf(n_embd)) in float.
  if (arch.embed_scale_sqrt_dim) c->embed_scale = std::sqrt(static_cast<float>(c->dim));
  // llama.cpp (gemma_pytorch's rule): 1/sqrt(head_dim), the 27B models 1/sqrt(n_embd / n_head).
  if (arch.gguf_attn_scale_rule) {
    const int32_t by = c->n_layers == arch.gguf_scale_by_dim_layers && c->n_heads > 0
                           ? c->dim / c->n_heads
                           : c->head_dim;
    c->attn_scale = 1.0f / std::sqrt(static_cast<float>(by));
  }
  if (arch.window_period > 0 && c->sliding_window > 0)
    c->sliding_window_period = arch.window_period;
  if (!arch.longrope) return;
  // Phi-3 (llama.cpp's backward-compatible windows for files written before the key).
  if (!has_key(prefix + ".attention.sliding_window")) {
    const bool ctx4k = c->context_length == 4096, ctx128k = c->context_length == 131072;
    if ((c->n_layers == 32 || c->n_layers == 40) && ctx4k)
      c->sliding_window = 2047;  // Phi-3-mini-4k, Phi-3-medium-4k
    else if (c->n_layers == 32 && c->n_kv_heads == 32 && ctx128k)
      c->sliding_window = 262144;  // Phi-3-mini-128k
    else if (c->n_layers == 40 && ctx128k)
      c->sliding_window = 131072;  // Phi-3-medium-128k
    else
      throw PackError("gguf: missing metadata key " + prefix + ".attention.sliding_window");
  }
  const bool short_f = has_tensor("rope_factors_short.weight");
  const bool long_f = has_tensor("rope_factors_long.weight");
  if (short_f != long_f)
    throw PackError(
        "gguf: longrope needs both rope_factors_short.weight and rope_factors_long.weight");
  if (!short_f) return;
  c->rope_scaling = RopeScaling::longrope;
  c->rope_freq_factors = 1;
  double v = c->context_length;
  lookup((prefix + ".rope.scaling.original_context_length").c_str(), &v);
  c->rope_original_context = static_cast<int32_t>(v);
  double a = 1.0;
  lookup((prefix + ".rope.scaling.attn_factor").c_str(), &a);
  c->rope_attn_factor = static_cast<float>(a);
}

bool is_norm_weight(TensorRole role) {
  switch (role) {
    case TensorRole::attn_norm:
    case TensorRole::ffn_norm:
    case TensorRole::final_norm:
    case TensorRole::attn_post_norm:
    case TensorRole::ffn_post_norm:
    case TensorRole::q_norm:
    case TensorRole::k_norm:
      return true;
    default:
      return false;
  }
}

}  // namespace einfer::pack
