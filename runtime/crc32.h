// CRC-32 (IEEE 802.3, the zlib/PNG CRC) implementations behind crc32_ieee (runtime/format.h).
//
// crc32_ieee picks, at compile time, the fastest path this build has:
//   crc32_ieee_pclmul   x86-64 carry-less folding (PCLMULQDQ, on zmm with VPCLMULQDQ), used when
//                       the CPU reports it;
//   crc32_ieee_armv8    aarch64 CRC32 instructions (__ARM_FEATURE_CRC32, or on Linux compiled
//                       with a target attribute and used when HWCAP_CRC32 reports them: the
//                       armv8-a baseline of dispatching builds lacks them, Cortex-A53/A72 have
//                       them);
//   crc32_ieee_slice8   slicing-by-8 tables (8 KB), the portable fallback;
//   crc32_ieee_nibble   a 16-entry table (64 bytes) for microcontrollers (M profile).
// All are bit-identical to the byte-at-a-time reference scalar::crc32_ieee_bytewise. Every
// function continues from `crc` like crc32_ieee (pass 0 to start).
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer {

// Name of the path crc32_ieee takes on this machine, e.g. "crc32_ieee_pclmul".
const char* crc32_ieee_impl_name();

uint32_t crc32_ieee_slice8(const void* data, size_t size, uint32_t crc);
uint32_t crc32_ieee_nibble(const void* data, size_t size, uint32_t crc);

#if defined(__x86_64__) && EINFER_SIMD
#define EINFER_CRC32_PCLMUL 1
// True when the CPU has PCLMULQDQ and SSE4.1 (crc32_ieee_pclmul may only run then).
bool crc32_pclmul_available();
// True when crc32_ieee_pclmul folds on zmm registers (VPCLMULQDQ, AVX-512 with ZMM state; GCC
// builds).
bool crc32_vpclmul_available();
uint32_t crc32_ieee_pclmul(const void* data, size_t size, uint32_t crc);
#endif

#if defined(__aarch64__) && (defined(__ARM_FEATURE_CRC32) || defined(__linux__))
#define EINFER_CRC32_ARMV8 1
// True when the CPU has the CRC32 instructions (crc32_ieee_armv8 may only run then).
bool crc32_armv8_available();
uint32_t crc32_ieee_armv8(const void* data, size_t size, uint32_t crc);
#endif

namespace scalar {
// The reference: one 256-entry table lookup per byte (the loader's CRC before the fast paths).
uint32_t crc32_ieee_bytewise(const void* data, size_t size, uint32_t crc);
}  // namespace scalar

}  // namespace einfer
