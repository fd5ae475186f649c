// Plain NEON tile kernels of the interleaved K-quant layout (runtime/layout.h, q4_k / q6_k in 4x4;
// gemm_gguf_kquant_4x4_neon.h) for cores without the dot product (Cortex-A53/A72): each 4-byte
// activation lane broadcast and multiplied by widening multiplies, the products of each row summed
// by pairwise adds. Twin: gemm_gguf_kquant_4x4_scalar.cpp, bit for bit.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_NEON) && !defined(__ARM_FEATURE_DOTPROD)

#include "kernels/gguf/gemm_gguf_kquant_4x4_neon.h"

namespace einfer::gguf_detail {

namespace {
struct Widening {
  // acc[r] + sum over b of w[4r + b] * a[4t + b] (products <= 128 * 127 fit int16).
  static int32x4_t lane(int32x4_t acc, int8x16_t w, int8x16_t a, int t) {
    const int32x4_t a32 = vreinterpretq_s32_s8(a);
    int32x4_t dup;
    switch (t) {
      case 0:
        dup = vdupq_laneq_s32(a32, 0);
        break;
      case 1:
        dup = vdupq_laneq_s32(a32, 1);
        break;
      case 2:
        dup = vdupq_laneq_s32(a32, 2);
        break;
      default:
        dup = vdupq_laneq_s32(a32, 3);
        break;
    }
    const int8x16_t b = vreinterpretq_s8_s32(dup);
    const int16x8_t p0 = vmull_s8(vget_low_s8(w), vget_low_s8(b));
    const int16x8_t p1 = vmull_high_s8(w, b);
    return vaddq_s32(acc, vpaddq_s32(vpaddlq_s16(p0), vpaddlq_s16(p1)));
  }
};
}  // namespace

TileChoice tile_kernel_simd(DType dtype) {
  switch (dtype) {
    case DType::q4_k:
      return {KquantTiles<Widening>::tile<false>, "gemm_gguf_q4_k_4x4_neon"};
    case DType::q6_k:
      return {KquantTiles<Widening>::tile<true>, "gemm_gguf_q6_k_4x4_neon"};
    default:
      return {nullptr, nullptr};
  }
}

}  // namespace einfer::gguf_detail

#endif
