// Unfused reference attention, written literally as the einsums it is. With the query heads split
// as h = (g, r) (g: kv head, r: query head within its group, H = G·r):
//   scores = einsum("ngrk,mgk->grnm", q, K) · scale    (bhnk,bhmk->bhnm per group)
//   P      = softmax over m of scores, masked by attention_attends
//   out    = einsum("grnm,mgv->ngrv", P, V)            (bhnm,bhmv->bhnv per group)
// The einsums run on the einsum engine's general loop nest (execute_einsum_reference); the full
// score matrix lives in caller scratch and the softmax takes two passes, so nothing here shares a
// code path with the fused kernel it checks.
// Keys are given explicitly with their absolute positions (k_pos), queries likewise (q_pos).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.h"

namespace einfer {

size_t attention_reference_scratch_bytes(int32_t n_heads, int32_t n_queries, int32_t n_keys);

// q [n][H][k] at positions q_pos[n]; keys/values K, V [m][G][k] at positions k_pos[m];
// out [n][H][k]. A query with no attended key gets zeros.
Status attention_reference_f32(const AttentionShape& shape, const float* q, const int64_t* q_pos,
                               int32_t n, const float* K, const float* V, const int64_t* k_pos,
                               int32_t m, float* out, void* scratch, size_t scratch_bytes);

}  // namespace einfer
