// crc32_ieee_pclmul (see crc32.h): x86-64 CRC-32 by carry-less multiplication. Four 128-bit lanes
// are folded forward 64 bytes per step with PCLMULQDQ (or, where the CPU has VPCLMULQDQ and
// AVX-512, sixteen lanes in four zmm registers 256 bytes per step), then merged into one lane and
// folded 16 bytes at a time; the last 128-bit remainder and the tail go through slicing-by-8, which
// avoids a Barrett reduction. Built with a target attribute (the x86-64-v3 baseline has no
// PCLMULQDQ) and only called after crc32_pclmul_available().
#include "runtime/crc32.h"

#if defined(EINFER_CRC32_PCLMUL)

#include <immintrin.h>

// The 512-bit path (VPCLMULQDQ on zmm) needs GCC: clang 14 rejects some of these target names.
#if defined(__GNUC__) && !defined(__clang__)
#define EINFER_CRC32_VPCLMUL 1
#endif

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

// The message from p on (size >= 64 bytes), with `crc` so far, folded into 128 bits by four
// 128-bit lanes; p and size advance past the bytes folded.
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold_lanes_128(const unsigned char** pp,
                                                                       size_t* size, uint32_t crc) {
  const unsigned char* p = *pp;
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(~crc)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  *size -= 64;
  const __m128i k512 = _mm_set_epi64x(kFold512Hi, kFold512Lo);
  for (; *size >= 64; *size -= 64, p += 64) {
    x0 = fold(x0, k512, load(p));
    x1 = fold(x1, k512, load(p + 16));
    x2 = fold(x2, k512, load(p + 32));
    x3 = fold(x3, k512, load(p + 48));
  }
  const __m128i k128 = _mm_set_epi64x(kFold128Hi, kFold128Lo);
  __m128i x = fold(x0, k128, x1);
  x = fold(x, k128, x2);
  *pp = p;
  return fold(x, k128, x3);
}

#if defined(EINFER_CRC32_VPCLMUL)
// GCC 12's 512-bit intrinsics pass an undefined vector as the unused merge operand, which
// -W(maybe-)uninitialized reports inside the header (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Folding 2048 bits: four zmm registers of four 128-bit lanes each move 256 bytes per step.
constexpr long long kFold2048Lo = 0x11542778aLL, kFold2048Hi = 0x1322d1430LL;

#define EINFER_CRC32_ZMM_TARGET target("vpclmulqdq,avx512f,avx512bw,avx512vl,pclmul,sse4.1")

__attribute__((EINFER_CRC32_ZMM_TARGET)) inline __m512i fold_zmm(__m512i x, __m512i k,
                                                                 __m512i next) {
  const __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
  const __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
  return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);  // lo ^ hi ^ next
}

// fold_lanes_128 for size >= 256 on zmm: 256 bytes per step, then 64, then the four lanes of the
// last register merged as the 128-bit path merges its four registers.
__attribute__((EINFER_CRC32_ZMM_TARGET, noinline)) __m128i fold_lanes_512(const unsigned char** pp,
                                                                          size_t* size,
                                                                          uint32_t crc) {
  const unsigned char* p = *pp;
  const __m512i first =
      _mm512_inserti32x4(_mm512_setzero_si512(), _mm_cvtsi32_si128(static_cast<int>(~crc)), 0);
  __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(p), first);
  __m512i x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128),
          x3 = _mm512_loadu_si512(p + 192);
  p += 256;
  *size -= 256;
  const __m512i k2048 = _mm512_set_epi64(kFold2048Hi, kFold2048Lo, kFold2048Hi, kFold2048Lo,
                                         kFold2048Hi, kFold2048Lo, kFold2048Hi, kFold2048Lo);
  for (; *size >= 256; *size -= 256, p += 256) {
    x0 = fold_zmm(x0, k2048, _mm512_loadu_si512(p));
    x1 = fold_zmm(x1, k2048, _mm512_loadu_si512(p + 64));
    x2 = fold_zmm(x2, k2048, _mm512_loadu_si512(p + 128));
    x3 = fold_zmm(x3, k2048, _mm512_loadu_si512(p + 192));
  }
  const __m512i k512 = _mm512_set_epi64(kFold512Hi, kFold512Lo, kFold512Hi, kFold512Lo, kFold512Hi,
                                        kFold512Lo, kFold512Hi, kFold512Lo);
  __m512i x = fold_zmm(x0, k512, x1);
  x = fold_zmm(x, k512, x2);
  x = fold_zmm(x, k512, x3);
  for (; *size >= 64; *size -= 64, p += 64) x = fold_zmm(x, k512, _mm512_loadu_si512(p));
  const __m128i k128 = _mm_set_epi64x(kFold128Hi, kFold128Lo);
  __m128i y = fold(_mm512_extracti32x4_epi32(x, 0), k128, _mm512_extracti32x4_epi32(x, 1));
  y = fold(y, k128, _mm512_extracti32x4_epi32(x, 2));
  *pp = p;
  return fold(y, k128, _mm512_extracti32x4_epi32(x, 3));
}
#pragma GCC diagnostic pop
#endif

}  // namespace

bool crc32_vpclmul_available() {
#if defined(EINFER_CRC32_VPCLMUL)
  // As crc32_pclmul_available: GCC's CPU model counts AVX-512 only when the OS saves its state.
  return crc32_pclmul_available() && __builtin_cpu_supports("vpclmulqdq") &&
         __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

bool crc32_pclmul_available() {
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

__attribute__((target("pclmul,sse4.1"))) uint32_t crc32_ieee_pclmul(const void* data, size_t size,
                                                                    uint32_t crc) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  if (size < 64) return crc32_ieee_slice8(p, size, crc);
  __m128i x;
#if defined(EINFER_CRC32_VPCLMUL)
  if (size >= 256 && crc32_vpclmul_available())
    x = fold_lanes_512(&p, &size, crc);
  else
#endif
    x = fold_lanes_128(&p, &size, crc);
  const __m128i k128 = _mm_set_epi64x(kFold128Hi, kFold128Lo);
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
