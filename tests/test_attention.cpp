// Fused attention against numpy (tests/gen/gen_attention.py) and against the unfused reference:
// MHA / MQA / GQA, causal and bidirectional, windows and sinks, f32 and int8 KV, prefill vs
// token-by-token decode, a ring wrapped more than 10 times vs a cache that never wrapped.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_reference.h"
#include "kernels/quant/quant.h"
#include "models/kv_cache.h"
#include "npy_reader.h"
#include "tests/session_fixtures.h"

using namespace einfer;
using einfer_test::attention_data;
using einfer_test::load_npy;

namespace einfer {
// Test hook in kernels/attention/attention_dispatch.cpp: -1 by CPU, 0 AVX2, 1 AVX-VNNI; returns
// whether VNNI is used.
}  // namespace einfer

namespace {

struct Case {
  std::string name;
  int32_t H = 0, G = 0, k = 0, P = 0, window = 0, sinks = 0, capacity = 0;
  bool causal = true;
  float softcap = 0.f;
  std::vector<float> q, kk, v, out;

  AttentionShape shape() const {
    AttentionShape s;
    s.n_heads = H;
    s.n_kv_heads = G;
    s.head_dim = k;
    s.scale = attention_default_scale(k);
    s.window = window;
    s.sinks = sinks;
    s.causal = causal;
    s.softcap = softcap;
    return s;
  }
};

Case load_case(const std::string& name) {
  Case c;
  c.name = name;
  const auto meta = load_npy(attention_data(name + "_meta"));
  REQUIRE(meta.ok);
  const int64_t* m = meta.i64();
  c.H = int32_t(m[0]), c.G = int32_t(m[1]), c.k = int32_t(m[2]), c.P = int32_t(m[3]);
  c.window = int32_t(m[4]), c.sinks = int32_t(m[5]), c.causal = m[6] != 0,
  c.capacity = int32_t(m[7]);
  for (auto [suffix, dst] :
       {std::pair{"_q", &c.q}, {"_k", &c.kk}, {"_v", &c.v}, {"_out", &c.out}}) {
    const auto a = load_npy(attention_data(name + suffix));
    REQUIRE(a.ok);
    *dst = a.to_f32();
  }
  return c;
}

const char* kCausalCases[] = {
    "mha", "gqa", "mqa", "gqa_window_sinks", "window_nosinks", "long_window_sinks"};

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0.f;
  for (size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(a[i] - b[i]));
  return m;
}

