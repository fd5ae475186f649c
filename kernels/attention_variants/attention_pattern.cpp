#include "kernels/attention_variants/attention_variants.h"

#include <cmath>
#include <cstring>

#include "kernels/vec/vec.h"

namespace einfer {

namespace {
constexpr int32_t kPatternTile = 64;  // attended keys scored together per online-softmax step

int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
}  // namespace

int64_t attention_pattern_next(const AttentionPattern& p, int64_t n, int64_t i, int64_t j) {
  const int64_t end = p.causal ? min64(n, i + 1) : n;
  if (j < 0) j = 0;
  if (j >= end) return n;
  const bool dense = p.window == 0 && p.global == 0 && p.stride == 0 && p.block == 0;
  if (dense) return j;
  int64_t best = end;
  if (p.window > 0 && j < i + p.window) best = min64(best, max64(j, i - p.window + 1));
  if (p.global > 0 && (i < p.global || j < p.global)) best = min64(best, j);
  if (p.stride > 0) {
    const int64_t s = p.stride;
    best = min64(best, j + (((i - j) % s) + s) % s);  // next j' >= j with j' = i (mod S)
  }
  if (p.block > 0) {
    const int64_t L = p.block, b0 = (i / L) * L;
    if (j < b0 + L) best = min64(best, max64(j, b0));
    if (p.block_summary > 0) {
      const int64_t jm = j % L, first = L - p.block_summary;
      best = min64(best, jm >= first ? j : j - jm + first);
    }
  }
  return best < end ? best : n;
}

int64_t attention_pattern_pairs(const AttentionPattern& p, int64_t n) {
  int64_t pairs = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = attention_pattern_next(p, n, i, 0); j < n;
         j = attention_pattern_next(p, n, i, j + 1))
      ++pairs;
  }
  return pairs;
}

size_t attention_pattern_scratch_bytes(int32_t n_heads) {
  // key indices and scores of one tile, running max and sum per head
  return kPatternTile * (sizeof(int64_t) + sizeof(float)) +
         2 * static_cast<size_t>(n_heads) * sizeof(float);
}

Status attention_pattern_f32(const AttentionPattern& p, int32_t n_heads, int32_t head_dim,
                             float scale, const float* q, const float* k, const float* v, int32_t n,
                             float* out, void* scratch, size_t scratch_bytes) {
  if (n_heads <= 0 || head_dim <= 0 || n < 0)
    return make_status(StatusCode::invalid_argument, "attention pattern: bad shape");
  if (scratch_bytes < attention_pattern_scratch_bytes(n_heads) || scratch == nullptr)
    return make_status(StatusCode::out_of_memory, "attention pattern: scratch too small",
                       static_cast<int64_t>(attention_pattern_scratch_bytes(n_heads)),
                       static_cast<int64_t>(scratch_bytes));
  int64_t* idx = static_cast<int64_t*>(scratch);
  float* scores = reinterpret_cast<float*>(idx + kPatternTile);
  float* run_max = scores + kPatternTile;
  float* run_sum = run_max + n_heads;
  const size_t hk = static_cast<size_t>(head_dim);
  const size_t row = static_cast<size_t>(n_heads) * hk;
  for (int32_t i = 0; i < n; ++i) {
    float* o = out + i * row;
    std::memset(o, 0, row * sizeof(float));
    for (int32_t h = 0; h < n_heads; ++h) {
      run_max[h] = -INFINITY;
      run_sum[h] = 0.f;
    }
    int64_t j = attention_pattern_next(p, n, i, 0);
    while (j < n) {
      int32_t t = 0;
      for (; t < kPatternTile && j < n; ++t, j = attention_pattern_next(p, n, i, j + 1)) idx[t] = j;
      for (int32_t h = 0; h < n_heads; ++h) {
        const float* qh = q + i * row + h * hk;
        for (int32_t a = 0; a < t; ++a)
          scores[a] = dot_f32(qh, k + idx[a] * row + h * hk, hk) * scale;
        const float tile_max = max_f32(scores, static_cast<size_t>(t));
        float* oh = o + h * hk;
        if (tile_max > run_max[h]) {  // rescale what was gathered under the old maximum
          const float r = std::exp(run_max[h] - tile_max);
          scale_f32(oh, r, hk);
          run_sum[h] *= r;
          run_max[h] = tile_max;
        }
        for (int32_t a = 0; a < t; ++a) {
          const float w = std::exp(scores[a] - run_max[h]);
          run_sum[h] += w;
          axpy_f32(w, v + idx[a] * row + h * hk, oh, hk);
        }
      }
    }
    for (int32_t h = 0; h < n_heads; ++h) {
      if (run_sum[h] > 0.f) scale_f32(o + h * hk, 1.f / run_sum[h], hk);
    }
  }
  return ok_status();
}

namespace {
// One task's scratch: the attended key positions and scores of a tile, on its own cache lines.
constexpr size_t kDecoderSlot =
    (kPatternTile * (sizeof(int64_t) + sizeof(float)) + 63) & ~size_t{63};
}  // namespace

size_t attention_pattern_decoder_scratch_bytes(int32_t threads) {
  return static_cast<size_t>(threads < 1 ? 1 : threads) * kDecoderSlot + 64;  // + alignment
}

