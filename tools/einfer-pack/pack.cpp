// Source model -> .ein image conversion, --inspect text/JSON and --emit-c headers.
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "kernels/quant/quant.h"
#include "models/einfer.h"
#include "models/session.h"
#include "models/tokenizer_normalize.h"
#include "models/tokenizer_text.h"
#include "runtime/format.h"
#include "tools/common/layout_report.h"
#include "tools/common/text.h"
#include "tools/einfer-pack/attention_options.h"
#include "tools/einfer-pack/importers.h"

namespace einfer::pack {

namespace {

const char* arch_name(ArchKind a) {
  switch (a) {
    case ArchKind::llama:
      return "llama";
    case ArchKind::encoder:
      return "encoder";
    case ArchKind::transformer:
      return "transformer";
    case ArchKind::bert:
      return "bert";
  }
  return "?";
}
const char* pooling_name(PoolingKind p) {
  return p == PoolingKind::mean ? "mean" : p == PoolingKind::cls ? "cls" : "none";
}
const char* norm_name(NormKind n) {
  return n == NormKind::rmsnorm ? "rmsnorm" : "layernorm";
}
const char* act_name(Activation a) {
  switch (a) {
    case Activation::swiglu:
      return "swiglu";
    case Activation::relu:
      return "relu";
    case Activation::gelu_erf:
      return "gelu_erf";
    case Activation::gelu_tanh:
      return "gelu_tanh";
    case Activation::geglu_tanh:
      return "geglu_tanh";
  }
  return "?";
}
const char* rope_scaling_name(RopeScaling r) {
  switch (r) {
    case RopeScaling::none:
      return "none";
    case RopeScaling::linear:
      return "linear";
    case RopeScaling::llama3:
      return "llama3";
    case RopeScaling::longrope:
      return "longrope";
  }
  return "?";
}
const char* rope_name(RopeMode r) {
  return r == RopeMode::none ? "none" : r == RopeMode::interleaved ? "interleaved" : "half_split";
}

using tools::fmt;

// RunOptions keeps the int8 KV cache as DType::i8; the command line calls it q8.
const char* kv_name(DType d) {
  return d == DType::i8 ? "q8" : dtype_name(d);
}

// A llama-family decoder's options beyond the shape (window, RoPE scaling, the family features),
// as "name value" items for the text form or JSON members.
std::vector<std::pair<std::string, std::string>> decoder_items(const ModelConfig& c,
                                                               const RunOptions& run, bool json) {
  std::vector<std::pair<std::string, std::string>> items;
  auto num = [](double v) { return fmt("%.9g", v); };
  auto flag = [json](uint32_t v) { return std::string(v ? (json ? "true" : "yes") : "false"); };
  auto str = [json](const char* v) {
    std::string q = json ? "\"" : "";
    return q + v + q;
  };
  items.push_back({"family", str(arch_family_name(c.family))});
  if (c.sliding_window > 0) {
    items.push_back({"sliding_window", std::to_string(c.sliding_window)});
    if (json || c.sliding_window_first_layer > 0)
      items.push_back({"window_first_layer", std::to_string(c.sliding_window_first_layer)});
    if (json || c.sliding_window_period > 0)
      items.push_back({"window_period", std::to_string(c.sliding_window_period)});
  }
  if (json || c.rope_scaling != RopeScaling::none) {
    items.push_back({"rope_scaling", str(rope_scaling_name(c.rope_scaling))});
    if (c.rope_scaling == RopeScaling::linear || c.rope_scaling == RopeScaling::llama3)
      items.push_back({"rope_factor", num(c.rope_factor)});
    if (c.rope_original_context > 0)
      items.push_back({"rope_original_context", std::to_string(c.rope_original_context)});
    if (c.rope_scaling == RopeScaling::longrope) {
      items.push_back({"rope_attn_factor", num(c.rope_attn_factor)});
      RunOptions resolved;
      const bool ok = llama_resolve_options(c, run, &resolved).ok();
      items.push_back({"rope_factors", str(!ok                                    ? "n/a"
                                           : llama_rope_long_factors(c, resolved) ? "long"
                                                                                  : "short")});
    }
  }
  if (json || c.rope_local_theta > 0.f)
    items.push_back({"rope_local_theta", num(c.rope_local_theta)});
  if (json || c.qk_norm) items.push_back({"qk_norm", flag(c.qk_norm)});
  if (json || c.post_norms) items.push_back({"post_norms", flag(c.post_norms)});
  if (json || c.embed_scale > 0.f) items.push_back({"embed_scale", num(c.embed_scale)});
  if (json || c.attn_scale > 0.f) items.push_back({"attn_scale", num(c.attn_scale)});
  if (json || c.attn_softcap > 0.f) items.push_back({"attn_softcap", num(c.attn_softcap)});
  if (json || c.final_softcap > 0.f) items.push_back({"final_softcap", num(c.final_softcap)});
  return items;
}

}  // namespace

namespace {

// A GGUF import packed as is: each matrix in its own GGUF block type (raw blocks, no scale
// region), other tensors f32. `natural` is the config's weight dtype (the most common block type).
EinImage pack_gguf_native(const SourceModel& source, DType natural, Progress progress) {
  EinImage image;
  image.config = source.config;
  image.config.weight_dtype = natural;
  image.config.group_size = 0;
  uint64_t total = 0, done = 0;
  for (const SourceTensor& t : source.tensors) total += t.values.size() * 4;
  for (const SourceTensor& t : source.tensors) {
    if (ein_role_is_matrix(t.role) && dtype_is_gguf_block(t.native)) {
      PackedTensor p;
      p.role = t.role;
      p.layer = t.layer;
      p.dtype = t.native;
      p.rank = static_cast<int>(t.shape.size());
      for (int i = 0; i < p.rank; ++i) p.shape[i] = t.shape[i];
      p.group_size = 0;
      p.data = t.native_data;
      image.tensors.push_back(std::move(p));
    } else {
      image.tensors.push_back(
          encode_tensor(t.role, t.layer, t.shape, t.values.data(), DType::f32, 0));
    }
    done += t.values.size() * 4;
    if (progress) progress(done, total);
  }
  return image;
}

}  // namespace

void add_float_tensor(SourceModel& m, TensorRole role, int32_t layer, std::vector<int64_t> shape,
                      std::vector<float> values) {
  SourceTensor t;
  t.role = role;
  t.layer = layer;
  t.shape = std::move(shape);
  t.values = std::move(values);
  m.tensors.push_back(std::move(t));
}

// NaN or Inf weights run to garbage text with exit 0: refuse them here, naming the tensor.
static void check_finite(const SourceTensor& t) {
  auto refuse = [&](const char* what, size_t i) {
    std::string name = tensor_role_name(t.role);
    if (t.layer >= 0) name += " of layer " + std::to_string(t.layer);
    throw PackError("tensor " + name + " has a non-finite " + what + " at element " +
                    std::to_string(i) + " (NaN or Inf weights are refused)");
  };
  for (size_t i = 0; i < t.values.size(); ++i)
    if (!std::isfinite(t.values[i])) refuse("value", i);
  for (size_t i = 0; i < t.native_scales.size(); ++i)
    if (!std::isfinite(t.native_scales[i])) refuse("scale", i);
}

EinImage pack_source(const SourceModel& source, DType dtype, int32_t group, Progress progress) {
  for (const SourceTensor& t : source.tensors) check_finite(t);
  if (dtype_is_gguf_block(dtype)) return pack_gguf_native(source, dtype, progress);
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16 && dtype != DType::q8 &&
      dtype != DType::q4)
    throw PackError("target dtype must be f32, f16, bf16, q8 or q4");
  EinImage image;
  image.config = source.config;
  image.config.weight_dtype = dtype;
  image.config.group_size = dtype_is_quantized(dtype) ? group : 0;
  if (dtype_is_quantized(dtype) && (group <= 0 || group > 65536)) throw PackError("bad group size");
  uint64_t total = 0, done = 0;
  for (const SourceTensor& t : source.tensors) total += t.values.size() * 4;
  for (const SourceTensor& t : source.tensors) {
    const bool matrix = ein_role_is_matrix(t.role);
    if (matrix && t.native == dtype && t.native_group == group && dtype_is_quantized(dtype)) {
      PackedTensor p;  // lossless: keep the source's own quantized bytes
      p.role = t.role;
      p.layer = t.layer;
      p.dtype = dtype;
      p.rank = static_cast<int>(t.shape.size());
      for (int i = 0; i < p.rank; ++i) p.shape[i] = t.shape[i];
      p.group_size = group;
      p.data = t.native_data;
      p.scales.resize(t.native_scales.size() * 4);
      std::memcpy(p.scales.data(), t.native_scales.data(), p.scales.size());
      image.tensors.push_back(std::move(p));
    } else {
      image.tensors.push_back(encode_tensor(t.role, t.layer, t.shape, t.values.data(),
                                            matrix ? dtype : DType::f32, matrix ? group : 0));
    }
    done += t.values.size() * 4;
    if (progress) progress(done, total);
  }
  return image;
}

