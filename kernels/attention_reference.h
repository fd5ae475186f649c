// Unfused reference attention, written as the three einsum steps it is:
//   scores[h][n][m] = sum_k q[n][h][k] * K[m][g(h)][k] * scale      (bhnk,bhmk->bhnm)
//   P = softmax over m of scores, masked by attention_attends          (softmax)
//   out[n][h][v]    = sum_m P[h][n][m] * V[m][g(h)][v]                 (bhnm,bhmv->bhnv)
// with g(h) = h / (H/G). It materialises the full score matrix in caller scratch and uses a
// two-pass softmax, so it shares no code path with the fused kernel it checks. Each step is a
// separate loop nest over labelled indices so the einsum engine can replace them one by one.
// Keys are given explicitly with their absolute positions (k_pos), queries likewise (q_pos).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"

namespace einfer {

size_t attention_reference_scratch_bytes(int32_t n_heads, int32_t n_queries, int32_t n_keys);

// q [n][H][k] at positions q_pos[n]; keys/values K, V [m][G][k] at positions k_pos[m];
// out [n][H][k]. A query with no attended key gets zeros.
Status attention_reference_f32(const AttentionShape& shape, const float* q, const int64_t* q_pos,
                               int32_t n, const float* K, const float* V, const int64_t* k_pos,
                               int32_t m, float* out, void* scratch, size_t scratch_bytes);

}  // namespace einfer
