// Ring-buffer KV cache: slot formula, exact sizing, f32 round trip, int8 quantization bound,
// layer views and argument errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "models/kv_cache.h"
#include "tests/session_fixtures.h"

using namespace einfer;

TEST_CASE("kv cache: slot formula pins the sinks and rotates the rest") {
  KVCacheConfig c{1, 1, 4, 5, 2, DType::f32};
  // W = 5, S = 2: positions 0,1 pinned; 2,3,4 then 5->2, 6->3, 7->4, 8->2 ...
  const int32_t want[] = {0, 1, 2, 3, 4, 2, 3, 4, 2, 3, 4, 2};
  for (int p = 0; p < 12; ++p) CHECK(kv_cache_slot(c, p) == want[p]);
  KVCacheConfig plain{1, 1, 4, 4, 0, DType::f32};
  for (int p = 0; p < 20; ++p) CHECK(kv_cache_slot(plain, p) == p % 4);
  // Far past any trained context (streaming): still a valid slot.
  CHECK(kv_cache_slot(c, int64_t(1) << 40) == 2 + ((int64_t(1) << 40) - 2) % 3);
}

TEST_CASE("kv cache: kv_cache_bytes is exactly what init takes from a real arena") {
  for (DType dt : {DType::f32, DType::i8}) {
    KVCacheConfig c{3, 2, 24, 37, 4, dt};
    const size_t bytes = kv_cache_bytes(c);
    const size_t raw = size_t(3) * 2 * 37 * 24 * dtype_size(dt) * 2 +
                       (dt == DType::i8 ? size_t(3) * 2 * 37 * 4 * 2 : 0) + 3 * 8;
    CHECK(bytes >= raw);
    CHECK(bytes < raw + 5 * 64);
    std::vector<unsigned char> buf(bytes + 64);
    void* base = buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64;
    Arena exact(base, bytes);
    KVCache cache;
    CHECK(kv_cache_init(c, exact, &cache).ok());
    CHECK(exact.used() == bytes);
    Arena short_arena(base, bytes - 1);
    CHECK(kv_cache_init(c, short_arena, &cache).code == StatusCode::out_of_memory);
  }
}

TEST_CASE("kv cache: f32 writes land in the ring slot of each kv head unchanged") {
  KVCacheConfig c{2, 3, 8, 6, 1, DType::f32};
  einfer_test::TestKVCache kv_cache(c);
  KVCache& cache = kv_cache.cache;
  std::vector<float> k(3 * 8), v(3 * 8);
  for (int64_t p = 0; p < 23; ++p) {
    for (int i = 0; i < 24; ++i) {
      k[i] = float(p * 100 + i);
      v[i] = -float(p * 100 + i);
    }
    REQUIRE(kv_cache_write(cache, 1, p, k.data(), v.data()).ok());
    const KVLayerView view = kv_cache_layer(cache, 1);
    CHECK(view.n_positions == p + 1);
    const int32_t slot = kv_cache_slot(c, p);
    for (int g = 0; g < 3; ++g)
      for (int d = 0; d < 8; ++d) {
        const int64_t off = g * view.head_stride + slot * view.row_stride + d;
        CHECK(static_cast<const float*>(view.k)[off] == float(p * 100 + g * 8 + d));
        CHECK(static_cast<const float*>(view.v)[off] == -float(p * 100 + g * 8 + d));
      }
    // The pinned sink (position 0) survives every wrap.
    CHECK(static_cast<const float*>(view.k)[2 * view.head_stride + 3] == float(16 + 3));
  }
  CHECK(kv_cache_layer(cache, 0).n_positions == 0);
  kv_cache_reset(cache);
  CHECK(kv_cache_layer(cache, 1).n_positions == 0);
}