namespace {

// The packed tokenizer as --inspect shows it, with the exact arena its encoding tables take.
struct TokenizerInfo {
  bool present = false;
  std::string text;  // "n/a (why)" when the region does not parse
  size_t arena_bytes = 0;
  PackedTokenizer packed;
};

TokenizerInfo tokenizer_info(const Model& model) {
  TokenizerInfo t;
  if (model.tokenizer == nullptr) return t;
  t.present = true;
  const Status s = tokenizer_parse(model.tokenizer, model.tokenizer_bytes, &t.packed);
  if (!s.ok()) {
    t.text = "n/a (" + status_text(s) + ")";
    return t;
  }
  const TokenizerHeader& h = t.packed.header;
  t.arena_bytes = text_tokenizer_arena_bytes(t.packed);
  static const char* const kPre[kPretokenizerCount] = {"none",        "gpt2", "llama3",     "qwen2",
                                                       "digits+gpt2", "bert", "split-space"};
  static const char* const kAlgorithm[] = {"?", "sentencepiece-bpe", "bpe", "wordpiece"};
  static const char* const kForm[] = {"", "nfc", "nfd", "nfkc", "nfkd"};
  std::string eog;
  for (uint32_t i = 0; i < h.n_eog; ++i) {
    if (i) eog.push_back(',');
    eog.append(std::to_string(h.eog_ids[i]));
  }
  std::string norm;  // the normalizer's steps in the order they run
  for (const auto& [bit, name] :
       {std::pair{kNormBertClean, "bert-clean"}, std::pair{kNormBertChinese, "cjk-spacing"}}) {
    if (h.normalizer & bit) norm += std::string(norm.empty() ? "" : "+") + name;
  }
  if (h.normalizer & kNormFormMask)
    norm += std::string(norm.empty() ? "" : "+") + kForm[h.normalizer & kNormFormMask];
  for (const auto& [bit, name] :
       {std::pair{kNormStripNonspacing, "strip-mn"}, std::pair{kNormStripMarks, "strip-marks"},
        std::pair{kNormLowercase, "lowercase"}}) {
    if (h.normalizer & bit) norm += std::string(norm.empty() ? "" : "+") + name;
  }
  t.text =
      fmt("%s%s, %u tokens, %u merges, normalizer %s, pre-tokenizer %s, bos %d%s, eos %d%s, "
          "eog [%s], unk %d",
          kAlgorithm[h.algorithm], (h.flags & kTokFlagByteLevel) ? " (byte-level)" : "", h.n_tokens,
          h.n_merges, norm.empty() ? "none" : norm.c_str(), kPre[h.pretokenizer], h.bos_id,
          (h.flags & kTokFlagAddBos) ? " (added)" : "", h.eos_id,
          (h.flags & kTokFlagAddEos) ? " (added)" : "", eog.c_str(), h.unk_id);
  return t;
}

}  // namespace

