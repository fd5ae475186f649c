// safetensors inputs: Hugging Face Llama folders and PyTorch TransformerEncoder state dicts.
//
// safetensors: uint64 little-endian header length N, N bytes of JSON {name: {dtype, shape,
// data_offsets: [begin, end]}, "__metadata__": {str: str}}, then the data (offsets relative to it).
//
// HF Llama/Mistral/Qwen2 q_proj/k_proj rows (and Qwen2's q/k biases) use the half-split RoPE
// layout (pairs (i, i + k/2)). We permute the rows of each head to the interleaved layout (new row
// 2i = old row i, new row 2i+1 = old row i + k/2) and record rope=interleaved: q.k and the rotation
// commute with this permutation applied to both q and k, so the packed model computes the same
// function (tests/gen/gen_hf_llama.py checks the identity numerically).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>

#include "kernels/quant/quant.h"
#include "runtime/checked.h"
#include "tools/common/file.h"
#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/import_families.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"
#include "tools/einfer-pack/safetensors.h"

namespace einfer::pack {

namespace {

constexpr int64_t kMaxImportLayers = 4096;  // the loader's limit

void add(SourceModel& m, TensorRole role, int32_t layer, std::vector<int64_t> shape,
         std::vector<float> values, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n != static_cast<int64_t>(values.size()))
    throw PackError("tensor " + name + " has an unexpected number of elements");
  add_float_tensor(m, role, layer, std::move(shape), std::move(values));
}

// Half-split -> interleaved row order within each head of a [heads*k, d] projection.
std::vector<float> permute_rope_rows(const std::vector<float>& w, int64_t heads, int64_t k,
                                     int64_t d) {
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < k / 2; ++i) {
      std::memcpy(&out[(h * k + 2 * i) * d], &w[(h * k + i) * d], d * 4);
      std::memcpy(&out[(h * k + 2 * i + 1) * d], &w[(h * k + i + k / 2) * d], d * 4);
    }
  return out;
}

// A present key of the wrong type is an error, never replaced by the default.
const Json* json_typed(const Json& cfg, const char* key, Json::Type type, const char* type_name) {
  const Json* v = cfg.find(key);
  if (v && v->type != type && v->type != Json::Type::null)
    throw PackError(std::string("config.json: ") + key + " must be a " + type_name);
  return v && v->type == type ? v : nullptr;
}

}  // namespace

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> b;
  errno = 0;
  if (!tools::read_file(path.c_str(), &b))
    throw PackError("cannot open " + path +
                    (errno ? std::string(": ") + std::strerror(errno) : std::string()));
  return b;
}

