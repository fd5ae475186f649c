#include "tools/einfer-pack/arch_names.h"

#include <cstring>

#include "runtime/format.h"
#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

std::string arch_tensor_name(const char* pattern, int32_t layer) {
  std::string name = pattern;
  const size_t at = name.find("{}");
  if (at != std::string::npos) name.replace(at, 2, std::to_string(layer));
  return name;
}

std::vector<int64_t> arch_tensor_shape(const ModelConfig& config, TensorRole role) {
  int64_t shape[kEinMaxRank] = {};
  const int rank = ein_expected_shape(config, role, shape);
  return std::vector<int64_t>(shape, shape + rank);
}

namespace {
constexpr double kMaxConfigInteger = 16777216.0;  // 2^24: any dimension or count beyond is hostile
}  // namespace

bool arch_key_is_integer(const ArchDescription& arch, SourceFormat format, const char* key) {
  const bool hf = format == SourceFormat::hugging_face;
  for (size_t i = 0; i < arch.config_key_count; ++i) {
    const ArchConfigKey& k = arch.config_keys[i];
    const char* name = hf ? k.hf : k.gguf;
    if (name && std::strcmp(name, key) == 0) return arch_field_is_integer(k.field);
  }
  return false;
}

void read_arch_config(const ArchDescription& arch, SourceFormat format,
                      const std::function<bool(const char* key, double* value)>& lookup,
                      const std::string& what, ModelConfig* c) {
  const bool hf = format == SourceFormat::hugging_face;
  for (size_t i = 0; i < arch.config_key_count; ++i) {
    const ArchConfigKey& k = arch.config_keys[i];
    const char* key = hf ? k.hf : k.gguf;
    if (!key) continue;
    double v = 0;
    if (lookup(key, &v)) {
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
    }
  }
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
    for (int32_t l = 0; l < config.n_layers; ++l) visit(t, l);
  }
}

}  // namespace einfer::pack
