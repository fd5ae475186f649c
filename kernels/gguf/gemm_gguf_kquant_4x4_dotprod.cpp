// NEON dotprod tile kernels of the interleaved K-quant layout (runtime/layout.h, q4_k / q6_k in
// 4x4; gemm_gguf_kquant_4x4_neon.h): SDOT by element, one 4-byte activation lane against 4 bytes
// of each of the 4 rows. Twin: gemm_gguf_kquant_4x4_scalar.cpp, bit for bit.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_NEON) && defined(__ARM_FEATURE_DOTPROD)

#include "kernels/gguf/gemm_gguf_kquant_4x4_neon.h"

namespace einfer::gguf_detail {

namespace {
struct Sdot {
  // acc[r] + sum over b of w[4r + b] * a[4t + b].
  static int32x4_t lane(int32x4_t acc, int8x16_t w, int8x16_t a, int t) {
    switch (t) {
      case 0:
        return vdotq_laneq_s32(acc, w, a, 0);
      case 1:
        return vdotq_laneq_s32(acc, w, a, 1);
      case 2:
        return vdotq_laneq_s32(acc, w, a, 2);
      default:
        return vdotq_laneq_s32(acc, w, a, 3);
    }
  }
};
}  // namespace

TileChoice tile_kernel_simd(DType dtype) {
  switch (dtype) {
    case DType::q4_k:
      return {KquantTiles<Sdot>::tile<false>, "gemm_gguf_q4_k_4x4_dotprod"};
    case DType::q6_k:
      return {KquantTiles<Sdot>::tile<true>, "gemm_gguf_q6_k_4x4_dotprod"};
    default:
      return {nullptr, nullptr};
  }
}

}  // namespace einfer::gguf_detail

#endif
