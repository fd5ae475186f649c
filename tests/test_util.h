// Small helpers many suites share: a deterministic random source, float comparisons, and
// 64-byte aligned memory for arenas and kernel scratch.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

namespace einfer_test {

// xorshift64: the same sequence on every platform (no <random> distribution differences).
struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s >> 11);
  }
  // Uniform in [-1, 1) from the top 24 bits of next().
  float uniform() { return static_cast<float>(next() & 0xFFFFFF) / 16777216.f * 2.f - 1.f; }
  std::vector<float> vec(size_t n) {
    std::vector<float> v(n);
    for (auto& x : v) x = uniform();
    return v;
  }
};

// Largest |a[i] - b[i]| (the vectors must have one length).
inline float max_diff(const float* a, const float* b, size_t n) {
  float m = 0.f;
  for (size_t i = 0; i < n; ++i) m = std::fmax(m, std::fabs(a[i] - b[i]));
  return m;
}
inline float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  return max_diff(a.data(), b.data(), a.size());
}

// Largest |v[i]|.
inline float max_abs(const std::vector<float>& v) {
  float m = 0.f;
  for (float x : v) m = std::fmax(m, std::fabs(x));
  return m;
}

// `bytes` of memory starting on a 64-byte boundary (what arenas and kernel scratch want).
struct AlignedMemory {
  std::vector<unsigned char> storage;
  void* base = nullptr;
  size_t bytes = 0;
  explicit AlignedMemory(size_t n) : storage(n + 64), bytes(n) {
    base = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
  }
  // Moves keep the storage (and so `base`) in place; a copy would not.
  AlignedMemory(AlignedMemory&&) = default;
  AlignedMemory& operator=(AlignedMemory&&) = default;
  AlignedMemory(const AlignedMemory&) = delete;
  AlignedMemory& operator=(const AlignedMemory&) = delete;
};

}  // namespace einfer_test
