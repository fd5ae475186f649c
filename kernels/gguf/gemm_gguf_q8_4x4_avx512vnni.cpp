// The GGUF block kernels of gemm_gguf_q8_4x4_avx2.cpp with AVX-512 VNNI on 256-bit vectors
// (AVX512VL; for CPUs with it but without AVX-VNNI, e.g. Ice Lake, Zen 4): each scaled sub-block
// dot, madd(maddubs(u, a), scale) added to its accumulator, is one maddubs and one vpdpwssd (the
// same exact int32 sums, so the same bits as the AVX2 kernels and the scalar twins). Compiled for
// it with a target pragma; gguf_dispatch.cpp calls it only when the ISA selection includes the
// avx512vnni extension and not avxvnni. GCC only, like the other VNNI kernels.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni")

#define EINFER_GGUF_X86_DPWSSD 2
#include "kernels/gguf/gemm_gguf_q8_4x4_x86.inc"

#pragma GCC pop_options

#endif
