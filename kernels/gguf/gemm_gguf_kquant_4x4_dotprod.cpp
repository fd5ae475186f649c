// NEON dotprod tile kernels of the interleaved K-quant layout (runtime/layout.h, q4_k / q6_k / q8_0
// / q5_0 in 4x4; gemm_gguf_kquant_4x4_neon.h): SDOT by element, one 4-byte activation lane against
// 4 bytes of each of the 4 rows. Twin: gemm_gguf_kquant_4x4_scalar.cpp, bit for bit.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_NEON) && defined(__ARM_FEATURE_DOTPROD)

#include "kernels/gguf/gemm_gguf_kquant_4x4_neon.h"

namespace einfer::gguf_detail {

namespace {
struct Sdot {
  using Acc = int32x4_t;
  static constexpr bool kFourRows = true, kSixPairs = true, kInt16Sums = false;
  static Acc zero() { return vdupq_n_s32(0); }
  // acc[r] += sum over b of w0[4r + b] * a[4t + b] + w1[4r + b] * a[4t + 4 + b] (t = 0 or 2).
  template <int T>
  static void pair(Acc* acc, int8x16_t w0, int8x16_t w1, int8x16_t a) {
    if constexpr (T == 0) {
      *acc = vdotq_laneq_s32(vdotq_laneq_s32(*acc, w0, a, 0), w1, a, 1);
    } else {
      *acc = vdotq_laneq_s32(vdotq_laneq_s32(*acc, w0, a, 2), w1, a, 3);
    }
  }
  static int32x4_t sum(Acc acc) { return acc; }
};
}  // namespace

TileChoice tile_kernel_simd(DType dtype) {
  switch (dtype) {
    case DType::q4_k:
      return {KquantTiles<Sdot>::tile<false>, "gemm_gguf_q4_k_4x4_dotprod"};
    case DType::q6_k:
      return {KquantTiles<Sdot>::tile<true>, "gemm_gguf_q6_k_4x4_dotprod"};
    case DType::q8_0:
      return {KquantTiles<Sdot>::tile32<DType::q8_0>, "gemm_gguf_q8_0_4x4_dotprod"};
    case DType::q5_0:
      return {KquantTiles<Sdot>::tile32<DType::q5_0>, "gemm_gguf_q5_0_4x4_dotprod"};
    default:
      return {nullptr, nullptr};
  }
}

}  // namespace einfer::gguf_detail

#endif
