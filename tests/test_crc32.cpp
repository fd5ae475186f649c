// CRC-32 paths (runtime/crc32.h) against the bytewise reference and zlib's published check value,
// over random lengths, alignments and continuation points.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/crc32.h"
#include "runtime/format.h"

using namespace einfer;

namespace {

// Every path this build has, by name.
struct Path {
  const char* name;
  uint32_t (*fn)(const void*, size_t, uint32_t);
};

std::vector<Path> paths() {
  std::vector<Path> v = {
      {"slice8", crc32_ieee_slice8},
      {"nibble", crc32_ieee_nibble},
      {"crc32_ieee", [](const void* d, size_t n, uint32_t c) { return crc32_ieee(d, n, c); }}};
#if defined(EINFER_CRC32_PCLMUL)
  if (crc32_pclmul_available()) v.push_back({"pclmul", crc32_ieee_pclmul});
#endif
#if defined(EINFER_CRC32_ARMV8)
  if (crc32_armv8_available()) v.push_back({"armv8", crc32_ieee_armv8});
#endif
  return v;
}

}  // namespace

TEST_CASE("crc32: every path gives zlib's check value") {
  for (const Path& p : paths()) {
    INFO(p.name);
    CHECK(p.fn("123456789", 9, 0) == 0xCBF43926u);
    CHECK(p.fn("", 0, 0) == 0u);
    CHECK(p.fn("", 0, 0x12345678u) == 0x12345678u);
  }
  CHECK(scalar::crc32_ieee_bytewise("123456789", 9, 0) == 0xCBF43926u);
  // 1000 bytes of 'a' (Python: zlib.crc32(b"a" * 1000)).
  const std::vector<unsigned char> a(1000, 'a');
  CHECK(scalar::crc32_ieee_bytewise(a.data(), a.size(), 0) == 0x9A38DA03u);
  MESSAGE("crc32_ieee uses " << std::string(crc32_ieee_impl_name()));
}

TEST_CASE("crc32: fast paths match the bytewise reference over lengths, offsets, splits") {
  std::mt19937 rng(15);
  std::vector<unsigned char> buf(70000 + 64);
  for (auto& b : buf) b = static_cast<unsigned char>(rng());
  std::uniform_int_distribution<size_t> offset(0, 63);
  std::uniform_int_distribution<size_t> small(0, 300);
  std::uniform_int_distribution<size_t> large(0, 70000);
  for (const Path& p : paths()) {
    INFO(p.name);
    for (int trial = 0; trial < 400; ++trial) {
      const size_t off = offset(rng);
      const size_t len = trial % 2 ? small(rng) : large(rng);
      const uint32_t seed = trial % 3 ? static_cast<uint32_t>(rng()) : 0u;
      const uint32_t want = scalar::crc32_ieee_bytewise(buf.data() + off, len, seed);
      REQUIRE(p.fn(buf.data() + off, len, seed) == want);
      const size_t cut = len ? rng() % len : 0;
      REQUIRE(p.fn(buf.data() + off + cut, len - cut, p.fn(buf.data() + off, cut, seed)) == want);
    }
  }
}
