// einfer-bench --kernels: the kernel microbenchmarks (einsum GEMM/GEMV, quantized matmul,
// attention), scalar against SIMD and against OpenBLAS when the build found it.
#pragma once

#include <cstdio>

// Runs every kernel microbenchmark, printing to `out`; returns a process exit status.
int run_kernel_benches(FILE* out);