SourceModel import_hf_llama(const std::string& folder) {
  const std::vector<uint8_t> cfg_bytes = read_file(folder + "/config.json");
  const Json cfg = parse_json(std::string(cfg_bytes.begin(), cfg_bytes.end()), "config.json");
  if (cfg.type != Json::Type::object) throw PackError("config.json: not a JSON object");
  using T = Json::Type;
  // The architecture by model_type (LlamaForCausalLM-shaped SmolLM and TinyLlama say "llama").
  const Json* mt = cfg.find("model_type");
  constexpr const char* kTypes = "llama, mistral, qwen2, qwen3, gemma2, gemma3_text or phi3";
  if (!mt || mt->type != Json::Type::string)
    throw PackError(std::string("config.json: no model_type (") + kTypes + ")");
  const ArchDescription* arch = arch_by_hf_model_type(mt->str.c_str());
  if (!arch)
    throw PackError("config.json: model_type '" + mt->str + "' is not supported (" + kTypes +
                    (mt->str == "gemma3" ? "; a multimodal Gemma 3 folder: its text model is not "
                                           "packed on its own yet"
                                         : "") +
                    ")");
  // The activation, under the first key the architecture names that is present.
  {
    static constexpr const char* kHiddenAct[] = {"hidden_act", nullptr};
    static constexpr const char* kSilu[] = {"silu", nullptr};
    const char* const* keys = arch->hf_activation_keys ? arch->hf_activation_keys : kHiddenAct;
    const char* const* names = arch->hf_activations ? arch->hf_activations : kSilu;
    for (const char* const* key = keys; *key; ++key) {
      const Json* act = cfg.find(*key);
      if (!act || act->type == Json::Type::null) continue;
      bool known = false;
      std::string list;
      for (const char* const* n = names; *n; ++n) {
        known = known || (act->type == Json::Type::string && act->str == *n);
        list += (list.empty() ? "" : ", ") + std::string(*n);
      }
      if (!known)
        throw PackError("config.json: " + std::string(*key) + " '" + act->str +
                        "' is not supported for " + mt->str + " (" + list + ")");
      break;
    }
  }
  // Partial rotary embeddings (Phi-4-mini's 0.75) are not built.
  for (const char* key : {"partial_rotary_factor", "rope_scaling.partial_rotary_factor"})
    if (const Json* p = hf_config_find(cfg, key); p && p->is_number() && p->num != 1.0)
      throw PackError(std::string("config.json: ") + key +
                      " != 1 is not supported (einfer rotates every head dimension)");
  for (const char* const* key = arch->hf_refused_if_true; key && *key; ++key)
    if (const Json* v = cfg.find(*key); v && v->type == Json::Type::boolean && v->b)
      throw PackError("config.json: " + std::string(*key) + " true is not supported for " +
                      mt->str);
  SourceModel m;
  m.kind = std::string("hf-") + arch->name;
  // The chat template, when the folder ships tokenizer_config.json with one.
  if (struct stat st; stat((folder + "/tokenizer_config.json").c_str(), &st) == 0) {
    const std::vector<uint8_t> tc = read_file(folder + "/tokenizer_config.json");
    const Json tok = parse_json(std::string(tc.begin(), tc.end()), "tokenizer_config.json");
    if (const Json* t = tok.find("chat_template"); t && t->type == Json::Type::string)
      m.chat_template = t->str;
  }
  ModelConfig& c = m.config;
  const ArchDescription& llama = *arch;
  c.arch = llama.kind;
  c.norm = llama.norm;
  c.activation = llama.activation;
  c.rope = llama.rope;  // llama's rows permuted below
  c.qkv_bias = llama.qkv_bias;
  c.family = llama.family;
  c.qk_norm = llama.qk_norm;
  c.post_norms = llama.post_norms;
  // Keys by path ("rope_scaling.factor"); an explicit null reads as NaN (read_arch_config).
  auto find = [&](const char* key) { return hf_config_find(cfg, key); };
  auto lookup = [&](const char* key, double* value) {
    const Json* v = find(key);
    if (v && v->type == Json::Type::null) {
      *value = std::nan("");
      return true;
    }
    if (!v) return false;
    // A present key of the wrong type is an error, never replaced by the default.
    const std::string what = std::string("config.json: ") + key;
    if (arch_key_is_integer(llama, SourceFormat::hugging_face, key)) {
      *value = static_cast<double>(json_to_int(*v, what, 0, INT32_MAX));
    } else {
      if (!v->is_number() || !std::isfinite(static_cast<float>(v->num)))
        throw PackError(what + " must be a finite number");
      *value = v->num;
    }
    return true;
  };
  read_arch_config(llama, SourceFormat::hugging_face, lookup, "config.json: ", &c);
  // transformers reads rope_scaling["rope_type"], falling back to the older "type".
  std::string rope_type;
  for (const char* key : kHfRopeTypeKeys)
    if (const Json* t = find(key); t && t->type == Json::Type::string && rope_type.empty())
      rope_type = t->str;
  if (const Json* rs = cfg.find("rope_scaling");
      rs && rs->type != Json::Type::null && rope_type.empty())
    throw PackError("config.json: rope_scaling without a rope_type");
  apply_rope_scaling(rope_type, "config.json: ", &c, llama.longrope != 0);
  std::vector<float> short_factors, long_factors;
  if (c.rope_scaling == RopeScaling::longrope) hf_longrope(cfg, &c, &short_factors, &long_factors);
  // Windows on some layers only (Qwen2/3 rules, Gemma's periods); Mistral and Phi-3: every layer.
  if (llama.hf_layer_types || llama.window_period > 0) hf_apply_layer_windows(cfg, llama, &c);
  // Special ids: an integer, a list of integers (eos of Llama 3.x, Qwen2) or null.
  auto ids = [&](const char* key) {
    std::vector<int32_t> out;
    const Json* v = cfg.find(key);
    if (v && v->is_number()) out.push_back(static_cast<int32_t>(v->num));
    if (v && v->type == Json::Type::array)
      for (const Json& e : v->items)
        if (e.is_number()) out.push_back(static_cast<int32_t>(e.num));
    for (int32_t id : out)
      if (id < 0 || id >= c.vocab_size)
        throw PackError(std::string("config.json: ") + key + " " + std::to_string(id) +
                        " is outside the vocabulary");
    return out;
  };
  if (const std::vector<int32_t> bos = ids("bos_token_id"); !bos.empty()) m.bos = bos[0];
  m.eos = ids("eos_token_id");
  const Json* tie = json_typed(cfg, "tie_word_embeddings", T::boolean, "boolean");
  c.tied_classifier = tie ? (tie->b ? 1 : 0) : llama.hf_tied_default;
  // Gemma's embedding scale: sqrt(dim) in the embedding's stored dtype (set once it is read).
  if (llama.embed_scale_sqrt_dim) c.embed_scale = std::sqrt(static_cast<float>(c.dim));
  require_valid_config(c, "config.json: ");
  m.notes = c.rope == RopeMode::interleaved ? "rope=hf half-split rows permuted to interleaved"
                                            : "rope=hf half-split rows kept (half_split)";

  // Which file holds each tensor.
  std::map<std::string, std::string> where;
  std::vector<std::string> files;
  std::ifstream probe(folder + "/model.safetensors.index.json");
  if (probe) {
    const std::vector<uint8_t> ib = read_file(folder + "/model.safetensors.index.json");
    const Json index =
        parse_json(std::string(ib.begin(), ib.end()), "model.safetensors.index.json");
    const Json* wm = index.find("weight_map");
    if (!wm || wm->type != Json::Type::object)
      throw PackError("model.safetensors.index.json: no weight_map object");
    for (const auto& [k, v] : wm->members) {
      if (v.type != Json::Type::string)
        throw PackError("model.safetensors.index.json: weight_map entry " + k + " is not a string");
      where[k] = v.str;
    }
  }
  std::map<std::string, std::unique_ptr<SafeTensors>> open;
  int bf16_matrices = 0, matrices = 0;  // a checkpoint of BF16 matrices packs to bf16 by default
  std::string embedding_dtype;          // the stored dtype of the token embedding
  auto tensor = [&](const std::string& name, std::vector<int64_t>* shape, std::string* dtype) {
    std::string file = "model.safetensors";
    if (!where.empty()) {
      auto it = where.find(name);
      if (it == where.end()) throw PackError("index: missing tensor " + name);
      file = it->second;
      if (file.find('/') != std::string::npos) throw PackError("index: bad shard name " + file);
    }
    auto& st = open[file];
    if (!st) st = std::make_unique<SafeTensors>(read_file(folder + "/" + file), file);
    std::string stored;
    std::vector<float> v = st->get(name, shape, &stored);
    if (shape->size() == 2) {
      ++matrices;
      bf16_matrices += stored == "BF16";
    }
    *dtype = stored;
    return v;
  };
  const int64_t d = c.dim, k = c.head_dim;
  std::vector<int64_t> sh;
  for_each_arch_tensor(llama, c, [&](const ArchTensorNames& t, int32_t layer) {
    if (t.hf == nullptr) {  // Phi-3's longrope divisors: config.json lists
      add(m, t.role, layer, arch_tensor_shape(c, t.role),
          t.role == TensorRole::rope_freq_factors ? short_factors : long_factors, "rope_scaling");
      return;
    }
    const std::string name = arch_tensor_name(t.hf, layer);
    const std::vector<int64_t> want = arch_tensor_shape(c, t.role);
    // A fused tensor (Phi-3's qkv_proj, gate_up_proj): this role's block of rows.
    int64_t total = 0;
    const int64_t row0 = arch_fused_rows(llama, c, t, SourceFormat::hugging_face, &total);
    std::vector<int64_t> whole = want;
    whole[0] = total;
    std::string stored;
    std::vector<float> w = tensor(name, &sh, &stored);
    expect_shape(sh, whole, name);
    if (total != want[0]) {
      const int64_t cols = want.size() == 2 ? want[1] : 1;
      w = std::vector<float>(w.begin() + row0 * cols, w.begin() + (row0 + want[0]) * cols);
    }
    if (t.role == TensorRole::token_embedding) embedding_dtype = stored;
    const int64_t rope_heads = t.hf_rope_heads == 1   ? c.n_heads
                               : t.hf_rope_heads == 2 ? c.n_kv_heads
                                                      : 0;
    if (rope_heads > 0) w = permute_rope_rows(w, rope_heads, k, want.size() == 2 ? d : 1);
    // Gemma2RMSNorm: x * (1 + w) computed in float; stored as that float.
    if (llama.hf_norm_plus_one && is_norm_weight(t.role))
      for (float& x : w) x = 1.f + x;
    add(m, t.role, layer, want, std::move(w), name);
  });
  if (llama.embed_scale_sqrt_dim) m.config.embed_scale = hf_embed_scale(c.dim, embedding_dtype);
  if (matrices > 0 && bf16_matrices == matrices) m.config.weight_dtype = DType::bf16;
  return m;
}

