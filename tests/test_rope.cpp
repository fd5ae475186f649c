// RoPE (both pair layouts, two thetas) and the sinusoidal encoding against numpy vectors
// (tests/gen/gen_attention.py); the table path against the beyond-table (streaming) path.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/rope/rope.h"
#include "npy_reader.h"
#include "tests/test_util.h"

using namespace einfer;
using einfer_test::attention_data;
using einfer_test::load_npy;

namespace {
using einfer_test::max_diff;
}  // namespace

TEST_CASE("rope: interleaved and half-split rotations match numpy (table and beyond-table)") {
  const auto x = load_npy(attention_data("rope_x"));
  const auto pos = load_npy(attention_data("rope_pos"));
  REQUIRE(x.ok);
  REQUIRE(pos.ok);
  const int32_t P = static_cast<int32_t>(x.shape[0]), H = static_cast<int32_t>(x.shape[1]),
                k = static_cast<int32_t>(x.shape[2]);
  for (int theta : {10000, 500000}) {
    for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half_split}) {
      const char* lname = layout == RopeLayout::interleaved ? "interleaved" : "half_split";
      const auto want =
          load_npy(attention_data(std::string("rope_") + lname + "_theta" + std::to_string(theta)));
      REQUIRE(want.ok);
      // A table covering positions < 128: positions 0..100 use it, 2047 and 5000 go beyond.
      std::vector<double> mem((rope_table_bytes(k, 128) + 7) / 8);
      RopeTable table;
      REQUIRE(rope_table_init(&table, mem.data(), mem.size() * 8, k, 128, float(theta)).ok());
      for (int32_t j = 0; j < P; ++j) {
        std::vector<float> y(x.f32() + j * H * k, x.f32() + (j + 1) * H * k);
        rope_apply(table, layout, y.data(), H, pos.i64()[j]);
        INFO("layout " << lname << " theta " << theta << " pos " << pos.i64()[j]);
        // float32 cos/sin and products: error grows with |angle| only through float rounding of
        // the rotated values (angles are exact doubles), so a few ulp of |x| ~ 4.
        CHECK(max_diff(y.data(), want.f32() + j * H * k, y.size()) < 2e-6f * 4);
      }
    }
  }
}

TEST_CASE("rope: positions inside the table equal the on-the-fly path bit for bit") {
  const int32_t k = 64, H = 2;
  std::vector<double> big((rope_table_bytes(k, 300) + 7) / 8),
      small((rope_table_bytes(k, 4) + 7) / 8);
  RopeTable tb, ts;
  REQUIRE(rope_table_init(&tb, big.data(), big.size() * 8, k, 300, 10000.f).ok());
  REQUIRE(rope_table_init(&ts, small.data(), small.size() * 8, k, 4, 10000.f).ok());
  std::vector<float> x(H * k);
  for (int i = 0; i < H * k; ++i) x[i] = std::sin(0.37f * i) * 3.f;
  for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half_split}) {
    for (int64_t p : {0, 3, 4, 5, 77, 299}) {
      std::vector<float> a = x, b = x;
      rope_apply(tb, layout, a.data(), H, p);
      rope_apply(ts, layout, b.data(), H, p);
      CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("rope: rope_apply equals its scalar twin bit for bit (table and beyond-table)") {
  // Head sizes with and without a SIMD remainder; positions inside and beyond the table.
  for (int32_t k : {8, 12, 64, 80, 128}) {
    const int32_t H = 3;
    std::vector<double> mem((rope_table_bytes(k, 40) + 7) / 8);
    RopeTable t;
    REQUIRE(rope_table_init(&t, mem.data(), mem.size() * 8, k, 40, 500000.f).ok());
    std::vector<float> x(size_t(H) * k);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.91f * float(i)) * 5.f - 0.3f;
    for (RopeLayout layout : {RopeLayout::interleaved, RopeLayout::half_split}) {
      for (int64_t p : {0, 1, 17, 39, 40, 1000}) {
        std::vector<float> fast = x, ref = x;
        rope_apply(t, layout, fast.data(), H, p);
        scalar::rope_apply(t, layout, ref.data(), H, p);
        INFO("k " << k << " layout " << int(layout) << " pos " << p);
        CHECK(std::memcmp(fast.data(), ref.data(), fast.size() * sizeof(float)) == 0);
        if (p != 0) CHECK(std::memcmp(fast.data(), x.data(), fast.size() * sizeof(float)) != 0);
      }
    }
  }
}

TEST_CASE("rope: bad arguments are rejected") {
  std::vector<double> mem(1024);
  RopeTable t;
  CHECK(rope_table_init(&t, mem.data(), mem.size() * 8, 7, 4, 10000.f).code ==
        StatusCode::invalid_argument);
  CHECK(rope_table_init(&t, mem.data(), mem.size() * 8, 8, 4, 0.f).code ==
        StatusCode::invalid_argument);
  CHECK(rope_table_init(&t, mem.data(), 16, 8, 4, 10000.f).code == StatusCode::out_of_memory);
  CHECK(rope_table_init(&t, nullptr, 0, 8, 4, 10000.f).code == StatusCode::out_of_memory);
}

TEST_CASE("rope: frequency factors divide each pair's frequency (llama.cpp rope_freqs)") {
  // ggml_rope_ext freq_factors: theta_i = pos * base^(-2i/d) / freq_factors[i]; after linear
  // scaling, which divides every frequency as well.
  const int32_t head = 8, positions = 40;
  std::vector<double> plain_mem(1024), scaled_mem(1024);
  RopeTable plain, scaled;
  RopeFrequencyScaling linear;
  linear.kind = 1;
  linear.factor = 2.0;
  REQUIRE(rope_table_init(&plain, plain_mem.data(), plain_mem.size() * 8, head, positions, 500.f,
                          linear)
              .ok());
  const float factors[4] = {1.f, 7.667385f, 8.f, 0.25f};
  RopeFrequencyScaling with = linear;
  with.freq_factors = factors;
  REQUIRE(rope_table_init(&scaled, scaled_mem.data(), scaled_mem.size() * 8, head, positions, 500.f,
                          with)
              .ok());
  for (int32_t i = 0; i < head / 2; ++i) {
    CHECK(scaled.inv_freq[i] == plain.inv_freq[i] / factors[i]);
    const double angle = 39.0 * plain.inv_freq[i] / factors[i];
    CHECK(std::fabs(scaled.cos[39 * head / 2 + i] - std::cos(angle)) < 1e-6);
    CHECK(std::fabs(scaled.sin[39 * head / 2 + i] - std::sin(angle)) < 1e-6);
  }
  for (float bad : {0.f, -1.f, NAN, INFINITY}) {
    float f[4] = {1.f, 1.f, bad, 1.f};
    with.freq_factors = f;
    CAPTURE(bad);
    CHECK(rope_table_init(&scaled, scaled_mem.data(), scaled_mem.size() * 8, head, positions, 500.f,
                          with)
              .code == StatusCode::invalid_argument);
  }
}

TEST_CASE("sinusoidal encoding matches numpy") {
  const auto x = load_npy(attention_data("sinusoidal_x"));
  const auto want = load_npy(attention_data("sinusoidal_out"));
  REQUIRE(x.ok);
  REQUIRE(want.ok);
  std::vector<float> y = x.to_f32();
  sinusoidal_encoding_add(y.data(), static_cast<int32_t>(x.shape[0]),
                          static_cast<int32_t>(x.shape[1]), 3);
  CHECK(max_diff(y.data(), want.f32(), y.size()) < 1e-6f);
}
