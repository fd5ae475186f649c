// Row quantization (q8, q4) round trips and IEEE binary16 conversion against numpy's float16.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/quant/quant.h"

using namespace einfer;

namespace {

float lcg_uniform(uint32_t& s) {
  s = s * 1664525u + 1013904223u;
  return static_cast<float>(s >> 8) / 16777216.f * 2.f - 1.f;
}

}  // namespace

TEST_CASE("quant: q8 and q4 round trips stay within scale / 2, zero stays zero") {
  uint32_t seed = 7;
  for (int32_t group : {32, 64, 48}) {
    for (int64_t k : {1, 31, 32, 33, 100, 172, 257}) {
      CAPTURE(group);
      CAPTURE(k);
      std::vector<float> x(static_cast<size_t>(k));
      for (int64_t e = 0; e < k; ++e) x[e] = (e % 5 == 0) ? 0.f : lcg_uniform(seed) * 4.f;
      if (k > 40) std::fill(x.begin() + 32, x.begin() + 40, 0.f);  // a partly zero group
      const int64_t groups = (k + group - 1) / group;
      std::vector<int8_t> q8(static_cast<size_t>(k));
      std::vector<uint8_t> q4(static_cast<size_t>((k + 1) / 2));
      std::vector<float> s8(static_cast<size_t>(groups)), s4(s8), y8(x), y4(x);
      quantize_row_q8(x.data(), k, group, q8.data(), s8.data());
      quantize_row_q4(x.data(), k, group, q4.data(), s4.data());
      dequantize_row_q8(q8.data(), s8.data(), k, group, y8.data());
      dequantize_row_q4(q4.data(), s4.data(), k, group, y4.data());
      for (int64_t g = 0; g < groups; ++g) {
        float amax = 0.f;
        for (int64_t e = g * group; e < k && e < (g + 1) * group; ++e) {
          amax = std::fmax(amax, std::fabs(x[e]));
        }
        CHECK(s8[g] == amax / 127.f);
        CHECK(s4[g] == amax / 7.f);
      }
      for (int64_t e = 0; e < k; ++e) {
        CAPTURE(e);
        const float sc8 = s8[e / group], sc4 = s4[e / group];
        // 1e-6 relative slack: x * (1 / scale) is itself rounded before rounding to an integer.
        CHECK(std::fabs(x[e] - y8[e]) <= sc8 * 0.5f + std::fabs(x[e]) * 1e-6f);
        CHECK(std::fabs(x[e] - y4[e]) <= sc4 * 0.5f + std::fabs(x[e]) * 1e-6f);
        CHECK(q8[e] >= -127);
        if (x[e] == 0.f) {
          CHECK(q8[e] == 0);
          CHECK(y4[e] == 0.f);
        }
      }
      if (k % 2) CHECK((q4.back() >> 4) == 8);  // padding nibble holds the zero value
    }
  }
}

TEST_CASE("quant: f32 <-> f16 matches numpy float16 (ties, subnormals, inf, nan)") {
  const char* path = EINFER_TEST_DATA_DIR "/quant/f16_cases.bin";
  std::FILE* f = std::fopen(path, "rb");
  REQUIRE_MESSAGE(f != nullptr, "missing " << path << " (run tests/gen/gen_f16.py)");
  char magic[4];
  uint32_t n = 0;
  REQUIRE(std::fread(magic, 1, 4, f) == 4);
  REQUIRE(std::memcmp(magic, "EF16", 4) == 0);
  REQUIRE(std::fread(&n, 4, 1, f) == 1);
  REQUIRE(n > 500);
  std::vector<uint32_t> in(n), back(n);
  std::vector<uint16_t> half(n);
  REQUIRE(std::fread(in.data(), 4, n, f) == n);
  REQUIRE(std::fread(half.data(), 2, n, f) == n);
  REQUIRE(std::fread(back.data(), 4, n, f) == n);
  std::fclose(f);
  int nans = 0, subnormals = 0;
  for (uint32_t i = 0; i < n; ++i) {
    float x;
    std::memcpy(&x, &in[i], 4);
    CAPTURE(i);
    CAPTURE(x);
    const uint16_t h = f32_to_f16(x);
    const float y = f16_to_f32(half[i]);
    uint32_t ybits;
    std::memcpy(&ybits, &y, 4);
    if (std::isnan(x)) {
      // NaN payloads are implementation-defined: require a NaN of the same sign.
      ++nans;
      CHECK((h & 0x7C00u) == 0x7C00u);
      CHECK((h & 0x03FFu) != 0u);
      CHECK((h & 0x8000u) == (half[i] & 0x8000u));
      CHECK(std::isnan(y));
      continue;
    }
    if ((half[i] & 0x7C00u) == 0 && (half[i] & 0x03FFu) != 0) ++subnormals;
    CHECK(h == half[i]);
    CHECK(ybits == back[i]);
  }
  CHECK(nans >= 3);
  CHECK(subnormals >= 10);
  // Every finite half survives f16 -> f32 -> f16 unchanged.
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    if ((h & 0x7C00u) == 0x7C00u && (h & 0x03FFu)) continue;
    CHECK(f32_to_f16(f16_to_f32(static_cast<uint16_t>(h))) == h);
  }
}
