// Prefill attention with each task's heads in arrays of their own (models/mha.cpp uses it on
// several threads).
//
// Two tasks attending the two halves of one [n][H][k] q/k/v layout ran 15-20% slower each than
// the same work on arrays of their own (einfer-bench traces of the 15M shape on 2 threads: 138 us
// a layer against 232 on one thread; a scratch benchmark: 130 us against 110 for two
// [n][H/2][k] problems): every row, line and page holds both tasks' heads. With P parts (one per
// thread; the kv heads divisible by P), q, k and v are laid out part-major instead: part p holds
// kv heads [p G/P, (p+1) G/P) and their query heads for every position, q as [n][H/P][k] at
// q + p n (H/P) k, k and v as [n][G/P][k] at k + p n (G/P) k.
//
// Task p does everything its heads need in one region: their q, k and v for every row, from its
// own rows of the weights (each core streams 1/P of them; the row-block form streamed all of them
// through every core), RoPE, attention (writing the usual [n][H][k] output through its row
// stride) and the KV-cache store, all on data its own core just wrote. Only the input rows' norm
// and int8 quantization come before, split by rows (15M q8, 2 threads: 202 -> 196 us a layer for
// the regions concerned, and the output projection 38 -> 30 us without the store's cross-core
// reads). Every element is computed by the same kernel expression as in the dense layout:
// bit-identical results.
#pragma once

#include <cstdint>

#include "models/kv_cache.h"
#include "models/mha.h"
#include "runtime/status.h"

namespace einfer {

// Parts to use for this prefill chunk (0: the dense layout): 2 to 4 threads, n >= 8 rows per
// thread, plain softmax attention, kv heads divisible by the thread count, parts of a multiple of
// 16 floats, q8/q4 weights of one type and group, and room in b.scratch for the quantized rows
// and one attention slot per part.
int mha_head_parts(const MhaConfig& c, const MhaWeights& w, int32_t n, const MhaBuffers& b);

// The q/k/v projections, RoPE and attention of rows x[n] in two parallel regions: a row pass
// (c.input_rows, then the rows' int8 quantization, rows split among the parts) and one task per
// part that computes its heads' q, k and v for every row from its own rows of the weights,
// ropes them and attends them into b.att [n][H][k]. With a cache (decoder form), queries also
// attend its positions before pos0, and each part then stores its heads' keys and values of the
// chunk in layer `layer` (checked before, marked after the join, as kv_cache_write does).
Status mha_parts_attend(const MhaWeights& w, const MhaConfig& c, const float* x, int32_t n,
                        int64_t pos0, KVCache* cache, int32_t layer, const MhaBuffers& b,
                        int parts);

// Stores kv heads [g0, g1) of rows [r0, r1) of k and v ([n][g1 - g0][k], positions pos0 + r)
// in the cache, skipping rows a later position of the chunk overwrites at once (a windowed cache
// holds exactly `window` slots), so no two rows of the chunk share a slot. Callers have run
// kv_cache_check_write and mark the positions afterwards.
void mha_store_kv_rows(const MhaConfig& c, KVCache& cache, int32_t layer, int64_t pos0, int32_t n,
                       const float* k, const float* v, int32_t g0, int32_t g1, int64_t r0,
                       int64_t r1);

}  // namespace einfer
