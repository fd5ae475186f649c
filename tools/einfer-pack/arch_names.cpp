#include "tools/einfer-pack/arch_names.h"

#include <cmath>
#include <cstring>

#include "runtime/format.h"
#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

std::string arch_tensor_name(const char* pattern, int32_t layer, const char* arch) {
  std::string name = pattern;
  const size_t at = name.find("{}");
  if (at != std::string::npos)
    name.replace(at, 2, arch ? std::string(arch) : std::to_string(layer));
  return name;
}

std::vector<int64_t> arch_tensor_shape(const ModelConfig& config, TensorRole role) {
  int64_t shape[kEinMaxRank] = {};
  const int rank = ein_expected_shape(config, role, shape);
  return std::vector<int64_t>(shape, shape + rank);
}

namespace {
constexpr double kMaxConfigInteger = 16777216.0;  // 2^24: any dimension or count beyond is hostile

void read_keys(const ArchDescription& arch, const ArchConfigKey* keys, size_t count, bool hf,
               const std::function<bool(const char* key, double* value)>& lookup,
               const std::string& what, ModelConfig* c) {
  for (size_t i = 0; i < count; ++i) {
    const ArchConfigKey& k = keys[i];
    if (!(hf ? k.hf : k.gguf)) {
      // The format has no key for it: a constant default still applies (llama.cpp's hard-coded
      // values, e.g. Gemma 3's local RoPE base).
      if ((hf ? k.hf_rule : k.gguf_rule) == ArchDefault::constant)
        arch_set_field(c, k.field, hf ? k.hf_fallback : k.gguf_fallback);
      continue;
    }
    const std::string key = hf ? k.hf : arch_tensor_name(k.gguf, -1, arch.gguf_arch);
    double v = 0;
    if (lookup(key.c_str(), &v)) {
      if (!std::isnan(v)) {
        if (arch_field_is_integer(k.field)) {
          if (!(v >= 0 && v <= kMaxConfigInteger) ||
              v != static_cast<double>(static_cast<int64_t>(v)))
            throw PackError(what + key + " out of range (a whole number in 0..16777216), got " +
                            std::to_string(v));
        } else if (!(v >= -3.4e38 && v <= 3.4e38)) {
          throw PackError(what + key + " out of range (not finite as a float)");
        }
        arch_set_field(c, k.field, v);
        continue;
      }
      if (arch_field_null_is_none(k.field)) {  // explicit null: no window, no soft-capping
        arch_set_field(c, k.field, 0);
        continue;
      }
    }
    switch (hf ? k.hf_rule : k.gguf_rule) {
      case ArchDefault::required:
        throw PackError(what + (hf ? "missing " : "missing metadata key ") + key);
      case ArchDefault::constant:
        arch_set_field(c, k.field, hf ? k.hf_fallback : k.gguf_fallback);
        break;
      case ArchDefault::same_as_heads:
        arch_set_field(c, k.field, c->n_heads);
        break;
      case ArchDefault::dim_over_heads:
        arch_set_field(c, k.field, c->n_heads > 0 ? c->dim / c->n_heads : 0);
        break;
      case ArchDefault::same_as_context:
        arch_set_field(c, k.field, c->context_length);
        break;
    }
  }
}
}  // namespace

bool arch_key_is_integer(const ArchDescription& arch, SourceFormat format, const char* key) {
  const bool hf = format == SourceFormat::hugging_face;
  for (const auto& [keys, count] : {std::pair{arch.config_keys, arch.config_key_count},
                                    std::pair{arch.extra_config_keys, arch.extra_config_key_count}})
    for (size_t i = 0; i < count; ++i) {
      const ArchConfigKey& k = keys[i];
      const char* name = hf ? k.hf : k.gguf;
      if (name && (hf ? std::string(name) : arch_tensor_name(name, -1, arch.gguf_arch)) == key)
        return arch_field_is_integer(k.field);
    }
  return false;
}

