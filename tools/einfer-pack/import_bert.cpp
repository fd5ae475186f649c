// Hugging Face BERT sentence encoders (config.json model_type "bert"), as sentence-transformers
// ships them: config.json + model.safetensors (or a sharded index), the tokenizer files, and the
// modules that turn token states into a sentence vector (modules.json: Transformer, then Pooling
// with its 1_Pooling/config.json, then an optional Normalize).
//
// Tensor names are models/arch/arch_bert.cpp's, with or without the "bert." prefix the task heads
// (BertForMaskedLM ...) store, and TensorFlow-era LayerNorm "gamma"/"beta" names read as "weight"/
// "bias" (as transformers and llama.cpp's converter do). pytorch_model.bin folders are not read:
// convert them to safetensors first.
//
// Pooling (sentence-transformers models/Pooling.py) runs on the device for mean and CLS; the
// other modes (max, mean_sqrt_len_tokens, weightedmean, lasttoken, several at once) and modules
// after pooling other than Normalize (Dense ...) are refused by name. A folder without modules.json
// and without 1_Pooling is what sentence-transformers wraps with mean pooling and no
// normalization; einfer does the same and says so.
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <map>
#include <memory>

#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"
#include "tools/einfer-pack/safetensors.h"

namespace einfer::pack {

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

Json read_json(const std::string& path, const std::string& what) {
  const std::vector<uint8_t> b = read_file(path);
  Json j = parse_json(std::string(b.begin(), b.end()), what);
  if (j.type != Json::Type::object) throw PackError(what + ": not a JSON object");
  return j;
}

// transformers ACT2FN names onto einfer's activations.
Activation bert_activation(const Json& cfg) {
  const Json* act = cfg.find("hidden_act");
  if (!act || act->type == Json::Type::null) return Activation::gelu_erf;  // BertConfig default
  if (act->type == Json::Type::string) {
    const std::string& a = act->str;
    if (a == "gelu") return Activation::gelu_erf;  // GELUActivation: erf
    if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast")
      return Activation::gelu_tanh;  // the tanh approximation (gelu_fast: the same formula)
    if (a == "relu") return Activation::relu;
  }
  throw PackError("config.json: hidden_act '" + act->str +
                  "' is not supported for bert (gelu, gelu_new, gelu_pytorch_tanh, gelu_fast or "
                  "relu)");
}

// 1_Pooling/config.json (sentence-transformers Pooling's config keys) to the pooling kind.
PoolingKind read_pooling(const std::string& path, int32_t dim) {
  const Json p = read_json(path, path);
  std::vector<std::string> modes;
  if (const Json* mode = p.find("pooling_mode"); mode && mode->type == Json::Type::string)
    modes.push_back(mode->str);  // Pooling(pooling_mode=...) overrides the booleans
  else
    for (const auto& [key, v] : p.members)
      if (key.rfind("pooling_mode_", 0) == 0 && v.type == Json::Type::boolean && v.b)
        modes.push_back(key.substr(13));
  // Without the prompt's tokens in the pooling (instruction models): einfer applies no prompts
  // and pools every token.
  if (const Json* ip = p.find("include_prompt"); ip && ip->type == Json::Type::boolean && !ip->b)
    throw PackError(path + ": include_prompt false is not supported (einfer pools every token)");
  if (const Json* d = p.find("word_embedding_dimension");
      d && json_to_int(*d, path + ": word_embedding_dimension", 0, INT32_MAX) != dim)
    throw PackError(path + ": word_embedding_dimension differs from hidden_size " +
                    std::to_string(dim));
  if (modes.size() == 1 && (modes[0] == "mean_tokens" || modes[0] == "mean"))
    return PoolingKind::mean;
  if (modes.size() == 1 && (modes[0] == "cls_token" || modes[0] == "cls")) return PoolingKind::cls;
  std::string list;
  for (const std::string& m : modes) list += (list.empty() ? "" : " + ") + m;
  throw PackError(path + ": pooling '" + (list.empty() ? "none" : list) +
                  "' is not supported (one of mean or cls)");
}

// The modules after the transformer (modules.json), or the folder's 1_Pooling / 2_Normalize.
void read_sentence_modules(const std::string& folder, ModelConfig* c, std::string* notes) {
  const std::string modules_path = folder + "/modules.json";
  std::string pooling_dir;
  bool normalize = false;
  if (exists(modules_path)) {
    const std::vector<uint8_t> b = read_file(modules_path);
    const Json modules = parse_json(std::string(b.begin(), b.end()), "modules.json");
    if (modules.type != Json::Type::array) throw PackError("modules.json: not a list");
    const std::string prefix = "sentence_transformers.models.";
    for (const Json& m : modules.items) {
      const Json* type = m.find("type");
      const Json* path = m.find("path");
      if (!type || type->type != Json::Type::string)
        throw PackError("modules.json: a module without a type");
      const std::string t =
          type->str.rfind(prefix, 0) == 0 ? type->str.substr(prefix.size()) : type->str;
      if (t == "Transformer" && pooling_dir.empty() && !normalize) {
        // Older folders keep the model in a subfolder (0_Transformer/): not this layout.
        if (path && path->type == Json::Type::string && !path->str.empty())
          throw PackError("modules.json: the model lives in " + path->str +
                          "/ (an older sentence-transformers layout): einfer reads config.json "
                          "and the weights at the folder's top");
        continue;
      }
      if (t == "Pooling" && pooling_dir.empty() && !normalize && path &&
          path->type == Json::Type::string && path->str.find("..") == std::string::npos) {
        pooling_dir = path->str;
        continue;
      }
      if (t == "Normalize" && !pooling_dir.empty() && !normalize) {
        normalize = true;
        continue;
      }
      throw PackError("modules.json: module " + type->str +
                      " is not supported here (einfer runs Transformer, Pooling, Normalize)");
    }
    if (pooling_dir.empty()) throw PackError("modules.json: no Pooling module after the model");
  } else if (exists(folder + "/1_Pooling/config.json")) {
    pooling_dir = "1_Pooling";
    normalize = exists(folder + "/2_Normalize");
  }
  if (pooling_dir.empty()) {
    c->pooling = PoolingKind::mean;
    *notes =
        "no modules.json or 1_Pooling: mean pooling, not normalized (sentence-transformers' "
        "default for a plain model)";
  } else {
    c->pooling = read_pooling(folder + "/" + pooling_dir + "/config.json", c->dim);
  }
  c->normalize = normalize ? 1 : 0;
}

}  // namespace

