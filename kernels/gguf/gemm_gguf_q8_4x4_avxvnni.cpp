// The GGUF block kernels of gemm_gguf_q8_4x4_avx2.cpp with AVX-VNNI (VEX) and GFNI: each scaled
// sub-block dot, madd(maddubs(u, a), scale) added to its accumulator, is one maddubs and one
// vpdpwssd, and Q4_K/Q5_K take their high nibbles with one vgf2p8affineqb instead of a shift and a
// mask (the same exact int32 sums, so the same bits as the AVX2 kernels and the scalar twins).
// Compiled for them with a target pragma; gguf_dispatch.cpp calls it only when the ISA selection
// includes the avxvnni extension and the CPU has GFNI. GCC only, like the other VNNI kernels
// (clang builds run the AVX2 kernels).
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#pragma GCC push_options
#pragma GCC target("avxvnni,gfni")

#define EINFER_GGUF_X86_DPWSSD 1
#define EINFER_GGUF_X86_GFNI 1
#include "kernels/gguf/gemm_gguf_q8_4x4_x86.inc"

#pragma GCC pop_options

#endif
