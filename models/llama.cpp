// Llama-family forward pass (see models/llama.h).
#include "models/llama.h"

#include <cmath>
#include <cstring>

#include "kernels/gguf/gguf.h"
#include "kernels/quant/quant.h"
#include "kernels/vec/vec.h"
#include "models/attention_variant.h"
#include "models/embedding.h"
#include "runtime/format.h"

namespace einfer {

namespace {

// The default prefill chunk: 128 tokens give each of two threads a 64-row block (AMX and the
// register-blocked GEMMs reuse each weight tile over 4+ activation tiles) and stream the weights
// once per 128 prompt tokens. Measured against 64 (einfer-bench, prompt 128): 110M shape 8-9%
// faster on one thread and 14-16% on two (q8, q4), 15M q8/q4 2-thread 4-12% faster, one thread
// within 5% either way. Memory: activations of 128 tokens (15M: +0.9 MB, 110M: +2.4 MB over 64);
// MCU builds pass 1.
constexpr int32_t kDefaultMaxBatch = 128;

// A view with the dtype the model's matrices have, for sizing einsum scratch without a model.
TensorView weight_like(const ModelConfig& c, DType dtype, int64_t rows, int64_t cols) {
  TensorView w = make_view(dtype, nullptr, {rows, cols});
  if (dtype_is_quantized(dtype)) w.group_size = c.group_size;
  return w;
}

// Slots of LlamaState::plans (the first four are the attention projections, in MhaBuffers order).
enum PlanSlot { kPlanW1 = 4, kPlanW3 = 5, kPlanW2 = 6, kPlanClassifier = 7 };
constexpr size_t kPlanSlots = 8;

// y[n, e] = x[n, d] · W[e, d]ᵀ: every projection of the model.
Status project(const float* x, int64_t n, const TensorView& w, float* y, LlamaState* s, int slot) {
  return linear_cached(s->plans ? &s->plans[slot] : nullptr, x, n, w, TensorView{}, y, s->scratch,
                       s->scratch_bytes, &s->options.threads);
}

// Scratch the projections of one chunk of n tokens need with weights of `dtype`.
Status projection_scratch(const ModelConfig& c, DType dtype, int64_t n, size_t* bytes) {
  const int64_t kv = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;
  const int64_t qd = static_cast<int64_t>(c.n_heads) * c.head_dim;
  const int64_t shapes[][2] = {{qd, c.dim},           {kv, c.dim},           {c.dim, qd},
                               {c.hidden_dim, c.dim}, {c.dim, c.hidden_dim}, {c.vocab_size, c.dim}};
  for (const auto& sh : shapes) {
    size_t b = 0;
    EINFER_TRY(linear_scratch_bytes(n, weight_like(c, dtype, sh[0], sh[1]), &b));
    if (b > *bytes) *bytes = b;
  }
  return ok_status();
}

MhaConfig mha_config(const ModelConfig& c, const RunOptions& o, const RopeTable* rope,
                     StageProfile* profile = nullptr) {
  MhaConfig m;
  m.dim = c.dim;
  m.n_heads = c.n_heads;
  m.n_kv_heads = c.n_kv_heads;
  m.head_dim = c.head_dim;
  m.causal = true;
  m.window = o.window;
  m.sinks = o.sinks;
  m.rope = rope;
  m.rope_layout = c.rope == RopeMode::half_split ? RopeLayout::half_split : RopeLayout::interleaved;
  m.scale = c.attn_scale;
  m.softcap = c.attn_softcap;
  m.qk_norm_eps = c.norm_eps;
  m.profile = profile;
  m.threads = &o.threads;
  m.patterned = c.attention == AttentionKind::softmax && attention_variant_active(c);
  if (m.patterned) m.pattern = attention_pattern_from_config(c);
  return m;
}

// The config's RoPE scaling in the kernel's terms (ein_validate_config checked the values).
RopeFrequencyScaling rope_scaling(const ModelConfig& c) {
  RopeFrequencyScaling r;
  r.kind = static_cast<uint32_t>(c.rope_scaling);
  if (c.rope_scaling == RopeScaling::none) return r;
  if (c.rope_scaling == RopeScaling::longrope) {  // the factors come with the tensors
    r.mscale = c.rope_attn_factor;
    return r;
  }
  r.factor = c.rope_factor;
  r.low_freq_factor = c.rope_low_freq_factor;
  r.high_freq_factor = c.rope_high_freq_factor;
  r.original_context = c.rope_original_context;
  return r;
}

}  // namespace

Status llama_check_config(const ModelConfig& c) {
  return ein_validate_config_for(c, c.arch == ArchKind::llama,
                                 "llama: model is not a llama decoder");
}

Status llama_resolve_options(const ModelConfig& c, const RunOptions& in, RunOptions* out) {
  EINFER_TRY(llama_check_config(c));
  RunOptions o = in;
  if (o.threads.n < 0 || o.threads.n > 256) {
    return make_status(StatusCode::invalid_argument, "threads.n must be between 0 and 256",
                       o.threads.n);
  }
  if (o.context < 0 || o.window < 0 || o.sinks < 0 || o.max_batch < 0) {
    return make_status(StatusCode::invalid_argument, "run options must not be negative");
  }
  // Upper bounds (the loader's limit on any dimension; a prefill batch far beyond any use): sizes
  // are also checked where they are computed, these give the message that names the option.
  if (o.context > kMaxRunPositions)
    return make_status(StatusCode::out_of_range, "run option context above its limit",
                       kMaxRunPositions, o.context);
  if (o.window > kMaxRunPositions)
    return make_status(StatusCode::out_of_range, "run option window above its limit",
                       kMaxRunPositions, o.window);
  if (o.max_batch > kMaxRunBatch)
    return make_status(StatusCode::out_of_range, "run option max_batch above its limit",
                       kMaxRunBatch, o.max_batch);
  if (o.context == 0) o.context = c.context_length;
  if (o.max_batch == 0) o.max_batch = kDefaultMaxBatch;
  if (o.kv_dtype != DType::f32 && o.kv_dtype != DType::i8) {
    return make_status(StatusCode::unsupported, "KV cache dtype must be f32 or i8");
  }
  // A sparse pattern (issue 19) walks every position it attends from the cache, so the cache keeps
  // them all: no ring window, no sinks (a window:W term in the pattern is the sparse form).
  if (c.attention == AttentionKind::softmax && attention_variant_active(c)) {
    if (c.sliding_window > 0)
      return make_status(StatusCode::unsupported,
                         "a sparse attention pattern and a sliding_window in one model");
    if (o.window != 0 || o.sinks != 0)
      return make_status(StatusCode::invalid_argument,
                         "a model with a sparse attention pattern takes no --window or --sinks "
                         "(the pattern's window:W term bounds the attended keys)");
    if (o.kv_dtype != DType::f32)
      return make_status(StatusCode::unsupported,
                         "a sparse attention pattern needs an f32 KV cache");
  }
  // A model trained with a sliding window (Mistral) attends through it by default; a run may
  // narrow it (less memory) but not widen it past what the model was trained with. With a window
  // on some layers only (Qwen2's later ones, Gemma's local ones), the run's window (if any) is
  // what the full layers attend.
  if (c.sliding_window > 0 && (c.sliding_window_first_layer > 0 || c.sliding_window_period > 0)) {
    if (o.sinks >= c.sliding_window)
      return make_status(StatusCode::invalid_argument,
                         "sinks must be fewer than the model's sliding_window", o.sinks,
                         c.sliding_window);
  } else if (c.sliding_window > 0) {
    // A trained window as wide as the context cuts nothing (Phi-3-mini-128k's 262144 over 131072
    // positions): no run window, so the cache holds the context and no more.
    if (o.window == 0 && c.sliding_window < o.context) o.window = c.sliding_window;
    if (o.window > c.sliding_window) {
      return make_status(StatusCode::invalid_argument,
                         "window wider than the model's trained sliding_window", o.window,
                         c.sliding_window);
    }
  }
  if (o.window == 0 && o.sinks != 0) {
    return make_status(StatusCode::invalid_argument, "attention sinks need a window");
  }
  if (o.window != 0 && o.sinks >= o.window) {
    return make_status(StatusCode::invalid_argument, "sinks must be fewer than the window", o.sinks,
                       o.window);
  }
  if (o.window > 0) o.context = o.window;  // the cache holds exactly the window
  if (o.max_batch > o.context) o.max_batch = o.context;
  *out = o;
  return ok_status();
}

bool llama_layer_slides(const ModelConfig& c, int32_t layer) {
  if (c.sliding_window <= 0 || layer < c.sliding_window_first_layer) return false;
  return c.sliding_window_period <= 0 || (layer + 1) % c.sliding_window_period != 0;
}

int32_t llama_layer_window(const ModelConfig& c, const RunOptions& o, int32_t layer) {
  if (!llama_layer_slides(c, layer)) return o.window;
  return o.window > 0 && o.window < c.sliding_window ? o.window : c.sliding_window;
}

bool llama_rope_long_factors(const ModelConfig& c, const RunOptions& o) {
  return c.rope_scaling == RopeScaling::longrope &&
         (o.window > 0 || o.context > c.rope_original_context);
}

Status llama_state_init(const ModelConfig& c, const RunOptions& options, Arena& arena,
                        LlamaState* s, const float* rope_freq_factors,
                        const float* rope_freq_factors_long) {
  *s = LlamaState{};
  EINFER_TRY(llama_resolve_options(c, options, &s->options));
  const RunOptions& o = s->options;

  KVCacheConfig kc{};
  kc.n_layers = c.n_layers;
  kc.n_kv_heads = c.n_kv_heads;
  kc.head_dim = c.head_dim;
  kc.capacity = o.context;
  kc.sinks = o.sinks;
  // Linear attention keeps a fixed-size state per layer instead of keys and values: a one-slot
  // cache (never written) keeps the memory independent of the context.
  if (c.attention == AttentionKind::linear_elu) kc.capacity = 1, kc.sinks = 0;
  kc.dtype = o.kv_dtype;
  EINFER_TRY(kv_cache_init(kc, arena, &s->cache));

  // RoPE angles for the positions a stream without a window can reach; a windowed stream goes on
  // past them and computes further angles on the fly.
  const int32_t rope_positions =
      o.window > 0 ? (o.window < c.context_length ? o.window : c.context_length) : o.context;
  const size_t rope_bytes = rope_table_bytes(c.head_dim, rope_positions);
  void* rope_mem = nullptr;
  EINFER_TRY(arena.allocate(rope_bytes, kDefaultAlignment, &rope_mem));
  // Gemma 3: the sliding layers' own table (their base, no scaling).
  void* local_mem = nullptr;
  if (c.rope_local_theta > 0.f)
    EINFER_TRY(arena.allocate(rope_bytes, kDefaultAlignment, &local_mem));
  if (!arena.is_measuring()) {
    RopeFrequencyScaling scaling = rope_scaling(c);
    if (c.rope_freq_factors) {
      const bool long_factors = llama_rope_long_factors(c, o);
      const float* factors = long_factors ? rope_freq_factors_long : rope_freq_factors;
      if (factors == nullptr)
        return make_status(StatusCode::invalid_argument,
                           "llama: the model has rope_freq_factors; pass them to llama_state_init");
      scaling.freq_factors = factors;
    }
    EINFER_TRY(rope_table_init(&s->rope, rope_mem, rope_bytes, c.head_dim, rope_positions,
                               c.rope_theta, scaling));
    if (local_mem != nullptr)
      EINFER_TRY(rope_table_init(&s->rope_local, local_mem, rope_bytes, c.head_dim, rope_positions,
                                 c.rope_local_theta));
  }

  // Checked sizes: batch x width wraps a 32-bit size_t for large options.
  const CheckedSize B = o.max_batch;
  const CheckedSize qd = CheckedSize(c.n_heads) * c.head_dim;
  const CheckedSize kv = CheckedSize(c.n_kv_heads) * c.head_dim;
  EINFER_TRY(arena.allocate_array(B * c.dim, &s->x));
  EINFER_TRY(arena.allocate_array(B * c.dim, &s->xb));
  EINFER_TRY(arena.allocate_array(B * qd, &s->q));
  EINFER_TRY(arena.allocate_array(B * kv, &s->k));
  EINFER_TRY(arena.allocate_array(B * kv, &s->v));
  EINFER_TRY(arena.allocate_array(B * qd, &s->att));
  EINFER_TRY(arena.allocate_array(B * c.hidden_dim, &s->hb));
  EINFER_TRY(arena.allocate_array(B * c.hidden_dim, &s->hb2));
  EINFER_TRY(arena.allocate_array(static_cast<size_t>(c.vocab_size), &s->logits));
  if (o.cache_plans) {
    EINFER_TRY(arena.allocate_array(kPlanSlots, &s->plans));
    for (size_t i = 0; s->plans && i < kPlanSlots; ++i) s->plans[i].valid = false;
  }

  // One scratch region serves every einsum and the attention kernel (they never overlap in time).
  // The attention kernel's own part; projection_scratch covers every projection shape, q, k, v
  // and o included, for both weight dtypes.
  size_t scratch = mha_attention_scratch_bytes(mha_config(c, o, nullptr), o.max_batch);
  for (int64_t n : {static_cast<int64_t>(1), static_cast<int64_t>(o.max_batch)}) {
    EINFER_TRY(projection_scratch(c, c.weight_dtype, n, &scratch));
    EINFER_TRY(projection_scratch(c, DType::f32, n, &scratch));
  }
  // One slot per worker (execute_einsum and attention_f32 give task i slot i), plus 64 bytes so
  // the slots can start on a 64-byte boundary.
  const size_t slot = (scratch + 63) / 64 * 64;
  const size_t workers = static_cast<size_t>(o.threads.n > 1 ? o.threads.n : 1);
  if (workers > 1) scratch = workers * slot + 64;
  s->scratch_bytes = scratch;
  EINFER_TRY(arena.allocate_array(1, &s->attn));
  if (s->attn) *s->attn = MhaWeights{};
  EINFER_TRY(arena.allocate(scratch, kDefaultAlignment, &s->scratch));
  if (c.attention == AttentionKind::linear_elu) {
    if (o.window > 0)
      return make_status(StatusCode::invalid_argument,
                         "llama: linear attention sums every position; a window does not apply");
    const uint64_t floats =
        uint64_t{mha_linear_state_floats(mha_config(c, o, nullptr))} * uint64_t(c.n_layers);
    if (floats > SIZE_MAX / sizeof(float) / 2)  // 32-bit size_t: refuse, never wrap
      return make_status(StatusCode::out_of_memory, "llama: linear attention state too large");
    s->linear_state_floats = static_cast<size_t>(floats);
    EINFER_TRY(arena.allocate_array(s->linear_state_floats, &s->linear_state));
    if (s->linear_state) std::memset(s->linear_state, 0, s->linear_state_floats * sizeof(float));
  }
  return ok_status();
}

void llama_reset(LlamaState* s) {
  s->pos = 0;
  kv_cache_reset(s->cache);
  // The linear-attention state sums every position so far: a new stream starts from zero.
  if (s->linear_state) std::memset(s->linear_state, 0, s->linear_state_floats * sizeof(float));
}

namespace {

// Per-layer tensors, looked up when used (llama_bind_weights checked every role and shape). Not
// inlined: their TensorView temporaries stay off the projection call chain's stack.
__attribute__((noinline)) const float* layer_norm_weights(const LlamaWeights& w, TensorRole role,
                                                          int32_t layer) {
  TensorView v;
  return model_tensor(*w.model, role, layer, &v).ok() ? v.f32() : nullptr;
}

__attribute__((noinline)) Status bind_attention(const LlamaWeights& w, int32_t layer,
                                                MhaWeights* a) {
  EINFER_TRY(model_tensor(*w.model, TensorRole::wq, layer, &a->wq));
  EINFER_TRY(model_tensor(*w.model, TensorRole::wk, layer, &a->wk));
  EINFER_TRY(model_tensor(*w.model, TensorRole::wv, layer, &a->wv));
  if (w.config.qkv_bias) {  // Qwen2
    EINFER_TRY(model_tensor(*w.model, TensorRole::bq, layer, &a->bq));
    EINFER_TRY(model_tensor(*w.model, TensorRole::bk, layer, &a->bk));
    EINFER_TRY(model_tensor(*w.model, TensorRole::bv, layer, &a->bv));
  }
  return model_tensor(*w.model, TensorRole::wo, layer, &a->wo);
}

// A layer's elementwise work, run inside the projections' parallel regions (mha.h hooks) so it
// costs no join of its own: RMSNorm by rows before a group reads them, the residual add and
// SwiGLU by each task's output columns.
struct LayerWork {
  LlamaState* s;
  const float* norm;  // the RMSNorm weights of the group about to run
  float eps;
  int64_t d, f;
  int32_t n;
  void (*gate)(float* g, const float* u, size_t n);  // swiglu_f32, or geglu_tanh_f32 (Gemma)
};

// xb[r] = rmsnorm(x[r]) for rows [r0, r1).
void norm_rows(void* ctx, int64_t r0, int64_t r1) {
  const LayerWork& k = *static_cast<const LayerWork*>(ctx);
  for (int64_t i = r0; i < r1; ++i) {
    rmsnorm_f32(k.s->x + i * k.d, k.norm, k.eps, k.s->xb + i * k.d, static_cast<size_t>(k.d));
  }
}

// x[:, j0:j1] += xb[:, j0:j1] (the residual; exact, so any blocks give the same bits).
void residual_columns(void* ctx, int64_t j0, int64_t j1) {
  const LayerWork& k = *static_cast<const LayerWork*>(ctx);
  for (int32_t i = 0; i < k.n; ++i) {
    float* x = k.s->x + i * k.d + j0;
    add_f32(x, k.s->xb + i * k.d + j0, x, static_cast<size_t>(j1 - j0));
  }
}

// x[r] += xb[r] for rows [r0, r1) (the row-block form of residual_columns).
void residual_rows(void* ctx, int64_t r0, int64_t r1) {
  const LayerWork& k = *static_cast<const LayerWork*>(ctx);
  for (int64_t i = r0; i < r1; ++i) {
    float* x = k.s->x + i * k.d;
    add_f32(x, k.s->xb + i * k.d, x, static_cast<size_t>(k.d));
  }
}

void residual_block(void* ctx, const int64_t* j0, const int64_t* j1) {
  residual_columns(ctx, j0[0], j1[0]);
}

// hb[:, j0:j1] = silu(hb) * hb2 on the block the task just computed of both (same cut).
void swiglu_block(void* ctx, const int64_t* j0, const int64_t* j1) {
  const LayerWork& k = *static_cast<const LayerWork*>(ctx);
  for (int32_t i = 0; i < k.n; ++i) {
    k.gate(k.s->hb + i * k.f + j0[0], k.s->hb2 + i * k.f + j0[0],
           static_cast<size_t>(j1[0] - j0[0]));
  }
}

// hb[r] = silu(hb[r]) * hb2[r] for rows [r0, r1) (the row-block form of swiglu_block).
void swiglu_rows(void* ctx, int64_t r0, int64_t r1) {
  const LayerWork& k = *static_cast<const LayerWork*>(ctx);
  for (int64_t i = r0; i < r1; ++i) {
    k.gate(k.s->hb + i * k.f, k.s->hb2 + i * k.f, static_cast<size_t>(k.f));
  }
}

// Gemma's sandwich norm of an output block: x[r] += rmsnorm(xb[r]) for every token row, rows
// split among the workers (one row, one task: the same bits for any count).
__attribute__((noinline)) Status post_norm_residual(const LlamaWeights& w, TensorRole role,
                                                    int32_t layer, const LayerWork& k) {
  const float* norm = layer_norm_weights(w, role, layer);
  if (norm == nullptr)
    return make_status(StatusCode::invalid_argument, "llama: post-norm weights missing", -1, -1,
                       layer);
  const Threads* threads = &k.s->options.threads;
  const int tasks = k.n < thread_count(threads) ? k.n : thread_count(threads);
  auto rows = [&](int task) {
    long long r0 = 0, r1 = 0;
    split_range(k.n, task, tasks, 1, &r0, &r1);
    for (long long i = r0; i < r1; ++i) {
      float* y = k.s->xb + i * k.d;
      float* x = k.s->x + i * k.d;
      rmsnorm_f32(y, norm, k.eps, y, static_cast<size_t>(k.d));
      add_f32(x, y, x, static_cast<size_t>(k.d));
    }
  };
  run_tasks(threads, tasks, rows);
  return ok_status();
}

// x += W2 · (silu(W1·h) * W3·h), h = rmsnorm(x): two groups, norm/SwiGLU/residual inside them.
// Gemma: GeGLU, and x += rmsnorm(W2 · ...) with the post-feed-forward norm after the groups.
__attribute__((noinline)) Status feed_forward(const LlamaWeights& w, int32_t layer, LlamaState* s,
                                              LayerWork* work) {
  TensorView w1, w2, w3;
  EINFER_TRY(model_tensor(*w.model, TensorRole::w1, layer, &w1));
  EINFER_TRY(model_tensor(*w.model, TensorRole::w3, layer, &w3));
  EINFER_TRY(model_tensor(*w.model, TensorRole::w2, layer, &w2));
  LinearPlan* plans = s->plans;
  const Threads* threads = &s->options.threads;
  ProjectionHooks up;
  up.ctx = work;
  up.before_rows = norm_rows;
  up.after_columns = swiglu_block;
  up.after_rows = swiglu_rows;
  const Projection gate_up[2] = {{&w1, nullptr, s->hb, plans ? plans + kPlanW1 : nullptr},
                                 {&w3, nullptr, s->hb2, plans ? plans + kPlanW3 : nullptr}};
  EINFER_TRY(project_group(s->xb, work->n, gate_up, 2, up, s->scratch, s->scratch_bytes, threads));
  ProjectionHooks down;
  down.ctx = work;
  const bool post_norm = w.config.post_norms != 0;
  down.after_columns = post_norm ? nullptr : residual_block;
  down.after_rows = post_norm ? nullptr : residual_rows;
  const Projection w2p{&w2, nullptr, s->xb, plans ? plans + kPlanW2 : nullptr};
  EINFER_TRY(project_group(s->hb, work->n, &w2p, 1, down, s->scratch, s->scratch_bytes, threads));
  return post_norm ? post_norm_residual(w, TensorRole::ffn_post_norm, layer, *work) : ok_status();
}

// One chunk of n <= max_batch tokens through the whole stack.
// `classify`: compute the logits (of the last position, or of all into all_logits); a prompt's
// earlier chunks skip them, since the last chunk's overwrite them (a whole classifier pass each).
Status forward_chunk(const LlamaWeights& w, LlamaState* s, const int32_t* tokens, int32_t n,
                     float* all_logits, bool classify) {
  const ModelConfig& c = w.config;
  const int64_t d = c.dim, V = c.vocab_size;
  const int64_t f = c.hidden_dim;
  const int64_t pos0 = s->pos;
  MhaConfig attn = mha_config(c, s->options, &s->rope, s->profile);
  attn.linear_state = s->linear_state;
  LayerWork work{s,
                 nullptr,
                 c.norm_eps,
                 d,
                 f,
                 n,
                 c.activation == Activation::geglu_tanh ? geglu_tanh_f32 : swiglu_f32};
  attn.input_rows = norm_rows;
  // With post-norms (Gemma) the residual add waits for the norm of P_O's whole rows.
  attn.output_columns = c.post_norms ? nullptr : residual_columns;
  attn.output_rows = c.post_norms ? nullptr : residual_rows;
  attn.hook_ctx = &work;
  const MhaBuffers buffers{s->q, s->k, s->v, s->att, s->scratch, s->scratch_bytes, s->plans};
  if (w.model == nullptr || s->attn == nullptr) {
    return make_status(StatusCode::invalid_argument, "llama: weights or state not initialised");
  }
  StageProfile* prof = s->profile;
  uint64_t t = profile_start(prof);

  for (int32_t i = 0; i < n; ++i) embedding_row(w.token_embedding, tokens[i], s->x + i * d);
  if (c.embed_scale > 0.f) scale_f32(s->x, c.embed_scale, static_cast<size_t>(n) * d);  // Gemma
  t = profile_charge(prof, Stage::norms_rope, t);

  for (int32_t l = 0; l < c.n_layers; ++l) {
    const float* attn_norm = layer_norm_weights(w, TensorRole::attn_norm, l);
    const float* ffn_norm = layer_norm_weights(w, TensorRole::ffn_norm, l);
    if (attn_norm == nullptr || ffn_norm == nullptr) {
      return make_status(StatusCode::invalid_argument, "llama: layer norm weights missing", -1, -1,
                         l);
    }

    // Attention block: x += attention(rmsnorm(x)), keys and values kept in the ring cache; the
    // norm runs in the q/k/v row pass, the residual add in P_O's column pass.
    work.norm = attn_norm;
    attn.window = llama_layer_window(c, s->options, l);  // Qwen2, Gemma: only some layers slide
    if (c.rope_local_theta > 0.f) attn.rope = llama_layer_slides(c, l) ? &s->rope_local : &s->rope;
    if (c.qk_norm) {  // Qwen3, Gemma 3
      attn.q_norm = layer_norm_weights(w, TensorRole::q_norm, l);
      attn.k_norm = layer_norm_weights(w, TensorRole::k_norm, l);
    }
    EINFER_TRY(bind_attention(w, l, s->attn));
    EINFER_TRY(mha_forward(*s->attn, attn, s->xb, n, pos0, &s->cache, l, buffers, s->xb));
    if (c.post_norms) EINFER_TRY(post_norm_residual(w, TensorRole::attn_post_norm, l, work));

    // Feed-forward block: x += W2 · (silu(W1·h) * W3·h), h = rmsnorm(x).
    t = profile_start(prof);
    work.norm = ffn_norm;
    EINFER_TRY(feed_forward(w, l, s, &work));
    t = profile_charge(prof, Stage::feed_forward, t);
  }

  if (!classify) {
    s->pos += n;
    return ok_status();
  }
  // Classifier: every position when asked for all logits, else only the last.
  const int32_t first = all_logits ? 0 : n - 1;
  const int32_t rows = n - first;
  for (int32_t i = first; i < n; ++i) {
    rmsnorm_f32(s->x + i * d, w.final_norm.f32(), c.norm_eps, s->xb + (i - first) * d,
                static_cast<size_t>(d));
  }
  t = profile_charge(prof, Stage::norms_rope, t);
  float* logits = all_logits ? all_logits : s->logits;
  EINFER_TRY(project(s->xb, rows, w.classifier, logits, s, kPlanClassifier));
  if (c.final_softcap > 0.f)  // Gemma 2
    softcap_f32(logits, c.final_softcap, static_cast<size_t>(rows) * V);
  if (all_logits) std::memcpy(s->logits, all_logits + (n - 1) * V, static_cast<size_t>(V) * 4);
  profile_charge(prof, Stage::classifier, t);
  s->pos += n;
  return ok_status();
}

}  // namespace

Status llama_forward(const LlamaWeights& w, LlamaState* s, const int32_t* tokens, int32_t n,
                     float* all_logits) {
  const ModelConfig& c = w.config;
  if (n <= 0) return make_status(StatusCode::invalid_argument, "llama_forward: no tokens");
  for (int32_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size) {
      return make_status(StatusCode::out_of_range, "token id outside the vocabulary", tokens[i],
                         c.vocab_size, i);
    }
  }
  if (s->options.window == 0 && s->pos + n > s->options.context) {
    return make_status(StatusCode::out_of_range,
                       "context full: positions needed exceed the context (set a window to stream)",
                       s->pos + n, s->options.context);
  }
  for (int32_t done = 0; done < n;) {
    const int32_t chunk = n - done < s->options.max_batch ? n - done : s->options.max_batch;
    float* logits = all_logits ? all_logits + static_cast<size_t>(done) * c.vocab_size : nullptr;
    EINFER_TRY(forward_chunk(w, s, tokens + done, chunk, logits,
                             all_logits != nullptr || done + chunk == n));
    done += chunk;
  }
  return ok_status();
}

}  // namespace einfer
