// Plain NEON tile kernels of the interleaved K-quant layout (runtime/layout.h, q4_k / q6_k / q8_0 /
// q5_0 in 4x4; gemm_gguf_kquant_4x4_neon.h) for cores without the dot product (Cortex-A53/A72):
// each 4-byte activation lane broadcast and multiplied by widening multiplies (two chunks per int16
// sum), the products of each row summed by pairwise adds. Twin: gemm_gguf_kquant_4x4_scalar.cpp,
// bit for bit.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_NEON) && !defined(__ARM_FEATURE_DOTPROD)

#include "kernels/gguf/gemm_gguf_kquant_4x4_neon.h"

namespace einfer::gguf_detail {

namespace {
// Products of chunks t and t + 1 (same row positions) summed in int16 lanes, rows 0-1 in p01
// ([r0 b0 .. b3, r1 b0 .. b3]), rows 2-3 in p23, over a whole sub-block: at most 8 q4_k chunks of
// products <= 15 x 127 or 4 q6_k chunks of products <= 63 x 127 per lane, both < 2^15 (the
// activations are clamped to +-127); then pairwise adds give the 4 rows' sums.
struct Widening {
  struct Acc {
    int16x8_t p01, p23;
  };
  // Two registers an accumulator: 2 activation rows a pass (q6_k: 1 a pass measured slower).
  static constexpr bool kFourRows = false, kSixPairs = true, kInt16Sums = true;
  static Acc zero() { return {vdupq_n_s16(0), vdupq_n_s16(0)}; }
  template <int T>
  static void pair(Acc* acc, int8x16_t w0, int8x16_t w1, int8x16_t a) {
    const int32x4_t a32 = vreinterpretq_s32_s8(a);
    const int8x16_t b0 = vreinterpretq_s8_s32(vdupq_laneq_s32(a32, T));
    const int8x16_t b1 = vreinterpretq_s8_s32(vdupq_laneq_s32(a32, T + 1));
    acc->p01 = vmlal_s8(vmlal_s8(acc->p01, vget_low_s8(w0), vget_low_s8(b0)), vget_low_s8(w1),
                        vget_low_s8(b1));
    acc->p23 = vmlal_high_s8(vmlal_high_s8(acc->p23, w0, b0), w1, b1);
  }
  // pair() for weights up to 128 in size (q8_0): the pair's int16 sums (2 products a lane)
  // added pairwise into int32 lanes at once, [r b01, r b23] for rows 0-1 in s01, 2-3 in s23.
  template <int T>
  static void pair_wide(int32x4_t* s01, int32x4_t* s23, int8x16_t w0, int8x16_t w1, int8x16_t a) {
    const int32x4_t a32 = vreinterpretq_s32_s8(a);
    const int8x16_t b0 = vreinterpretq_s8_s32(vdupq_laneq_s32(a32, T));
    const int8x16_t b1 = vreinterpretq_s8_s32(vdupq_laneq_s32(a32, T + 1));
    *s01 = vpadalq_s16(*s01, vmlal_s8(vmull_s8(vget_low_s8(w0), vget_low_s8(b0)), vget_low_s8(w1),
                                      vget_low_s8(b1)));
    *s23 = vpadalq_s16(*s23, vmlal_high_s8(vmull_high_s8(w0, b0), w1, b1));
  }
  static int32x4_t sum(Acc acc) {
    const int32x4_t s01 = vpaddlq_s16(acc.p01), s23 = vpaddlq_s16(acc.p23);
    return vpaddq_s32(s01, s23);
  }
};
}  // namespace

TileChoice tile_kernel_simd(DType dtype) {
  switch (dtype) {
    case DType::q4_k:
      return {KquantTiles<Widening>::tile<false>, "gemm_gguf_q4_k_4x4_neon"};
    case DType::q6_k:
      return {KquantTiles<Widening>::tile<true>, "gemm_gguf_q6_k_4x4_neon"};
    case DType::q8_0:
      return {KquantTiles<Widening>::tile32<DType::q8_0>, "gemm_gguf_q8_0_4x4_neon"};
    case DType::q5_0:
      return {KquantTiles<Widening>::tile32<DType::q5_0>, "gemm_gguf_q5_0_4x4_neon"};
    default:
      return {nullptr, nullptr};
  }
}

}  // namespace einfer::gguf_detail

#endif
