#include "models/mha_parts.h"

#include <cstddef>

#include "kernels/attention.h"
#include "kernels/kv_ring.h"
#include "kernels/rope.h"

namespace einfer {

namespace {

constexpr int kMaxParts = kMaxGroupProjections / 3;

// Rows [r0, r1) of a 2-D weight view (q8/q4: values and scales) or of a 1-D f32 bias.
TensorView rows_of(const TensorView& t, int64_t r0, int64_t r1) {
  TensorView s = t;
  s.shape[0] = r1 - r0;
  if (dtype_is_quantized(t.dtype)) {
    s.data = static_cast<unsigned char*>(t.data) +
             static_cast<size_t>(r0) * quant_row_bytes(t.dtype, t.shape[1]);
    s.scales = t.scales + r0 * quant_groups(t.shape[1], t.group_size);
  } else {
    s.data = t.f32() + r0 * (t.rank > 1 ? t.shape[1] : 1);
  }
  return s;
}

bool has(const TensorView& t) {
  return t.data != nullptr && t.rank > 0;
}

// The hooks of the parted q/k/v group: the caller's input_rows, then RoPE on every part's heads
// of rows [r0, r1).
struct PartsHooks {
  const MhaConfig* c;
  float* q;
  float* k;
  int32_t n;
  int64_t pos0;
  int parts;
};

void parts_before_rows(void* ctx, int64_t r0, int64_t r1) {
  const PartsHooks& h = *static_cast<const PartsHooks*>(ctx);
  h.c->input_rows(h.c->hook_ctx, r0, r1);
}

void parts_after_rows(void* ctx, int64_t r0, int64_t r1) {
  const PartsHooks& h = *static_cast<const PartsHooks*>(ctx);
  const MhaConfig& c = *h.c;
  const int32_t hp = c.n_heads / h.parts, gp = c.n_kv_heads / h.parts;
  const int64_t qp = int64_t{hp} * c.head_dim, kp = int64_t{gp} * c.head_dim;
  for (int p = 0; p < h.parts; ++p) {
    float* q = h.q + p * h.n * qp;
    float* k = h.k + p * h.n * kp;
    for (int64_t i = r0; i < r1; ++i) {
      rope_apply(*c.rope, c.rope_layout, q + i * qp, hp, h.pos0 + i);
      rope_apply(*c.rope, c.rope_layout, k + i * kp, gp, h.pos0 + i);
    }
  }
}

}  // namespace

int mha_head_parts(const MhaConfig& c, const MhaWeights& w, int32_t n) {
  const int parts = thread_count(c.threads);
  if (parts < 2 || parts > kMaxParts || n < 8 * parts) return 0;
  if (c.linear_state != nullptr || c.patterned || c.n_kv_heads % parts != 0) return 0;
  if ((c.n_heads / parts * c.head_dim) % 16 != 0 || (c.n_kv_heads / parts * c.head_dim) % 16 != 0)
    return 0;
  for (const TensorView* t : {&w.wq, &w.wk, &w.wv}) {
    if (!dtype_is_quantized(t->dtype) || t->rank != 2 || t->dtype != w.wq.dtype ||
        t->group_size != w.wq.group_size || t->group_size <= 0)
      return 0;
  }
  return parts;
}

Status mha_parts_project_qkv(const MhaWeights& w, const MhaConfig& c, const float* x, int32_t n,
                             int64_t pos0, const MhaBuffers& b, int parts) {
  if (parts < 2 || parts > kMaxParts)
    return make_status(StatusCode::invalid_argument, "mha parts: 2 to 4 parts", parts);
  const int64_t qp = int64_t{c.n_heads / parts} * c.head_dim;
  const int64_t kp = int64_t{c.n_kv_heads / parts} * c.head_dim;
  TensorView views[kMaxGroupProjections], biases[kMaxGroupProjections];
  Projection ps[kMaxGroupProjections];
  for (int p = 0; p < parts; ++p) {
    const struct {
      const TensorView* w;
      const TensorView* bias;
      float* y;
      int64_t width;
    } mats[3] = {{&w.wq, &w.bq, b.q, qp}, {&w.wk, &w.bk, b.k, kp}, {&w.wv, &w.bv, b.v, kp}};
    for (int m = 0; m < 3; ++m) {
      const int i = 3 * p + m;
      views[i] = rows_of(*mats[m].w, p * mats[m].width, (p + 1) * mats[m].width);
      if (has(*mats[m].bias))
        biases[i] = rows_of(*mats[m].bias, p * mats[m].width, (p + 1) * mats[m].width);
      ps[i] = {&views[i], &biases[i], mats[m].y + p * n * mats[m].width, nullptr};
    }
  }
  PartsHooks ctx{&c, b.q, b.k, n, pos0, parts};
  ProjectionHooks hooks;
  hooks.ctx = &ctx;
  hooks.before_rows = c.input_rows ? parts_before_rows : nullptr;
  hooks.after_rows = c.rope ? parts_after_rows : nullptr;
  return project_group(x, n, ps, 3 * parts, hooks, b.scratch, b.scratch_bytes, c.threads);
}

Status mha_parts_attention(const MhaConfig& c, int32_t n, int64_t pos0, const KVLayerView* cache,
                           const MhaBuffers& b, int parts) {
  const int32_t hp = c.n_heads / parts, gp = c.n_kv_heads / parts;
  const int64_t qp = int64_t{hp} * c.head_dim, kp = int64_t{gp} * c.head_dim;
  AttentionShape shape = mha_attention_shape(c);
  shape.n_heads = hp;
  shape.n_kv_heads = gp;
  shape.out_row_stride = int64_t{c.n_heads} * c.head_dim;
  // Slot p of the scratch for part p (each slot holds what a whole-shape call needs: the heads
  // per kv head and the head size are the same).
  const uintptr_t base = (reinterpret_cast<uintptr_t>(b.scratch) + 63) & ~uintptr_t{63};
  const size_t used = base - reinterpret_cast<uintptr_t>(b.scratch);
  const size_t slot = b.scratch_bytes > used ? (b.scratch_bytes - used) / parts & ~size_t{63} : 0;
  Status status[kMaxParts];
  auto attend = [&](int p) {
    KVLayerView part{};
    if (cache != nullptr) {
      part = *cache;
      part.n_kv_heads = gp;
      const size_t skip =
          static_cast<size_t>(p) * gp * cache->head_stride * dtype_size(cache->dtype);
      part.k = static_cast<const unsigned char*>(cache->k) + skip;
      part.v = static_cast<const unsigned char*>(cache->v) + skip;
      if (cache->k_scales != nullptr) part.k_scales = cache->k_scales + p * gp * cache->capacity;
      if (cache->v_scales != nullptr) part.v_scales = cache->v_scales + p * gp * cache->capacity;
    }
    status[p] = attention_f32(shape, b.q + p * n * qp, b.k + p * n * kp, b.v + p * n * kp, n, pos0,
                              cache != nullptr ? &part : nullptr, b.att + p * qp,
                              reinterpret_cast<void*>(base + p * slot), slot, nullptr);
  };
  run_tasks(c.threads, parts, attend);
  for (int p = 0; p < parts; ++p) EINFER_TRY(status[p]);
  return ok_status();
}

void mha_parts_store_rows(const MhaConfig& c, KVCache& cache, int32_t layer, int64_t pos0,
                          int32_t n, const float* k, const float* v, int parts, int64_t r0,
                          int64_t r1) {
  const int32_t gp = c.n_kv_heads / parts;
  const int64_t kp = int64_t{gp} * c.head_dim;
  for (int64_t i = r0; i < r1; ++i) {
    const int64_t pos = pos0 + i;
    if (c.window > 0 && kv_ring_overwritten_before(pos, pos0 + n, c.window, c.sinks)) continue;
    for (int p = 0; p < parts; ++p) {
      const size_t at = static_cast<size_t>(p * n + i) * kp;
      kv_cache_store_heads(cache, layer, pos, p * gp, (p + 1) * gp, k + at, v + at);
    }
  }
}

}  // namespace einfer