void read_arch_config(const ArchDescription& arch, SourceFormat format,
                      const std::function<bool(const char* key, double* value)>& lookup,
                      const std::string& what, ModelConfig* c) {
  const bool hf = format == SourceFormat::hugging_face;
  read_keys(arch, arch.config_keys, arch.config_key_count, hf, lookup, what, c);
  read_keys(arch, arch.extra_config_keys, arch.extra_config_key_count, hf, lookup, what, c);
}

void apply_rope_scaling(const std::string& type, const std::string& what, ModelConfig* c,
                        bool longrope) {
  RopeScaling kind = RopeScaling::none;
  if ((!type.empty() && !arch_rope_scaling_from_name(type.c_str(), &kind)) ||
      (kind == RopeScaling::longrope && !longrope))
    throw PackError(what + "rope_scaling type '" + type + "' is not supported (linear, llama3" +
                    (longrope ? ", longrope" : "") + " or none)");
  c->rope_scaling = kind;
  // The longrope cos/sin factor belongs to longrope alone (its importer sets it).
  if (kind != RopeScaling::longrope) c->rope_attn_factor = 0.f;
  auto need = [&](bool ok, const char* key) {
    if (!ok) throw PackError(what + "rope_scaling '" + type + "' needs a positive " + key);
  };
  switch (kind) {
    case RopeScaling::none:
      c->rope_factor = c->rope_low_freq_factor = c->rope_high_freq_factor = 0.f;
      c->rope_original_context = 0;
      break;
    case RopeScaling::linear:
      need(c->rope_factor > 0.f, "factor");
      c->rope_low_freq_factor = c->rope_high_freq_factor = 0.f;
      c->rope_original_context = 0;
      break;
    case RopeScaling::llama3:
      need(c->rope_factor > 0.f, "factor");
      need(c->rope_low_freq_factor > 0.f, "low_freq_factor");
      need(c->rope_high_freq_factor > 0.f, "high_freq_factor");
      need(c->rope_original_context > 0, "original_max_position_embeddings");
      break;
    case RopeScaling::longrope:  // the factor lists and the attention factor: the importer's
      c->rope_factor = c->rope_low_freq_factor = c->rope_high_freq_factor = 0.f;
      need(c->rope_original_context > 0, "original_max_position_embeddings");
      break;
  }
}

int64_t arch_fused_rows(const ArchDescription& arch, const ModelConfig& config,
                        const ArchTensorNames& names, SourceFormat format, int64_t* total_rows) {
  const bool hf = format == SourceFormat::hugging_face;
  const char* name = hf ? names.hf : names.gguf;
  int64_t offset = 0, total = 0;
  for (size_t i = 0; i < arch.tensor_count; ++i) {
    const ArchTensorNames& t = arch.tensors[i];
    const char* other = hf ? t.hf : t.gguf;
    if (names.fused_parts <= 1 || other == nullptr || name == nullptr ||
        std::strcmp(other, name) != 0)
      continue;
    const std::vector<int64_t> shape = arch_tensor_shape(config, t.role);
    const int64_t rows = shape.empty() ? 0 : shape[0];
    if (t.fused_part < names.fused_part) offset += rows;
    total += rows;
  }
  if (names.fused_parts <= 1) total = arch_tensor_shape(config, names.role)[0];
  *total_rows = total;
  return offset;
}

void for_each_arch_tensor(const ArchDescription& arch, const ModelConfig& config,
                          const std::function<void(const ArchTensorNames&, int32_t)>& visit) {
  for (size_t i = 0; i < arch.tensor_count; ++i) {
    const ArchTensorNames& t = arch.tensors[i];
    if (!ein_role_present(config, t.role)) continue;
    if (!ein_role_per_layer(t.role)) {
      visit(t, -1);
      continue;
    }
    // Transformer tables name encoder and decoder layers apart (arch_names_decoder_layer).
    const bool split = arch.kind == ArchKind::transformer;
    for (int32_t l = 0; l < ein_layer_count(config); ++l) {
      if (!ein_role_in_layer(config, t.role, l)) continue;
      if (split && arch_names_decoder_layer(t) != (l >= config.n_layers)) continue;
      visit(t, l);
    }
  }
}

}  // namespace einfer::pack