// Runs the sequence through a one-layer cache of `capacity` slots (cache sinks = case sinks):
// a first block of `first` tokens, then blocks of `block`. K/V are written after each block's
// attention, as the model does. Returns out [P][H][k].
// With pad > 0, q, k_new, v_new and out are handed over in rows `pad` floats longer than dense
// (the row strides of AttentionShape); the result is copied back to [P][H][k].
std::vector<float> run_sequence(const Case& c, DType dtype, int32_t capacity, int32_t first,
                                int32_t block, AttentionI8Dot i8_dot = AttentionI8Dot::auto_select,
                                int32_t pad = 0) {
  AttentionShape sh = c.shape();
  sh.i8_dot = i8_dot;
  KVCacheConfig cfg{1, c.G, c.k, capacity, c.sinks, dtype};
  einfer_test::TestKVCache kv_cache(cfg);
  KVCache& cache = kv_cache.cache;
  const int32_t maxb = first > block ? first : block;
  std::vector<unsigned char> scratch(attention_scratch_bytes(sh, maxb, dtype));
  std::vector<float> out(c.q.size(), NAN);
  const size_t qrow = size_t(c.H) * c.k, krow = size_t(c.G) * c.k;
  const size_t qs = qrow + pad, ks = krow + pad;
  std::vector<float> q(c.P * qs, NAN), kk(c.P * ks, NAN), v(c.P * ks, NAN), o(c.P * qs, NAN);
  for (int32_t i = 0; i < c.P; ++i) {
    std::memcpy(q.data() + i * qs, c.q.data() + i * qrow, qrow * sizeof(float));
    std::memcpy(kk.data() + i * ks, c.kk.data() + i * krow, krow * sizeof(float));
    std::memcpy(v.data() + i * ks, c.v.data() + i * krow, krow * sizeof(float));
  }
  if (pad > 0) {
    sh.q_row_stride = sh.out_row_stride = static_cast<int64_t>(qs);
    sh.kv_row_stride = static_cast<int64_t>(ks);
  }
  for (int32_t pos0 = 0; pos0 < c.P;) {
    const int32_t want = pos0 == 0 ? first : block;
    const int32_t n = want < c.P - pos0 ? want : c.P - pos0;
    const KVLayerView view = kv_cache_layer(cache, 0);
    const Status s =
        attention_f32(sh, q.data() + pos0 * qs, kk.data() + pos0 * ks, v.data() + pos0 * ks, n,
                      pos0, &view, o.data() + pos0 * qs, scratch.data(), scratch.size());
    REQUIRE_MESSAGE(s.ok(), s.message);
    for (int32_t i = 0; i < n; ++i)
      std::memcpy(out.data() + (pos0 + i) * qrow, o.data() + (pos0 + i) * qs, qrow * sizeof(float));
    for (int32_t i = 0; i < n; ++i) {
      const int64_t p = pos0 + i;
      REQUIRE(kv_cache_write(cache, 0, p, c.kk.data() + p * krow, c.v.data() + p * krow).ok());
    }
    pos0 += n;
  }
  return out;
}

std::vector<float> run_reference(const Case& c) {
  const AttentionShape sh = c.shape();
  std::vector<int64_t> pos(c.P);
  for (int32_t i = 0; i < c.P; ++i) pos[i] = i;
  std::vector<unsigned char> scratch(attention_reference_scratch_bytes(c.H, c.P, c.P));
  std::vector<float> out(c.q.size());
  REQUIRE(attention_reference_f32(sh, c.q.data(), pos.data(), c.P, c.kk.data(), c.v.data(),
                                  pos.data(), c.P, out.data(), scratch.data(), scratch.size())
              .ok());
  return out;
}

// All P positions in one call without a cache (an encoder's attention). Returns out [P][H][k].
std::vector<float> run_whole(const Case& c) {
  const AttentionShape sh = c.shape();
  std::vector<unsigned char> scratch(attention_scratch_bytes(sh, c.P, DType::f32));
  std::vector<float> out(c.q.size());
  REQUIRE(attention_f32(sh, c.q.data(), c.kk.data(), c.v.data(), c.P, 0, nullptr, out.data(),
                        scratch.data(), scratch.size())
              .ok());
  return out;
}

// Float32 rounding of dot products, exps and sums over at most a few hundred O(1) terms, measured
// against a float64 numpy result.
constexpr float kF32Tol = 1e-5f;

}  // namespace

TEST_CASE("attention: fused kernel matches numpy and the unfused reference (f32 KV)") {
  for (const char* name : kCausalCases) {
    const Case c = load_case(name);
    INFO("case " << std::string(name));
    const auto fused = run_sequence(c, DType::f32, c.capacity, 1, 1);
    CHECK(max_abs_diff(fused, c.out) < kF32Tol);
    const auto ref = run_reference(c);
    CHECK(max_abs_diff(ref, c.out) < kF32Tol);
    CHECK(max_abs_diff(fused, ref) < kF32Tol);
  }
}

