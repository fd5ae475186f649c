// A multi-head attention layer: projections P_Q, P_K, P_V, P_O (optional biases) around the fused
// attention kernel, in two forms:
//   encoder form (cache == null): bidirectional or causal attention among the n input positions;
//   decoder form (cache != null): the n new positions attend to the ring KV cache and to each
//     other causally, then their keys and values are stored in the cache.
// Written as the einsums of docs/architecture.md: projections "nd,ed->ne" (weights stored [out,
// in]), attention "hnk,hmk->hnm" / "hnm,hmv->hnv" fused in kernels/attention/attention.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.h"
#include "kernels/attention_variants/attention_variants.h"
#include "kernels/einsum/einsum.h"
#include "kernels/rope/rope.h"
#include "models/kv_cache.h"
#include "models/profile.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

struct MhaWeights {
  TensorView wq, wk, wv, wo;  // [H*k, d], [G*k, d], [G*k, d], [d, H*k]
  TensorView bq, bk, bv, bo;  // f32 biases; rank 0 (data null) when absent
};

struct MhaConfig {
  int32_t dim = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  bool causal = true;
  int32_t window = 0, sinks = 0;    // decoder form: sliding window and sinks (0: none)
  const RopeTable* rope = nullptr;  // rotary positions for q and k (null: none)
  RopeLayout rope_layout = RopeLayout::interleaved;
  float scale = 0.f;    // attention score scale (0: 1/sqrt(head_dim))
  float softcap = 0.f;  // score soft-capping (AttentionShape::softcap; 0: none)
  // Per-head RMSNorm of q and k before RoPE (Qwen3, Gemma 3): weights [head_dim] each, or null.
  const float* q_norm = nullptr;
  const float* k_norm = nullptr;
  float qk_norm_eps = 0.f;
  // Decoder form with causal linear-elu attention (issue 19): the layers' recurrent states, each
  // n_heads blocks of head_dim^2 + head_dim floats (mha_linear_state_floats), replacing softmax
  // and the KV cache: every position costs the same whatever its index. Null: softmax.
  float* linear_state = nullptr;
  // Decoder form with a causal sparse pattern (issue 19;
  // kernels/attention_variants/attention_variants.h): keys are walked from indices over a cache
  // that keeps every position. Inactive: dense softmax.
  AttentionPattern pattern;
  bool patterned = false;
  StageProfile* profile = nullptr;   // stage timing (null: off)
  const Threads* threads = nullptr;  // workers for the projections and attention (null: none)
  // Optional work the caller fuses into the projections' parallel regions (null: none), so it
  // costs no extra join: input_rows(ctx, r0, r1) runs before q/k/v read rows [r0, r1) of x (the
  // RMSNorm that writes them); output_columns(ctx, j0, j1) after P_O wrote columns [j0, j1) of
  // every row of out (the residual add). Both must be elementwise in their rows/columns.
  void (*input_rows)(void* ctx, int64_t r0, int64_t r1) = nullptr;
  void (*output_columns)(void* ctx, int64_t j0, int64_t j1) = nullptr;
  // output_columns for rows [r0, r1) of out, every column (project_group's row-block form);
  // without it, P_O keeps the column form.
  void (*output_rows)(void* ctx, int64_t r0, int64_t r1) = nullptr;
  void* hook_ctx = nullptr;
};

// A projection's einsum plan kept between calls. Planning costs about as much as the GEMV of a
// small model, and every layer's projection of one role has the same shape, so one plan per role
// serves the whole stack; it is re-planned only when n or the weight's dtype/shape changes.
struct LinearPlan {
  EinsumPlan plan;
  bool valid = false;
};

// Buffers for n positions: q/att [n][H*k], k/v [n][G*k]; scratch for the einsums and attention
// (with threads: one slot per worker, see execute_einsum and attention_f32).
struct MhaBuffers {
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  float* att = nullptr;
  void* scratch = nullptr;
  size_t scratch_bytes = 0;
  LinearPlan* plans = nullptr;  // 4 cached plans (q, k, v, o), or null: plan every call
};

// The attention kernel's shape for this configuration (heads, head size, the scale (default
// 1/sqrt(head size)), soft-capping, window, sinks, causal).
AttentionShape mha_attention_shape(const MhaConfig& config);

