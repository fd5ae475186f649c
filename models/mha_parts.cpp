#include "models/mha_parts.h"

#include <atomic>
#include <cstddef>

#include "kernels/attention/attention.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/quant/quant.h"
#include "kernels/rope/rope.h"
#include "kernels/vec/vec.h"

namespace einfer {

namespace {

constexpr int kMaxParts = 4;

// Rows [r0, r1) of a q8/q4 weight view (values and scales). mha_head_parts admits only parts
// whose rows start on a multiple of 16, a tile boundary of every layout.
TensorView rows_of(const TensorView& t, int64_t r0, int64_t r1) {
  TensorView s = t;
  if constexpr (kLayoutsBuilt) {
    (void)quant_weight_rows(t, r0, r1, &s);
  } else {  // rows only (firmware without layouts: the plain slice, no general function)
    s.shape[0] = r1 - r0;
    s.data = static_cast<unsigned char*>(t.data) +
             static_cast<size_t>(r0) * quant_row_bytes(t.dtype, t.shape[1]);
    s.scales = t.scales + r0 * quant_groups(t.shape[1], t.group_size);
  }
  return s;
}

bool has(const TensorView& t) {
  return t.data != nullptr && t.rank > 0;
}

// Where a layer's parted attention keeps its things in the scratch: the quantized rows of x first
// (shared, read-only once the row pass is done), then one attention slot per part, each on pages
// of its own (the L2 streamer prefetches within a 4 KiB page: slots sharing one would pull the
// other core's running softmax state across).
struct PartsScratch {
  size_t quant_bytes = 0;
  uintptr_t slots = 0;
  size_t slot_bytes = 0;
  size_t total = 0;  // bytes needed from the scratch's start
};

PartsScratch parts_scratch(const MhaConfig& c, const MhaWeights& w, int32_t n, int parts,
                           const void* scratch) {
  PartsScratch s;
  s.quant_bytes = matmul_quant_scratch_bytes(n, w.wq.shape[1], w.wq.group_size);
  AttentionShape shape = mha_attention_shape(c);
  shape.n_heads = c.n_heads / parts;
  shape.n_kv_heads = c.n_kv_heads / parts;
  constexpr size_t kPage = 4096;
  s.slot_bytes = (attention_scratch_bytes(shape, n) + kPage - 1) / kPage * kPage;
  const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
  s.slots = (base + s.quant_bytes + kPage - 1) & ~uintptr_t{kPage - 1};
  s.total = static_cast<size_t>(s.slots - base) + parts * s.slot_bytes;
  return s;
}

}  // namespace

int mha_head_parts(const MhaConfig& c, const MhaWeights& w, int32_t n, const MhaBuffers& b) {
  const int parts = thread_count(c.threads);
  if (parts < 2 || parts > kMaxParts || n < 8 * parts) return 0;
  if (c.linear_state != nullptr || c.patterned || c.n_kv_heads % parts != 0) return 0;
  if ((c.n_heads / parts * c.head_dim) % 16 != 0 || (c.n_kv_heads / parts * c.head_dim) % 16 != 0)
    return 0;
  for (const TensorView* t : {&w.wq, &w.wk, &w.wv}) {
    if (!dtype_is_quantized(t->dtype) || t->rank != 2 || t->dtype != w.wq.dtype ||
        t->group_size != w.wq.group_size || t->group_size <= 0 ||
        (kLayoutsBuilt && t->layout != w.wq.layout))
      return 0;
  }
  if (b.scratch == nullptr || b.scratch_bytes < parts_scratch(c, w, n, parts, b.scratch).total)
    return 0;
  return parts;
}

Status mha_parts_attend(const MhaWeights& w, const MhaConfig& c, const float* x, int32_t n,
                        int64_t pos0, KVCache* cache, int32_t layer, const MhaBuffers& b,
                        int parts) {
  if (parts < 2 || parts > kMaxParts)
    return make_status(StatusCode::invalid_argument, "mha parts: 2 to 4 parts", parts);
  const PartsScratch sc = parts_scratch(c, w, n, parts, b.scratch);
  if (b.scratch == nullptr || b.scratch_bytes < sc.total)
    return make_status(StatusCode::out_of_memory, "mha parts: scratch too small",
                       static_cast<int64_t>(sc.total), static_cast<int64_t>(b.scratch_bytes));
  const int32_t hp = c.n_heads / parts, gp = c.n_kv_heads / parts;
  const int64_t qp = int64_t{hp} * c.head_dim, kp = int64_t{gp} * c.head_dim;
  const int64_t d = w.wq.shape[1];
  if (cache != nullptr) EINFER_TRY(kv_cache_check_write(*cache, layer, pos0, b.k, b.v));
  // The positions before this chunk (the view is taken before the chunk's store).
  const KVLayerView past =
      cache != nullptr && pos0 > 0 ? kv_cache_layer(*cache, layer) : KVLayerView{};
  const KVLayerView* before = cache != nullptr && pos0 > 0 ? &past : nullptr;
  StageProfile* profile = c.profile;
  uint64_t t = profile_start(profile);

  // Region 1: the caller's input rows and their quantization, rows split among the parts.
  std::atomic<bool> failed{false};
  auto rows = [&](int task) {
    long long r0 = 0, r1 = 0;
    split_range(n, task, parts, 1, &r0, &r1);
    if (r1 <= r0) return;
    if (c.input_rows) c.input_rows(c.hook_ctx, r0, r1);
    if (!matmul_quant_rows(x, d, n, w.wq, r0, r1, b.scratch, sc.quant_bytes).ok())
      failed.store(true, std::memory_order_relaxed);
  };
  run_tasks(c.threads, parts, rows);
  if (failed.load())
    return make_status(StatusCode::invalid_argument, "mha parts: activation quantization failed");
  t = profile_charge(profile, Stage::projections, t);

  // Region 2: part p projects its heads' q, k and v for every row (its rows of the weights: half
  // of them on two threads, where the row-block form streamed all of them through every core),
  // ropes them and attends them, all in its own core's cache and with no join in between.
  AttentionShape shape = mha_attention_shape(c);
  shape.n_heads = hp;
  shape.n_kv_heads = gp;
  shape.out_row_stride = int64_t{c.n_heads} * c.head_dim;
  Status status[kMaxParts];
  uint64_t project_ns[kMaxParts] = {}, attend_ns[kMaxParts] = {};
  auto part = [&](int p) {
    const uint64_t t0 = profile_start(profile);  // this thread's clock: differences only
    const struct {
      const TensorView* w;
      const TensorView* bias;
      float* y;
      int64_t width;
    } mats[3] = {{&w.wq, &w.bq, b.q, qp}, {&w.wk, &w.bk, b.k, kp}, {&w.wv, &w.bv, b.v, kp}};
    for (const auto& m : mats) {
      const TensorView rows_w = rows_of(*m.w, p * m.width, (p + 1) * m.width);
      float* y = m.y + p * n * m.width;
      status[p] =
          matmul_quant_columns(n, rows_w, y, m.width, 0, m.width, b.scratch, sc.quant_bytes);
      if (!status[p].ok()) return;
      if (has(*m.bias)) {
        const float* bias = m.bias->f32() + p * m.width;
        for (int64_t i = 0; i < n; ++i)
          add_f32(y + i * m.width, bias, y + i * m.width, static_cast<size_t>(m.width));
      }
    }
    float* q = b.q + p * n * qp;
    float* k = b.k + p * n * kp;
    if (c.rope) {
      for (int64_t i = 0; i < n; ++i) {
        mha_rotate_heads(c, c.q_norm, q + i * qp, hp, pos0 + i);
        mha_rotate_heads(c, c.k_norm, k + i * kp, gp, pos0 + i);
      }
    }
    const uint64_t t1 = profile_start(profile);
    KVLayerView view{};
    if (before != nullptr) {
      view = *before;
      view.n_kv_heads = gp;
      const size_t skip =
          static_cast<size_t>(p) * gp * before->head_stride * dtype_size(before->dtype);
      view.k = static_cast<const unsigned char*>(before->k) + skip;
      view.v = static_cast<const unsigned char*>(before->v) + skip;
      if (before->k_scales != nullptr) view.k_scales = before->k_scales + p * gp * before->capacity;
      if (before->v_scales != nullptr) view.v_scales = before->v_scales + p * gp * before->capacity;
    }
    float* v = b.v + p * n * kp;
    status[p] = attention_f32(shape, q, k, v, n, pos0, before != nullptr ? &view : nullptr,
                              b.att + p * qp, reinterpret_cast<void*>(sc.slots + p * sc.slot_bytes),
                              sc.slot_bytes, nullptr);
    const uint64_t t2 = profile_start(profile);
    // The part's keys and values into the cache, after its attention (a ring smaller than the
    // chunk must not lose a key a query still needs) and from this core's cache; the parts'
    // heads are disjoint in the cache as they are here.
    if (cache != nullptr && status[p].ok())
      mha_store_kv_rows(c, *cache, layer, pos0, n, k, v, p * gp, (p + 1) * gp, 0, n);
    if (profile) {  // the cache writes count as projections (models/profile.h)
      project_ns[p] = (t1 - t0) + (profile_start(profile) - t2);
      attend_ns[p] = t2 - t1;
    }
  };
  run_tasks(c.threads, parts, part);
  for (int p = 0; p < parts; ++p) EINFER_TRY(status[p]);
  if (cache != nullptr) kv_cache_mark(*cache, layer, pos0 + n);
  if (profile) {
    // The region's time on the calling thread, split as the parts spent it.
    uint64_t projecting = 0, all = 0;
    for (int p = 0; p < parts; ++p) {
      projecting += project_ns[p];
      all += project_ns[p] + attend_ns[p];
    }
    const uint64_t now = profile->now_ns(), spent = now - t;
    const uint64_t share = all > 0 ? spent * projecting / all : 0;
    profile->ns[static_cast<int>(Stage::projections)] += share;
    profile->ns[static_cast<int>(Stage::attention)] += spent - share;
    profile->calls[static_cast<int>(Stage::attention)] += 1;
  }
  return ok_status();
}

void mha_store_kv_rows(const MhaConfig& c, KVCache& cache, int32_t layer, int64_t pos0, int32_t n,
                       const float* k, const float* v, int32_t g0, int32_t g1, int64_t r0,
                       int64_t r1) {
  const int64_t stride = int64_t{g1 - g0} * c.head_dim;
  for (int64_t i = r0; i < r1; ++i) {
    const int64_t pos = pos0 + i;
    if (c.window > 0 && kv_ring_overwritten_before(pos, pos0 + n, c.window, c.sinks)) continue;
    kv_cache_store_heads(cache, layer, pos, g0, g1, k + i * stride, v + i * stride);
  }
}

}  // namespace einfer
