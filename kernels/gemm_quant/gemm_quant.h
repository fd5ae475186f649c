// Matrix products against group-quantized weights: C[m, n] = sum_k A[m, k] * W[n, k].
//
// W is a q8 or q4 TensorView of shape [N, K] (runtime/tensor.h gives the layout), quantized along
// K, in the rows layout or an interleaved one (runtime/layout.h); the layout picks the kernel, the
// interleaved layouts' kernels all give the bits of their one scalar twin. A is float32, rows of K
// with row stride lda (elements); C is float32 with row stride ldc. The activations are quantized
// to int8 per group on the fly into caller scratch (matmul_quant_scratch_bytes), accumulated in
// int32 per group, and scaled once per group. The einsum planner routes every contraction with a
// quantized operand here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"
#include "runtime/tensor.h"
#include "runtime/threads.h"

namespace einfer {

// Scratch bytes matmul_f32_quant needs for `m` activation rows of length `k` (groups of `group`).
size_t matmul_quant_scratch_bytes(int64_t m, int64_t k, int32_t group);

// The kernel matmul_f32_quant takes on the selected ISA level for a weight of this dtype, layout,
// row length and group with m activation rows (e.g. "gemm_q8_4x1_neon"). *fast (optional) is
// false when the layout has no SIMD kernel on this CPU and the generic kernel runs it instead
// (correct, slower): what einfer-run -v reports.
const char* matmul_quant_kernel_name(DType dtype, WeightLayout layout, int64_t k, int32_t group,
                                     int64_t m, bool* fast = nullptr);

// The fewest activation rows a prefill call of matmul_f32_quant should get for this weight on the
// selected ISA level: the x86 lane tiles pack each weight tile once per call and amortize it over
// the call's rows (128); 0 where the kernel reads the weights in place. Callers that split a
// prefill into row blocks (models/mha.cpp) keep their blocks at least this tall.
int64_t matmul_quant_min_rows(DType dtype, WeightLayout layout, int64_t k, int32_t group);

// Checks dtypes and shapes, then computes C = A · Wᵀ. Scratch must be 64-byte aligned. With
// threads, activation rows are quantized by row blocks and C computed by column blocks (the same
// scratch: the workers only read it), bit-identical to one thread.
Status matmul_f32_quant(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                        int64_t ldc, void* scratch, size_t scratch_bytes,
                        const Threads* threads = nullptr);

// The two-step form of matmul_f32_quant, for callers that share one quantized A among several
// products with the same k, group size and weight dtype (q, k and v; gate and up) inside parallel
// regions of their own. matmul_quant_rows quantizes rows [r0, r1) of A into scratch (tasks take
// disjoint rows); after a join, matmul_quant_columns computes output columns [j0, j1) of C (j0 and
// j1 multiples of 16, or j1 = n), reading the quantized A only. Bit-identical to matmul_f32_quant.
Status matmul_quant_rows(const float* a, int64_t lda, int64_t m, const TensorView& w, int64_t r0,
                         int64_t r1, void* scratch, size_t scratch_bytes);
Status matmul_quant_columns(int64_t m, const TensorView& w, float* c, int64_t ldc, int64_t j0,
                            int64_t j1, void* scratch, size_t scratch_bytes);

// The row-block form of the second step, for callers whose tasks keep whole token rows (prefill:
// a task then reads only the rows it quantized itself, and no join separates the two steps):
// computes rows [r0, r1) of C, every column, from rows [r0, r1) of the quantized A. r0 and r1
// must be multiples of 4 (r1 may be m) and the block at least 2 rows when m > 1, so the kernels'
// 4-row tiles are those of the whole product: bit-identical to matmul_f32_quant.
Status matmul_quant_row_block(int64_t m, const TensorView& w, float* c, int64_t ldc, int64_t r0,
                              int64_t r1, void* scratch, size_t scratch_bytes);

namespace scalar {
// Same int8 activation quantization and int32 group sums as matmul_f32_quant, in plain C++ (the
// path of builds without SIMD); results match the SIMD kernels up to float rounding.
Status matmul_f32_quant_int8(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                             int64_t ldc, void* scratch, size_t scratch_bytes);

#if defined(__x86_64__)
// The scalar twin of the x86 decode GEMVs (gemv_q8/q4_1x4_avx2 and _avx512vnni: m == 1, groups
// of 32, rows layout): the same int8 activations and int32 lane sums, and the same float
// operations in the same order (8 lanes per row, then their sum), so those kernels equal it bit
// for bit. For tests, on x86-64 builds only; w must be q8 or q4 in rows with groups of 32.
Status matmul_f32_quant_gemv_lanes(const float* a, const TensorView& w, float* c, void* scratch,
                                   size_t scratch_bytes);
#endif

// Reference: dequantizes W row by row and multiplies in float (no activation quantization).
void matmul_f32_quant_reference(const float* a, int64_t lda, int64_t m, const TensorView& w,
                                float* c, int64_t ldc);
}  // namespace scalar

}  // namespace einfer
