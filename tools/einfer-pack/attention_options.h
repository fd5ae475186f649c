// einfer-pack's encoder attention variants (issue 19): --attention-pattern SPEC,
// --attention softmax|linear-elu and --positions none|sinusoidal, applied to an imported config,
// and their one-line description for --inspect.
#pragma once

#include <string>

#include "runtime/model.h"

namespace einfer::pack {

struct AttentionOptions {
  std::string pattern;    // "" or terms joined by '+': window:W global:G strided:S fixed:L,C
  std::string attention;  // "" (softmax) | softmax | linear-elu
  std::string positions;  // "" (none) | none | sinusoidal
};

// Sets the config's attention fields; throws PackError on a malformed spec.
void apply_attention_options(const AttentionOptions& options, ModelConfig* config);

// "softmax dense", "softmax pattern window:4+global:1 causal", "linear-elu", plus positions.
std::string describe_attention_variant(const ModelConfig& config);

}  // namespace einfer::pack
