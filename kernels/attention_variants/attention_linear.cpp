#include "kernels/attention_variants/attention_variants.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/einsum/einsum.h"
#include "kernels/vec/vec.h"
#include "runtime/tensor.h"

namespace einfer {

namespace {

void elu_plus_one(float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.f ? x[i] + 1.f : std::exp(x[i]);
}

struct Plans {
  EinsumPlan state, mix;
};

Status make_plans(const LinearAttentionShape& s, int32_t n, float* q, float* k, const float* v,
                  float* kv, Plans* p) {
  const int64_t H = s.n_heads, d = s.head_dim;
  const TensorView kn = make_view(DType::f32, k, {n, H, d});
  const TensorView vn = make_view(DType::f32, const_cast<float*>(v), {n, H, d});
  EINFER_TRY(plan<"nhk,nhv->hkv">(kn, vn, &p->state));
  const TensorView qn = make_view(DType::f32, q, {n, H, d});
  const TensorView kvv = make_view(DType::f32, kv, {H, d, d});
  return plan<"nhk,hkv->nhv">(qn, kvv, &p->mix);
}

}  // namespace

size_t attention_linear_state_floats(const LinearAttentionShape& s) {
  // Saturates instead of wrapping a 32-bit size_t; callers refuse SIZE_MAX-sized states.
  const uint64_t floats = uint64_t(s.n_heads) * uint64_t(s.head_dim) * (uint64_t(s.head_dim) + 1);
  return floats > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(floats);
}

Status attention_linear_scratch_bytes(const LinearAttentionShape& s, int32_t n, size_t* bytes) {
  *bytes = 0;
  if (s.n_heads <= 0 || s.head_dim <= 0 || n <= 0)
    return make_status(StatusCode::invalid_argument, "linear attention: bad shape");
  const uint64_t floats = uint64_t(s.n_heads) * uint64_t(s.head_dim) * (uint64_t(s.head_dim) + 1);
  if (floats > (SIZE_MAX - 63) / sizeof(float) / 2)  // 32-bit size_t: refuse, never wrap
    return make_status(StatusCode::out_of_memory, "linear attention: state too large");
  const size_t state = (attention_linear_state_floats(s) * sizeof(float) + 63) / 64 * 64;
  size_t einsum = 0;
  if (!s.causal) {
    Plans p;
    EINFER_TRY(make_plans(s, n, nullptr, nullptr, nullptr, nullptr, &p));
    einsum =
        p.state.scratch_bytes > p.mix.scratch_bytes ? p.state.scratch_bytes : p.mix.scratch_bytes;
  }
  *bytes = state + einsum;
  return ok_status();
}

void attention_linear_elu_step_f32(const LinearAttentionShape& s, float* state, float* q, float* k,
                                   const float* v, float* out) {
  const size_t H = static_cast<size_t>(s.n_heads), d = static_cast<size_t>(s.head_dim);
  float* z_all = state + H * d * d;
  elu_plus_one(q, H * d);
  elu_plus_one(k, H * d);
  for (size_t h = 0; h < H; ++h) {
    float* S = state + h * d * d;
    float* z = z_all + h * d;
    const float* kh = k + h * d;
    const float* qh = q + h * d;
    const float* vh = v + h * d;
    float* oh = out + h * d;
    for (size_t a = 0; a < d; ++a) axpy_f32(kh[a], vh, S + a * d, d);  // S += phi(k) v^T
    add_f32(z, kh, z, d);
    std::memset(oh, 0, d * sizeof(float));
    for (size_t a = 0; a < d; ++a) axpy_f32(qh[a], S + a * d, oh, d);  // phi(q)^T S
    scale_f32(oh, 1.f / dot_f32(qh, z, d), d);
  }
}

Status attention_linear_elu_f32(const LinearAttentionShape& s, float* q, float* k, const float* v,
                                int32_t n, float* out, void* scratch, size_t scratch_bytes) {
  size_t need = 0;
  EINFER_TRY(attention_linear_scratch_bytes(s, n, &need));
  if (scratch == nullptr || scratch_bytes < need)
    return make_status(StatusCode::out_of_memory, "linear attention: scratch too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  const size_t H = static_cast<size_t>(s.n_heads), d = static_cast<size_t>(s.head_dim);
  const size_t row = H * d;
  float* state = static_cast<float*>(scratch);
  const size_t state_floats = attention_linear_state_floats(s);
  std::memset(state, 0, state_floats * sizeof(float));
  if (s.causal) {
    for (int32_t i = 0; i < n; ++i)
      attention_linear_elu_step_f32(s, state, q + i * row, k + i * row, v + i * row, out + i * row);
    return ok_status();
  }
  elu_plus_one(q, static_cast<size_t>(n) * row);
  elu_plus_one(k, static_cast<size_t>(n) * row);
  float* z = state + H * d * d;
  Plans p;
  EINFER_TRY(make_plans(s, n, q, k, v, state, &p));
  unsigned char* einsum_scratch =
      static_cast<unsigned char*>(scratch) + (state_floats * sizeof(float) + 63) / 64 * 64;
  const size_t einsum_bytes = need - (state_floats * sizeof(float) + 63) / 64 * 64;
  const TensorView st_in[2] = {
      make_view(DType::f32, k, {n, static_cast<int64_t>(H), s.head_dim}),
      make_view(DType::f32, const_cast<float*>(v), {n, static_cast<int64_t>(H), s.head_dim})};
  const TensorView kv =
      make_view(DType::f32, state, {static_cast<int64_t>(H), s.head_dim, s.head_dim});
  EINFER_TRY(execute_einsum(p.state, st_in, 2, kv, einsum_scratch, einsum_bytes));
  const TensorView mix_in[2] = {make_view(DType::f32, q, {n, static_cast<int64_t>(H), s.head_dim}),
                                kv};
  const TensorView o = make_view(DType::f32, out, {n, static_cast<int64_t>(H), s.head_dim});
  EINFER_TRY(execute_einsum(p.mix, mix_in, 2, o, einsum_scratch, einsum_bytes));
  for (int32_t i = 0; i < n; ++i)  // z = sum_j phi(k_j) per head
    add_f32(z, k + i * row, z, row);
  for (int32_t i = 0; i < n; ++i) {  // divide by phi(q_i)^T z
    for (size_t h = 0; h < H; ++h)
      scale_f32(out + i * row + h * d, 1.f / dot_f32(q + i * row + h * d, z + h * d, d), d);
  }
  return ok_status();
}

}  // namespace einfer
