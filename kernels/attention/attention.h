// Fused scaled-dot-product attention over a block of new tokens and a (ring-buffer) KV cache.
//
// Shapes: H query heads, G kv heads (H % G == 0; query head h reads kv head h / (H/G): MHA G = H,
// MQA G = 1, GQA otherwise), head size k. A call handles n queries at absolute positions
// pos0 .. pos0+n-1 with q [n][H][k] (already RoPE-rotated) and their own keys/values
// k_new, v_new [n][G][k], writing out [n][H][k].
//
// Which key positions p a query at position t attends (attention_attends below):
//   causal:  p <= t, and with a window w > 0 only p < sinks or t - (w - sinks) < p <= t:
//            w positions in all, the current one included (Mistral, Hugging Face and llama.cpp
//            count a window this way; with sinks, HF SinkCache's: the sinks plus the w - sinks
//            most recent positions)
//   !causal: (encoder) every one of the n new keys; no cache, no window
// Keys at p >= pos0 come from k_new/v_new, keys at p < pos0 from `cache`, where position p lives in
// slot kv_ring_slot(p, W, S) (below; the cache's capacity W and sinks S). The caller
// writes the block's K/V into the cache only after the call, so a ring smaller than the block is
// still exact.
//
// The kernel never materialises a score matrix: per query and kv head it walks key tiles of
// kAttentionKeyTile positions aligned to absolute position (online softmax: running max and sum,
// accumulator rescaled per tile) and processes the H/G query heads that share a kv head together,
// so every K/V row is read once per group. Tiles are aligned to absolute positions, so a query sees
// the same tiles whether its keys come from the block or the cache: prefill then decode gives
// bit-identical results to decoding token by token (f32 cache), and a wrapped ring gives exactly
// what a cache that never wrapped gives.
// Cache rows are read in place (no staging copy) and each is read once per group: scores use
// a register-blocked 4 heads x 2 keys kernel, V rows are accumulated in order. In a prefill block
// with up to 8 query heads per kv head, consecutive queries walk the key tiles together (8 or more
// (query, head) rows: one row gather per tile, each K and V row loaded once per 4 rows), with the
// bits of one query at a time. For int8 caches the
// query is quantized to int16 (one scale per head) for exact integer dots with the int8 keys, and
// each tile's probabilities (times the V row scales) to int16 with one scale per (tile, head) for
// integer V mixing (AVX2; NEON and scalar builds widen V to float); the K row scale is folded
// into the score. Software prefetch runs a few KB ahead in the K and V streams.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/dtype.h"
#include "runtime/status.h"
#include "runtime/threads.h"

