// Matrix products against f16 or bf16 weights: C[m, n] = sum_k A[m, k] * W[n, k].
//
// W is an f16 (IEEE binary16) or bf16 (bfloat16) TensorView of shape [N, K], contiguous; A is
// float32, rows of K with row stride lda; C float32 with row stride ldc. Weights are widened to
// f32 in registers and never stored wider than they are read:
//   decode (m < 4)   GEMV, 4 weight rows per pass: gemv_f16_4x1_avx2 / gemv_bf16_4x1_avx2 (F16C,
//                    x86-64-v3), gemv_f16_4x1_neon / gemv_bf16_4x1_neon (aarch64), scalar twins;
//   prefill (m >= 4) blocks of weight rows are widened into scratch once and multiplied by the f32
//                    GEMM (kernels/gemm_f32/gemm_f32.h): the widening costs 1/m of the multiply.
// The einsum planner routes contractions with an f16/bf16 second operand here (kernel name from
// matmul_half_kernel_name). No allocation; scratch must be 64-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"
#include "runtime/tensor.h"
#include "runtime/threads.h"

namespace einfer {

// True for the 16-bit float weight types (f16, bf16).
constexpr bool dtype_is_half(DType d) {
  return d == DType::f16 || d == DType::bf16;
}

// Scratch bytes matmul_f32_half needs per thread for these sizes (one slot per task).
size_t matmul_half_scratch_bytes(int64_t m, int64_t n, int64_t k);

// Checks dtypes and shapes, then computes C = A · Wᵀ. With threads, output columns are cut into
// blocks, one per task and scratch slot; results do not depend on the thread count.
Status matmul_f32_half(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                       int64_t ldc, void* scratch, size_t scratch_bytes,
                       const Threads* threads = nullptr);

// The kernel matmul_f32_half runs for `m` rows of W's dtype, e.g. "gemv_f16_4x1_avx2".
const char* matmul_half_kernel_name(DType w, int64_t m);

// Widens n f16 / bf16 values to f32 (this build's fastest path).
void widen_f16_f32(const uint16_t* src, float* dst, int64_t n);
void widen_bf16_f32(const uint16_t* src, float* dst, int64_t n);

// y[j] = sum_p W[j, p] * x[p] for j < n, rows of W contiguous with row stride w_j (elements).
void gemv_f16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y);
void gemv_bf16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y);

namespace scalar {
void widen_f16_f32(const uint16_t* src, float* dst, int64_t n);
void widen_bf16_f32(const uint16_t* src, float* dst, int64_t n);
void gemv_f16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y);
void gemv_bf16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y);
}  // namespace scalar

}  // namespace einfer
