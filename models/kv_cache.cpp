// Ring-buffer KV cache (see models/kv_cache.h).
#include "models/kv_cache.h"

#include <cstring>

#include "kernels/attention/attention.h"
#include "kernels/quant/quant.h"

namespace einfer {

Status kv_cache_validate(const KVCacheConfig& c) {
  if (c.n_layers <= 0 || c.n_kv_heads <= 0 || c.head_dim <= 0) {
    return make_status(StatusCode::invalid_argument,
                       "kv cache: layers, kv heads, head_dim must be > 0");
  }
  if (c.capacity <= 0)
    return make_status(StatusCode::invalid_argument, "kv cache: capacity must be > 0");
  if (c.sinks < 0 || c.sinks >= c.capacity) {
    return make_status(StatusCode::invalid_argument, "kv cache: need 0 <= sinks < capacity",
                       c.sinks, c.capacity);
  }
  if (c.dtype != DType::f32 && c.dtype != DType::i8) {
    return make_status(StatusCode::unsupported, "kv cache: dtype must be f32 or i8");
  }
  return ok_status();
}

size_t kv_cache_bytes(const KVCacheConfig& config) {
  Arena measuring = Arena::measuring();
  KVCache cache;
  if (!kv_cache_init(config, measuring, &cache).ok()) return 0;
  return measuring.used();
}

Status kv_cache_init(const KVCacheConfig& c, Arena& arena, KVCache* cache) {
  EINFER_TRY(kv_cache_validate(c));
  // Checked: layers x heads x capacity x head_dim wraps a 32-bit size_t for real contexts.
  const CheckedSize checked_rows = CheckedSize(c.n_layers) * c.n_kv_heads * c.capacity;
  const CheckedSize checked_bytes = checked_rows * c.head_dim * dtype_size(c.dtype);
  *cache = KVCache{};
  cache->config = c;
  EINFER_TRY(arena.allocate(checked_bytes, kDefaultAlignment, &cache->k));
  EINFER_TRY(arena.allocate(checked_bytes, kDefaultAlignment, &cache->v));
  const size_t rows = checked_rows.value();  // valid: the allocations above succeeded
  const size_t elems = rows * static_cast<size_t>(c.head_dim);
  if (c.dtype == DType::i8) {
    EINFER_TRY(arena.allocate_array(rows, &cache->k_scales));
    EINFER_TRY(arena.allocate_array(rows, &cache->v_scales));
  }
  EINFER_TRY(arena.allocate_array(static_cast<size_t>(c.n_layers), &cache->n_positions));
  if (!arena.is_measuring()) {
    std::memset(cache->k, 0, elems * dtype_size(c.dtype));
    std::memset(cache->v, 0, elems * dtype_size(c.dtype));
    if (c.dtype == DType::i8) {
      std::memset(cache->k_scales, 0, rows * sizeof(float));
      std::memset(cache->v_scales, 0, rows * sizeof(float));
    }
    kv_cache_reset(*cache);
  }
  return ok_status();
}

void kv_cache_reset(KVCache& cache) {
  if (cache.n_positions == nullptr) return;
  for (int32_t l = 0; l < cache.config.n_layers; ++l) cache.n_positions[l] = 0;
}

int32_t kv_cache_slot(const KVCacheConfig& c, int64_t pos) {
  return static_cast<int32_t>(kv_ring_slot(pos, c.capacity, c.sinks));
}

Status kv_cache_check_write(const KVCache& cache, int32_t layer, int64_t pos, const float* k,
                            const float* v) {
  const KVCacheConfig& c = cache.config;
  if (cache.k == nullptr || cache.n_positions == nullptr) {
    return make_status(StatusCode::invalid_argument, "kv cache: not initialised (or measuring)");
  }
  if (layer < 0 || layer >= c.n_layers) {
    return make_status(StatusCode::out_of_range, "kv cache: layer out of range", layer, c.n_layers);
  }
  if (pos < 0) return make_status(StatusCode::out_of_range, "kv cache: negative position");
  if (k == nullptr || v == nullptr)
    return make_status(StatusCode::invalid_argument, "kv cache: null k or v");
  return ok_status();
}

void kv_cache_store(KVCache& cache, int32_t layer, int64_t pos, const float* k, const float* v) {
  kv_cache_store_heads(cache, layer, pos, 0, cache.config.n_kv_heads, k, v);
}

void kv_cache_store_heads(KVCache& cache, int32_t layer, int64_t pos, int32_t g0, int32_t g1,
                          const float* k, const float* v) {
  const KVCacheConfig& c = cache.config;
  const size_t slot = static_cast<size_t>(kv_cache_slot(c, pos));
  const size_t kd = static_cast<size_t>(c.head_dim);
  for (int32_t g = g0; g < g1; ++g) {
    const size_t row = (static_cast<size_t>(layer) * c.n_kv_heads + g) * c.capacity + slot;
    const float* ks = k + (g - g0) * kd;
    const float* vs = v + (g - g0) * kd;
    if (c.dtype == DType::f32) {
      std::memcpy(static_cast<float*>(cache.k) + row * kd, ks, kd * sizeof(float));
      std::memcpy(static_cast<float*>(cache.v) + row * kd, vs, kd * sizeof(float));
    } else {
      const int32_t group = c.head_dim;  // one scale per (slot, kv head)
      quantize_row_q8(ks, c.head_dim, group, static_cast<int8_t*>(cache.k) + row * kd,
                      cache.k_scales + row);
      quantize_row_q8(vs, c.head_dim, group, static_cast<int8_t*>(cache.v) + row * kd,
                      cache.v_scales + row);
    }
  }
}

void kv_cache_mark(KVCache& cache, int32_t layer, int64_t end) {
  if (end > cache.n_positions[layer]) cache.n_positions[layer] = end;
}

Status kv_cache_write(KVCache& cache, int32_t layer, int64_t pos, const float* k, const float* v) {
  EINFER_TRY(kv_cache_check_write(cache, layer, pos, k, v));
  kv_cache_store(cache, layer, pos, k, v);
  kv_cache_mark(cache, layer, pos + 1);
  return ok_status();
}

KVLayerView kv_cache_layer(const KVCache& cache, int32_t layer) {
  const KVCacheConfig& c = cache.config;
  KVLayerView v;
  v.dtype = c.dtype;
  v.n_kv_heads = c.n_kv_heads;
  v.head_dim = c.head_dim;
  v.capacity = c.capacity;
  v.sinks = c.sinks;
  v.head_stride = static_cast<int64_t>(c.capacity) * c.head_dim;
  v.row_stride = c.head_dim;
  if (layer < 0 || layer >= c.n_layers || cache.k == nullptr) return v;  // null data: rejected
  const size_t layer_elems = static_cast<size_t>(c.n_kv_heads) * c.capacity * c.head_dim;
  const size_t esz = dtype_size(c.dtype);
  v.k = static_cast<const unsigned char*>(cache.k) + layer * layer_elems * esz;
  v.v = static_cast<const unsigned char*>(cache.v) + layer * layer_elems * esz;
  if (c.dtype == DType::i8) {
    const size_t layer_rows = static_cast<size_t>(c.n_kv_heads) * c.capacity;
    v.k_scales = cache.k_scales + layer * layer_rows;
    v.v_scales = cache.v_scales + layer * layer_rows;
  }
  v.n_positions = cache.n_positions[layer];
  return v;
}

}  // namespace einfer