Status attention_pattern_decoder_f32(const AttentionPattern& pattern, const AttentionShape& shape,
                                     const float* q, const float* k_new, const float* v_new,
                                     int32_t n, int64_t pos0, const KVLayerView* cache, float* out,
                                     void* scratch, size_t scratch_bytes, const Threads* threads) {
  const int32_t H = shape.n_heads, G = shape.n_kv_heads, hk = shape.head_dim;
  if (H <= 0 || G <= 0 || hk <= 0 || H % G != 0 || n < 0 || pos0 < 0)
    return make_status(StatusCode::invalid_argument, "attention pattern: bad shape");
  if (shape.window != 0 || shape.sinks != 0)
    return make_status(StatusCode::invalid_argument,
                       "attention pattern: a sparse pattern takes no sliding window or sinks");
  if (n == 0) return ok_status();
  if (q == nullptr || k_new == nullptr || v_new == nullptr || out == nullptr)
    return make_status(StatusCode::invalid_argument, "attention pattern: null q, k, v or out");
  if (pos0 > 0) {
    if (cache == nullptr)
      return make_status(StatusCode::invalid_argument,
                         "attention pattern: positions before pos0 need a cache", pos0);
    if (cache->dtype != DType::f32)
      return make_status(StatusCode::unsupported,
                         "attention pattern: the KV cache must be f32 (an int8 cache is not "
                         "supported with a sparse pattern)");
    if (cache->n_kv_heads != G || cache->head_dim != hk || cache->k == nullptr ||
        cache->v == nullptr)
      return make_status(StatusCode::shape_mismatch, "attention pattern: cache view differs");
    if (cache->sinks != 0 || pos0 > cache->capacity)
      return make_status(StatusCode::out_of_range,
                         "attention pattern: the cache must keep every position", pos0,
                         cache->capacity);
    if (cache->n_positions >= 0 && cache->n_positions != pos0)
      return make_status(StatusCode::out_of_range,
                         "attention pattern: cache holds a different number of positions", pos0,
                         cache->n_positions);
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
  const uintptr_t aligned = (base + 63) & ~uintptr_t(63);
  if (scratch == nullptr || scratch_bytes < (aligned - base) + kDecoderSlot)
    return make_status(StatusCode::out_of_memory, "attention pattern: scratch too small",
                       static_cast<int64_t>(attention_pattern_decoder_scratch_bytes(1)),
                       static_cast<int64_t>(scratch ? scratch_bytes : 0));
  const int64_t items = static_cast<int64_t>(n) * H;
  int64_t tasks = thread_count(threads);
  const int64_t slots = static_cast<int64_t>((scratch_bytes - (aligned - base)) / kDecoderSlot);
  if (tasks > slots) tasks = slots;
  if (tasks > items) tasks = items;
  const int64_t total = pos0 + n, r = H / G;
  const size_t qrow = static_cast<size_t>(H) * hk, kvrow = static_cast<size_t>(G) * hk;
  AttentionPattern p = pattern;
  p.causal = true;
  const float* ck = cache ? static_cast<const float*>(cache->k) : nullptr;
  const float* cv = cache ? static_cast<const float*>(cache->v) : nullptr;
  auto key_row = [&](const float* cached, const float* block, int64_t j, int32_t g) {
    if (j >= pos0)
      return block + static_cast<size_t>(j - pos0) * kvrow + static_cast<size_t>(g) * hk;
    return cached + g * cache->head_stride + j * cache->row_stride;
  };
  auto attend = [&](int task) {
    long long first = 0, last = 0;
    split_range(items, task, static_cast<int>(tasks), 1, &first, &last);
    int64_t* idx = reinterpret_cast<int64_t*>(aligned + static_cast<size_t>(task) * kDecoderSlot);
    float* scores = reinterpret_cast<float*>(idx + kPatternTile);
    for (int64_t item = first; item < last; ++item) {
      const int64_t i = item / H, t = pos0 + i;
      const int32_t h = static_cast<int32_t>(item % H), g = static_cast<int32_t>(h / r);
      const float* qh = q + static_cast<size_t>(i) * qrow + static_cast<size_t>(h) * hk;
      float* oh = out + static_cast<size_t>(i) * qrow + static_cast<size_t>(h) * hk;
      std::memset(oh, 0, static_cast<size_t>(hk) * sizeof(float));
      float run_max = -INFINITY, run_sum = 0.f;
      int64_t j = attention_pattern_next(p, total, t, 0);
      while (j < total) {
        int32_t a = 0;
        for (; a < kPatternTile && j < total; ++a, j = attention_pattern_next(p, total, t, j + 1))
          idx[a] = j;
        for (int32_t b = 0; b < a; ++b)
          scores[b] =
              dot_f32(qh, key_row(ck, k_new, idx[b], g), static_cast<size_t>(hk)) * shape.scale;
        const float tile_max = max_f32(scores, static_cast<size_t>(a));
        if (tile_max > run_max) {  // rescale what was gathered under the old maximum
          const float s = std::exp(run_max - tile_max);
          scale_f32(oh, s, static_cast<size_t>(hk));
          run_sum *= s;
          run_max = tile_max;
        }
        for (int32_t b = 0; b < a; ++b) {
          const float w = std::exp(scores[b] - run_max);
          run_sum += w;
          axpy_f32(w, key_row(cv, v_new, idx[b], g), oh, static_cast<size_t>(hk));
        }
      }
      if (run_sum > 0.f) scale_f32(oh, 1.f / run_sum, static_cast<size_t>(hk));
    }
  };
  run_tasks(threads, static_cast<int>(tasks), attend);
  return ok_status();
}

}  // namespace einfer
