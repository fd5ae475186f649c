// crc32_ieee_pclmul (see crc32.h): x86-64 CRC-32 by carry-less multiplication. Four 128-bit lanes
// are folded forward 64 bytes per step with PCLMULQDQ, then merged into one lane and folded 16
// bytes at a time; the last 128-bit remainder and the tail go through slicing-by-8, which avoids a
// Barrett reduction. Built with a target attribute (the x86-64-v3 baseline has no PCLMULQDQ) and
// only called after crc32_pclmul_available().
#include "runtime/crc32.h"

#if defined(EINFER_CRC32_PCLMUL)

#include <immintrin.h>

namespace einfer {

namespace {

// Folding constants for the reflected polynomial 0xEDB88320 (x^n mod P, bit-reflected, shifted
// by one): lo/hi for folding 512 bits, and for folding 128 bits.
constexpr long long kFold512Lo = 0x154442bd4LL, kFold512Hi = 0x1c6e41596LL;
constexpr long long kFold128Lo = 0x1751997d0LL, kFold128Hi = 0x0ccaa009eLL;

__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i load(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

}  // namespace

bool crc32_pclmul_available() {
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

__attribute__((target("pclmul,sse4.1"))) uint32_t crc32_ieee_pclmul(const void* data, size_t size,
                                                                    uint32_t crc) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  if (size < 64) return crc32_ieee_slice8(p, size, crc);
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  size -= 64;
  const __m128i k512 = _mm_set_epi64x(kFold512Hi, kFold512Lo);
  for (; size >= 64; size -= 64, p += 64) {
    x0 = fold(x0, k512, load(p));
    x1 = fold(x1, k512, load(p + 16));
    x2 = fold(x2, k512, load(p + 32));
    x3 = fold(x3, k512, load(p + 48));
  }
  const __m128i k128 = _mm_set_epi64x(kFold128Hi, kFold128Lo);
  __m128i x = fold(x0, k128, x1);
  x = fold(x, k128, x2);
  x = fold(x, k128, x3);
  for (; size >= 16; size -= 16, p += 16) x = fold(x, k128, load(p));
  // x is now congruent to the whole message so far: its CRC from a zero register (~0xFFFFFFFF)
  // is the running CRC, which the tail continues.
  alignas(16) unsigned char rest[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(rest), x);
  crc = crc32_ieee_slice8(rest, 16, 0xFFFFFFFFu);
  return crc32_ieee_slice8(p, size, crc);
}

}  // namespace einfer

#endif
