// safetensors inputs: Hugging Face Llama folders and PyTorch TransformerEncoder state dicts.
//
// safetensors: uint64 little-endian header length N, N bytes of JSON {name: {dtype, shape,
// data_offsets: [begin, end]}, "__metadata__": {str: str}}, then the data (offsets relative to it).
//
// HF Llama q_proj/k_proj rows use the half-split RoPE layout (pairs (i, i + k/2)). We permute the
// rows of each head to the interleaved layout (new row 2i = old row i, new row 2i+1 = old row
// i + k/2) and record rope=interleaved: q.k and the rotation commute with this permutation applied
// to both q and k, so the packed model computes the same function (tests/gen/gen_hf_llama.py checks
// the identity numerically).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>

#include "kernels/quant.h"
#include "runtime/checked.h"
#include "tools/common/file.h"
#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"

namespace einfer::pack {

namespace {

constexpr int64_t kMaxImportLayers = 4096;  // the loader's limit

float bf16_to_f32(uint16_t h) {
  const uint32_t b = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

struct SafeTensors {
  std::string what;
  std::vector<uint8_t> bytes;
  Json header;
  size_t data_start = 0;

  SafeTensors(std::vector<uint8_t> b, std::string name)
      : what(std::move(name)), bytes(std::move(b)) {
    if (bytes.size() < 8) throw PackError(what + ": file truncated (no safetensors header)");
    uint64_t n;
    std::memcpy(&n, bytes.data(), 8);
    if (n > bytes.size() - 8)
      throw PackError(what + ": safetensors header length exceeds the file");
    header = parse_json(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, n), what);
    if (header.type != Json::Type::object)
      throw PackError(what + ": safetensors header is not an object");
    data_start = 8 + n;
    check_layout();
  }
  // Every entry well-formed, inside the data section, and no two overlapping.
  void check_layout() const {
    const uint64_t avail = bytes.size() - data_start;
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const auto& [name, t] : header.members) {
      if (name == "__metadata__") continue;
      const Json* off = t.find("data_offsets");
      if (t.type != Json::Type::object || !off || off->items.size() != 2)
        throw PackError(what + ": malformed entry for " + name);
      const int64_t b0 = json_to_int(off->items[0], what + ": data_offsets of " + name, 0,
                                     static_cast<int64_t>(avail));
      const int64_t b1 = json_to_int(off->items[1], what + ": data_offsets of " + name, b0,
                                     static_cast<int64_t>(avail));
      if (b1 > b0) ranges.emplace_back(b0, b1);
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].first < ranges[i - 1].second)
        throw PackError(what + ": tensor data ranges overlap (at byte " +
                        std::to_string(ranges[i].first) + " of the data)");
  }
  bool has(const std::string& name) const { return header.find(name) != nullptr; }
  std::map<std::string, std::string> metadata() const {
    std::map<std::string, std::string> m;
    if (const Json* md = header.find("__metadata__"))
      for (const auto& [k, v] : md->members)
        if (v.type == Json::Type::string) m[k] = v.str;
    return m;
  }
  // Float values and shape of a tensor.
  std::vector<float> get(const std::string& name, std::vector<int64_t>* shape) const {
    const Json* t = header.find(name);
    if (!t) throw PackError(what + ": missing tensor " + name);
    const Json* dt = t->find("dtype");
    const Json* sh = t->find("shape");
    const Json* off = t->find("data_offsets");
    if (!dt || !sh || !off || off->items.size() != 2)
      throw PackError(what + ": malformed entry for " + name);
    shape->clear();
    uint64_t n = 1;
    if (dt->type != Json::Type::string || sh->type != Json::Type::array || sh->items.size() > 8)
      throw PackError(what + ": malformed entry for " + name);
    for (const Json& d : sh->items) {
      const int64_t e = json_to_int(d, what + ": shape of " + name, 0, int64_t{1} << 31);
      shape->push_back(e);
      if (!checked_mul(n, static_cast<uint64_t>(e), &n))
        throw PackError(what + ": shape of " + name + " overflows");
    }
    size_t esize = 0;
    if (dt->str == "F32")
      esize = 4;
    else if (dt->str == "F16" || dt->str == "BF16")
      esize = 2;
    else
      throw PackError(what + ": unsupported dtype " + dt->str + " for " + name);
    // check_layout() bounded both offsets by the data section.
    const uint64_t b0 = static_cast<uint64_t>(off->items[0].num);
    const uint64_t b1 = static_cast<uint64_t>(off->items[1].num);
    uint64_t want = 0;
    if (!checked_mul(n, uint64_t{esize}, &want) || b1 - b0 != want)
      throw PackError(what + ": data offsets of " + name + " disagree with its shape");
    const uint8_t* p = bytes.data() + data_start + b0;
    std::vector<float> v(n);
    for (uint64_t i = 0; i < n; ++i) {
      if (esize == 4) {
        std::memcpy(&v[i], p + i * 4, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, p + i * 2, 2);
        v[i] = dt->str == "F16" ? f16_to_f32(h) : bf16_to_f32(h);
      }
    }
    return v;
  }
};