std::string describe_model(const Model& model, const RunOptions& run, bool json) {
  const ModelConfig& c = model.config;
  const TokenizerInfo tok = tokenizer_info(model);
  size_t arena = 0;
  const Status as = session_arena_bytes(c, run, &arena);
  std::string arena_text = as.ok() ? std::to_string(arena) : "n/a (" + status_text(as) + ")";
  std::string out;
  uint64_t weight_bytes = 0, params = 0;
  struct Row {
    TensorView v;
    TensorRole role;
    int32_t layer;
    uint64_t bytes;
  };
  std::vector<Row> rows;
  for (uint32_t i = 0; i < model.tensor_count; ++i) {
    TensorRecord r;
    std::memcpy(&r, static_cast<const unsigned char*>(model.tensor_table) + i * sizeof r, sizeof r);
    TensorView v;
    model_tensor(model, static_cast<TensorRole>(r.role), r.layer, &v);
    rows.push_back({v, static_cast<TensorRole>(r.role), r.layer, r.data_bytes + r.scales_bytes});
    weight_bytes += r.data_bytes + r.scales_bytes;
    params += static_cast<uint64_t>(v.numel());
  }
  const char* wd = dtype_name(c.weight_dtype);
  if (json) {
    out += "{\n  \"arch\": {";
    out +=
        fmt("\"kind\": \"%s\", \"dim\": %d, \"hidden_dim\": %d, \"n_layers\": %d, \"n_heads\": %d, "
            "\"n_kv_heads\": %d, \"head_dim\": %d, \"vocab_size\": %d, \"context_length\": %d, ",
            arch_name(c.arch), c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim,
            c.vocab_size, c.context_length);
    out +=
        fmt("\"norm\": \"%s\", \"norm_eps\": %g, \"activation\": \"%s\", \"rope\": \"%s\", "
            "\"rope_theta\": %g, ",
            norm_name(c.norm), static_cast<double>(c.norm_eps), act_name(c.activation),
            rope_name(c.rope), static_cast<double>(c.rope_theta));
    out +=
        fmt("\"tied_classifier\": %s, \"has_bias\": %s, \"norm_first\": %s, \"causal\": %s, "
            "\"final_norm\": %s, \"weight_dtype\": \"%s\", \"group_size\": %d},\n",
            c.tied_classifier ? "true" : "false", c.has_bias ? "true" : "false",
            c.norm_first ? "true" : "false", c.causal ? "true" : "false",
            c.final_norm ? "true" : "false", wd, c.group_size);
    if (c.arch == ArchKind::transformer) {
      out.resize(out.size() - 3);  // reopen the arch object
      out += fmt(", \"n_decoder_layers\": %d},\n", c.n_decoder_layers);
    }
    if (c.arch == ArchKind::bert) {
      out.resize(out.size() - 3);
      out += fmt(", \"pooling\": \"%s\", \"normalize\": %s, \"type_vocab_size\": %d},\n",
                 pooling_name(c.pooling), c.normalize ? "true" : "false", c.type_vocab_size);
    }
    if (c.arch == ArchKind::llama) {
      out += "  \"decoder\": {";
      bool first = true;
      for (const auto& [name, value] : decoder_items(c, run, true)) {
        out += first ? "\"" : ", \"";
        out += name;
        out += "\": ";
        out += value;
        first = false;
      }
      out += "},\n";
    }
    out += "  \"attention\": \"" + describe_attention_variant(c) + "\",\n";
    out += "  \"tensors\": [\n";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::string shape;
      for (int d = 0; d < r.v.rank; ++d) {
        if (d) shape += ", ";
        shape += std::to_string(r.v.shape[d]);
      }
      const bool shown = dtype_is_quantized(r.v.dtype) || layout_interleaved(r.v.layout);
      const std::string layout =
          shown ? std::string(", \"layout\": \"") + layout_name(r.v.layout) + "\"" : std::string();
      out +=
          fmt("    {\"role\": \"%s\", \"layer\": %d, \"dtype\": \"%s\", \"shape\": [%s], "
              "\"bytes\": %" PRIu64 "%s}%s\n",
              tensor_role_name(r.role), r.layer, dtype_name(r.v.dtype), shape.c_str(), r.bytes,
              layout.c_str(), i + 1 < rows.size() ? "," : "");
    }
    out += "  ],\n";
    out += fmt("  \"tensor_count\": %u, \"parameters\": %" PRIu64 ", \"weight_bytes\": %" PRIu64
               ", \"file_bytes\": %zu, \"tokenizer_bytes\": %zu,\n",
               model.tensor_count, params, weight_bytes, model.image_bytes, model.tokenizer_bytes);
    if (tok.present)
      out += fmt("  \"tokenizer\": \"%s\", \"tokenizer_arena_bytes\": %zu,\n", tok.text.c_str(),
                 tok.arena_bytes);
    out += fmt(
        "  \"run\": {\"context\": %d, \"window\": %d, \"sinks\": %d, \"kv\": \"%s\", "
        "\"max_batch\": %d, \"threads\": %d},\n",
        run.context, run.window, run.sinks, kv_name(run.kv_dtype), run.max_batch, run.threads.n);
    if (as.ok())
      out += fmt("  \"arena_bytes\": %zu\n}\n", arena);
    else
      out += "  \"arena_bytes\": null, \"arena_error\": \"" + status_text(as) + "\"\n}\n";
    return out;
  }
  // The family when the file records one other than plain llama ("llama (gemma3)").
  std::string family;
  if (c.family != ArchFamily::unspecified && c.family != ArchFamily::llama) {
    family = " (";
    family += arch_family_name(c.family);
    family += ")";
  }
  out +=
      fmt("architecture: %s%s  dim %d  hidden %d  layers %d  heads %d  kv_heads %d  head_dim %d\n",
          arch_name(c.arch), family.c_str(), c.dim, c.hidden_dim, c.n_layers, c.n_heads,
          c.n_kv_heads, c.head_dim);
  out +=
      fmt("              vocab %d  context %d  norm %s eps %g  activation %s  rope %s theta %g\n",
          c.vocab_size, c.context_length, norm_name(c.norm), static_cast<double>(c.norm_eps),
          act_name(c.activation), rope_name(c.rope), static_cast<double>(c.rope_theta));
  out += fmt("              tied_classifier %u  bias %u  norm_first %u  causal %u  final_norm %u\n",
             c.tied_classifier, c.has_bias, c.norm_first, c.causal, c.final_norm);
  out += "              attention " + describe_attention_variant(c) + "\n";
  if (c.arch == ArchKind::bert)
    out += fmt(
        "              sentence embedding: pooling %s%s, learned positions %d, token types %d\n",
        pooling_name(c.pooling), c.normalize ? ", L2-normalized" : "", c.context_length,
        c.type_vocab_size);
  if (c.arch == ArchKind::llama) {
    std::string line;
    for (const auto& [name, value] : decoder_items(c, run, false)) {
      if (line.size() > 60) {
        out += "              " + line + "\n";
        line.clear();
      }
      if (!line.empty()) line += "  ";
      line += name;
      line += " ";
      line += value;
    }
    if (!line.empty()) out += "              " + line + "\n";
  }
  if (c.arch == ArchKind::transformer) {
    // The arena's two K/V stores: cross-attention memory and the decoder's self-attention cache.
    const int64_t rows = run.context > 0 ? run.context : c.context_length;
    const int64_t kv = int64_t{2} * c.n_decoder_layers * rows * c.dim * 4;
    out +=
        fmt("              encoder-decoder: %d encoder layers (0..%d), %d decoder layers (%d..)\n",
            c.n_layers, c.n_layers - 1, c.n_decoder_layers, c.n_layers);
    out +=
        fmt("              arena: cross-attention K/V %lld bytes + self-attention KV %lld bytes "
            "for %lld source / target rows\n",
            static_cast<long long>(kv), static_cast<long long>(kv), static_cast<long long>(rows));
  }
  if (dtype_is_gguf_block(c.weight_dtype)) {
    out +=
        fmt("quantization: GGUF blocks kept as the file stored them, per tensor (mostly %s)", wd);
  } else {
    out += fmt("quantization: weights %s", wd);
  }
  if (c.group_size) out += fmt(", group %d", c.group_size);
  out += "\n";
  if (dtype_is_quantized(c.weight_dtype) || dtype_is_gguf_block(c.weight_dtype))
    out += "layout:       " + tools::describe_layout(model) + "\n";
  // Importer remarks (e.g. GGUF IQ4_NL tensors converted to q8_0) from the metadata section.
  FileHeader h;
  std::memcpy(&h, model.image, sizeof h);
  if ((h.flags & kEinFlagMetadata) && h.metadata_offset + h.metadata_bytes <= model.image_bytes) {
    const std::string meta(reinterpret_cast<const char*>(model.image + h.metadata_offset),
                           static_cast<size_t>(h.metadata_bytes));
    for (size_t at = meta.find("notes="); at != std::string::npos;
         at = meta.find("notes=", at + 1)) {
      if (at != 0 && meta[at - 1] != '\n') continue;
      const size_t end = meta.find('\n', at);
      out += "notes:        " + meta.substr(at + 6, end == std::string::npos ? end : end - at - 6) +
             "\n";
    }
  }
  out += "\n";
  out +=
      fmt("%-18s %5s %-5s %-16s %12s  %s\n", "role", "layer", "dtype", "shape", "bytes", "layout");
  for (const Row& r : rows) {
    std::string shape;
    for (int d = 0; d < r.v.rank; ++d) {
      if (d) shape += "x";
      shape += std::to_string(r.v.shape[d]);
    }
    out += fmt("%-18s %5d %-5s %-16s %12" PRIu64 "  %s\n", tensor_role_name(r.role), r.layer,
               dtype_name(r.v.dtype), shape.c_str(), r.bytes,
               dtype_is_quantized(r.v.dtype) || layout_interleaved(r.v.layout)
                   ? layout_name(r.v.layout)
                   : "");
  }
  out += fmt("\ntensors %u  parameters %" PRIu64 "  weight bytes %" PRIu64
             "  file bytes %zu  tokenizer bytes %zu\n",
             model.tensor_count, params, weight_bytes, model.image_bytes, model.tokenizer_bytes);
  if (tok.present)
    out += fmt("tokenizer: %s\ntokenizer arena bytes %zu (encoding tables; 0 decode-only)\n",
               tok.text.c_str(), tok.arena_bytes);
  out += fmt("arena bytes (context %d, window %d, sinks %d, kv %s, batch %d, threads %d): %s\n",
             run.context, run.window, run.sinks, kv_name(run.kv_dtype), run.max_batch,
             run.threads.n, arena_text.c_str());
  return out;
}

