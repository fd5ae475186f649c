// The GGUF block kernels of gemm_gguf_q8_4x4_avx2.cpp with AVX-VNNI (VEX): each scaled
// sub-block dot, madd(maddubs(u, a), scale) added to its accumulator, is one maddubs and one
// vpdpwssd (the same exact int32 sums, so the same bits as the AVX2 kernels and the scalar
// twins). q4_k GEMV, 2048 x 768 in L2: 0.036 -> 0.033 ms on a Xeon with AMX (einfer-quant-bench
// --gguf --copies 1). Compiled for it with a target pragma; matmul_gguf.cpp calls it only when the
// ISA selection includes the avxvnni extension. GCC only, like the other
// VNNI kernels (clang builds run the AVX2 kernels).
#include "kernels/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#pragma GCC push_options
#pragma GCC target("avxvnni")

#define EINFER_GGUF_X86_DPWSSD 1
#include "kernels/gemm_gguf_q8_4x4_x86.inc"

#pragma GCC pop_options

#endif
