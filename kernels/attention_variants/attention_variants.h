// The encoder's and decoder's attention variants besides dense softmax
// (docs/attention-variants.md): sparse patterns walked from indices, and linear attention. The
// dense fused kernel is kernels/attention/attention.h.
//
// ---- Sparse patterns ----------------------------------------------------------------------------
// Sparse attention patterns computed from indices (issue 19; design notes: "sparse patterns are
// masks or index maps on m"): the set of keys a query attends is the union of the pattern's
// non-zero terms, each a closed form in (i, j), never an N x N mask in memory:
//   window W         |i - j| < W
//   global G         i < G or j < G            (the first G positions see and are seen by all)
//   strided S        (i - j) mod S == 0        (Sparse Transformer's strided pattern)
//   fixed L,C        j / L == i / L, or j mod L >= L - C (same block, or a block's last C)
// `causal` intersects the union with j <= i. All terms zero means dense (every key).
// attention_pattern_next() finds the next attended key in O(terms), so a query's keys are walked
// in O(attended) and the whole attention costs O(N * attended * head_dim).
//
// ---- Linear attention ---------------------------------------------------------------------------
// Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs"), per head:
//   out_i = phi(q_i)^T (sum_j phi(k_j) v_j^T) / phi(q_i)^T (sum_j phi(k_j)),  phi = elu + 1,
// no 1/sqrt(d) scaling. The contraction order of softmax attention turns around:
//   bidirectional: the einsum plans "nhk,nhv->hkv" (state) then "nhk,hkv->nhv" (mixing), O(n);
//   causal: the same sums over j <= i, as a recurrence with a k x v state and a k-vector per head,
//     so one decoding step costs O(H k v) whatever the length (attention_linear_elu_step_f32).
// q, k, v are [n][H][k] rows (value head size = key head size).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.h"
#include "runtime/status.h"
#include "runtime/threads.h"

namespace einfer {

// ---- Sparse patterns

struct AttentionPattern {
  int32_t window = 0, global = 0, stride = 0, block = 0, block_summary = 0;
  bool causal = false;
};

// Smallest key j' >= j that query i attends among keys 0..n-1, or n when there is none.
int64_t attention_pattern_next(const AttentionPattern& pattern, int64_t n, int64_t i, int64_t j);

inline bool attention_pattern_attends(const AttentionPattern& pattern, int64_t n, int64_t i,
                                      int64_t j) {
  return attention_pattern_next(pattern, n, i, j) == j;
}

// Number of (query, key) pairs attended over a sequence of n (O(total attended) to count).
int64_t attention_pattern_pairs(const AttentionPattern& pattern, int64_t n);

// Scratch attention_pattern_f32 needs for n_heads heads (independent of the sequence length).
size_t attention_pattern_scratch_bytes(int32_t n_heads);

// out[n][H][k] = softmax over the attended keys of (q . k) * scale, mixing v; q, k, v are
// [n][H][k] rows (one sequence, keys = queries). Online softmax over tiles of attended indices.
Status attention_pattern_f32(const AttentionPattern& pattern, int32_t n_heads, int32_t head_dim,
                             float scale, const float* q, const float* k, const float* v, int32_t n,
                             float* out, void* scratch, size_t scratch_bytes);

// Decoder form (a llama-family model packed with a pattern): the pattern is intersected with
// j <= i; queries are the n positions pos0..pos0+n-1, keys are positions 0..pos0+n-1, those before
// pos0 read from an f32 cache that keeps every position (slot = position: no ring, so no window
// or sinks), the block's own from k_new/v_new [n][G*k]. q and out are [n][H*k]; query head h
// reads kv head h / (H / G). Work items are (query, head) pairs, each computed wholly by one task
// with its own scratch slot, so the result does not depend on the thread count. Uses `shape`'s
// heads, head_dim and scale; its window/sinks must be 0.
size_t attention_pattern_decoder_scratch_bytes(int32_t threads);
Status attention_pattern_decoder_f32(const AttentionPattern& pattern, const AttentionShape& shape,
                                     const float* q, const float* k_new, const float* v_new,
                                     int32_t n, int64_t pos0, const KVLayerView* cache, float* out,
                                     void* scratch, size_t scratch_bytes,
                                     const Threads* threads = nullptr);

// ---- Linear attention

struct LinearAttentionShape {
  int32_t n_heads = 0;
  int32_t head_dim = 0;
  bool causal = false;
};

// Floats of one sequence's recurrent state: S [H][k][k] then z [H][k] (SIZE_MAX if it does not
// fit).
size_t attention_linear_state_floats(const LinearAttentionShape& shape);

// Scratch attention_linear_elu_f32 needs for n positions (the state plus the einsums' scratch).
Status attention_linear_scratch_bytes(const LinearAttentionShape& shape, int32_t n, size_t* bytes);

// out[n][H][k] for one sequence. q and k are overwritten with phi(q), phi(k).
Status attention_linear_elu_f32(const LinearAttentionShape& shape, float* q, float* k,
                                const float* v, int32_t n, float* out, void* scratch,
                                size_t scratch_bytes);

// One causal step: adds phi(k) v^T and phi(k) of one position to `state` (zeroed before the first
// position) and writes that position's output. q and k ([H][k]) are overwritten with phi.
void attention_linear_elu_step_f32(const LinearAttentionShape& shape, float* state, float* q,
                                   float* k, const float* v, float* out);

}  // namespace einfer
