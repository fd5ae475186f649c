// scalar::crc32_ieee_bytewise (see crc32.h): the byte-at-a-time table CRC the loader used before
// the fast paths, kept as the reference they are tested and benchmarked against. Its own file, so
// firmware that never calls it does not link its table.
#include "runtime/crc32.h"

namespace einfer::scalar {

namespace {

struct ByteTable {
  uint32_t v[256];
  constexpr ByteTable() : v() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) ? (0xEDB88320u ^ (c >> 1)) : (c >> 1);
      v[i] = c;
    }
  }
};
constexpr ByteTable kByteTable{};

}  // namespace

uint32_t crc32_ieee_bytewise(const void* data, size_t size, uint32_t crc) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = kByteTable.v[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
  return ~crc;
}

}  // namespace einfer::scalar
