// Importer side of the architecture descriptions (models/arch/arch.h): tensor names with their
// layer filled in, shapes from the .ein schema, and a config read key by key from a source format.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/arch/arch.h"

namespace einfer::pack {

// `pattern` with "{}" replaced by `layer`, or by `arch` when given (GGUF metadata keys).
std::string arch_tensor_name(const char* pattern, int32_t layer, const char* arch = nullptr);

// The logical shape a role has in the .ein schema for this config (empty when absent).
std::vector<int64_t> arch_tensor_shape(const ModelConfig& config, TensorRole role);

enum class SourceFormat { hugging_face, gguf };

// Fills the config fields `arch` lists for `format`, in table order; lookup(key, &value) returns
// false when the key is absent (true with NaN for an explicit null; lookup checks the value's
// type). Throws PackError "<what>missing <key>" for a required one, and "<what><key> out of range"
// for an integer field that is not a whole number in 0..2^24 or a float field that is not finite as
// a float (checked before any cast).
void read_arch_config(const ArchDescription& arch, SourceFormat format,
                      const std::function<bool(const char* key, double* value)>& lookup,
                      const std::string& what, ModelConfig* config);

// Sets the RoPE scaling kind named `type` ("" or "none": none) after read_arch_config filled its
// parameters: zeroes those the kind does not use; throws PackError naming an unsupported type
// (yarn, dynamic, ...; longrope unless `longrope`: the architecture reads its factor lists) or a
// missing parameter.
void apply_rope_scaling(const std::string& type, const std::string& what, ModelConfig* config,
                        bool longrope = false);

// Whether `key` (a key of `arch` in `format`, GGUF keys with the architecture filled in) names an
// integer field; false for float fields and keys the table does not list.
bool arch_key_is_integer(const ArchDescription& arch, SourceFormat format, const char* key);

// A fused source tensor (ArchTensorNames::fused_parts > 1, Phi-3's qkv_proj): the first row of
// `names`' role in it, and in *total_rows the rows of the whole tensor (the parts' .ein shapes
// summed). Not fused: 0 and the role's own rows.
int64_t arch_fused_rows(const ArchDescription& arch, const ModelConfig& config,
                        const ArchTensorNames& names, SourceFormat format, int64_t* total_rows);

// Calls visit(names, layer) for every tensor of `arch` that `config` stores (layer -1 for global
// ones): the importers' one loop over an architecture's tensors.
void for_each_arch_tensor(const ArchDescription& arch, const ModelConfig& config,
                          const std::function<void(const ArchTensorNames&, int32_t)>& visit);

}  // namespace einfer::pack
