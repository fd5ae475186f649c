// Llama-family decoder: RMSNorm, RoPE (either layout), SwiGLU, MHA/MQA/GQA, tied or separate
// classifier; batched prefill and incremental decoding over the ring KV cache.
//
// The forward pass (llama_forward) reads top to bottom like llama2.c's, but every matrix product
// is an einsum ("nd,ed->ne": n tokens, d model width, e output features), which the einsum engine
// plans onto GEMM (prefill) or GEMV (decode) for f32, f16, bf16, q8 and q4 weights alike.
//
// Memory: LlamaWeights holds views into the model image (no copies; per-layer tensors are looked
// up when used); LlamaState holds the KV cache, the RoPE table, the activations of up to
// `max_batch` tokens and (optionally) the cached projection plans, all taken from one arena by
// llama_state_init. llama_state_init on a measuring arena gives the exact size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/rope/rope.h"
#include "models/kv_cache.h"
#include "models/mha.h"
#include "models/profile.h"
#include "runtime/arena.h"
#include "runtime/model.h"
#include "runtime/run_options.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

// Per layer: attn_norm [d]; wq, wk, wv, wo [out, in] (bq, bk, bv with qkv_bias); ffn_norm [d]; w1
// gate [f, d], w2 down [d, f], w3 up [f, d]. Not stored: the forward pass looks each up with
// model_tensor (constant-time arithmetic on the canonical tensor order), so the arena holds no
// per-layer views.
struct LlamaWeights {
  ModelConfig config;
  const Model* model = nullptr;  // must outlive the weights (the per-layer tensors)
  TensorView token_embedding;    // [V, d], any dtype
  TensorView final_norm;         // [d]
  TensorView classifier;         // [V, d] (the embedding itself when tied)
  TensorView rope_freq_factors;  // [head_dim/2] f32 with config.rope_freq_factors, else empty
  // [head_dim/2] with longrope scaling, else null (a pointer, not a view: every session holds one).
  const float* rope_freq_factors_long = nullptr;
};

// Checks the config (head counts, dims) and every tensor the architecture needs (roles and
// shapes), and keeps a pointer to `model`. Takes nothing from the arena (kept for symmetry).
Status llama_bind_weights(const Model& model, Arena& arena, LlamaWeights* weights);
// The architecture is llama, then the one config check every model passes (ein_validate_config).
Status llama_check_config(const ModelConfig& config);

// Activations and caches of one decoding stream.
struct LlamaState {
  RunOptions options;  // resolved: context, window, sinks, kv dtype, max_batch all set
  int64_t pos = 0;     // next absolute position
  KVCache cache;
  RopeTable rope;
  RopeTable rope_local;  // the sliding layers' table when config.rope_local_theta > 0 (Gemma 3)
  // Activations for up to options.max_batch tokens (row-major [n][...]).
  float* x = nullptr;          // residual stream [B][d]
  float* xb = nullptr;         // normed input / projection output [B][d]
  float* q = nullptr;          // [B][H*k]
  float* k = nullptr;          // [B][G*k]
  float* v = nullptr;          // [B][G*k]
  float* att = nullptr;        // attention output [B][H*k]
  float* hb = nullptr;         // feed-forward gate [B][f]
  float* hb2 = nullptr;        // feed-forward up [B][f]
  float* logits = nullptr;     // [V] logits of the last evaluated position
  MhaWeights* attn = nullptr;  // the current layer's attention views (one set, reused per layer)
  void* scratch = nullptr;     // einsum and attention scratch
  size_t scratch_bytes = 0;
  StageProfile* profile = nullptr;  // per-stage timing for benchmarks (null: off, no cost)
  // Projection plans shared by all layers (q, k, v, o, w1, w3, w2, classifier), in the arena when
  // options.cache_plans; null: every projection plans its einsum on the spot.
  LinearPlan* plans = nullptr;
  // linear-elu attention models (issue 19): every layer's recurrent state, in place of softmax over
  // the KV cache (MhaConfig::linear_state); null for softmax models.
  float* linear_state = nullptr;
  size_t linear_state_floats = 0;
};

// Fills in the defaults of `options` for `config` (context, max_batch, and the window: the
// config's sliding_window when the run sets none and it is narrower than the context; a wider one
// is refused) and validates them.
// A window W attends W positions, the current one included; sinks S pin positions 0..S-1 and the
// W - S most recent are attended (HF SinkCache). A model whose window starts at a later layer
// (sliding_window_first_layer > 0, Qwen2) keeps the run's window (default 0: its full layers
// need every position, so the cache holds the whole context); see llama_layer_window.
Status llama_resolve_options(const ModelConfig& config, const RunOptions& options, RunOptions* out);

// Whether the model's trained window applies to layer `layer`: every layer from
// sliding_window_first_layer on, except with sliding_window_period P those with (layer + 1) % P
// == 0 (Gemma 2: P = 2, odd layers attend every position; Gemma 3: P = 6).
bool llama_layer_slides(const ModelConfig& config, int32_t layer);

// The window layer `layer` attends through with resolved options: the model's sliding_window on
// its windowed layers (narrowed by a smaller run window), the run's window elsewhere (0: all).
int32_t llama_layer_window(const ModelConfig& config, const RunOptions& resolved, int32_t layer);

// longrope (Phi-3): whether a run with these resolved options takes the long factors, as llama.cpp
// chooses them by its context: when the positions the run may reach exceed rope_original_context
// (its context, or without bound when a window streams on). transformers switches per forward
// call, by the sequence's length; a cache of rotated keys needs one choice per run. False for
// other scalings.
bool llama_rope_long_factors(const ModelConfig& config, const RunOptions& resolved);

// Allocates the state from the arena. Works on a measuring arena (then the pointers are null).
// A model with rope_freq_factors passes that tensor's values (LlamaWeights::rope_freq_factors,
// and with longrope rope_freq_factors_long), which the RoPE table is built from.
Status llama_state_init(const ModelConfig& config, const RunOptions& options, Arena& arena,
                        LlamaState* state, const float* rope_freq_factors = nullptr,
                        const float* rope_freq_factors_long = nullptr);

// Forgets the stream: the next token is position 0 (the cache is not cleared: slots are only read
// after being written).
void llama_reset(LlamaState* state);

// Evaluates n tokens at positions state->pos .. state->pos + n - 1 (n may exceed max_batch: it is
// split into chunks) and advances state->pos. The logits of the last token land in state->logits;
// when all_logits is non-null it receives the logits of every token, [n][V].
Status llama_forward(const LlamaWeights& weights, LlamaState* state, const int32_t* tokens,
                     int32_t n, float* all_logits);

}  // namespace einfer
