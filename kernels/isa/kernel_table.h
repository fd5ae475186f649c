// The kernel table of runtime ISA dispatch: one plain struct of function pointers per instruction
// set level (kernels/isa/isa.h), filled by kernels/isa/isa_table.cpp compiled once per level.
//
// EINFER_DISPATCHED_KERNELS lists every public kernel entry point whose body depends on the
// instruction set (it is defined in a translation unit of EINFER_KERNELS_ISA_SOURCES, see
// kernels/CMakeLists.txt). Scratch-size functions are listed too: a level may lay its scratch out
// differently. To dispatch a new kernel, add one X(return type, name, (parameters), (arguments))
// line; the table member, the per-level entry and the public forwarding function
// (kernels/isa/isa.cpp) follow from it. A public function of a per-ISA translation unit that is not
// listed here keeps its baseline-level body.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention/attention.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/gguf/gguf.h"
#include "kernels/half/half.h"
#include "kernels/rope/rope.h"
#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"

#define EINFER_DISPATCHED_KERNELS(X)                                                               \
  X(const char*, simd_arch_name, (), ())                                                           \
  X(int, simd_float_lanes, (), ())                                                                 \
  X(float, fma_chains_f32, (int64_t iterations, float m, float a), (iterations, m, a))             \
  X(int, gemm_f32_lanes, (), ())                                                                   \
  X(float, fma_chains_gemm_f32, (int64_t iterations, float m, float a), (iterations, m, a))        \
  X(float, dot_f32, (const float* a, const float* b, size_t n), (a, b, n))                         \
  X(void, axpy_f32, (float alpha, const float* x, float* y, size_t n), (alpha, x, y, n))           \
  X(void, scale_f32, (float* x, float s, size_t n), (x, s, n))                                     \
  X(void, add_f32, (const float* a, const float* b, float* y, size_t n), (a, b, y, n))             \
  X(void, mul_f32, (const float* a, const float* b, float* y, size_t n), (a, b, y, n))             \
  X(float, max_f32, (const float* x, size_t n), (x, n))                                            \
  X(size_t, argmax_f32, (const float* x, size_t n), (x, n))                                        \
  X(float, sum_f32, (const float* x, size_t n), (x, n))                                            \
  X(void, exp_f32, (const float* x, float* y, size_t n), (x, y, n))                                \
  X(void, softmax_f32, (float* x, size_t n), (x, n))                                               \
  X(void, rmsnorm_f32, (const float* x, const float* w, float eps, float* y, size_t n),            \
    (x, w, eps, y, n))                                                                             \
  X(void, layernorm_f32,                                                                           \
    (const float* x, const float* w, const float* b, float eps, float* y, size_t n),               \
    (x, w, b, eps, y, n))                                                                          \
  X(void, silu_f32, (const float* x, float* y, size_t n), (x, y, n))                               \
  X(void, relu_f32, (const float* x, float* y, size_t n), (x, y, n))                               \
  X(void, gelu_erf_f32, (const float* x, float* y, size_t n), (x, y, n))                           \
  X(void, gelu_tanh_f32, (const float* x, float* y, size_t n), (x, y, n))                          \
  X(void, swiglu_f32, (float* g, const float* u, size_t n), (g, u, n))                             \
  X(void, geglu_tanh_f32, (float* g, const float* u, size_t n), (g, u, n))                         \
  X(void, softcap_f32, (float* x, float cap, size_t n), (x, cap, n))                               \
  X(size_t, gemm_f32_scratch_bytes, (int64_t m, int64_t n, int64_t k), (m, n, k))                  \
  X(void, gemm_f32, (const GemmF32Args& args, void* scratch), (args, scratch))                     \
  X(void, gemv_f32,                                                                                \
    (int64_t n, int64_t k, const float* w, int64_t w_j, int64_t w_p, const float* x, float* y,     \
     int64_t y_stride, bool accumulate),                                                           \
    (n, k, w, w_j, w_p, x, y, y_stride, accumulate))                                               \
  X(const char*, gemm_f32_kernel_name, (), ())                                                     \
  X(void, rope_apply,                                                                              \
    (const RopeTable& table, RopeLayout layout, float* x, int32_t n_heads, int64_t pos),           \
    (table, layout, x, n_heads, pos))                                                              \
  X(size_t, matmul_quant_scratch_bytes, (int64_t m, int64_t k, int32_t group), (m, k, group))      \
  X(const char*, matmul_quant_kernel_name,                                                         \
    (DType dtype, WeightLayout layout, int64_t k, int32_t group, int64_t m, bool* fast),           \
    (dtype, layout, k, group, m, fast))                                                            \
  X(int64_t, matmul_quant_min_rows, (DType dtype, WeightLayout layout, int64_t k, int32_t group),  \
    (dtype, layout, k, group))                                                                     \
  X(Status, matmul_f32_quant,                                                                      \
    (const float* a, int64_t lda, int64_t m, const TensorView& w, float* c, int64_t ldc,           \
     void* scratch, size_t scratch_bytes, const Threads* threads),                                 \
    (a, lda, m, w, c, ldc, scratch, scratch_bytes, threads))                                       \
  X(Status, matmul_quant_rows,                                                                     \
    (const float* a, int64_t lda, int64_t m, const TensorView& w, int64_t r0, int64_t r1,          \
     void* scratch, size_t scratch_bytes),                                                         \
    (a, lda, m, w, r0, r1, scratch, scratch_bytes))                                                \
  X(Status, matmul_quant_columns,                                                                  \
    (int64_t m, const TensorView& w, float* c, int64_t ldc, int64_t j0, int64_t j1, void* scratch, \
     size_t scratch_bytes),                                                                        \
    (m, w, c, ldc, j0, j1, scratch, scratch_bytes))                                                \
  X(Status, matmul_quant_row_block,                                                                \
    (int64_t m, const TensorView& w, float* c, int64_t ldc, int64_t r0, int64_t r1, void* scratch, \
     size_t scratch_bytes),                                                                        \
    (m, w, c, ldc, r0, r1, scratch, scratch_bytes))                                                \
  X(size_t, matmul_half_scratch_bytes, (int64_t m, int64_t n, int64_t k), (m, n, k))               \
  X(Status, matmul_f32_half,                                                                       \
    (const float* a, int64_t lda, int64_t m, const TensorView& w, float* c, int64_t ldc,           \
     void* scratch, size_t scratch_bytes, const Threads* threads),                                 \
    (a, lda, m, w, c, ldc, scratch, scratch_bytes, threads))                                       \
  X(const char*, matmul_half_kernel_name, (DType w, int64_t m), (w, m))                            \
  X(void, widen_f16_f32, (const uint16_t* src, float* dst, int64_t n), (src, dst, n))              \
  X(void, widen_bf16_f32, (const uint16_t* src, float* dst, int64_t n), (src, dst, n))             \
  X(void, gemv_f16,                                                                                \
    (int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y),              \
    (n, k, w, w_j, x, y))                                                                          \
  X(void, gemv_bf16,                                                                               \
    (int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y),              \
    (n, k, w, w_j, x, y))                                                                          \
  X(size_t, matmul_gguf_scratch_bytes, (int64_t m, int64_t k), (m, k))                             \
  X(const char*, matmul_gguf_kernel_name,                                                          \
    (DType dtype, WeightLayout layout, int64_t m, bool* fast), (dtype, layout, m, fast))           \
  X(Status, matmul_f32_gguf,                                                                       \
    (const float* a, int64_t lda, int64_t m, const TensorView& w, float* c, int64_t ldc,           \
     void* scratch, size_t scratch_bytes, const Threads* threads),                                 \
    (a, lda, m, w, c, ldc, scratch, scratch_bytes, threads))                                       \
  X(bool, attention_i8_dot_uses_vnni, (AttentionI8Dot choice), (choice))                           \
  X(size_t, attention_scratch_bytes,                                                               \
    (const AttentionShape& shape, int32_t n_queries, DType kv_dtype),                              \
    (shape, n_queries, kv_dtype))                                                                  \
  X(Status, attention_f32,                                                                         \
    (const AttentionShape& shape, const float* q, const float* k_new, const float* v_new,          \
     int32_t n, int64_t pos0, const KVLayerView* cache, float* out, void* scratch,                 \
     size_t scratch_bytes, const Threads* threads),                                                \
    (shape, q, k_new, v_new, n, pos0, cache, out, scratch, scratch_bytes, threads))

namespace einfer {

struct KernelTable {
  const char* level;  // "scalar", "sse2", "avx2", "neon", "dotprod", ...
#define EINFER_KERNEL_TABLE_MEMBER(ret, name, params, args) ret(*name) params;
  EINFER_DISPATCHED_KERNELS(EINFER_KERNEL_TABLE_MEMBER)
#undef EINFER_KERNEL_TABLE_MEMBER
};

}  // namespace einfer
