// Unfused reference attention (see kernels/attention/attention_reference.h): the scores einsum, a
// masked softmax and the mixing einsum, the einsums planned and run by the einsum engine's general
// loop nest (execute_einsum_reference), which shares nothing with the fused kernel or the GEMMs.
#include "kernels/attention/attention_reference.h"

#include <cmath>

#include "kernels/einsum/einsum.h"

namespace einfer {

size_t attention_reference_scratch_bytes(int32_t n_heads, int32_t n_queries, int32_t n_keys) {
  if (n_heads <= 0 || n_queries < 0 || n_keys < 0) return 0;
  return static_cast<size_t>(n_heads) * n_queries * n_keys * sizeof(float);
}

Status attention_reference_f32(const AttentionShape& shape, const float* q, const int64_t* q_pos,
                               int32_t n, const float* K, const float* V, const int64_t* k_pos,
                               int32_t m, float* out, void* scratch, size_t scratch_bytes) {
  EINFER_TRY(attention_validate_shape(shape));
  if (n < 0 || m < 0) return make_status(StatusCode::invalid_argument, "reference: n, m < 0");
  const size_t need = attention_reference_scratch_bytes(shape.n_heads, n, m);
  if (scratch_bytes < need || (need > 0 && scratch == nullptr)) {
    return make_status(StatusCode::out_of_memory, "reference: scratch too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  }
  const int32_t H = shape.n_heads, G = shape.n_kv_heads, kd = shape.head_dim, r = H / G;
  if (n == 0) return ok_status();
  float* S = static_cast<float*>(scratch);  // scores, then probabilities: [g][r][n][m] = [h][n][m]

  // Grouped-query attention as labels: query head h = (g, r), kv head g; no copies, only views.
  const TensorView qv = make_view(DType::f32, const_cast<float*>(q), {n, G, r, kd});
  const TensorView kv = make_view(DType::f32, const_cast<float*>(K), {m, G, kd});
  const TensorView vv = make_view(DType::f32, const_cast<float*>(V), {m, G, kd});
  const TensorView sv = make_view(DType::f32, S, {G, r, n, m});
  const TensorView ov = make_view(DType::f32, out, {n, G, r, kd});
  if (m == 0) {
    for (size_t i = 0; i < static_cast<size_t>(n) * H * kd; ++i) out[i] = 0.f;
    return ok_status();
  }

  // Scores: ngrk,mgk->grnm, by the einsum engine's general loop nest (no fast kernel involved).
  EinsumPlan scores;
  const TensorView score_in[2] = {qv, kv};
  EINFER_TRY(plan_einsum(einsum_spec<"ngrk,mgk->grnm">, score_in, 2, &scores));
  EINFER_TRY(execute_einsum_reference(scores, score_in, 2, sv));

  // Scale, mask (attention_attends) and softmax over m, two passes.
  for (int32_t h = 0; h < H; ++h)
    for (int32_t i = 0; i < n; ++i) {
      float* row = S + (static_cast<size_t>(h) * n + i) * m;
      float mx = -INFINITY;
      for (int32_t j = 0; j < m; ++j) {
        const float scaled = shape.softcap > 0.f
                                 ? shape.softcap * std::tanh(row[j] * shape.scale / shape.softcap)
                                 : row[j] * shape.scale;
        row[j] = attention_attends(shape, q_pos[i], k_pos[j]) ? scaled : -INFINITY;
        mx = row[j] > mx ? row[j] : mx;
      }
      float sum = 0.f;
      for (int32_t j = 0; j < m; ++j) {
        row[j] = mx == -INFINITY ? 0.f : std::exp(row[j] - mx);
        sum += row[j];
      }
      for (int32_t j = 0; j < m; ++j) row[j] = sum > 0.f ? row[j] / sum : 0.f;
    }

  // Mixing: grnm,mgv->ngrv, again the general loop nest.
  EinsumPlan mixing;
  const TensorView mix_in[2] = {sv, vv};
  EINFER_TRY(plan_einsum(einsum_spec<"grnm,mgv->ngrv">, mix_in, 2, &mixing));
  return execute_einsum_reference(mixing, mix_in, 2, ov);
}

}  // namespace einfer