EmittedC emit_c(const std::vector<uint8_t>& image, const Model& model, const RunOptions& run,
                const CApiSizing& capi, const EmitCNames& names) {
  const std::string& symbol = names.symbol;
  std::string upper;
  for (char ch : symbol) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  // The constant is what einfer_session_create needs (the C API's own state, the session, and the
  // tokenizer when asked), measured by the C API itself on this very image.
  einfer_options o;
  einfer_options_default(&o);
  o.context = run.context;
  o.window = run.window;
  o.sinks = run.sinks;
  o.kv_int8 = run.kv_dtype == DType::i8 ? 1 : 0;
  o.max_batch = run.max_batch;
  o.threads.n = run.threads.n;  // sizing only: one scratch slot per worker
  o.no_plan_cache = run.cache_plans ? 0 : 1;
  o.with_tokenizer = capi.with_tokenizer;
  o.max_prompt_bytes = capi.max_prompt_bytes;
  size_t arena = 0;
  char err[160] = {};
  const int rc = einfer_arena_bytes(model.image, model.image_bytes, &o, &arena, err, sizeof err);
  size_t session_arena = 0;
  const Status ss = session_arena_bytes(model.config, run, &session_arena);

  EmittedC c;
  std::string& h = c.header;
  h +=
      "/* Generated by einfer-pack --emit-c: declarations of a .ein model image (docs/format.md)\n";
  h += " * defined in " + names.source_name + " (placed in section \"" + names.section +
       "\": map it to flash in\n";
  h += " * the linker script, e.g. KEEP(*(" + names.section + ")) > FLASH). Use with the C API:\n";
  h += " *   einfer_session_create(" + symbol + "_data, " + upper + "_BYTES, &options, arena, " +
       upper + "_ARENA_BYTES, ...)\n";
  h += " * with the options set from the macros below. */\n";
  const std::string guard = upper + "_H";
  h += "#ifndef " + guard + "\n#define " + guard +
       "\n\n#include <stddef.h>\n#include <stdint.h>\n\n";
  h += fmt("#define %s_BYTES %zuu\n", upper.c_str(), image.size());
  h += fmt("#define %s_ALIGNMENT 64\n", upper.c_str());
  h += fmt("#define %s_SECTION \"%s\"\n", upper.c_str(), names.section.c_str());
  h += fmt("#define %s_TENSORS %uu\n", upper.c_str(), model.tensor_count);
  h += fmt("#define %s_TOKENIZER_BYTES %zuu\n", upper.c_str(), model.tokenizer_bytes);
  h += "/* run options the arena constant is computed for */\n";
  h += fmt("#define %s_CONTEXT %d\n", upper.c_str(), run.context);
  h += fmt("#define %s_WINDOW %d\n", upper.c_str(), run.window);
  h += fmt("#define %s_SINKS %d\n", upper.c_str(), run.sinks);
  h += fmt("#define %s_KV_INT8 %d\n", upper.c_str(), o.kv_int8);
  h += fmt("#define %s_MAX_BATCH %d\n", upper.c_str(), run.max_batch);
  h += fmt("#define %s_NO_PLAN_CACHE %d\n", upper.c_str(), run.cache_plans ? 0 : 1);
  h += fmt("#define %s_WITH_TOKENIZER %d\n", upper.c_str(), capi.with_tokenizer);
  h += fmt("#define %s_MAX_PROMPT_BYTES %d\n", upper.c_str(), capi.max_prompt_bytes);
  if (rc == 0) {
    h += "/* einfer_arena_bytes() for these options (einfer_session_create's whole arena) */\n";
    h += fmt("#define %s_ARENA_BYTES %zuu\n", upper.c_str(), arena);
  } else {
    h += "/* " + upper + "_ARENA_BYTES: n/a (" + std::string(err) + ") */\n";
  }
  if (ss.ok()) {
    h += "/* of which the model session (KV cache, RoPE table, activations, scratch) */\n";
    h += fmt("#define %s_SESSION_ARENA_BYTES %zuu\n", upper.c_str(), session_arena);
  }
  h += "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n";
  h += "/* The image, " + upper + "_ALIGNMENT-byte aligned, read in place (never copied). */\n";
  h += "extern const uint8_t " + symbol + "_data[" + upper + "_BYTES];\n";
  h += "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " + guard + " */\n";

  // One definition, in its own section so a linker script can place it (flash, external memory);
  // `used` keeps it through --gc-sections even when only reached through a pointer.
  std::string& src = c.source;
  src.reserve(image.size() * 5 + 1024);
  src += "/* Generated by einfer-pack --emit-c: the .ein model image (declared in " +
         names.header_name + "). */\n";
  src += "#include \"" + names.header_name + "\"\n\n";
  src += "#if defined(__cplusplus)\n#define EINFER_EMIT_ALIGNAS(n) alignas(n)\n";
  src += "#else\n#define EINFER_EMIT_ALIGNAS(n) _Alignas(n)\n#endif\n";
  src += "#if defined(__GNUC__) || defined(__clang__)\n";
  src += "__attribute__((section(" + upper + "_SECTION), used))\n#endif\n";
  src += "EINFER_EMIT_ALIGNAS(" + upper + "_ALIGNMENT) const uint8_t " + symbol + "_data[" + upper +
         "_BYTES] = {\n";
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < image.size(); ++i) {
    if (i % 16 == 0) src += "  ";
    src += "0x";
    src += kHex[image[i] >> 4];
    src += kHex[image[i] & 15];
    src += ',';
    if (i % 16 == 15 || i + 1 == image.size()) src += '\n';
  }
  src += "};\n";
  return c;
}

}  // namespace einfer::pack