// The options PyTorch does not store in a state dict, from the flags or the safetensors metadata:
// heads, sequence bound, epsilon, activation, norm placement, causal mask (dim set before).
void read_torch_options(const std::map<std::string, std::string>& md,
                        const TorchEncoderOptions& opt, const std::string& what, ModelConfig* c) {
  auto meta = [&](std::initializer_list<const char*> keys) -> std::string {
    for (const char* k : keys)
      if (auto it = md.find(k); it != md.end()) return it->second;
    return "";
  };
  auto truthy = [](const std::string& s) { return s == "1" || s == "true" || s == "True"; };
  int heads = opt.heads;
  if (heads == 0) {
    const std::string h = meta({"heads", "nhead", "num_heads"});
    if (!h.empty()) heads = static_cast<int>(parse_decimal(h, what + ": metadata heads", 1, 4096));
  }
  if (heads <= 0)
    throw PackError(what + ": --heads H is required (or 'nhead' in the safetensors metadata)");
  if (c->dim % heads != 0) throw PackError(what + ": d_model is not a multiple of --heads");
  c->n_heads = c->n_kv_heads = heads;
  c->head_dim = c->dim / heads;
  c->vocab_size = 0;
  std::string ctx = meta({"context", "max_seq_len", "context_length"});
  c->context_length =
      opt.context > 0 ? opt.context
                      : (ctx.empty() ? 0
                                     : static_cast<int32_t>(parse_decimal(
                                           ctx, what + ": metadata context", 0, int64_t{1} << 24)));
  c->norm = NormKind::layernorm;
  std::string eps = meta({"eps", "layer_norm_eps"});
  c->norm_eps = opt.eps > 0
                    ? opt.eps
                    : (eps.empty() ? 1e-5f : parse_finite_float(eps, what + ": metadata eps"));
  std::string act = opt.activation.empty() ? meta({"activation"}) : opt.activation;
  if (act.empty() || act == "relu")
    c->activation = Activation::relu;
  else if (act == "gelu")
    c->activation = Activation::gelu_erf;
  else
    throw PackError(what + ": unsupported activation '" + act + "' (relu or gelu)");
  c->rope = RopeMode::none;
  c->norm_first = opt.norm_first >= 0 ? opt.norm_first : (truthy(meta({"norm_first"})) ? 1 : 0);
  c->causal = opt.causal >= 0 ? opt.causal : (truthy(meta({"causal", "is_causal"})) ? 1 : 0);
}