void add(SourceModel& m, TensorRole role, int32_t layer, std::vector<int64_t> shape,
         std::vector<float> values, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n != static_cast<int64_t>(values.size()))
    throw PackError("tensor " + name + " has an unexpected number of elements");
  add_float_tensor(m, role, layer, std::move(shape), std::move(values));
}

void expect_shape(const std::vector<int64_t>& got, std::vector<int64_t> want,
                  const std::string& name) {
  if (got != want) {
    std::string g, w;
    for (int64_t d : got) g += std::to_string(d) + " ";
    for (int64_t d : want) w += std::to_string(d) + " ";
    throw PackError("tensor " + name + " has shape [ " + g + "], expected [ " + w + "]");
  }
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
  if (const Json* mt = json_typed(cfg, "model_type", T::string, "string"); mt && mt->str != "llama")
    throw PackError("config.json: model_type '" + mt->str + "' is not supported (llama only)");
  if (const Json* act = json_typed(cfg, "hidden_act", T::string, "string");
      act && act->str != "silu")
    throw PackError("config.json: hidden_act '" + act->str + "' is not supported (silu only)");
  if (const Json* rs = cfg.find("rope_scaling"); rs && rs->type != Json::Type::null)
    throw PackError("config.json: rope_scaling is not supported");
  if (const Json* b = json_typed(cfg, "attention_bias", T::boolean, "boolean"); b && b->b)
    throw PackError("config.json: attention_bias is not supported");
  SourceModel m;
  m.kind = "hf-llama";
  // The chat template, when the folder ships tokenizer_config.json with one.
  if (struct stat st; stat((folder + "/tokenizer_config.json").c_str(), &st) == 0) {
    const std::vector<uint8_t> tc = read_file(folder + "/tokenizer_config.json");
    const Json tok = parse_json(std::string(tc.begin(), tc.end()), "tokenizer_config.json");
    if (const Json* t = tok.find("chat_template"); t && t->type == Json::Type::string)
      m.chat_template = t->str;
  }
  ModelConfig& c = m.config;
  const ArchDescription& llama = arch_llama();
  c.arch = llama.kind;
  c.norm = llama.norm;
  c.activation = llama.activation;
  c.rope = llama.rope;  // rows permuted below
  // A present key of the wrong type is an error, never replaced by the default.
  auto lookup = [&](const char* key, double* value) {
    const Json* v = cfg.find(key);
    if (!v || v->type == Json::Type::null) return false;
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
  const Json* tie = json_typed(cfg, "tie_word_embeddings", T::boolean, "boolean");
  c.tied_classifier = tie && tie->b ? 1 : 0;
  require_valid_config(c, "config.json: ");
  m.notes = "rope=hf half-split rows permuted to interleaved";

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
  auto tensor = [&](const std::string& name, std::vector<int64_t>* shape) {
    std::string file = "model.safetensors";
    if (!where.empty()) {
      auto it = where.find(name);
      if (it == where.end()) throw PackError("index: missing tensor " + name);
      file = it->second;
      if (file.find('/') != std::string::npos) throw PackError("index: bad shard name " + file);
    }
    auto& st = open[file];
    if (!st) st = std::make_unique<SafeTensors>(read_file(folder + "/" + file), file);
    return st->get(name, shape);
  };
  const int64_t d = c.dim, k = c.head_dim;
  std::vector<int64_t> sh;
  for_each_arch_tensor(llama, c, [&](const ArchTensorNames& t, int32_t layer) {
    const std::string name = arch_tensor_name(t.hf, layer);
    const std::vector<int64_t> want = arch_tensor_shape(c, t.role);
    std::vector<float> w = tensor(name, &sh);
    expect_shape(sh, want, name);
    const int64_t rope_heads = t.hf_rope_heads == 1   ? c.n_heads
                               : t.hf_rope_heads == 2 ? c.n_kv_heads
                                                      : 0;
    if (rope_heads > 0) w = permute_rope_rows(w, rope_heads, k, d);
    add(m, t.role, layer, want, std::move(w), name);
  });
  return m;
}

SourceModel import_torch_encoder(const std::vector<uint8_t>& bytes,
                                 const TorchEncoderOptions& opt) {
  SafeTensors st(std::vector<uint8_t>(bytes), "safetensors");
  const auto md = st.metadata();
  auto meta = [&](std::initializer_list<const char*> keys) -> std::string {
    for (const char* k : keys)
      if (auto it = md.find(k); it != md.end()) return it->second;
    return "";
  };
  auto truthy = [](const std::string& s) { return s == "1" || s == "true" || s == "True"; };

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
  int heads = opt.heads;
  if (heads == 0) {
    const std::string h = meta({"heads", "nhead", "num_heads"});
    if (!h.empty())
      heads = static_cast<int>(parse_decimal(h, "torch-encoder: metadata heads", 1, 4096));
  }
  if (heads <= 0)
    throw PackError(
        "torch-encoder: --heads H is required (or 'nhead' in the safetensors metadata)");
  if (c.dim % heads != 0) throw PackError("torch-encoder: d_model is not a multiple of --heads");
  c.n_heads = c.n_kv_heads = heads;
  c.head_dim = c.dim / heads;
  c.vocab_size = 0;
  std::string ctx = meta({"context", "max_seq_len", "context_length"});
  c.context_length =
      opt.context > 0
          ? opt.context
          : (ctx.empty() ? 0
                         : static_cast<int32_t>(parse_decimal(
                               ctx, "torch-encoder: metadata context", 0, int64_t{1} << 24)));
  c.norm = NormKind::layernorm;
  std::string eps = meta({"eps", "layer_norm_eps"});
  c.norm_eps = opt.eps > 0
                   ? opt.eps
                   : (eps.empty() ? 1e-5f : parse_finite_float(eps, "torch-encoder: metadata eps"));
  std::string act = opt.activation.empty() ? meta({"activation"}) : opt.activation;
  if (act.empty() || act == "relu")
    c.activation = Activation::relu;
  else if (act == "gelu")
    c.activation = Activation::gelu_erf;
  else
    throw PackError("torch-encoder: unsupported activation '" + act + "' (relu or gelu)");
  c.rope = RopeMode::none;
  c.norm_first = opt.norm_first >= 0 ? opt.norm_first : (truthy(meta({"norm_first"})) ? 1 : 0);
  c.causal = opt.causal >= 0 ? opt.causal : (truthy(meta({"causal", "is_causal"})) ? 1 : 0);
  c.has_bias = st.has(layer_prefix(0) + "self_attn.in_proj_bias") ? 1 : 0;
  c.final_norm = (!single && st.has(stack_prefix + "norm.weight")) ? 1 : 0;

  // Every tensor by the table's names; fused sources (in_proj_weight = [wq; wk; wv]) are split
  // into their row blocks.
  for_each_arch_tensor(arch_encoder(), c, [&](const ArchTensorNames& t, int32_t layer) {
    const std::string name = (layer >= 0 ? layer_prefix(layer) : stack_prefix) + t.torch;
    const std::vector<int64_t> want = arch_tensor_shape(c, t.role);
    std::vector<int64_t> whole = want;
    whole[0] *= t.torch_parts;
    std::vector<float> v = st.get(name, &sh);
    expect_shape(sh, whole, name);
    if (t.torch_parts > 1) {
      const size_t block = v.size() / static_cast<size_t>(t.torch_parts);
      v = std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(t.torch_part * block),
                             v.begin() + static_cast<std::ptrdiff_t>((t.torch_part + 1) * block));
    }
    add(m, t.role, layer, want, std::move(v), name);
  });
  require_valid_config(c, "torch-encoder: ");
  return m;
}

}  // namespace einfer::pack