TEST_CASE("attention: soft-capped scores (Gemma 2) match the unfused reference") {
  // cap * tanh(score / cap) before the softmax, on every path: decode, prefill blocks (one call),
  // chunks meeting the cache, the int8 cache (within its quantization bound) and bidirectional.
  for (const char* name : {"mha", "gqa", "mqa", "gqa_window_sinks", "encoder"}) {
    Case c = load_case(name);
    INFO("case " << std::string(name));
    const auto plain = run_reference(c);
    c.softcap = 0.5f;  // scores here are O(1): a cap of 0.5 changes every output
    const auto ref = run_reference(c);
    CHECK(max_abs_diff(ref, plain) > 1e-2f);
    if (!c.causal) {
      CHECK(max_abs_diff(run_whole(c), ref) < kF32Tol);
      continue;
    }
    CHECK(max_abs_diff(run_sequence(c, DType::f32, c.capacity, 1, 1), ref) < kF32Tol);
    CHECK(max_abs_diff(run_sequence(c, DType::f32, c.capacity, c.P, c.P), ref) < kF32Tol);
    CHECK(max_abs_diff(run_sequence(c, DType::f32, c.capacity, 5, 3), ref) < kF32Tol);
    CHECK(max_abs_diff(run_sequence(c, DType::i8, c.capacity, 5, 3), ref) < 2e-2f);
  }
}

TEST_CASE("attention: bidirectional (encoder) attention matches numpy") {
  const Case c = load_case("encoder");
  CHECK(max_abs_diff(run_whole(c), c.out) < kF32Tol);
  CHECK(max_abs_diff(run_reference(c), c.out) < kF32Tol);
}

TEST_CASE("attention: prefill then decode equals decoding token by token, bit for bit") {
  for (const char* name : kCausalCases) {
    const Case c = load_case(name);
    INFO("case " << std::string(name));
    const auto step = run_sequence(c, DType::f32, c.capacity, 1, 1);
    for (auto [first, block] : {std::pair{c.P, 1}, {13, 1}, {7, 7}, {5, 64}}) {
      INFO("first block " << first << ", then blocks of " << block);
      const auto blocked = run_sequence(c, DType::f32, c.capacity, first, block);
      CHECK(std::memcmp(step.data(), blocked.data(), step.size() * sizeof(float)) == 0);
    }
    // int8: the block's own keys are f32 while decoding reads them quantized from the cache, so
    // only the tokens decoded after an identical cache state must agree exactly.
    const auto step8 = run_sequence(c, DType::i8, c.capacity, 1, 1);
    const auto pre8 = run_sequence(c, DType::i8, c.capacity, 13, 1);
    const size_t from = size_t(13) * c.H * c.k;
    CHECK(std::memcmp(step8.data() + from, pre8.data() + from,
                      (step8.size() - from) * sizeof(float)) == 0);
  }
}

TEST_CASE("attention: row strides give the bits of the dense layout") {
  // Padded rows (the layout models/mha.cpp hands each task's heads in on several threads): every
  // causal case, prefill in blocks over an f32 and an int8 cache, and decoding.
  for (const char* name : kCausalCases) {
    const Case c = load_case(name);
    INFO("case " << std::string(name));
    for (DType dtype : {DType::f32, DType::i8}) {
      for (auto [first, block] : {std::pair{c.P, 1}, {13, 7}, {1, 1}}) {
        INFO("first block " << first << ", then blocks of " << block);
        const auto dense = run_sequence(c, dtype, c.capacity, first, block);
        const auto padded =
            run_sequence(c, dtype, c.capacity, first, block, AttentionI8Dot::auto_select, 37);
        CHECK(std::memcmp(dense.data(), padded.data(), dense.size() * sizeof(float)) == 0);
      }
    }
  }
}

// Random q, k, v for a shape (no numpy output: for the bit-for-bit comparisons below).
Case random_case(int32_t H, int32_t G, int32_t k, int32_t P, bool causal, uint32_t seed) {
  Case c;
  c.name = "random";
  c.H = H, c.G = G, c.k = k, c.P = P, c.causal = causal, c.capacity = P;
  uint32_t x = seed;
  auto next = [&] {
    x = x * 1664525u + 1013904223u;
    return static_cast<float>(x >> 8) / 8388608.f - 1.f;  // [-1, 1)
  };
  for (auto [dst, n] : {std::pair{&c.q, H}, {&c.kk, G}, {&c.v, G}}) {
    dst->resize(size_t(P) * n * k);
    for (float& e : *dst) e = 2.f * next();
  }
  return c;
}