// Adds the tensor `name` as role t.role of `layer`; fused sources (in_proj_weight = [wq; wk; wv])
// give the role its row block.
void add_torch_tensor(const SafeTensors& st, const ModelConfig& c, const ArchTensorNames& t,
                      const std::string& name, int32_t layer, SourceModel& m) {
  const std::vector<int64_t> want = arch_tensor_shape(c, t.role);
  std::vector<int64_t> whole = want, sh;
  whole[0] *= t.torch_parts;
  std::vector<float> v = st.get(name, &sh);
  expect_shape(sh, whole, name);
  if (t.torch_parts > 1) {
    const size_t block = v.size() / static_cast<size_t>(t.torch_parts);
    v = std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(t.torch_part * block),
                           v.begin() + static_cast<std::ptrdiff_t>((t.torch_part + 1) * block));
  }
  add(m, t.role, layer, want, std::move(v), name);
}

SourceModel import_torch_encoder(const std::vector<uint8_t>& bytes,
                                 const TorchEncoderOptions& opt) {
  SafeTensors st(std::vector<uint8_t>(bytes), "safetensors");
  const auto md = st.metadata();

  // Layer prefixes: "<p>layers.N." for a stack, "" for a single nn.TransformerEncoderLayer.
  std::string stack_prefix;
  int n_layers = 0;
  bool single = false;
  const std::regex layer_key(R"(^(.*)layers\.([0-9]+)\.self_attn\.in_proj_weight$)");
  for (const auto& [name, _] : st.header.members) {
    std::smatch mm;
    if (std::regex_match(name, mm, layer_key)) {
      stack_prefix = mm[1];
      const int64_t layer =
          parse_decimal(mm[2], "torch-encoder: layer index in " + name, 0, kMaxImportLayers - 1);
      n_layers = std::max(n_layers, static_cast<int>(layer) + 1);
    }
  }
  if (n_layers == 0) {
    if (st.has("self_attn.in_proj_weight")) {
      single = true;
      n_layers = 1;
    } else if (st.has("in_proj_weight")) {
      throw PackError(
          "a bare nn.MultiheadAttention state dict has no feed-forward or norms: "
          "save the enclosing nn.TransformerEncoderLayer instead");
    } else {
      throw PackError(
          "no self_attn.in_proj_weight tensor: not a PyTorch TransformerEncoder state dict");
    }
  }
  auto layer_prefix = [&](int l) {
    return single ? std::string() : stack_prefix + "layers." + std::to_string(l) + ".";
  };

  SourceModel m;
  m.kind = "torch-encoder";
  ModelConfig& c = m.config;
  c.arch = ArchKind::encoder;
  std::vector<int64_t> sh;
  st.get(layer_prefix(0) + "self_attn.in_proj_weight", &sh);
  if (sh.size() != 2 || sh[0] != 3 * sh[1]) throw PackError("in_proj_weight must be [3d, d]");
  c.dim = static_cast<int32_t>(sh[1]);
  st.get(layer_prefix(0) + "linear1.weight", &sh);
  if (sh.size() != 2) throw PackError("linear1.weight must be [f, d]");
  c.hidden_dim = static_cast<int32_t>(sh[0]);
  c.n_layers = n_layers;
  read_torch_options(md, opt, "torch-encoder", &c);
  c.has_bias = st.has(layer_prefix(0) + "self_attn.in_proj_bias") ? 1 : 0;
  c.final_norm = (!single && st.has(stack_prefix + "norm.weight")) ? 1 : 0;

  // Every tensor by the table's names; fused sources (in_proj_weight = [wq; wk; wv]) are split
  // into their row blocks.
  for_each_arch_tensor(arch_encoder(), c, [&](const ArchTensorNames& t, int32_t layer) {
    add_torch_tensor(st, c, t, (layer >= 0 ? layer_prefix(layer) : stack_prefix) + t.torch, layer,
                     m);
  });
  require_valid_config(c, "torch-encoder: ");
  return m;
}

