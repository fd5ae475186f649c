#include "models/mha.h"

#include <cmath>
#include <cstring>

#include "kernels/attention_linear.h"
#include "kernels/einsum.h"
#include "kernels/kv_ring.h"
#include "kernels/matmul_quant.h"
#include "kernels/vec.h"

namespace einfer {

namespace {
AttentionShape attention_shape(const MhaConfig& c) {
  AttentionShape a{};
  a.n_heads = c.n_heads;
  a.n_kv_heads = c.n_kv_heads;
  a.head_dim = c.head_dim;
  a.scale = 1.f / std::sqrt(static_cast<float>(c.head_dim));
  a.window = c.window;
  a.sinks = c.sinks;
  a.causal = c.causal;
  return a;
}
bool has(const TensorView& t) {
  return t.data != nullptr && t.rank > 0;
}
}  // namespace

namespace {
Status linear_impl(const float* x, int64_t n, const TensorView& w, const TensorView& bias, float* y,
                   void* scratch, size_t scratch_bytes, const Threads* threads) {
  if (dtype_is_quantized(w.dtype) && w.rank == 2) {
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

Status linear_cached(LinearPlan* cache, const float* x, int64_t n, const TensorView& w,
                     const TensorView& bias, float* y, void* scratch, size_t scratch_bytes,
                     const Threads* threads) {
  if (!cache) return linear_impl(x, n, w, bias, y, scratch, scratch_bytes, threads);
  const TensorView in[2] = {make_view(DType::f32, const_cast<float*>(x), {n, w.shape[1]}), w};
  if (!cache->valid || !plan_fits(cache->plan, in)) {
    cache->valid = false;
    EINFER_TRY(plan<"nd,ed->ne">(in[0], in[1], &cache->plan));
    cache->valid = true;
  }
  const TensorView yv = make_view(DType::f32, y, {n, w.shape[0]});
  EINFER_TRY(execute_einsum(cache->plan, in, 2, yv, scratch, scratch_bytes, threads));
  if (has(bias)) {
    const size_t e = static_cast<size_t>(w.shape[0]);
    for (int64_t i = 0; i < n; ++i) add_f32(y + i * e, bias.f32(), y + i * e, e);
  }
  return ok_status();
}

Status linear_scratch_bytes(int64_t n, const TensorView& w, size_t* bytes) {
  EinsumPlan projection;
  const TensorView xv = make_view(DType::f32, nullptr, {n, w.shape[1]});
  EINFER_TRY(plan<"nd,ed->ne">(xv, w, &projection));
  *bytes = projection.scratch_bytes;
  return ok_status();
}

size_t mha_attention_scratch_bytes(const MhaConfig& c, int32_t n) {
  return attention_scratch_bytes(attention_shape(c), n);
}

Status mha_scratch_bytes(const MhaConfig& c, const MhaWeights& w, int32_t n, size_t* bytes) {
  size_t most = attention_scratch_bytes(attention_shape(c), n);
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

Status mha_forward(const MhaWeights& w, const MhaConfig& c, const float* x, int32_t n, int64_t pos0,
                   KVCache* cache, int32_t layer, const MhaBuffers& b, float* out) {
  const int64_t qd = static_cast<int64_t>(c.n_heads) * c.head_dim;
  const int64_t kv = static_cast<int64_t>(c.n_kv_heads) * c.head_dim;
  uint64_t t = profile_start(c.profile);
  LinearPlan* plans = b.plans;  // q, k, v, o (or null)
  EINFER_TRY(linear_cached(plans ? plans + 0 : nullptr, x, n, w.wq, w.bq, b.q, b.scratch,
                           b.scratch_bytes, c.threads));
  EINFER_TRY(linear_cached(plans ? plans + 1 : nullptr, x, n, w.wk, w.bk, b.k, b.scratch,
                           b.scratch_bytes, c.threads));
  EINFER_TRY(linear_cached(plans ? plans + 2 : nullptr, x, n, w.wv, w.bv, b.v, b.scratch,
                           b.scratch_bytes, c.threads));
  t = profile_charge(c.profile, Stage::projections, t);
  if (c.rope) {
    for (int32_t i = 0; i < n; ++i) {
      rope_apply(*c.rope, c.rope_layout, b.q + i * qd, c.n_heads, pos0 + i);
      rope_apply(*c.rope, c.rope_layout, b.k + i * kv, c.n_kv_heads, pos0 + i);
    }
  }
  t = profile_charge(c.profile, Stage::norms_rope, t);
  if (c.linear_state != nullptr) {
    EINFER_TRY(linear_attention_steps(c, layer, n, b));
    t = profile_charge(c.profile, Stage::attention, t);
    EINFER_TRY(linear_cached(plans ? plans + 3 : nullptr, b.att, n, w.wo, w.bo, out, b.scratch,
                             b.scratch_bytes, c.threads));
    profile_charge(c.profile, Stage::projections, t);
    return ok_status();
  }
  KVLayerView view{};
  const bool cached = cache != nullptr && pos0 > 0;
  if (cached) view = kv_cache_layer(*cache, layer);
  EINFER_TRY(attention_f32(attention_shape(c), b.q, b.k, b.v, n, pos0, cached ? &view : nullptr,
                           b.att, b.scratch, b.scratch_bytes, c.threads));
  if (cache) {
    // Store the block's keys and values after attending (so a ring smaller than the block never
    // loses a key a query of the same block still needs), skipping those a later position of the
    // same block overwrites at once (a windowed cache holds exactly `window` slots).
    for (int32_t i = 0; i < n; ++i) {
      const int64_t p = pos0 + i;
      if (c.window > 0 && kv_ring_overwritten_before(p, pos0 + n, c.window, c.sinks)) continue;
      EINFER_TRY(kv_cache_write(*cache, layer, p, b.k + i * kv, b.v + i * kv));
    }
  }
  t = profile_charge(c.profile, Stage::attention, t);
  EINFER_TRY(linear_cached(plans ? plans + 3 : nullptr, b.att, n, w.wo, w.bo, out, b.scratch,
                           b.scratch_bytes, c.threads));
  profile_charge(c.profile, Stage::projections, t);
  return ok_status();
}

}  // namespace einfer