TEST_CASE("kv cache: int8 rows keep one scale per (slot, kv head) and round within scale/2") {
  KVCacheConfig c{1, 2, 16, 4, 0, DType::i8};
  einfer_test::TestKVCache kv_cache(c);
  KVCache& cache = kv_cache.cache;
  std::vector<float> k(32), v(32);
  for (int i = 0; i < 32; ++i) {
    k[i] = std::sin(1.3f * i) * (i < 16 ? 1.f : 50.f);  // heads with very different ranges
    v[i] = std::cos(0.7f * i) * (i < 16 ? 0.01f : 3.f);
  }
  REQUIRE(kv_cache_write(cache, 0, 5, k.data(), v.data()).ok());
  const KVLayerView view = kv_cache_layer(cache, 0);
  const int32_t slot = kv_cache_slot(c, 5);
  for (int g = 0; g < 2; ++g) {
    float kmax = 0.f, vmax = 0.f;
    for (int d = 0; d < 16; ++d) {
      kmax = std::fmax(kmax, std::fabs(k[g * 16 + d]));
      vmax = std::fmax(vmax, std::fabs(v[g * 16 + d]));
    }
    const float ks = view.k_scales[g * c.capacity + slot],
                vs = view.v_scales[g * c.capacity + slot];
    CHECK(ks == doctest::Approx(kmax / 127.f).epsilon(1e-6));
    CHECK(vs == doctest::Approx(vmax / 127.f).epsilon(1e-6));
    for (int d = 0; d < 16; ++d) {
      const int64_t off = g * view.head_stride + slot * view.row_stride + d;
      const float kq = static_cast<const int8_t*>(view.k)[off] * ks;
      const float vq = static_cast<const int8_t*>(view.v)[off] * vs;
      CHECK(std::fabs(kq - k[g * 16 + d]) <= ks * 0.5f * 1.0001f);
      CHECK(std::fabs(vq - v[g * 16 + d]) <= vs * 0.5f * 1.0001f);
    }
  }
}

TEST_CASE("kv cache: bad configurations and writes return statuses") {
  Arena m = Arena::measuring();
  KVCache cache;
  CHECK(kv_cache_init(KVCacheConfig{1, 1, 8, 4, 4, DType::f32}, m, &cache).code ==
        StatusCode::invalid_argument);
  CHECK(kv_cache_init(KVCacheConfig{1, 1, 8, 0, 0, DType::f32}, m, &cache).code ==
        StatusCode::invalid_argument);
  CHECK(kv_cache_init(KVCacheConfig{0, 1, 8, 4, 0, DType::f32}, m, &cache).code ==
        StatusCode::invalid_argument);
  CHECK(kv_cache_init(KVCacheConfig{1, 1, 8, 4, 0, DType::q4}, m, &cache).code ==
        StatusCode::unsupported);
  CHECK(kv_cache_bytes(KVCacheConfig{1, 1, 8, 4, 4, DType::f32}) == 0);
  // A measuring arena counts but gives no memory: writes are refused, not crashes.
  REQUIRE(kv_cache_init(KVCacheConfig{1, 1, 8, 4, 0, DType::f32}, m, &cache).ok());
  float row[8] = {};
  CHECK(kv_cache_write(cache, 0, 0, row, row).code == StatusCode::invalid_argument);

  KVCacheConfig c{2, 1, 8, 4, 0, DType::f32};
  std::vector<unsigned char> buf(kv_cache_bytes(c) + 64);
  Arena arena(buf.data() + (64 - reinterpret_cast<uintptr_t>(buf.data()) % 64) % 64,
              kv_cache_bytes(c));
  REQUIRE(kv_cache_init(c, arena, &cache).ok());
  CHECK(kv_cache_write(cache, 2, 0, row, row).code == StatusCode::out_of_range);
  CHECK(kv_cache_write(cache, -1, 0, row, row).code == StatusCode::out_of_range);
  CHECK(kv_cache_write(cache, 0, -3, row, row).code == StatusCode::out_of_range);
  CHECK(kv_cache_write(cache, 0, 0, nullptr, row).code == StatusCode::invalid_argument);
}
