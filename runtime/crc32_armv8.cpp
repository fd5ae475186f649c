// crc32_ieee_armv8 (see crc32.h): aarch64 CRC32X/CRC32B instructions, which implement the
// IEEE polynomial 0xEDB88320 (the CRC32C* ones are Castagnoli), 8 bytes per instruction. One
// dependent chain: simple, and already several times the table paths (PMULL folding would add more
// on cores with the crypto extension; not done yet).
#include "runtime/crc32.h"

#if defined(EINFER_CRC32_ARMV8)

#include <arm_acle.h>

#include <cstring>

#if !defined(__ARM_FEATURE_CRC32)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
// Compiled for the CRC extension whatever the build's baseline; called after the HWCAP check.
#define EINFER_CRC_TARGET __attribute__((target("+crc")))
#else
#define EINFER_CRC_TARGET
#endif

namespace einfer {

bool crc32_armv8_available() {
#if defined(__ARM_FEATURE_CRC32)
  return true;
#else
  return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

EINFER_CRC_TARGET uint32_t crc32_ieee_armv8(const void* data, size_t size, uint32_t crc) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (; size > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0; --size) crc = __crc32b(crc, *p++);
  for (; size >= 32; size -= 32, p += 32) {
    uint64_t v[4];
    std::memcpy(v, p, sizeof v);
    crc = __crc32d(crc, v[0]);
    crc = __crc32d(crc, v[1]);
    crc = __crc32d(crc, v[2]);
    crc = __crc32d(crc, v[3]);
  }
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    crc = __crc32d(crc, v);
  }
  for (; size > 0; --size) crc = __crc32b(crc, *p++);
  return ~crc;
}

}  // namespace einfer

#endif
