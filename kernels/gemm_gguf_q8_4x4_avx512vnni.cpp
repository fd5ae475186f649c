// The GGUF block kernels of gemm_gguf_q8_4x4_avx2.cpp with AVX-512 VNNI on 256-bit vectors
// (AVX512VL): each scaled sub-block dot, madd(maddubs(u, a), scale) added to its accumulator, is
// one maddubs and one vpdpwssd (the same exact int32 sums, so the same bits as the AVX2 kernels and
// the scalar twins). q4_k GEMV, 2048 x 768 in L2: 0.036 -> 0.033 ms on a Xeon with AMX
// (einfer-quant-bench
// --gguf --copies 1). Compiled for it with a target pragma; matmul_gguf.cpp calls it only when the
// ISA selection includes the avx512vnni extension (and not avxvnni, which matmul_gguf.cpp prefers).
// GCC only, like the other VNNI kernels (clang builds run the AVX2 kernels).
#include "kernels/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")

#define EINFER_GGUF_X86_DPWSSD 2
#include "kernels/gemm_gguf_q8_4x4_x86.inc"

#pragma GCC pop_options

#endif
