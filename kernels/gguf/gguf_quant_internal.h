// Shared between the GGUF block kernels (kernels/gguf/gguf.h): activation block layouts, the
// per-ISA dot products and the scale unpacking every ISA shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/quant/quant.h"
#include "kernels/simd/simd.h"
#include "runtime/dtype.h"

// Which SIMD dot kernels this build has (one ISA per file; the NEON one needs AArch64's
// across-vector adds).
#if EINFER_HAS_SIMD && defined(__AVX2__)
#define EINFER_GGUF_AVX2 1
#elif EINFER_HAS_SIMD && defined(__ARM_NEON) && defined(__aarch64__)
#define EINFER_GGUF_NEON 1
#endif

namespace einfer::gguf_detail {

// Activations for the K-quants: 256 values, value = qs * d; bsums[i] = sum of qs[16i .. 16i+15].
struct BlockQ8K {
  float d;
  int8_t qs[256];
  int16_t bsums[16];
};

// Activations for the 32-element types: value = qs * d; isum = sum of qs.
struct BlockQ8A {
  float d;
  int32_t isum;
  int8_t qs[32];
};

// Quantizes one row of k floats (k a multiple of 256, resp. 32): scale absmax / 127, rounding to
// nearest, so |qs| <= 127.
void quantize_row_q8k(const float* x, int64_t k, BlockQ8K* out);
void quantize_row_q8a(const float* x, int64_t k, BlockQ8A* out);
// The same values by the build's SIMD twins (quantize_act_q8k_avx2.cpp), else these.
void quantize_row_q8k_best(const float* x, int64_t k, BlockQ8K* out);
void quantize_row_q8a_best(const float* x, int64_t k, BlockQ8A* out);

// dot(weight row of nb blocks, activation row): one float per (row, row) pair. `act` points at
// BlockQ8K (K-quants) or BlockQ8A (32-element types).
using DotFn = float (*)(const uint8_t* w, const void* act, int64_t nb);

// Four weight rows (w[0..3], each nb blocks) against na (1 to kMaxActRows) activation rows act,
// act + act_bytes: out[ia * 4 + r] = dot(w[r], activation row ia). Each (row, activation row)
// pair is computed with the same operations whatever its place in the call, so results do not
// depend on how rows are grouped (a repeated row pads a short group).
constexpr int kRowsPerCall = 4;
constexpr int kMaxActRows = 4;
using RowsFn = void (*)(const uint8_t* const* w, const void* act, size_t act_bytes, int na,
                        int64_t nb, float* out);
struct KernelPair {
  RowsFn rows;
  DotFn dot;
};

// Interleaved GGUF block tiles (runtime/layout.h, q4_k / q6_k / q8_0 / q5_0 in 4x4): the 4 rows of
// one tile (nb (tile, block) blocks from `tile`) against na (1 to kMaxActRows) activation rows
// (q8k for the K-quants, q8a for q8_0 / q5_0) act, act + act_bytes: out[ia * 4 + r] = dot(row r,
// activation row ia), the same float as DotFn on the row's GGUF blocks, bit for bit.
using TileFn = void (*)(const uint8_t* tile, const void* act, size_t act_bytes, int na, int64_t nb,
                        float* out);
struct TileChoice {
  TileFn fn;
  const char* name;
};

namespace scalar {
DotFn dot_kernel(DType dtype);
// The generic tile kernel (gemm_gguf_kquant_4x4_scalar.cpp): any CPU, any block type with a layout.
TileChoice tile_kernel(DType dtype);
}  // namespace scalar
// This ISA level's SIMD tile kernel for dtype, or {nullptr, nullptr}; the best one (else scalar).
TileChoice tile_kernel_simd(DType dtype);
TileChoice tile_kernel_best(DType dtype);
// The best kernel this build has for dtype (a SIMD one where written, else the scalar twin).
DotFn dot_kernel_best(DType dtype);
// The SIMD kernel for dtype, or null when this build has none for it.
DotFn dot_kernel_simd(DType dtype);
// The SIMD multi-row kernel for dtype, or null (then one dot call per output element).
RowsFn rows_kernel_simd(DType dtype);
// The same kernels with vpdpwssd (gemm_gguf_q8_4x4_avxvnni.cpp, gemm_gguf_q8_4x4_avx512vnni.cpp;
// x86-64 GCC builds with AVX2 code): call only when the ISA selection includes the extension.
RowsFn rows_kernel_avxvnni(DType dtype);
RowsFn rows_kernel_avx512vnni(DType dtype);
// The multi-row kernel matmul_f32_gguf runs for dtype and m activation rows under the current ISA
// selection, or null.
RowsFn rows_kernel_best(DType dtype, int64_t m);
// AMX Q4_K / Q5_K (five) product (gemm_gguf_q45k_16x16_amx.cpp; x86-64 GCC builds with AVX2 code,
// call only when the ISA selection includes amx): c[i * ldc + j] for the m activation rows (q8_K
// blocks, act_bytes apart) and weight rows [j0, j1) (w_row bytes apart), nb blocks each; the
// scalar twin's bits. Supported for m > 1 and K <= 8192.
bool gemm_q45k_amx_supports(int64_t m, int64_t k);
// AVX-512 VNNI product for the 32-element types q8_0, q4_0, q5_0, q4_1, q5_1
// (gemm_gguf_legacy_16x8_avx512vnni.cpp; x86-64 GCC builds with AVX2 code, call only when the ISA
// selection includes avx512vnni): c[i * ldc + j] for the m activation rows (q8a blocks, act_bytes
// apart) and weight rows [j0, j1) (w_row bytes apart), nb blocks each; the scalar twin's bits.
// Worth it from kLegacyTileRows activation rows (the weights are unpacked once per call).
constexpr int64_t kLegacyTileRows = 8;
void gemm_gguf_legacy_16x8_avx512vnni(DType dtype, const uint8_t* w, size_t w_row, int64_t j0,
                                      int64_t j1, const uint8_t* act, size_t act_bytes, int64_t m,
                                      int64_t nb, float* c, int64_t ldc);
// Its AVX2 side (gemm_gguf_legacy_8x4_avx2.cpp) for the types whose values fit maddubs (q4_0,
// q5_0, q4_1, q5_1; q8_0 keeps the 4-row kernel): the same arguments and bits.
bool gemm_gguf_legacy_8x4_avx2_supports(DType dtype);
void gemm_gguf_legacy_8x4_avx2(DType dtype, const uint8_t* w, size_t w_row, int64_t j0, int64_t j1,
                               const uint8_t* act, size_t act_bytes, int64_t m, int64_t nb,
                               float* c, int64_t ldc);
void gemm_q45k_16x16_amx(bool five, const uint8_t* w, size_t w_row, int64_t j0, int64_t j1,
                         const uint8_t* act, size_t act_bytes, int64_t m, int64_t nb, float* c,
                         int64_t ldc);

inline float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes: bytes 0-3
// hold scales 0-3 (low 6 bits), bytes 4-7 mins 0-3; bytes 8-11 hold the low nibbles of scales 4-7
// (low nibble) and mins 4-7 (high nibble), whose top 2 bits are the top bits of bytes 0-3 / 4-7.
inline void kquant_scale_min(const uint8_t* s, int j, int* scale, int* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Q3_K: the 16 signed 6-bit scales (stored + 32) from the 12 packed bytes: low nibbles of bytes
// 0-7 are scales 0-7, high nibbles scales 8-15; bytes 8-11 hold the top 2 bits, byte 8+i giving
// scales i, 4+i, 8+i, 12+i at bit pairs 0, 2, 4, 6.
inline void q3k_scales(const uint8_t* s, int8_t out[16]) {
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? (s[i] & 0x0F) : (s[i - 8] >> 4);
    const int high = (s[8 + (i % 4)] >> (2 * (i / 4))) & 3;
    out[i] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

}  // namespace einfer::gguf_detail
