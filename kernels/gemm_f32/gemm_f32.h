// Strided float32 GEMM and GEMV: the contraction kernels behind the einsum planner.
//
//   gemm_f32:  C[i, j] (+)= sum_p A[i, p] * B[p, j]   with arbitrary element strides on every axis.
//              A and B are packed into caller scratch (BLIS-style KC x NC / MC x KC blocks) and fed
//              to a register-blocked microkernel: gemm_f32_6x16_avx2 (x86-64-v3),
//              gemm_f32_8x8_neon (aarch64), gemm_f32_4x8_neon (armhf) from gemm_f32_simd.cpp;
//              gemm_f32_4x4_scalar (gemm_f32_4x4_scalar.cpp).
//   gemv_f32:  y[j] (+)= sum_p W[j, p] * x[p]  for W with contiguous rows (w_p == 1, "rows" kernel,
//              4 rows at a time) or contiguous columns (w_j == 1, "columns" kernel, axpy-style);
//              x contiguous, y strided.
// `accumulate` adds to C / y instead of overwriting. einfer::scalar:: names the scalar twins the
// tests compare the SIMD kernels with. No allocation; scratch must be 64-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer {

struct GemmF32Args {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t a_m = 0, a_k = 0;
  const float* b = nullptr;
  int64_t b_k = 0, b_n = 0;
  float* c = nullptr;
  int64_t c_m = 0, c_n = 0;
  // Optional split output columns: column j lands at (j / n_inner) * c_n_outer + (j % n_inner) *
  // c_n (e.g. heads of a projection written head-major). 0: no split. n_inner must be a multiple
  // of 16.
  int64_t n_inner = 0, c_n_outer = 0;
  bool accumulate = false;
};

// Scratch bytes gemm_f32 (and its scalar twin) needs for these sizes.
size_t gemm_f32_scratch_bytes(int64_t m, int64_t n, int64_t k);
void gemm_f32(const GemmF32Args& args, void* scratch);

// Requires w_p == 1 or w_j == 1.
void gemv_f32(int64_t n, int64_t k, const float* w, int64_t w_j, int64_t w_p, const float* x,
              float* y, int64_t y_stride, bool accumulate);

// Name of the GEMM microkernel this build uses, e.g. "gemm_f32_6x16_avx2".
const char* gemm_f32_kernel_name();

namespace scalar {
void gemm_f32(const GemmF32Args& args, void* scratch);
void gemv_f32(int64_t n, int64_t k, const float* w, int64_t w_j, int64_t w_p, const float* x,
              float* y, int64_t y_stride, bool accumulate);
}  // namespace scalar

// The FMA-peak probe of kernels/simd/simd.h (fma_chains_f32) in the registers of the f32 GEMM's
// tiles, gemm_f32_lanes() floats wide: the selection's widest (16 on an AVX-512 CPU with the
// avx512vnni extension selected, else simd_float_lanes()). The f32 GEMM's fraction of peak is taken
// against this one.
int gemm_f32_lanes();
float fma_chains_gemm_f32(int64_t iterations, float m, float a);

}  // namespace einfer