TEST_CASE("attention: prefill query blocks give the bits of one query at a time") {
  // 1 to 8 heads per kv head take query blocks on the general path (head sizes that are not 1, 2
  // or 4 SIMD vectors, with and without a scalar tail), over several 64-key tiles: blocks that
  // span a tile edge, end inside the diagonal tile, and start after cached chunks. Decoding token
  // by token walks each query alone.
  for (auto [H, G, k] :
       {std::tuple{6, 6, 48}, {4, 2, 20}, {3, 3, 13}, {2, 1, 40}, {9, 3, 24}, {14, 2, 20}}) {
    const Case c = random_case(H, G, k, 150, true, 7u + uint32_t(k));
    INFO("H " << H << " G " << G << " k " << k);
    const auto step = run_sequence(c, DType::f32, c.capacity, 1, 1);
    for (auto [first, block] : {std::pair{150, 1}, {70, 37}, {3, 64}, {66, 5}}) {
      INFO("first block " << first << ", then blocks of " << block);
      const auto blocked = run_sequence(c, DType::f32, c.capacity, first, block);
      CHECK(std::memcmp(step.data(), blocked.data(), step.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("attention: bidirectional query blocks match the unfused reference") {
  for (auto [H, G, k] : {std::tuple{4, 4, 24}, {4, 2, 20}}) {
    const Case c = random_case(H, G, k, 90, false, 3u);
    INFO("H " << H << " G " << G << " k " << k);
    CHECK(max_abs_diff(run_whole(c), run_reference(c)) < kF32Tol);
  }
}

TEST_CASE("attention: a ring wrapped over 10 times equals recomputing without a ring") {
  for (const char* name : {"gqa_window_sinks", "window_nosinks", "long_window_sinks"}) {
    const Case c = load_case(name);
    INFO("case " << std::string(name));
    const int32_t wraps = (c.P - c.sinks) / (c.capacity - c.sinks);
    if (std::string(name) != "long_window_sinks") CHECK(wraps > 10);
    for (DType dt : {DType::f32, DType::i8}) {
      const auto ring = run_sequence(c, dt, c.capacity, 1, 1);
      // From scratch: a cache with a slot for every position, so nothing is ever overwritten;
      // the window selects the same attended positions.
      const auto flat = run_sequence(c, dt, c.P, 1, 1);
      CHECK(std::memcmp(ring.data(), flat.data(), ring.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("attention: int8 KV stays within the perturbation bound of its quantization error") {
  // Bound per (query t, head h): with K', V' the dequantized cache rows of the attended positions,
  //   d = max_p |scale * q.(K'_p - K_p)|            (score perturbation)
  //   e = max_p max_i |V'_p,i - V_p,i|              (value perturbation)
  // the softmax weights change by at most exp(2d) - 1 in L1 norm, so
  //   |out' - out| <= e + (exp(2d) - 1) * max|V| + kF32Tol.
  for (const char* name : kCausalCases) {
    const Case c = load_case(name);
    INFO("case " << std::string(name));
    const AttentionShape sh = c.shape();
    std::vector<float> kq(c.kk.size()), vq(c.v.size());
    for (size_t row = 0; row < c.kk.size() / c.k; ++row) {
      int8_t q8[256];
      float s = 0.f;
      quantize_row_q8(c.kk.data() + row * c.k, c.k, c.k, q8, &s);
      dequantize_row_q8(q8, &s, c.k, c.k, kq.data() + row * c.k);
      quantize_row_q8(c.v.data() + row * c.k, c.k, c.k, q8, &s);
      dequantize_row_q8(q8, &s, c.k, c.k, vq.data() + row * c.k);
    }
    const auto out8 = run_sequence(c, DType::i8, c.capacity, 1, 1);
    float worst_err = 0.f, worst_bound = 0.f;
    bool within = true;
    const int32_t r = c.H / c.G;
    for (int32_t t = 0; t < c.P; ++t)
      for (int32_t h = 0; h < c.H; ++h) {
        const int32_t g = h / r;
        float d = 0.f, e = 0.f, vmax = 0.f;
        for (int32_t p = 0; p <= t; ++p) {
          if (!attention_attends(sh, t, p)) continue;
          const size_t kr = (size_t(p) * c.G + g) * c.k;
          float dq = 0.f;
          for (int32_t i = 0; i < c.k; ++i) {
            dq += c.q[(size_t(t) * c.H + h) * c.k + i] * (kq[kr + i] - c.kk[kr + i]);
            e = std::fmax(e, std::fabs(vq[kr + i] - c.v[kr + i]));
            vmax = std::fmax(vmax, std::fabs(c.v[kr + i]));
          }
          d = std::fmax(d, std::fabs(dq * sh.scale));
        }
        const float bound = e + (std::exp(2.f * d) - 1.f) * vmax + kF32Tol;
        for (int32_t i = 0; i < c.k; ++i) {
          const size_t o = (size_t(t) * c.H + h) * c.k + i;
          const float err = std::fabs(out8[o] - c.out[o]);
          if (err > bound) within = false;
          if (err > worst_err) {
            worst_err = err;
            worst_bound = bound;
          }
        }
      }
    MESSAGE(std::string(name) << ": int8 KV max |error| " << worst_err << " (its bound "
                              << worst_bound << ")");
    CHECK(within);
  }
}

TEST_CASE("attention: int8 KV gives the same bits on the AVX2 and AVX-VNNI integer-dot paths") {
  // Both paths form the same exact int32 sums (vpdpwssd does not saturate), so the outputs must
  // agree bit for bit; with the AVX2 path forced, the int8 bit-exactness properties hold too.
  const bool vnni = attention_i8_dot_uses_vnni(AttentionI8Dot::avx_vnni);
  if (!vnni) MESSAGE("no AVX-VNNI on this CPU (or no AVX2 build): both runs take the same path");
  for (const char* name : kCausalCases) {
    const Case c = load_case(name);
    INFO("case " << std::string(name));
    const auto fast = run_sequence(c, DType::i8, c.capacity, 1, 1, AttentionI8Dot::avx_vnni);
    const auto plain = run_sequence(c, DType::i8, c.capacity, 1, 1, AttentionI8Dot::avx2);
    CHECK(std::memcmp(fast.data(), plain.data(), fast.size() * sizeof(float)) == 0);
    const auto pre = run_sequence(c, DType::i8, c.capacity, 13, 1, AttentionI8Dot::avx2);
    const size_t from = size_t(13) * c.H * c.k;
    CHECK(std::memcmp(plain.data() + from, pre.data() + from,
                      (plain.size() - from) * sizeof(float)) == 0);
    if (c.capacity < c.P) {
      const auto flat = run_sequence(c, DType::i8, c.P, 1, 1, AttentionI8Dot::avx2);
      CHECK(std::memcmp(plain.data(), flat.data(), plain.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("attention: invalid shapes, caches and buffers return statuses") {
  AttentionShape sh{8, 3, 16, 0.25f, 0, 0, true};
  CHECK(attention_validate_shape(sh).code == StatusCode::shape_mismatch);
  sh = AttentionShape{8, 2, 16, 0.25f, 8, 8, true};
  CHECK(attention_validate_shape(sh).code == StatusCode::invalid_argument);
  sh = AttentionShape{8, 2, 16, 0.25f, 8, 2, false};
  CHECK(attention_validate_shape(sh).code == StatusCode::unsupported);
  sh = AttentionShape{0, 2, 16, 0.25f, 0, 0, true};
  CHECK(attention_validate_shape(sh).code == StatusCode::invalid_argument);

  sh = AttentionShape{4, 2, 8, 0.25f, 0, 0, true};
  std::vector<float> q(4 * 8, 0.1f), kv(2 * 8, 0.2f), out(4 * 8);
  std::vector<unsigned char> scratch(attention_scratch_bytes(sh, 1, DType::i8));
  // Scratch too small.
  CHECK(attention_f32(sh, q.data(), kv.data(), kv.data(), 1, 0, nullptr, out.data(), scratch.data(),
                      16)
            .code == StatusCode::out_of_memory);
  // Positions before pos0 but no cache.
  CHECK(attention_f32(sh, q.data(), kv.data(), kv.data(), 1, 3, nullptr, out.data(), scratch.data(),
                      scratch.size())
            .code == StatusCode::invalid_argument);
  // Row strides shorter than a row's heads.
  for (int which = 0; which < 3; ++which) {
    AttentionShape bad = sh;
    (which == 0 ? bad.q_row_stride : which == 1 ? bad.kv_row_stride : bad.out_row_stride) = 8;
    CHECK(attention_f32(bad, q.data(), kv.data(), kv.data(), 1, 0, nullptr, out.data(),
                        scratch.data(), scratch.size())
              .code == StatusCode::invalid_argument);
  }

  KVCacheConfig cfg{1, 2, 8, 4, 1, DType::f32};
  einfer_test::TestKVCache kv_cache(cfg);
  KVCache& cache = kv_cache.cache;
  for (int p = 0; p < 6; ++p) REQUIRE(kv_cache_write(cache, 0, p, kv.data(), kv.data()).ok());
  KVLayerView view = kv_cache_layer(cache, 0);
  // The ring (W = 4) has wrapped: unwindowed attention would need overwritten positions.
  CHECK(attention_f32(sh, q.data(), kv.data(), kv.data(), 1, 6, &view, out.data(), scratch.data(),
                      scratch.size())
            .code == StatusCode::out_of_range);
  // Window larger than what the ring keeps.
  sh.window = 6;
  sh.sinks = 1;
  CHECK(attention_f32(sh, q.data(), kv.data(), kv.data(), 1, 6, &view, out.data(), scratch.data(),
                      scratch.size())
            .code == StatusCode::out_of_range);
  // More sinks than the cache pins.
  sh.window = 4;
  sh.sinks = 2;
  CHECK(attention_f32(sh, q.data(), kv.data(), kv.data(), 1, 6, &view, out.data(), scratch.data(),
                      scratch.size())
            .code == StatusCode::out_of_range);
  // The window the ring keeps works; a pos0 that is not the cache's next position does not.
  sh.sinks = 1;
  CHECK(attention_f32(sh, q.data(), kv.data(), kv.data(), 1, 6, &view, out.data(), scratch.data(),
                      scratch.size())
            .ok());
  CHECK(attention_f32(sh, q.data(), kv.data(), kv.data(), 1, 5, &view, out.data(), scratch.data(),
                      scratch.size())
            .code == StatusCode::out_of_range);
  // Cache with other head counts.
  AttentionShape other{4, 4, 8, 0.25f, 4, 1, true};
  CHECK(attention_f32(other, q.data(), kv.data(), kv.data(), 1, 6, &view, out.data(),
                      scratch.data(), scratch.size())
            .code == StatusCode::shape_mismatch);
  // Non-causal with a cache.
  AttentionShape enc{4, 2, 8, 0.25f, 0, 0, false};
  CHECK(attention_f32(enc, q.data(), kv.data(), kv.data(), 1, 0, &view, out.data(), scratch.data(),
                      scratch.size())
            .code == StatusCode::invalid_argument);
}
