// The encoder's attention variants (issue 19) around the same projections as models/mha.h:
// a sparse softmax pattern (kernels/attention_variants/attention_variants.h) or linear attention
// (kernels/attention_variants/attention_variants.h), chosen by the model's config. Dense softmax
// stays in mha_forward.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention_variants/attention_variants.h"
#include "models/mha.h"
#include "runtime/model.h"
#include "runtime/status.h"

namespace einfer {

// True when the config asks for a sparse pattern or linear attention.
bool attention_variant_active(const ModelConfig& config);

AttentionPattern attention_pattern_from_config(const ModelConfig& config);

// Scratch bytes of the variant's attention kernel for n positions (projections not included).
Status attention_variant_scratch_bytes(const ModelConfig& config, int32_t n, size_t* bytes);

// out[n][d] = P_O · variant_attention(P_Q x, P_K x, P_V x) (+ biases); out may alias x.
Status attention_variant_forward(const MhaWeights& weights, const ModelConfig& config,
                                 const float* x, int32_t n, const MhaBuffers& buffers, float* out);

// Floats of one layer's recurrent state for encoder_stream_step (causal linear-elu), else 0.
size_t attention_variant_state_floats(const ModelConfig& config);

// One position x[d] of causal linear-elu attention through a layer's recurrent `state`.
Status attention_linear_step_forward(const MhaWeights& weights, const ModelConfig& config,
                                     const float* x, const MhaBuffers& buffers, float* state,
                                     float* out);

}  // namespace einfer
