// PyTorch-style transformer encoder: nn.TransformerEncoder semantics on float sequences.
//
// Each layer (post-norm, PyTorch's default):   x = norm1(x + SA(x));  x = norm2(x + FF(x))
//              (pre-norm, norm_first=True):    x = x + SA(norm1(x));  x = x + FF(norm2(x))
// SA is multi-head attention with biases (bidirectional, or causal when the model says so);
// FF(x) = W2 · act(W1 · x + b1) + b2 with ReLU or exact (erf) GELU; norms are LayerNorm with the
// model's epsilon; an optional final LayerNorm follows the stack. Sequences of a batch are
// independent and run one after another through the same state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/mha.h"
#include "runtime/arena.h"
#include "runtime/model.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

struct EncoderLayerWeights {
  MhaWeights attn;
  TensorView norm1_w, norm1_b, norm2_w, norm2_b;  // [d]
  TensorView w1, b1, w2, b2;                      // [f, d], [f], [d, f], [d]
};

struct EncoderWeights {
  ModelConfig config;
  EncoderLayerWeights* layers = nullptr;
  TensorView final_w, final_b;  // present when config.final_norm
};

struct EncoderState {
  int32_t max_seq = 0;
  float* x = nullptr;    // [S][d] the sequence being transformed
  float* xb = nullptr;   // [S][d]
  float* h = nullptr;    // [S][f]
  float* q = nullptr;    // [S][d]
  float* k = nullptr;    // [S][d]
  float* v = nullptr;    // [S][d]
  float* att = nullptr;  // [S][d]
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  float* recurrent = nullptr;  // causal linear-elu models: [layers][H k k + H k], else null
  int64_t position = 0;        // encoder_stream_step: positions fed since the last reset
};

Status encoder_bind_weights(const Model& model, Arena& arena, EncoderWeights* weights);

// Pieces the encoder-decoder (models/transformer.h) and bert (models/bert.h) share with the
// encoder: the view of one tensor, checked against [d0] (d1 < 0: an f32 vector) or [d0, d1];
Status encoder_bind_tensor(const Model& model, TensorRole role, int32_t layer, int64_t d0,
                           int64_t d1, TensorView* out);
// binds layer `layer`'s self-attention, norms (attn_norm, ffn_norm) and feed-forward;
Status encoder_bind_layer(const Model& model, int32_t layer, EncoderLayerWeights* out);
// LayerNorm of n rows of d in place (b may be absent);
void encoder_layernorm_rows(float* x, int32_t n, int64_t d, const TensorView& w,
                            const TensorView& b, float eps);
// the feed-forward sublayer: y[n][d] = W2 act(W1 x + b1) + b2, h [n][f] and the scratch its work.
Status encoder_feed_forward(const EncoderLayerWeights& layer, Activation activation, const float* x,
                            int32_t n, float* h, float* y, void* scratch, size_t scratch_bytes);

// State for sequences of up to max_seq positions (0: the model's context length, which must then
// be set; a context length of 0 in the model means no limit).
Status encoder_state_init(const ModelConfig& config, int32_t max_seq, Arena& arena,
                          EncoderState* state);

// Exact arena bytes of encoder_bind_weights + encoder_state_init.
Status encoder_arena_bytes(const ModelConfig& config, int32_t max_seq, size_t* bytes);

// out[n][d] = encoder(in[n][d]) for one sequence of n <= max_seq positions (out may alias in, and
// either may be state->x).
Status encoder_forward(const EncoderWeights& weights, EncoderState* state, const float* in,
                       int32_t n, float* out);

// Causal linear-elu attention models only (the RNN form of Katharopoulos et al.): feeds one
// position in[d] through the stack, each layer keeping its k x k state per head, and writes its
// output out[d]; the cost is the same at every position. The outputs equal encoder_forward's rows
// on the whole sequence. encoder_stream_reset starts a new sequence (encoder_state_init starts
// one too). unsupported for other models.
Status encoder_stream_reset(const ModelConfig& config, EncoderState* state);
Status encoder_stream_step(const EncoderWeights& weights, EncoderState* state, const float* in,
                           float* out);

}  // namespace einfer
