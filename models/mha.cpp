#include "models/mha.h"

#include <atomic>
#include <cmath>
#include <cstring>

#include "kernels/attention_variants/attention_variants.h"
#include "kernels/einsum/einsum.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/gguf/gguf.h"
#include "kernels/vec/vec.h"
#include "models/mha_parts.h"

namespace einfer {

AttentionShape mha_attention_shape(const MhaConfig& c) {
  AttentionShape a{};
  a.n_heads = c.n_heads;
  a.n_kv_heads = c.n_kv_heads;
  a.head_dim = c.head_dim;
  a.scale = c.scale > 0.f ? c.scale : 1.f / std::sqrt(static_cast<float>(c.head_dim));
  a.softcap = c.softcap;
  a.window = c.window;
  a.sinks = c.sinks;
  a.causal = c.causal;
  return a;
}

void mha_rotate_heads(const MhaConfig& c, const float* norm, float* x, int32_t heads, int64_t pos) {
  if (norm != nullptr) {
    for (int32_t h = 0; h < heads; ++h) {
      float* xh = x + static_cast<size_t>(h) * c.head_dim;
      rmsnorm_f32(xh, norm, c.qk_norm_eps, xh, static_cast<size_t>(c.head_dim));
    }
  }
  rope_apply(*c.rope, c.rope_layout, x, heads, pos);
}

namespace {
bool has(const TensorView& t) {
  return t.data != nullptr && t.rank > 0;
}
}  // namespace

namespace {
Status linear_impl(const float* x, int64_t n, const TensorView& w, const TensorView& bias, float* y,
                   void* scratch, size_t scratch_bytes, const Threads* threads) {
  if (dtype_is_gguf_block(w.dtype)) {
    // GGUF block weights (kernels/gguf/gguf.h): one direct call, no einsum plan.
    EINFER_TRY(
        matmul_f32_gguf(x, w.shape[1], n, w, y, w.shape[0], scratch, scratch_bytes, threads));
  } else if (dtype_is_quantized(w.dtype) && w.rank == 2) {
    // The plan for "nd,ed->ne" with q8/q4 weights (always contiguous) is exactly this call, same
    // lda, ldc and kernel; planning it on every call (no plan cache: firmware) cost more
    // instructions on a Cortex-M than a 64 x 64 projection itself.
    EINFER_TRY(
        matmul_f32_quant(x, w.shape[1], n, w, y, w.shape[0], scratch, scratch_bytes, threads));
  } else {
    // Operands built in place (not via einsum<>, which would copy them once more: stack on MCUs).
    const TensorView in[2] = {make_view(DType::f32, const_cast<float*>(x), {n, w.shape[1]}), w};
    EinsumPlan p;
    EINFER_TRY(plan_einsum(einsum_spec<"nd,ed->ne">, in, 2, &p));
    const TensorView yv = make_view(DType::f32, y, {n, w.shape[0]});
    EINFER_TRY(execute_einsum(p, in, 2, yv, scratch, scratch_bytes, threads));
  }
  if (has(bias)) {
    const size_t e = static_cast<size_t>(w.shape[0]);
    for (int64_t i = 0; i < n; ++i) add_f32(y + i * e, bias.f32(), y + i * e, e);
  }
  return ok_status();
}
}  // namespace

Status linear(const float* x, int64_t n, const TensorView& w, const TensorView& bias, float* y,
              void* scratch, size_t scratch_bytes) {
  return linear_impl(x, n, w, bias, y, scratch, scratch_bytes, nullptr);
}

namespace {
// The operand checks execute_einsum makes, minus the data pointers (which change every call).
bool plan_fits(const EinsumPlan& p, const TensorView* in) {
  for (int t = 0; t < 2; ++t) {
    const TensorView& v = in[t];
    if (v.dtype != p.in_dtype[t] || v.rank != p.in_rank[t]) return false;
    for (int i = 0; i < v.rank; ++i) {
      if (v.shape[i] != p.in_shape[t][i] || (v.shape[i] != 1 && v.strides[i] != p.in_strides[t][i]))
        return false;
    }
    if (dtype_is_quantized(v.dtype) && v.group_size != p.in_group[t]) return false;
  }
  return true;
}
}  // namespace

namespace {
// The cached plan for x · Wᵀ, re-planned when the operands no longer fit it.
Status ensure_plan(LinearPlan* cache, const TensorView* in) {
  if (!cache->valid || !plan_fits(cache->plan, in)) {
    cache->valid = false;
    EINFER_TRY(plan<"nd,ed->ne">(in[0], in[1], &cache->plan));
    cache->valid = true;
  }
  return ok_status();
}
}  // namespace

Status linear_cached(LinearPlan* cache, const float* x, int64_t n, const TensorView& w,
                     const TensorView& bias, float* y, void* scratch, size_t scratch_bytes,
                     const Threads* threads) {
  if (!cache || dtype_is_gguf_block(w.dtype))
    return linear_impl(x, n, w, bias, y, scratch, scratch_bytes, threads);
  const TensorView in[2] = {make_view(DType::f32, const_cast<float*>(x), {n, w.shape[1]}), w};
  EINFER_TRY(ensure_plan(cache, in));
  const TensorView yv = make_view(DType::f32, y, {n, w.shape[0]});
  EINFER_TRY(execute_einsum(cache->plan, in, 2, yv, scratch, scratch_bytes, threads));
  if (has(bias)) {
    const size_t e = static_cast<size_t>(w.shape[0]);
    for (int64_t i = 0; i < n; ++i) add_f32(y + i * e, bias.f32(), y + i * e, e);
  }
  return ok_status();
}

namespace {

// y[:, j0:j1] += bias[j0:j1] (exact, so the same bits whatever the blocks).
void add_bias_columns(const Projection& p, int64_t n, int64_t j0, int64_t j1) {
  if (p.bias == nullptr || !has(*p.bias) || j1 <= j0) return;
  const int64_t e = p.w->shape[0];
  for (int64_t i = 0; i < n; ++i) {
    float* row = p.y + i * e + j0;
    add_f32(row, p.bias->f32() + j0, row, static_cast<size_t>(j1 - j0));
  }
}

void add_bias_rows(const Projection& p, int64_t r0, int64_t r1) {
  if (p.bias == nullptr || !has(*p.bias)) return;
  const int64_t e = p.w->shape[0];
  for (int64_t i = r0; i < r1; ++i) add_f32(p.y + i * e, p.bias->f32(), p.y + i * e, e);
}

// The row-block form's block height for weights that stay in L2, and what "stay" means: a
// group's values and scales (15M: q/k/v 280 KB, gate+up 498 KB in q8; 110M: 663 KB and up).
constexpr int64_t kRowBlockRows = 64;
constexpr size_t kL2ResidentWeightBytes = 512 * 1024;

size_t group_weight_bytes(const Projection* ps, int count) {
  size_t bytes = 0;
  for (int p = 0; p < count; ++p) {
    const TensorView& w = *ps[p].w;
    const int64_t groups = quant_groups(w.shape[1], w.group_size);
    bytes += static_cast<size_t>(w.shape[0]) *
             (quant_row_bytes(w.dtype, w.shape[1]) + static_cast<size_t>(groups) * sizeof(float));
  }
  return bytes;
}

// Task `task` of `tasks`: its column block of every projection.
void block_of(const Projection* ps, int count, int task, int tasks, int64_t align, int64_t* j0,
              int64_t* j1) {
  for (int p = 0; p < count; ++p) {
    long long b = 0, e = 0;
    split_range(ps[p].w->shape[0], task, tasks, align, &b, &e);
    j0[p] = b;
    j1[p] = e;
  }
}

// The row pass: before_rows and (quantized weights) the shared activation quantization.
void row_pass(const float* x, int64_t n, const Projection* ps, bool quant, const ProjectionHooks& h,
              void* qscratch, size_t qbytes, const Threads* threads, std::atomic<bool>* failed) {
  if (h.before_rows == nullptr && !quant) return;
  const int T = thread_count(threads);
  const int tasks = static_cast<int>(n < T ? n : T);
  auto rows = [&](int task) {
    long long r0 = 0, r1 = 0;
    split_range(n, task, tasks, 1, &r0, &r1);
    if (h.before_rows) h.before_rows(h.ctx, r0, r1);
    if (quant && r1 > r0 &&
        !matmul_quant_rows(x, ps[0].w->shape[1], n, *ps[0].w, r0, r1, qscratch, qbytes).ok())
      failed->store(true, std::memory_order_relaxed);
  };
  run_tasks(threads, tasks, rows);
}

// Quantized weights of one dtype and group: the quantized x is shared by every projection.
__attribute__((noinline)) Status quant_group(const float* x, int64_t n, const Projection* ps,
                                             int count, const ProjectionHooks& h, void* scratch,
                                             size_t scratch_bytes, int tasks,
                                             const Threads* threads) {
  std::atomic<bool> failed{false};
  row_pass(x, n, ps, true, h, scratch, scratch_bytes, threads, &failed);
  auto columns = [&](int task) {
    int64_t j0[kMaxGroupProjections] = {}, j1[kMaxGroupProjections] = {};
    block_of(ps, count, task, tasks, h.align, j0, j1);
    for (int p = 0; p < count; ++p) {
      const int64_t e = ps[p].w->shape[0];
      if (!matmul_quant_columns(n, *ps[p].w, ps[p].y, e, j0[p], j1[p], scratch, scratch_bytes).ok())
        failed.store(true, std::memory_order_relaxed);
      add_bias_columns(ps[p], n, j0[p], j1[p]);
    }
    if (h.after_columns) h.after_columns(h.ctx, j0, j1);
  };
  run_tasks(threads, tasks, columns);
  if (failed.load()) {
    return make_status(StatusCode::invalid_argument, "project_group: a quantized block failed");
  }
  return ok_status();
}

// The row-block form (prefill): x's rows are cut into `blocks` blocks (multiples of 4), and a
// block [r0, r1) goes through before_rows, its quantization, every column of every projection and
// after_rows. Task t of min(blocks, threads) takes blocks t, t + tasks, ...: one region, and each
// task reads only rows it wrote itself.
__attribute__((noinline)) Status quant_row_blocks(const float* x, int64_t n, const Projection* ps,
                                                  int count, const ProjectionHooks& h,
                                                  void* scratch, size_t scratch_bytes, int blocks,
                                                  const Threads* threads) {
  std::atomic<bool> failed{false};
  const int tasks = blocks < thread_count(threads) ? blocks : thread_count(threads);
  auto rows = [&](int task) {
    for (int b = task; b < blocks; b += tasks) {
      long long r0 = 0, r1 = 0;
      split_range(n, b, blocks, 4, &r0, &r1);
      if (r1 <= r0) continue;
      if (h.before_rows) h.before_rows(h.ctx, r0, r1);
      bool ok =
          matmul_quant_rows(x, ps[0].w->shape[1], n, *ps[0].w, r0, r1, scratch, scratch_bytes).ok();
      for (int p = 0; ok && p < count; ++p) {
        const int64_t e = ps[p].w->shape[0];
        ok = matmul_quant_row_block(n, *ps[p].w, ps[p].y, e, r0, r1, scratch, scratch_bytes).ok();
        add_bias_rows(ps[p], r0, r1);
      }
      if (!ok) failed.store(true, std::memory_order_relaxed);
      if (h.after_rows) h.after_rows(h.ctx, r0, r1);
    }
  };
  run_tasks(threads, tasks, rows);
  if (failed.load()) {
    return make_status(StatusCode::invalid_argument, "project_group: a quantized row block failed");
  }
  return ok_status();
}

// f32 weights through their cached einsum plans, cut into column blocks (one scratch slot each).
__attribute__((noinline)) Status f32_group(const float* x, int64_t n, const Projection* ps,
                                           int count, const ProjectionHooks& h, void* scratch,
                                           size_t scratch_bytes, const Threads* threads,
                                           bool* done) {
  *done = false;
  TensorView in[kMaxGroupProjections][2], out[kMaxGroupProjections];
  size_t slot = 0;
  for (int p = 0; p < count; ++p) {
    const TensorView& w = *ps[p].w;
    if (ps[p].plan == nullptr || w.dtype != DType::f32) return ok_status();
    in[p][0] = make_view(DType::f32, const_cast<float*>(x), {n, w.shape[1]});
    in[p][1] = w;
    out[p] = make_view(DType::f32, ps[p].y, {n, w.shape[0]});
    EINFER_TRY(ensure_plan(ps[p].plan, in[p]));
    if (einsum_split_columns(ps[p].plan->plan, in[p], 2, out[p]) <= 0) return ok_status();
    const size_t need = (ps[p].plan->plan.layout.scratch + 63) & ~size_t{63};
    if (need > slot) slot = need;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
  const uintptr_t aligned = (base + 63) & ~uintptr_t{63};
  const size_t usable = scratch != nullptr && scratch_bytes > aligned - base
                            ? scratch_bytes - static_cast<size_t>(aligned - base)
                            : 0;
  int64_t units = 0;
  for (int p = 0; p < count; ++p) {
    const int64_t u = (ps[p].w->shape[0] + h.align - 1) / h.align;
    if (u > units) units = u;
  }
  int64_t tasks = thread_count(threads);
  if (tasks > units) tasks = units;
  if (slot > 0 && static_cast<int64_t>(usable / slot) < tasks)
    tasks = static_cast<int64_t>(usable / slot);
  if (tasks < 2) return ok_status();
  *done = true;
  std::atomic<bool> failed{false};
  row_pass(x, n, ps, false, h, nullptr, 0, threads, &failed);
  auto columns = [&](int task) {
    int64_t j0[kMaxGroupProjections] = {}, j1[kMaxGroupProjections] = {};
    block_of(ps, count, task, static_cast<int>(tasks), h.align, j0, j1);
    void* mine = reinterpret_cast<void*>(aligned + static_cast<size_t>(task) * slot);
    for (int p = 0; p < count; ++p) {
      if (!execute_einsum_columns(ps[p].plan->plan, in[p], 2, out[p], j0[p], j1[p], mine, slot)
               .ok())
        failed.store(true, std::memory_order_relaxed);
      add_bias_columns(ps[p], n, j0[p], j1[p]);
    }
    if (h.after_columns) h.after_columns(h.ctx, j0, j1);
  };
  run_tasks(threads, static_cast<int>(tasks), columns);
  if (failed.load()) {
    return make_status(StatusCode::invalid_argument, "project_group: an f32 block failed");
  }
  return ok_status();
}

}  // namespace

Status project_group(const float* x, int64_t n, const Projection* ps, int count,
                     const ProjectionHooks& h, void* scratch, size_t scratch_bytes,
                     const Threads* threads) {
  if (count < 1 || count > kMaxGroupProjections || n < 0 || h.align <= 0 || h.align % 16 != 0) {
    return make_status(StatusCode::invalid_argument,
                       "project_group: 1 to 3 projections, n >= 0, align a multiple of 16", count);
  }
  bool quant = true, gguf = false;
  for (int p = 0; p < count; ++p) {
    const TensorView* w = ps[p].w;
    if (w == nullptr || ps[p].y == nullptr || w->rank != 2) {
      return make_status(StatusCode::invalid_argument, "project_group: projection incomplete", p);
    }
    if (w->shape[1] != ps[0].w->shape[1]) {
      return make_status(StatusCode::shape_mismatch, "project_group: inputs of different widths",
                         ps[0].w->shape[1], w->shape[1], p);
    }
    gguf = gguf || dtype_is_gguf_block(w->dtype);
    // One quantization of x serves them all: same dtype, group and layout (the layout decides
    // the order the activations are kept in).
    quant = quant && dtype_is_quantized(w->dtype) && w->dtype == ps[0].w->dtype &&
            w->group_size == ps[0].w->group_size && w->group_size > 0 &&
            (!kLayoutsBuilt || w->layout == ps[0].w->layout);
  }
  if (quant) {
    const size_t need = matmul_quant_scratch_bytes(n, ps[0].w->shape[1], ps[0].w->group_size);
    if (scratch == nullptr || scratch_bytes < need) {
      return make_status(StatusCode::out_of_memory, "project_group: scratch too small",
                         static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
    }
    // Every hook in its row form: whole token rows per task, one block per thread when there
    // are 8 rows or more for each. Weights small enough to stay in L2 from one block to the
    // next are taken in blocks of about kRowBlockRows rows instead (at least one per thread):
    // a block's activations and outputs then stay in L2 as well (15M q8 prefill, chunks of 128
    // on one thread: 5.6 -> 5.4 ms, as fast as chunks of 64, AMX). Larger weights take one pass
    // per thread, since every block streams them again (110M: two blocks of 64 were 5% slower).
    // Kernels that pack weight tiles per call ask for taller blocks (matmul_quant_min_rows).
    const int T = thread_count(threads);
    if (h.after_columns == nullptr || h.after_rows != nullptr) {
      int blocks = T > 1 && n >= 8 * static_cast<int64_t>(T) ? T : 0;
      int64_t by_size = n / kRowBlockRows;
      if (by_size >= 2) {  // a prefill long enough to block: as tall as the kernel asks
        const TensorView& w0 = *ps[0].w;
        const int64_t min_rows =
            matmul_quant_min_rows(w0.dtype, w0.layout, w0.shape[1], w0.group_size);
        if (min_rows > kRowBlockRows) by_size = n / min_rows;
      }
      if (by_size >= 2 && group_weight_bytes(ps, count) <= kL2ResidentWeightBytes) {
        const int64_t b = by_size > T ? by_size : T;
        blocks = static_cast<int>((b + T - 1) / T * T);
      }
      if (blocks > 0)
        return quant_row_blocks(x, n, ps, count, h, scratch, scratch_bytes, blocks, threads);
    }
    int64_t units = 1;
    for (int p = 0; p < count; ++p) {
      const int64_t u = (ps[p].w->shape[0] + h.align - 1) / h.align;
      if (u > units) units = u;
    }
    const int tasks =
        static_cast<int>(units < thread_count(threads) ? units : thread_count(threads));
    return quant_group(x, n, ps, count, h, scratch, scratch_bytes, tasks, threads);
  }
  // GGUF block weights have no einsum plan: they take the one-by-one path (each call threaded).
  if (thread_count(threads) > 1 && !gguf) {
    bool done = false;
    EINFER_TRY(f32_group(x, n, ps, count, h, scratch, scratch_bytes, threads, &done));
    if (done) return ok_status();
  }
  // One projection after another (each threaded on its own), the hooks around them.
  if (h.before_rows) h.before_rows(h.ctx, 0, n);
  int64_t j0[kMaxGroupProjections] = {}, j1[kMaxGroupProjections] = {};
  for (int p = 0; p < count; ++p) {
    const TensorView none{};
    EINFER_TRY(linear_cached(ps[p].plan, x, n, *ps[p].w, ps[p].bias ? *ps[p].bias : none, ps[p].y,
                             scratch, scratch_bytes, threads));
    j1[p] = ps[p].w->shape[0];
  }
  if (h.after_columns) h.after_columns(h.ctx, j0, j1);
  return ok_status();
}

Status linear_scratch_bytes(int64_t n, const TensorView& w, size_t* bytes) {
  if (dtype_is_gguf_block(w.dtype)) {
    *bytes = matmul_gguf_scratch_bytes(n, w.shape[1]);
    return ok_status();
  }
  EinsumPlan projection;
  const TensorView xv = make_view(DType::f32, nullptr, {n, w.shape[1]});
  EINFER_TRY(plan<"nd,ed->ne">(xv, w, &projection));
  *bytes = projection.scratch_bytes;
  return ok_status();
}

size_t mha_attention_scratch_bytes(const MhaConfig& c, int32_t n) {
  const size_t dense = attention_scratch_bytes(mha_attention_shape(c), n);
  if (!c.patterned) return dense;
  const size_t sparse = attention_pattern_decoder_scratch_bytes(1);
  return sparse > dense ? sparse : dense;
}

Status mha_scratch_bytes(const MhaConfig& c, const MhaWeights& w, int32_t n, size_t* bytes) {
  size_t most = attention_scratch_bytes(mha_attention_shape(c), n);
  for (const TensorView* t : {&w.wq, &w.wk, &w.wv, &w.wo}) {
    for (int64_t rows : {static_cast<int64_t>(1), static_cast<int64_t>(n)}) {
      size_t b = 0;
      EINFER_TRY(linear_scratch_bytes(rows, *t, &b));
      if (b > most) most = b;
    }
  }
  *bytes = most;
  return ok_status();
}

namespace {
// The q/k/v group's hooks: the caller's input_rows, then RoPE on each task's blocks of q and k
// (cut on whole heads).
struct QkvHooks {
  const MhaConfig* c;
  float* q;
  float* k;
  int32_t n;
  int64_t pos0;
};

void qkv_before_rows(void* ctx, int64_t r0, int64_t r1) {
  const QkvHooks& h = *static_cast<const QkvHooks*>(ctx);
  h.c->input_rows(h.c->hook_ctx, r0, r1);
}

void qkv_after_columns(void* ctx, const int64_t* j0, const int64_t* j1) {
  const QkvHooks& h = *static_cast<const QkvHooks*>(ctx);
  const MhaConfig& c = *h.c;
  const int64_t qd = static_cast<int64_t>(c.n_heads) * c.head_dim;
  const int64_t kv = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;
  const int32_t q_heads = static_cast<int32_t>((j1[0] - j0[0]) / c.head_dim);
  const int32_t k_heads = static_cast<int32_t>((j1[1] - j0[1]) / c.head_dim);
  for (int32_t i = 0; i < h.n; ++i) {
    if (q_heads > 0) mha_rotate_heads(c, c.q_norm, h.q + i * qd + j0[0], q_heads, h.pos0 + i);
    if (k_heads > 0) mha_rotate_heads(c, c.k_norm, h.k + i * kv + j0[1], k_heads, h.pos0 + i);
  }
}

// RoPE on every head of rows [r0, r1) of q and k (the row-block form of qkv_after_columns).
void qkv_after_rows(void* ctx, int64_t r0, int64_t r1) {
  const QkvHooks& h = *static_cast<const QkvHooks*>(ctx);
  const MhaConfig& c = *h.c;
  const int64_t qd = static_cast<int64_t>(c.n_heads) * c.head_dim;
  const int64_t kv = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;
  for (int64_t i = r0; i < r1; ++i) {
    mha_rotate_heads(c, c.q_norm, h.q + i * qd, c.n_heads, h.pos0 + i);
    mha_rotate_heads(c, c.k_norm, h.k + i * kv, c.n_kv_heads, h.pos0 + i);
  }
}

// The output projection's hooks: the block's keys and values into the cache (rows [r0, r1),
// each task its own, before the projection reads them), then the caller's residual hooks.
struct WoHooks {
  const MhaConfig* c;
  KVCache* cache;  // null: nothing to store
  int32_t layer;
  int64_t pos0;
  int32_t n;
  const float* k;
  const float* v;
};

void wo_before_rows(void* ctx, int64_t r0, int64_t r1) {
  const WoHooks& h = *static_cast<const WoHooks*>(ctx);
  mha_store_kv_rows(*h.c, *h.cache, h.layer, h.pos0, h.n, h.k, h.v, 0, h.c->n_kv_heads, r0, r1);
}

void wo_after_rows(void* ctx, int64_t r0, int64_t r1) {
  const MhaConfig& c = *static_cast<const WoHooks*>(ctx)->c;
  c.output_rows(c.hook_ctx, r0, r1);
}

void wo_after_columns(void* ctx, const int64_t* j0, const int64_t* j1) {
  const MhaConfig& c = *static_cast<const WoHooks*>(ctx)->c;
  c.output_columns(c.hook_ctx, j0[0], j1[0]);
}

int64_t gcd64(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}
}  // namespace

size_t mha_linear_state_floats(const MhaConfig& c) {
  const size_t k = static_cast<size_t>(c.head_dim);
  return static_cast<size_t>(c.n_heads) * (k * k + k);
}

namespace {
// The n positions one after another through layer `layer`'s recurrent state, one head at a time
// (a head's state is its own k x k block and k-vector). Grouped kv heads are shared: each query
// head's phi(k) is taken from a copy, since the step overwrites its k with phi(k).
Status linear_attention_steps(const MhaConfig& c, int32_t layer, int32_t n, const MhaBuffers& b) {
  const int64_t k = c.head_dim;
  const int64_t qd = int64_t{c.n_heads} * k, kv = int64_t{c.n_kv_heads} * k;
  const int32_t group = c.n_heads / c.n_kv_heads;
  if (b.scratch_bytes < static_cast<size_t>(k) * sizeof(float))
    return make_status(StatusCode::out_of_memory, "linear attention: scratch below one head");
  float* key = static_cast<float*>(b.scratch);
  float* state = c.linear_state + static_cast<size_t>(layer) * mha_linear_state_floats(c);
  LinearAttentionShape one;
  one.n_heads = 1;
  one.head_dim = c.head_dim;
  one.causal = true;
  const size_t head_state = static_cast<size_t>(k * k + k);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t h = 0; h < c.n_heads; ++h) {
      const int64_t g = h / group;
      std::memcpy(key, b.k + i * kv + g * k, static_cast<size_t>(k) * sizeof(float));
      attention_linear_elu_step_f32(one, state + h * head_state, b.q + i * qd + h * k, key,
                                    b.v + i * kv + g * k, b.att + i * qd + h * k);
    }
  }
  return ok_status();
}
}  // namespace

namespace {
// P_O and, in its row pass, the chunk's keys and values into the cache: after attending (so a ring
// smaller than the chunk never loses a key a query of the same chunk still needs), each task its
// own rows (on the calling thread the store was ~4% of a 2-thread prefill). cache null: no store
// (the head-parted prefill stores in its attention tasks). `t`: the profile clock so far.
Status output_projection(const MhaWeights& w, const MhaConfig& c, int32_t n, int64_t pos0,
                         KVCache* cache, int32_t layer, const MhaBuffers& b, float* out,
                         uint64_t t) {
  const bool store = cache != nullptr && c.linear_state == nullptr;
  if (store) EINFER_TRY(kv_cache_check_write(*cache, layer, pos0, b.k, b.v));
  WoHooks wo_ctx{&c, store ? cache : nullptr, layer, pos0, n, b.k, b.v};
  ProjectionHooks wo_hooks;
  wo_hooks.ctx = &wo_ctx;
  wo_hooks.before_rows = store ? wo_before_rows : nullptr;
  wo_hooks.after_columns = c.output_columns ? wo_after_columns : nullptr;
  wo_hooks.after_rows = c.output_rows ? wo_after_rows : nullptr;
  const Projection wo{&w.wo, &w.bo, out, b.plans ? b.plans + 3 : nullptr};
  EINFER_TRY(project_group(b.att, n, &wo, 1, wo_hooks, b.scratch, b.scratch_bytes, c.threads));
  if (store) kv_cache_mark(*cache, layer, pos0 + n);
  profile_charge(c.profile, Stage::projections, t);
  return ok_status();
}
}  // namespace

Status mha_forward(const MhaWeights& w, const MhaConfig& c, const float* x, int32_t n, int64_t pos0,
                   KVCache* cache, int32_t layer, const MhaBuffers& b, float* out) {
  uint64_t t = profile_start(c.profile);
  LinearPlan* plans = b.plans;  // q, k, v, o (or null)
  // A prefill chunk on several threads lays each task's heads out apart (mha_parts.h).
  const int parts = mha_head_parts(c, w, n, b);
  if (parts > 0) {
    EINFER_TRY(mha_parts_attend(w, c, x, n, pos0, cache, layer, b, parts));
    return output_projection(w, c, n, pos0, nullptr, layer, b, out, profile_start(c.profile));
  }
  // q, k and v in one group (one shared activation quantization, one column pass); RoPE runs on
  // each task's blocks, which are then cut on whole heads.
  QkvHooks qkv{&c, b.q, b.k, n, pos0};
  ProjectionHooks hooks;
  hooks.ctx = &qkv;
  hooks.before_rows = c.input_rows ? qkv_before_rows : nullptr;
  if (c.rope) {
    hooks.after_columns = qkv_after_columns;
    hooks.after_rows = qkv_after_rows;
    hooks.align = 16 / gcd64(16, c.head_dim) * c.head_dim;  // lcm(16, head_dim)
  }
  const Projection qkv_projections[3] = {{&w.wq, &w.bq, b.q, plans ? plans + 0 : nullptr},
                                         {&w.wk, &w.bk, b.k, plans ? plans + 1 : nullptr},
                                         {&w.wv, &w.bv, b.v, plans ? plans + 2 : nullptr}};
  EINFER_TRY(project_group(x, n, qkv_projections, 3, hooks, b.scratch, b.scratch_bytes, c.threads));
  t = profile_charge(c.profile, Stage::projections, t);
  if (c.linear_state != nullptr) {
    EINFER_TRY(linear_attention_steps(c, layer, n, b));
  } else {
    KVLayerView view{};
    const bool cached = cache != nullptr && pos0 > 0;
    if (cached) view = kv_cache_layer(*cache, layer);
    if (c.patterned) {
      EINFER_TRY(attention_pattern_decoder_f32(c.pattern, mha_attention_shape(c), b.q, b.k, b.v, n,
                                               pos0, cached ? &view : nullptr, b.att, b.scratch,
                                               b.scratch_bytes, c.threads));
    } else {
      EINFER_TRY(attention_f32(mha_attention_shape(c), b.q, b.k, b.v, n, pos0,
                               cached ? &view : nullptr, b.att, b.scratch, b.scratch_bytes,
                               c.threads));
    }
  }
  t = profile_charge(c.profile, Stage::attention, t);
  return output_projection(w, c, n, pos0, cache, layer, b, out, t);
}

}  // namespace einfer
