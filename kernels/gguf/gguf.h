// GGUF (ggml) block-quantized weights run natively: dequantization and C = A · Wᵀ products.
//
// W is a [N, K] view of one of the GGUF block dtypes (runtime/dtype.h, q8_0 .. q6_k): each row is
// K / gguf_block_elems blocks laid out exactly as llama.cpp writes them (docs/gguf-quant.md gives
// every layout). A is float32, quantized once per row into caller scratch and reused for every
// output row: to "q8k" blocks of 256 (float scale, int8 values, int16 sums of each 16) for the
// K-quants, to "q8a" blocks of 32 (float scale, int32 sum, int8 values) for the 32-element types,
// as llama.cpp does with its Q8_K and Q8_0. Each weight block's integer dot products are summed
// exactly in int32 and scaled once per block, so the SIMD kernels (gemm_gguf_q8_4x4_avx2.cpp,
// gemm_gguf_q8_4x4_neon.cpp: 4 weight rows x up to 4 activation rows per call) return the same
// float as their scalar twins (dot_gguf_q8_scalar.cpp), bit for bit, whatever the grouping of rows
// and the thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"
#include "runtime/tensor.h"
#include "runtime/threads.h"

namespace einfer {

// Decodes one row of K elements of GGUF block dtype `dtype` (K a multiple of its block) to float.
void dequantize_row_gguf(DType dtype, const void* row, int64_t k, float* out);

// Interleaved layouts of GGUF block matrices (runtime/layout.h: q4_k, q6_k, q8_0, q5_0 in 4x4),
// written at pack time and multiplied in place. gguf_to_layout moves a [n, k] rows-layout matrix's
// blocks into `layout` (out: layout_data_bytes; padding rows all zero); gguf_block_from_layout
// copies row r's GGUF block back out of one (tile, superblock) block; dequantize_row_gguf_view
// decodes row `row` of a matrix in any layout (an embedding lookup).
Status gguf_to_layout(DType dtype, const void* rows, int64_t n, int64_t k, WeightLayout layout,
                      void* out, size_t out_bytes);
void gguf_block_from_layout(DType dtype, const uint8_t* block, int32_t r, uint8_t* out);
void dequantize_row_gguf_view(const TensorView& w, int64_t row, float* out);

// Scratch bytes matmul_f32_gguf needs for `m` activation rows of length `k` (any block dtype).
size_t matmul_gguf_scratch_bytes(int64_t m, int64_t k);

// The kernel matmul_f32_gguf runs for `m` activation rows of a `dtype` matrix in `layout`, and
// through *fast (when given) false when an interleaved layout has no SIMD kernel here and the
// generic (scalar) one runs it: what einfer-run -v and einfer-pack --inspect report.
const char* matmul_gguf_kernel_name(DType dtype, WeightLayout layout, int64_t m, bool* fast);

// C[m, n] = sum_k A[m, k] * W[n, k] for a GGUF block-quantized W, in the rows layout or an
// interleaved one (above). Checks dtype, layout and shapes (K must be a multiple of the block).
// Scratch: matmul_gguf_scratch_bytes, any alignment. With threads, rows of A are quantized and
// columns of C computed in blocks; bit-identical to one thread.
Status matmul_f32_gguf(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                       int64_t ldc, void* scratch, size_t scratch_bytes,
                       const Threads* threads = nullptr);

namespace scalar {
// The same computation with the scalar dot kernels only (the twins of the SIMD ones).
Status matmul_f32_gguf(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                       int64_t ldc, void* scratch, size_t scratch_bytes);
}  // namespace scalar

}  // namespace einfer