SourceModel import_torch_transformer(const std::vector<uint8_t>& bytes,
                                     const TorchEncoderOptions& opt) {
  const std::string what = "torch-transformer";
  SafeTensors st(std::vector<uint8_t>(bytes), "safetensors");
  int n_encoder = 0, n_decoder = 0;
  const std::regex layer_key(R"(^(encoder|decoder)\.layers\.([0-9]+)\.self_attn\.in_proj_weight$)");
  for (const auto& [name, _] : st.header.members) {
    std::smatch mm;
    if (!std::regex_match(name, mm, layer_key)) continue;
    int& count = mm[1] == "encoder" ? n_encoder : n_decoder;
    count = std::max(
        count, static_cast<int>(parse_decimal(mm[2].str(), what + ": layer index", 0, 4095)) + 1);
  }
  if (n_encoder == 0 || n_decoder == 0)
    throw PackError(what +
                    ": no encoder.layers.N / decoder.layers.N self_attn.in_proj_weight tensors: "
                    "not a PyTorch nn.Transformer state dict");
  for (const char* norm : {"encoder.norm.weight", "decoder.norm.weight"})
    if (!st.has(norm)) throw PackError(what + ": missing " + norm + " (nn.Transformer has both)");
  if (opt.causal > 0)
    throw PackError(what + ": --causal does not apply (the decoder is always causal)");

  SourceModel m;
  m.kind = what;
  ModelConfig& c = m.config;
  c.arch = ArchKind::transformer;
  std::vector<int64_t> sh;
  st.get("encoder.layers.0.self_attn.in_proj_weight", &sh);
  if (sh.size() != 2 || sh[0] != 3 * sh[1]) throw PackError("in_proj_weight must be [3d, d]");
  c.dim = static_cast<int32_t>(sh[1]);
  st.get("encoder.layers.0.linear1.weight", &sh);
  if (sh.size() != 2) throw PackError("linear1.weight must be [f, d]");
  c.hidden_dim = static_cast<int32_t>(sh[0]);
  c.n_layers = n_encoder;
  c.n_decoder_layers = n_decoder;
  TorchEncoderOptions o = opt;
  o.causal = 0;
  read_torch_options(st.metadata(), o, what, &c);
  c.has_bias = st.has("encoder.layers.0.self_attn.in_proj_bias") ? 1 : 0;
  c.final_norm = 1;
  for_each_arch_tensor(arch_transformer(), c, [&](const ArchTensorNames& t, int32_t layer) {
    const int32_t index = layer >= c.n_layers ? layer - c.n_layers : layer;
    add_torch_tensor(st, c, t, arch_tensor_name(t.torch, index), layer, m);
  });
  require_valid_config(c, what + ": ");
  return m;
}

}  // namespace einfer::pack