bool hf_folder_is_bert(const std::string& folder) {
  const std::string path = folder + "/config.json";
  if (!exists(path)) return false;
  const std::vector<uint8_t> b = read_file(path);
  const Json cfg = parse_json(std::string(b.begin(), b.end()), "config.json");
  const Json* mt = cfg.find("model_type");
  return mt && mt->type == Json::Type::string && mt->str == arch_bert().hf_model_type;
}

SourceModel import_hf_bert(const std::string& folder) {
  const ArchDescription& arch = arch_bert();
  const Json cfg = read_json(folder + "/config.json", "config.json");
  for (const char* const* key = arch.hf_refused_if_true; *key; ++key)
    if (const Json* v = cfg.find(*key); v && v->type == Json::Type::boolean && v->b)
      throw PackError("config.json: " + std::string(*key) +
                      " true is not supported for bert (a sentence encoder)");
  // A task head (a cross-encoder's BertForSequenceClassification, ...) scores its input: its
  // hidden states are not the sentence vectors a user of that model expects.
  if (const Json* archs = cfg.find("architectures"); archs && archs->type == Json::Type::array)
    for (const Json& a : archs->items)
      for (const char* head :
           {"ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering",
            "ForMultipleChoice", "ForNextSentencePrediction"})
        if (a.type == Json::Type::string && a.str.find(head) != std::string::npos)
          throw PackError("config.json: " + a.str +
                          " is a task head, not a sentence encoder: einfer runs BertModel "
                          "embedders (a cross-encoder's scores are not built)");
  if (const Json* pe = cfg.find("position_embedding_type");
      pe && pe->type != Json::Type::null &&
      !(pe->type == Json::Type::string && pe->str == "absolute"))
    throw PackError("config.json: position_embedding_type '" + pe->str +
                    "' is not supported (absolute only)");
  SourceModel m;
  m.kind = "hf-bert";
  ModelConfig& c = m.config;
  c.arch = arch.kind;
  c.norm = arch.norm;
  c.rope = arch.rope;
  c.activation = bert_activation(cfg);
  c.has_bias = 1;
  auto lookup = [&](const char* key, double* value) {
    const Json* v = cfg.find(key);
    if (!v) return false;
    if (v->type == Json::Type::null) {
      *value = std::nan("");
      return true;
    }
    const std::string what = std::string("config.json: ") + key;
    if (arch_key_is_integer(arch, SourceFormat::hugging_face, key)) {
      *value = static_cast<double>(json_to_int(*v, what, 0, INT32_MAX));
    } else {
      if (!v->is_number() || !std::isfinite(static_cast<float>(v->num)))
        throw PackError(what + " must be a finite number");
      *value = v->num;
    }
    return true;
  };
  read_arch_config(arch, SourceFormat::hugging_face, lookup, "config.json: ", &c);
  if (c.n_heads <= 0 || c.dim % c.n_heads != 0)
    throw PackError("config.json: hidden_size is not a multiple of num_attention_heads");
  c.n_kv_heads = c.n_heads;
  c.head_dim = c.dim / c.n_heads;
  read_sentence_modules(folder, &c, &m.notes);
  require_valid_config(c, "config.json: ");
  // sentence-transformers truncates texts to max_seq_length tokens (below the position table).
  if (exists(folder + "/sentence_bert_config.json")) {
    const Json sb = read_json(folder + "/sentence_bert_config.json", "sentence_bert_config.json");
    if (const Json* n = sb.find("max_seq_length"); n && n->type != Json::Type::null) {
      const int64_t len =
          json_to_int(*n, "sentence_bert_config.json: max_seq_length", 1, c.context_length);
      m.metadata += "max_seq_length=" + std::to_string(len) + "\n";
    }
  }

  // Which file holds each tensor.
  std::map<std::string, std::string> where;
  if (exists(folder + "/model.safetensors.index.json")) {
    const Json index =
        read_json(folder + "/model.safetensors.index.json", "model.safetensors.index.json");
    const Json* wm = index.find("weight_map");
    if (!wm || wm->type != Json::Type::object)
      throw PackError("model.safetensors.index.json: no weight_map object");
    for (const auto& [k, v] : wm->members) {
      if (v.type != Json::Type::string || v.str.find('/') != std::string::npos)
        throw PackError("model.safetensors.index.json: bad shard name for " + k);
      where[k] = v.str;
    }
  } else if (!exists(folder + "/model.safetensors") && exists(folder + "/pytorch_model.bin")) {
    throw PackError(folder +
                    ": only pytorch_model.bin: einfer-pack reads safetensors (convert the folder, "
                    "e.g. with safetensors' convert script or save_pretrained(safe_serialization="
                    "True))");
  }
  std::map<std::string, std::unique_ptr<SafeTensors>> open;
  auto file_of = [&](const std::string& name) -> SafeTensors& {
    std::string file = "model.safetensors";
    if (!where.empty()) {
      auto it = where.find(name);
      file = it == where.end() ? where.begin()->second : it->second;
    }
    auto& st = open[file];
    if (!st) st = std::make_unique<SafeTensors>(read_file(folder + "/" + file), file);
    return *st;
  };
  // The stored name: as the table says, under "bert.", or with gamma/beta for LayerNorm.
  auto stored_name = [&](const std::string& name) {
    std::vector<std::string> tries = {name, "bert." + name};
    for (const auto& [suffix, old] : {std::pair{std::string(".weight"), std::string(".gamma")},
                                      std::pair{std::string(".bias"), std::string(".beta")}})
      if (name.find("LayerNorm") != std::string::npos && name.ends_with(suffix)) {
        const std::string renamed = name.substr(0, name.size() - suffix.size()) + old;
        tries.push_back(renamed);
        tries.push_back("bert." + renamed);
      }
    for (const std::string& t : tries)
      if ((where.empty() || where.count(t)) && file_of(t).has(t)) return t;
    throw PackError("model.safetensors: missing tensor " + name);
  };
  int half_matrices = 0, matrices = 0;  // an all-F16/BF16 checkpoint packs to that by default
  std::string half;
  for_each_arch_tensor(arch, c, [&](const ArchTensorNames& t, int32_t layer) {
    const std::string name = stored_name(arch_tensor_name(t.hf, layer));
    const std::vector<int64_t> want = arch_tensor_shape(c, t.role);
    std::vector<int64_t> shape;
    std::string dtype;
    std::vector<float> v = file_of(name).get(name, &shape, &dtype);
    expect_shape(shape, want, name);
    if (ein_role_is_matrix(t.role)) {
      ++matrices;
      if (dtype != "F32") ++half_matrices, half = dtype;
    }
    add_float_tensor(m, t.role, layer, want, std::move(v));
  });
  if (matrices > 0 && half_matrices == matrices)
    c.weight_dtype = half == "BF16" ? DType::bf16 : DType::f16;
  return m;
}

}  // namespace einfer::pack
