// PyTorch's encoder-decoder (nn.Transformer semantics, issue 19) on float sequences.
//
// memory = encoder(src): the encoder stack of models/encoder.h (bidirectional) and its final norm.
// Each decoder layer (post-norm, PyTorch's default; pre-norm with norm_first applies each norm to
// the sublayer's input instead, as in the encoder):
//   x = norm1(x + SA(x))           masked (causal) self-attention among the target rows
//   x = norm2(x + CA(x, memory))   cross-attention: queries from x, keys/values from the memory
//   x = norm3(x + FF(x))
// then the decoder's final norm. Attention is the fused kernel of kernels/attention/attention.h;
// the cross-attention keys and values of every decoder layer are projected ONCE per source into the
// arena, and the self-attention keys and values of the target rows kept in a KV cache, so the
// target can be decoded all at once or one row at a time with identical results.
//
// State machine (TransformerState):
//   initialised  --transformer_encode_memory-->  memory ready, 0 target rows
//   memory ready --transformer_decode_step-->    one more target row (up to max_target)
//   memory ready --transformer_decode-->         rows 0..n-1 decoded at once (replaces earlier
//   rows) any          --transformer_encode_memory-->  new memory, 0 target rows
// Decoding before a memory is encoded fails with invalid_argument, past max_target with
// out_of_range; a failed call leaves the previous state usable only for a new encode.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/encoder.h"
#include "runtime/arena.h"
#include "runtime/model.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

struct DecoderLayerWeights {
  EncoderLayerWeights base;  // self-attention, norm1 (self), norm2 = torch norm3 (FFN), FFN
  MhaWeights cross;          // multihead_attn
  TensorView cross_norm_w, cross_norm_b;  // torch norm2
};

struct TransformerWeights {
  ModelConfig config;
  EncoderWeights encoder;                  // config.n_layers layers and the encoder's final norm
  DecoderLayerWeights* decoder = nullptr;  // config.n_decoder_layers layers
  TensorView decoder_norm_w, decoder_norm_b;
};

struct TransformerState {
  int32_t max_source = 0, max_target = 0;
  EncoderState encoder;  // rows for max(max_source, max_target) positions and the shared scratch
  // Per decoder layer: cross keys/values [layers][max_source][d], self keys/values
  // [layers][max_target][d].
  float* memory_k = nullptr;
  float* memory_v = nullptr;
  float* self_k = nullptr;
  float* self_v = nullptr;
  int32_t source_rows = 0;  // rows of the encoded memory (0: none yet)
  int32_t target_rows = 0;  // target rows decoded so far
};

Status transformer_bind_weights(const Model& model, Arena& arena, TransformerWeights* weights);

// State for sources of up to max_source rows and targets of up to max_target rows (0: the model's
// context length, which must then be set).
Status transformer_state_init(const ModelConfig& config, int32_t max_source, int32_t max_target,
                              Arena& arena, TransformerState* state);

// Exact arena bytes of transformer_bind_weights + transformer_state_init.
Status transformer_arena_bytes(const ModelConfig& config, int32_t max_source, int32_t max_target,
                               size_t* bytes);

// Encodes src[m][d] (1 <= m <= max_source) and projects every decoder layer's cross-attention
// keys and values of it into the state; the target starts empty.
Status transformer_encode_memory(const TransformerWeights& weights, TransformerState* state,
                                 const float* src, int32_t m);

// out[n][d]: the decoder on target rows tgt[n][d] (row i attends target rows 0..i) against the
// encoded memory; the rows' keys/values are kept, so decode_step continues at row n.
Status transformer_decode(const TransformerWeights& weights, TransformerState* state,
                          const float* tgt, int32_t n, float* out);

// out[d]: the decoder output of target row tgt[d] at position state->target_rows, attending the
// rows decoded before through the cache; equals the matching row of transformer_decode.
Status transformer_decode_step(const TransformerWeights& weights, TransformerState* state,
                               const float* tgt, float* out);

}  // namespace einfer