namespace einfer {

// ---- The KV cache ring
// --------------------------------------------------------------------------- Where a position
// lives in a KV cache ring: the one formula the cache (models/kv_cache.cpp), the block writer
// (models/mha.cpp) and this kernel share. A cache of `capacity` slots with `sinks` pinned ones
// keeps positions p < sinks in slot p and rotates every later position through the remaining
// capacity - sinks slots.

// Slot of position `pos` (>= 0) in a ring of `capacity` slots, the first `sinks` pinned
// (0 <= sinks < capacity).
constexpr int64_t kv_ring_slot(int64_t pos, int64_t capacity, int64_t sinks) {
  return pos < sinks ? pos : sinks + (pos - sinks) % (capacity - sinks);
}

// True when a later position below `end` takes the slot of `pos`, so that writing `pos` would be
// undone within the same block [.., end).
constexpr bool kv_ring_overwritten_before(int64_t pos, int64_t end, int64_t capacity,
                                          int64_t sinks) {
  return pos >= sinks && pos + (capacity - sinks) < end;
}

// ---- Fused attention
// ------------------------------------------------------------------------------

inline constexpr int32_t kAttentionKeyTile = 64;

// Which integer dot the int8 cache path uses on x86-64 (other builds have one int8 path and ignore
// it). Both form the same exact int32 sums, so they give the same bits; tests pass each explicitly.
enum class AttentionI8Dot : int32_t {
  auto_select = 0,  // AVX-VNNI where the CPU has it, else AVX2
  avx2 = 1,         // vpmaddwd + vpaddd
  avx_vnni = 2,     // vpdpwssd (one instruction per 16 int16 products); AVX2 if the CPU lacks it
};

struct AttentionShape {
  int32_t n_heads = 0;     // H
  int32_t n_kv_heads = 0;  // G
  int32_t head_dim = 0;    // k
  float scale = 0.f;       // score = dot(q, k) * scale; usually 1/sqrtf(head_dim)
  int32_t window = 0;      // 0: every position <= t; else `window` positions: sinks + recent ones
  int32_t sinks = 0;       // first positions always attended (window > 0 only); < window
  bool causal = true;
  AttentionI8Dot i8_dot = AttentionI8Dot::auto_select;  // int8 caches only; see AttentionI8Dot
  // Row strides in floats between consecutive positions (0: dense, H * k for q and out, G * k for
  // k_new and v_new; otherwise at least that), for a caller attending a subset of the heads of
  // wider rows (models/mha_parts.cpp writes each part's output into the [n][H][k] rows).
  int64_t q_row_stride = 0;
  int64_t kv_row_stride = 0;
  int64_t out_row_stride = 0;
  // Soft-capping (Gemma 2): score -> softcap * tanh(score / softcap) before the softmax (after
  // the scale); 0: none.
  float softcap = 0.f;
};

// Read-only view of one layer of a KV cache: element (g, slot, d) of K is at
// k[g * head_stride + slot * row_stride + d] (same for V), in `dtype` (f32 or i8). For i8 the
// value is q * scale with scale k_scales[g * capacity + slot] (v_scales likewise).
struct KVLayerView {
  DType dtype = DType::f32;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t capacity = 0;  // W slots
  int32_t sinks = 0;     // S pinned slots
  const void* k = nullptr;
  const void* v = nullptr;
  int64_t head_stride = 0;  // elements
  int64_t row_stride = 0;   // elements
  const float* k_scales = nullptr;
  const float* v_scales = nullptr;
  int64_t n_positions = -1;  // positions written so far; when >= 0 the call checks pos0 equals it
};

// True when a query at position t attends key position p (causal shapes; see top of file).
constexpr bool attention_attends(const AttentionShape& s, int64_t t, int64_t p) {
  if (!s.causal) return true;
  if (p > t) return false;
  if (s.window <= 0 || p < s.sinks) return true;
  return p > t - (s.window - s.sinks);
}

// Whether attention_f32 with this choice runs the AVX-VNNI integer dots on this CPU and build.
bool attention_i8_dot_uses_vnni(AttentionI8Dot choice);

// Default score scale 1/sqrt(head_dim), the value llama2.c divides by.
float attention_default_scale(int32_t head_dim);

// Checks the shape alone (head counts, divisibility, window vs sinks).
Status attention_validate_shape(const AttentionShape& shape);

// Scratch attention_f32 needs (row pointers and per-tile state; the same for every cache dtype,
// kv_dtype is kept for future layouts). n_queries does not change the size today (queries are
// processed one at a time) but is part of the contract.
size_t attention_scratch_bytes(const AttentionShape& shape, int32_t n_queries,
                               DType kv_dtype = DType::i8);

// With threads, the (query, kv group) pairs are shared among up to threads.n tasks, task i using
// scratch slot i (attention_scratch_bytes rounded up to 64 bytes each; as many tasks as the
// scratch holds slots). Each pair is computed whole by one task: bit-identical for any count.
Status attention_f32(const AttentionShape& shape, const float* q, const float* k_new,
                     const float* v_new, int32_t n, int64_t pos0, const KVLayerView* cache,
                     float* out, void* scratch, size_t scratch_bytes,
                     const Threads* threads = nullptr);

}  // namespace einfer
