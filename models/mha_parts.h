// Prefill attention with each task's heads in arrays of their own (models/mha.cpp uses it on
// several threads).
//
// Two tasks attending the two halves of one [n][H][k] q/k/v layout ran 15-20% slower each than
// the same work on arrays of their own (einfer-bench traces of the 15M shape on 2 threads: 138 us
// a layer against 232 on one thread; a scratch benchmark: 130 us against 110 for two
// [n][H/2][k] problems): every row, line and page holds both tasks' heads. With P parts (one per
// thread; the kv heads divisible by P), q, k and v are laid out part-major instead: part p holds
// kv heads [p G/P, (p+1) G/P) and their query heads for every position, q as [n][H/P][k] at
// q + p n (H/P) k, k and v as [n][G/P][k] at k + p n (G/P) k. The q/k/v projections write that
// layout directly (one projection per part and matrix, on that part's weight rows, all in one
// row-block region), RoPE runs per part, attention runs one call per part (writing the usual
// [n][H][k] output through its row stride) and the KV-cache store reads the parts. Every element
// is computed by the same kernel expression as in the dense layout: bit-identical results.
#pragma once

#include <cstdint>

#include "models/kv_cache.h"
#include "models/mha.h"
#include "runtime/status.h"

namespace einfer {

// Parts to use for this prefill chunk (0: the dense layout): 2 to 4 threads, n >= 8 rows per
// thread (the projections' row-block form), plain softmax attention, kv heads divisible by the
// thread count, parts of a multiple of 16 floats, and q8/q4 weights of one type and group.
int mha_head_parts(const MhaConfig& c, const MhaWeights& w, int32_t n);

// The q/k/v projections of rows x[n] into the part-major layout, c.input_rows and RoPE inside.
Status mha_parts_project_qkv(const MhaWeights& w, const MhaConfig& c, const float* x, int32_t n,
                             int64_t pos0, const MhaBuffers& b, int parts);

// Attention of the part-major q/k/v (cache: positions before pos0, or null) into b.att [n][H][k],
// one task per part, task p in scratch slot p.
Status mha_parts_attention(const MhaConfig& c, int32_t n, int64_t pos0, const KVLayerView* cache,
                           const MhaBuffers& b, int parts);

// Stores rows [r0, r1) of the part-major k and v (positions pos0 + r; parts = 1: the dense
// [n][G][k] layout) in the cache, skipping those a later position of the chunk overwrites at once
// (a windowed cache holds exactly `window` slots), so no two rows of the chunk share a slot.
void mha_parts_store_rows(const MhaConfig& c, KVCache& cache, int32_t layer, int64_t pos0,
                          int32_t n, const float* k, const float* v, int parts, int64_t r0,
                          int64_t r1);

}  // namespace einfer
