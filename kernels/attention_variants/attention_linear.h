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

#include "runtime/status.h"

namespace einfer {

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
