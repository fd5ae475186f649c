// Private to kernels/gguf/ (x86, AVX2 at least): the fifth bits of q5_0 / q5_1 blocks spread to
// their elements' bytes, shared by the 4-row kernels (gemm_gguf_q8_4x4_x86.inc) and the AVX2 lane
// tiles (gemm_gguf_legacy_8x4_avx2.cpp). Internal linkage: each including file compiles it for its
// own ISA (the same function under an AVX-512 target must not stand in for the AVX2 one).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace einfer::gguf_detail {
namespace {

// Bytes 0xFF where bit e of `bits` is set, element e in byte e (32 elements).
inline __m256i bytes_from_bits(uint32_t bits) {
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101,
                                             0x0202020202020202, 0x0303030303030303));
  const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
}

}  // namespace
}  // namespace einfer::gguf_detail
