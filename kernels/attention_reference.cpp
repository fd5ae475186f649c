// Unfused reference attention (see kernels/attention_reference.h): scores einsum, masked softmax,
// mixing einsum, each a plain loop nest.
#include "kernels/attention_reference.h"

#include <cmath>

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
  float* S = static_cast<float*>(scratch);  // scores / probabilities [h][n][m]
  auto s_at = [&](int32_t h, int32_t i, int32_t j) -> float& {
    return S[(static_cast<size_t>(h) * n + i) * m + j];
  };
  auto q_at = [&](int32_t i, int32_t h, int32_t c) { return q[(static_cast<size_t>(i) * H + h) * kd + c]; };
  auto k_at = [&](int32_t j, int32_t g, int32_t c) { return K[(static_cast<size_t>(j) * G + g) * kd + c]; };
  auto v_at = [&](int32_t j, int32_t g, int32_t c) { return V[(static_cast<size_t>(j) * G + g) * kd + c]; };

  // bhnk,bhmk->bhnm (scaled), masked entries -inf.
  for (int32_t h = 0; h < H; ++h)
    for (int32_t i = 0; i < n; ++i)
      for (int32_t j = 0; j < m; ++j) {
        if (!attention_attends(shape, q_pos[i], k_pos[j])) {
          s_at(h, i, j) = -INFINITY;
          continue;
        }
        float dot = 0.f;
        for (int32_t c = 0; c < kd; ++c) dot += q_at(i, h, c) * k_at(j, h / r, c);
        s_at(h, i, j) = dot * shape.scale;
      }

  // softmax over m (two passes: max, then exp and normalise).
  for (int32_t h = 0; h < H; ++h)
    for (int32_t i = 0; i < n; ++i) {
      float mx = -INFINITY;
      for (int32_t j = 0; j < m; ++j) mx = s_at(h, i, j) > mx ? s_at(h, i, j) : mx;
      float sum = 0.f;
      for (int32_t j = 0; j < m; ++j) {
        const float e = mx == -INFINITY ? 0.f : std::exp(s_at(h, i, j) - mx);
        s_at(h, i, j) = e;
        sum += e;
      }
      for (int32_t j = 0; j < m; ++j) s_at(h, i, j) = sum > 0.f ? s_at(h, i, j) / sum : 0.f;
    }

  // bhnm,bhmv->bhnv
  for (int32_t h = 0; h < H; ++h)
    for (int32_t i = 0; i < n; ++i)
      for (int32_t c = 0; c < kd; ++c) {
        float acc = 0.f;
        for (int32_t j = 0; j < m; ++j) acc += s_at(h, i, j) * v_at(j, h / r, c);
        out[(static_cast<size_t>(i) * H + h) * kd + c] = acc;
      }
  return ok_status();
}

}  // namespace einfer
