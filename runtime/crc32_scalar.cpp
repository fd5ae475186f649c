// Portable CRC-32 paths (see crc32.h): slicing-by-8, a 16-entry nibble table for microcontrollers,
// and crc32_ieee, which picks the build's fastest path.
#include <cstring>

#include "runtime/crc32.h"
#include "runtime/format.h"

namespace einfer {

namespace {

constexpr uint32_t kPoly = 0xEDB88320u;  // reflected IEEE polynomial

// Tables built at compile time (no static constructor). t[0] is the classic byte table; t[s][b]
// is the CRC of byte b followed by s zero bytes, which lets 8 bytes be folded in one step.
struct Slice8Tables {
  uint32_t t[8][256];
  constexpr Slice8Tables() : t() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? (kPoly ^ (c >> 1)) : (c >> 1);
      t[0][i] = c;
    }
    for (int s = 1; s < 8; ++s)
      for (uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFu];
  }
};

#if !(defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M')
constexpr Slice8Tables kSlice8{};

uint32_t load_le32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
#endif

struct NibbleTable {
  uint32_t v[16];
  constexpr NibbleTable() : v() {
    for (uint32_t i = 0; i < 16; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 4; ++k) c = (c & 1u) ? (kPoly ^ (c >> 1)) : (c >> 1);
      v[i] = c;
    }
  }
};
constexpr NibbleTable kNibble{};

}  // namespace

#if !(defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M')
uint32_t crc32_ieee_slice8(const void* data, size_t size, uint32_t crc) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  const auto& t = kSlice8.t;
  crc = ~crc;
  for (; size > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0; --size)
    crc = t[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
  for (; size >= 8; size -= 8, p += 8) {
    const uint32_t lo = load_le32(p) ^ crc, hi = load_le32(p + 4);
    crc = t[7][lo & 0xFFu] ^ t[6][(lo >> 8) & 0xFFu] ^ t[5][(lo >> 16) & 0xFFu] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFFu] ^ t[2][(hi >> 8) & 0xFFu] ^ t[1][(hi >> 16) & 0xFFu] ^ t[0][hi >> 24];
  }
  for (; size > 0; --size) crc = t[0][(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}
#else
// Microcontrollers: the 8 KB of tables would cost more flash than the speed is worth.
uint32_t crc32_ieee_slice8(const void* data, size_t size, uint32_t crc) {
  return crc32_ieee_nibble(data, size, crc);
}
#endif

uint32_t crc32_ieee_nibble(const void* data, size_t size, uint32_t crc) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) {
    crc ^= p[i];
    crc = kNibble.v[crc & 0xFu] ^ (crc >> 4);
    crc = kNibble.v[crc & 0xFu] ^ (crc >> 4);
  }
  return ~crc;
}

const char* crc32_ieee_impl_name() {
#if defined(EINFER_CRC32_PCLMUL)
  if (crc32_pclmul_available())
    return crc32_vpclmul_available() ? "crc32_ieee_pclmul (vpclmulqdq zmm)" : "crc32_ieee_pclmul";
#endif
#if defined(EINFER_CRC32_ARMV8)
  if (crc32_armv8_available()) return "crc32_ieee_armv8";
#endif
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
  return "crc32_ieee_nibble";
#else
  return "crc32_ieee_slice8";
#endif
}

uint32_t crc32_ieee(const void* data, size_t size, uint32_t crc) {
#if defined(EINFER_CRC32_PCLMUL)
  if (crc32_pclmul_available()) return crc32_ieee_pclmul(data, size, crc);
#endif
#if defined(EINFER_CRC32_ARMV8)
  if (crc32_armv8_available()) return crc32_ieee_armv8(data, size, crc);
#endif
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
  return crc32_ieee_nibble(data, size, crc);
#else
  return crc32_ieee_slice8(data, size, crc);
#endif
}

}  // namespace einfer
