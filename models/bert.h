// BERT-style sentence-embedding encoders (ArchKind::bert): token ids in, one vector out.
//
//   x_i = LayerNorm(word[id_i] + position[i] + token_type[type_i])   (transformers BertEmbeddings)
//   x   = the encoder's post-norm layers on x (models/encoder.h: bidirectional multi-head attention
//         with biases, x = norm1(x + SA(x)); x = norm2(x + W2 act(W1 x + b1) + b2))
//   out = pooling(x): the mean of the n token states, or the first ([CLS]) one
//         (sentence-transformers' Pooling for one unpadded sequence, whose attention mask is all
//         ones), then out / max(|out|, 1e-12) when the model normalizes (its Normalize module).
//
// One sequence at a time (no padding, so no attention mask); token types are 0 (a single
// sentence) unless given. The layers are the encoder's own (EncoderWeights / EncoderState); the
// embeddings are looked up in the model image, the position and token-type tables are f32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/encoder.h"
#include "runtime/arena.h"
#include "runtime/model.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

struct BertWeights {
  EncoderWeights encoder;                  // the layer stack
  TensorView token_embedding;              // [V, d], any weight dtype
  TensorView position_embedding;           // [context_length, d] f32
  TensorView token_type_embedding;         // [type_vocab_size, d] f32; empty without token types
  TensorView embed_norm, embed_norm_bias;  // [d]
};

// The encoder's state serves: its x rows hold the embeddings going in and the token states coming
// out (encoder_state_init with max_seq <= the model's context length).
Status bert_bind_weights(const Model& model, Arena& arena, BertWeights* weights);

// Exact arena bytes of bert_bind_weights + encoder_state_init for sequences of max_seq tokens
// (0: the model's context length).
Status bert_arena_bytes(const ModelConfig& config, int32_t max_seq, size_t* bytes);

// The token states of one sequence of n ids (1 <= n <= state->max_seq; every id < vocab_size,
// every type id < type_vocab_size, type_ids null: all 0) in state->x [n][d].
Status bert_forward(const BertWeights& weights, EncoderState* state, const int32_t* ids,
                    const int32_t* type_ids, int32_t n);

// out[d] = the model's pooling of the n token states x [n][d], L2-normalized when the model says;
// invalid_argument for a model without pooling.
Status bert_pool(const ModelConfig& config, const float* x, int32_t n, float* out);

// bert_forward then bert_pool: the sentence embedding of one sequence.
Status bert_embed(const BertWeights& weights, EncoderState* state, const int32_t* ids,
                  const int32_t* type_ids, int32_t n, float* out);

}  // namespace einfer
