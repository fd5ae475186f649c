// The generic kernel of the interleaved GGUF block layout (runtime/layout.h, q4_k / q6_k / q8_0 /
// q5_0 in 4x4): each row's GGUF block copied back out of the tile and taken by the scalar dot
// kernel one block at a time, summed in block order: the rows layout's float chain
// (dot_gguf_q8_scalar.cpp), so any CPU runs the layout with the rows layout's bits. The SIMD tile
// kernels are its twins.
#include "kernels/gguf/gguf.h"
#include "kernels/gguf/gguf_quant_internal.h"

namespace einfer::gguf_detail {

namespace {

template <DType T>
void tile_kquant(const uint8_t* tile, const void* act, size_t act_bytes, int na, int64_t nb,
                 float* out) {
  constexpr size_t bytes = gguf_block_bytes(T);
  // The activation block of one weight block: q8k for the superblocks of 256, q8a for 32.
  constexpr size_t act_block = gguf_block_elems(T) == 256 ? sizeof(BlockQ8K) : sizeof(BlockQ8A);
  const DotFn dot = scalar::dot_kernel(T);
  float acc[kMaxActRows * 4] = {};
  uint8_t block[4][bytes];
  for (int64_t i = 0; i < nb; ++i) {
    for (int32_t r = 0; r < 4; ++r) gguf_block_from_layout(T, tile + i * 4 * bytes, r, block[r]);
    for (int ia = 0; ia < na; ++ia) {
      const uint8_t* a = static_cast<const uint8_t*>(act) + ia * act_bytes + i * act_block;
      // dot over one block is 0 + that block's term: the rows kernel's acc += term, exactly.
      for (int r = 0; r < 4; ++r) acc[ia * 4 + r] += dot(block[r], a, 1);
    }
  }
  for (int e = 0; e < na * 4; ++e) out[e] = acc[e];
}

}  // namespace

namespace scalar {
TileChoice tile_kernel(DType dtype) {
  switch (dtype) {
    case DType::q4_k:
      return {tile_kquant<DType::q4_k>, "gemm_gguf_q4_k_4x4_scalar"};
    case DType::q6_k:
      return {tile_kquant<DType::q6_k>, "gemm_gguf_q6_k_4x4_scalar"};
    case DType::q8_0:
      return {tile_kquant<DType::q8_0>, "gemm_gguf_q8_0_4x4_scalar"};
    case DType::q5_0:
      return {tile_kquant<DType::q5_0>, "gemm_gguf_q5_0_4x4_scalar"};
    default:
      return {nullptr, nullptr};
  }
}
}  // namespace scalar

}  // namespace einfer::gguf_detail
