// einfer-bench --kernels: the kernel microbenchmarks of the earlier issues, run in sequence.
//
// They stay standalone tools (their authors keep editing them), so einfer-bench runs the ones
// built next to it rather than duplicating their code:
//   einfer-kernel-bench  einsum GEMM/GEMV vs OpenBLAS sgemm (OPENBLAS_CORETYPE=Haswell, one thread,
//                        prints openblas_get_corename()) and vs a streaming read
//   einfer-vec-bench     vector primitives, scalar twin vs SIMD
//   einfer-quant-bench   q8/q4 GEMV and GEMM vs f32
//   einfer-attn-bench    fused attention decode bandwidth and prefill GFLOP/s
#pragma once

#include <cstdio>

// Runs every kernel microbenchmark found beside this executable, `quick` selecting their short
// variants where they have one, then the 15M-shape projections on `threads` workers against one
// (in this process, wall clock); returns 0 when all ran and succeeded.
int run_kernel_benches(FILE* out, bool quick, int threads);
