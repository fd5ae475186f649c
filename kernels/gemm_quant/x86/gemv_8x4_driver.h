// Private to kernels/gemm_quant/: the tile loop of the x86 decode GEMVs of the 8x4 weight layout
// (runtime/layout.h, WeightLayout::i8x4; gemv_q8_q4_8x4_avx2.cpp, gemv_q8_q4_8x4_avx512vnni.cpp),
// bit-identical to gemm_q8/q4_interleaved_scalar.
//
// A block of the layout (one tile of 8 rows, one group) is 8 f32 scales, then the group's values
// as [chunk][8 rows][4 bytes]: one 256-bit load is 4 bytes of each of the 8 rows, so int32 lane r
// of a dot product with the chunk's 4 activation bytes broadcast is row r's partial sum, and a
// group's chunks add up lane by lane into the 8 rows' exact group sums, with no horizontal step.
// q4 byte b of a row's chunk c holds element 4c + b in its low nibble and G/2 + 4c + b in its high
// nibble. The activations come in ActOrder::single blocks (gemm_quant_internal.h): per group a
// header [sa, -8 sum(a), -128 sum(a), 0] and the group's G values.
//
// Per group the ISA file's Dot::group<kG>(values, activation block, G) returns the exact int32
// sums of the tile's 8 rows; kG is the group size when known at compile time (32, 64: the chunk
// loops unroll), else 0. The float step is the twin's, lane by lane: acc = acc + float(isum) * (sa
// * sw), a multiply and an add, two roundings (the includers are compiled with -ffp-contract=off,
// kernels/CMakeLists.txt). The last tile of a column range may hold fewer than 8 real rows: only
// those are stored.
//
// Everything here has internal linkage: each including file compiles it for its own ISA.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {
namespace {

inline __m256i load32_8x4(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
// The 4 bytes at p in every int32 lane.
inline __m256i broadcast4(const void* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// acc + float(isum) * (sa * sw) in 8 lanes: the scalar twin's group step (group_fma on x86).
inline __m256 group_step_8x4(__m256 acc, __m256i isum, const int8_t* ab, const uint8_t* block) {
  const __m256 s = _mm256_mul_ps(_mm256_broadcast_ss(reinterpret_cast<const float*>(ab)),
                                 _mm256_loadu_ps(reinterpret_cast<const float*>(block)));
  return _mm256_add_ps(acc, _mm256_mul_ps(_mm256_cvtepi32_ps(isum), s));
}

inline void store_rows_8x4(float* c, __m256 acc, int64_t live) {
  if (live >= 8) {
    _mm256_storeu_ps(c, acc);
  } else {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(live)),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_ps(c, mask, acc);
  }
}

// C[0, n) of the m == 1 product, one tile of 8 rows a pass (the last may hold fewer real rows);
// kG the group size when known at compile time, else 0 and p.group. kQ4: 4 G (q4) or 8 G (q8)
// value bytes a block.
//
// One tile a pass and no software prefetch: the weights are then one sequential stream, which the
// hardware prefetchers follow well. Two tiles a pass (q4's two sharing the activation broadcasts)
// are two streams a tile apart, which they follow badly: with software prefetch into L2 at the
// pass's pace they were 10% faster from L3 (VNNI q4) but 25-40% slower from DRAM, and a software
// prefetch of the one stream cost 25-40% from DRAM and L3 alike. Measured (one thread, Zen 4, CPU
// time, AVX2 and AVX-512 VNNI alike) on 32000 x 768 (8 copies cycled: DRAM, 2 MB or 4 KB pages)
// and 2048 x 768 (8 copies: L3): q8 from DRAM 1200 -> 850 us (rows 900-1000), q4 620 -> 450 us
// (rows 510-575); from L3 q8 23 -> 21 us (rows 29), q4 16.6 -> 18.2 us (rows 23).
template <class Dot, bool kQ4, int32_t kG>
void gemv_8x4_tiles(const QuantGemm& p) {
  const int32_t g = kG > 0 ? kG : p.group;
  const size_t block = 32 + static_cast<size_t>(kQ4 ? 4 : 8) * static_cast<size_t>(g);
  const uint8_t* b = p.w;
  for (int64_t j0 = 0; j0 < p.n; j0 += 8) {
    const int8_t* ab = p.qa;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t gi = 0; gi < p.groups; ++gi, b += block, ab += p.act_block_bytes)
      acc = group_step_8x4(acc, Dot::template group<kG>(b + 32, ab, g), ab, b);
    store_rows_8x4(p.c + j0, acc, p.n - j0);
  }
}

template <class Dot, bool kQ4>
void gemv_8x4_run(const QuantGemm& p) {
  switch (p.group) {
    case 32:
      return gemv_8x4_tiles<Dot, kQ4, 32>(p);
    case 64:
      return gemv_8x4_tiles<Dot, kQ4, 64>(p);
    default:
      return gemv_8x4_tiles<Dot, kQ4, 0>(p);
  }
}

}  // namespace
}  // namespace einfer::quant_detail
