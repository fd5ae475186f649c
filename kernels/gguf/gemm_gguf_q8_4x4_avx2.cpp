// AVX2 GGUF block kernels, 4 weight rows x 1-4 activation rows per pass (decode: 4x1, prefill:
// 4x4), for all ten block types. Twins of dot_gguf_q8_scalar.cpp, bit for bit: each block's
// integer sums are the same exact int32 (maddubs pair sums stay below 2^15: unsigned weights
// <= 63 times |a| <= 127, or |w| <= 128 times |a| <= 127 for q8_0's sign trick; madd by the
// sub-block scale widens to int32), and the per-block float expression of the scalar kernel,
// acc += da * (d * sumi - dmin * summ), runs with the four weight rows in the four lanes of one
// SSE register. What the four rows share is done once: the activation loads and their per-block
// sums (mins and offsets are folded with the q8 block's bsums / isum, never per element), the
// horizontal reduction (one hadd tree for four rows), the f16 scale conversion (one vcvtph2ps);
// the 6-bit scale/min unpack runs on 32-bit words. With several activation rows each weight block
// is unpacked once for all of them.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2)
#include "kernels/gguf/gemm_gguf_q8_4x4_x86.inc"
#endif  // EINFER_GGUF_AVX2