// The positional step of `heads` consecutive head vectors of q (norm = config.q_norm) or k
// (config.k_norm) at absolute position pos: the per-head RMSNorm when given, then RoPE.
void mha_rotate_heads(const MhaConfig& config, const float* norm, float* x, int32_t heads,
                      int64_t pos);

// Floats of one layer's linear-elu state (see MhaConfig::linear_state).
size_t mha_linear_state_floats(const MhaConfig& config);

// One projection of a group: y[n, e] = x[n, d] · W[e, d]ᵀ (+ bias), with its cached plan (or null).
struct Projection {
  const TensorView* w = nullptr;
  const TensorView* bias = nullptr;  // null or rank 0: none
  float* y = nullptr;
  LinearPlan* plan = nullptr;
};

// Work fused into project_group's regions (null functions: none).
struct ProjectionHooks {
  // Runs before rows [r0, r1) of x are read (the rows are x's: e.g. the RMSNorm writing them).
  void (*before_rows)(void* ctx, int64_t r0, int64_t r1) = nullptr;
  // Runs on a task after it wrote its column blocks [j0[p], j1[p]) of every projection p.
  void (*after_columns)(void* ctx, const int64_t* j0, const int64_t* j1) = nullptr;
  // The same work for a task that wrote rows [r0, r1) of every projection, all columns (the
  // row-block form below). Null while after_columns is set: the row-block form is not used.
  void (*after_rows)(void* ctx, int64_t r0, int64_t r1) = nullptr;
  void* ctx = nullptr;
  int64_t align = 16;  // column blocks are cut on multiples of this (a multiple of 16)
};

constexpr int kMaxGroupProjections = 3;

// Up to kMaxGroupProjections projections of one input (q, k and v; gate and up) in two parallel
// regions instead of two per projection: a row pass (before_rows, then the activation
// quantization all quantized projections of one dtype/group share) and a column pass, where task
// t computes block t of every projection and runs after_columns on it. Quantized weights with
// enough rows (prefill: n >= 8 per task) and every hook given in its row form take one region
// instead: task t takes a block of whole token rows (multiples of 4) through before_rows, the
// quantization, every column of every projection and after_rows, so the rows a task writes are
// the rows it reads next, in its own core's cache, with no join in between (with weights small
// enough to stay in L2, in blocks of about 64 rows, several per task or on one thread; see
// project_group in mha.cpp). Weights the passes
// cannot cut (or no threads with f32 weights) run one after another, hooks covering everything.
// Results are bit-identical to linear_cached, for any thread count. Scratch: as for
// linear_cached (one slot per worker).
Status project_group(const float* x, int64_t n, const Projection* projections, int count,
                     const ProjectionHooks& hooks, void* scratch, size_t scratch_bytes,
                     const Threads* threads);

// Scratch bytes mha_forward needs for up to n positions with these weights.
Status mha_scratch_bytes(const MhaConfig& config, const MhaWeights& weights, int32_t n,
                         size_t* bytes);

// The attention kernel's part of that (without the projections' einsum scratch), for callers that
// size the projections themselves and keep no MhaWeights around.
size_t mha_attention_scratch_bytes(const MhaConfig& config, int32_t n);

// out[n][d] = P_O · attention(P_Q x, P_K x, P_V x) (+ biases). `out` may alias `x` (x is only
// read by the first three projections).
Status mha_forward(const MhaWeights& w, const MhaConfig& config, const float* x, int32_t n,
                   int64_t pos0, KVCache* cache, int32_t layer, const MhaBuffers& buffers,
                   float* out);

// y[n, e] = x[n, d] · W[e, d]ᵀ (+ bias[e]): the projection einsum "nd,ed->ne" for any weight dtype.
Status linear(const float* x, int64_t n, const TensorView& w, const TensorView& bias, float* y,
              void* scratch, size_t scratch_bytes);

// linear() through a cached plan (cache null: plain linear()), on `threads` when given.
Status linear_cached(LinearPlan* cache, const float* x, int64_t n, const TensorView& w,
                     const TensorView& bias, float* y, void* scratch, size_t scratch_bytes,
                     const Threads* threads = nullptr);

// Scratch bytes `linear` needs for n rows against a weight shaped like `w`.
Status linear_scratch_bytes(int64_t n, const TensorView& w, size_t* bytes);

}  // namespace einfer
