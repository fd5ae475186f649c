// KV cache: a ring buffer of keys and values per layer, allocated once from the arena.
//
// Position p is stored in slot p < S ? p : S + (p - S) % (W - S): the first S positions (attention
// sinks) stay pinned and the rest rotate through the remaining W - S slots, so decoding continues
// past any trained context length with the window deciding what is attended. Keys are stored
// already RoPE-rotated at their absolute position, so wrapping needs no re-rotation and no copy.
//
// Layout per layer, head-major so the attention kernel streams one kv head's rows contiguously:
//   K, V: [G][W][head_dim] elements of `dtype` (f32 or i8)
//   i8:   k_scales, v_scales [G][W] float, one per (slot, kv head): value = q * scale,
//         scale = absmax / 127 over that head's row, quantized when written (kernels/quant/quant.h
//         q8).
// Write a block's K/V only after attention for that block has run (see
// kernels/attention/attention.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.h"
#include "runtime/arena.h"
#include "runtime/dtype.h"
#include "runtime/status.h"

namespace einfer {

struct KVCacheConfig {
  int32_t n_layers = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t capacity = 0;      // W slots per layer
  int32_t sinks = 0;         // S pinned positions, 0 <= S < W
  DType dtype = DType::f32;  // f32 or i8
};

struct KVCache {
  KVCacheConfig config;
  void* k = nullptr;  // [L][G][W][head_dim]
  void* v = nullptr;
  float* k_scales = nullptr;  // [L][G][W] (i8 only)
  float* v_scales = nullptr;
  int64_t* n_positions = nullptr;  // [L] highest position written + 1
};

Status kv_cache_validate(const KVCacheConfig& config);

// Exact arena bytes kv_cache_init takes from an arena whose next free byte is 64-aligned
// (allocations use kDefaultAlignment); 0 for an invalid config.
size_t kv_cache_bytes(const KVCacheConfig& config);

// Allocates and zeroes the cache from the arena (a measuring arena just counts).
Status kv_cache_init(const KVCacheConfig& config, Arena& arena, KVCache* cache);

// Forgets every position (a new sequence); memory is kept.
void kv_cache_reset(KVCache& cache);

int32_t kv_cache_slot(const KVCacheConfig& config, int64_t pos);

// Stores position pos of `layer`: k, v [n_kv_heads][head_dim] float32 (quantized for i8).
// The same as kv_cache_check_write, kv_cache_store, then kv_cache_mark(cache, layer, pos + 1).
Status kv_cache_write(KVCache& cache, int32_t layer, int64_t pos, const float* k, const float* v);

// The split form, for writers on several threads: check once, store rows from any thread (each
// position's slot is its own, so distinct positions never share memory), then mark on one thread.
// Checks what kv_cache_write checks: an initialised cache, the layer, pos >= 0, k and v set.
Status kv_cache_check_write(const KVCache& cache, int32_t layer, int64_t pos, const float* k,
                            const float* v);
// Stores position pos (kv_cache_check_write must have passed); leaves n_positions alone.
void kv_cache_store(KVCache& cache, int32_t layer, int64_t pos, const float* k, const float* v);
// The same for kv heads [g0, g1) only, k and v holding those heads ([g1 - g0][head_dim]).
void kv_cache_store_heads(KVCache& cache, int32_t layer, int64_t pos, int32_t g0, int32_t g1,
                          const float* k, const float* v);
// Records that positions below `end` are written: n_positions[layer] = max(itself, end).
void kv_cache_mark(KVCache& cache, int32_t layer, int64_t end);

// The view the attention kernel reads; n_positions is the layer's count so far.
KVLayerView kv_cache_layer(const KVCache& cache, int32_t layer);

}  // namespace einfer
