// Hostile sizes (issue 16): sizes derived from model files and run options are computed with
// checked arithmetic, so on 32-bit targets (armhf, Cortex-M: 32-bit size_t) a window or context of
// 4,194,304 is refused cleanly instead of wrapping into a small arena that decode then overruns.
// Each test computes the true size in 64-bit (or 128-bit) arithmetic and expects either exactly it
// or, when it does not fit this target's size_t, a refusal: the same test is meaningful on both.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/rope/rope.h"
#include "models/encoder.h"
#include "models/kv_cache.h"
#include "models/sampler.h"
#include "models/session.h"
#include "runtime/arena.h"
#include "runtime/checked.h"
#include "tests/session_fixtures.h"

using namespace einfer;

namespace {
constexpr uint64_t kSizeMax = SIZE_MAX;

// A llama configuration (heads = kv heads, swiglu, interleaved RoPE) of the given shape.
ModelConfig llama_config(int32_t dim, int32_t hidden, int32_t layers, int32_t heads,
                         int32_t head_dim, int32_t vocab, int32_t context) {
  ModelConfig c;
  c.arch = ArchKind::llama;
  c.dim = dim;
  c.hidden_dim = hidden;
  c.n_layers = layers;
  c.n_heads = c.n_kv_heads = heads;
  c.head_dim = head_dim;
  c.vocab_size = vocab;
  c.context_length = context;
  c.norm_eps = 1e-5f;
  c.rope = RopeMode::interleaved;
  c.rope_theta = 10000.f;
  c.activation = Activation::swiglu;
  return c;
}
}  // namespace

TEST_CASE("checked arithmetic: overflow and negative operands are detected") {
  size_t out = 0;
  CHECK(checked_mul<size_t>(SIZE_MAX / 2, 2, &out));
  CHECK_FALSE(checked_mul<size_t>(SIZE_MAX / 2 + 1, 2, &out));
  CHECK_FALSE(checked_add<size_t>(SIZE_MAX, 1, &out));
  int64_t i = 0;
  CHECK_FALSE(checked_mul<int64_t>(INT64_MAX / 3 + 1, 3, &i));
  CHECK(checked_add<int64_t>(-5, 3, &i));
  CHECK(i == -2);

  CHECK((CheckedSize(3) * 4 + 5).value() == 17);
  CHECK_FALSE((CheckedSize(SIZE_MAX) * 2).valid());
  CHECK_FALSE((CheckedSize(SIZE_MAX) + 1).valid());
  CHECK_FALSE(CheckedSize(-1).valid());
  CHECK_FALSE((CheckedSize(4) * int32_t{-2}).valid());
  const CheckedSize big = CheckedSize(int32_t{1} << 22) * (int32_t{1} << 11);  // 2^33
  CHECK(big.valid() == (sizeof(size_t) == 8));
}

TEST_CASE("arena: an element count whose byte size wraps is refused, not under-allocated") {
  alignas(64) unsigned char buf[256];
  Arena arena(buf, sizeof buf);
  float* p = reinterpret_cast<float*>(buf);
  // (SIZE_MAX / 4 + 2) floats is 2^N + 4 bytes: it used to wrap to a 4-byte allocation.
  Status s = arena.allocate_array(SIZE_MAX / 4 + 2, &p);
  CHECK(s.code == StatusCode::out_of_memory);
  CHECK(p == nullptr);
  Arena measuring = Arena::measuring();
  CHECK(measuring.allocate_array(SIZE_MAX / 4 + 2, &p).code == StatusCode::out_of_memory);
  CHECK(measuring.allocate_array(CheckedSize(SIZE_MAX) * 2, &p).code == StatusCode::out_of_memory);
  CHECK(arena.allocate_array(16, &p).ok());  // still usable
}

TEST_CASE("kv cache: a size beyond this target's size_t is refused, otherwise exact") {
  KVCacheConfig c;
  c.n_layers = 64;
  c.n_kv_heads = 8;
  c.head_dim = 128;
  c.capacity = 4194304;  // 2^22: K is 2^40 bytes
  c.dtype = DType::f32;
  const uint64_t k_bytes = uint64_t{64} * 8 * 4194304 * 128 * 4;
  const size_t got = kv_cache_bytes(c);
  if (k_bytes * 2 + 64 * 8 > kSizeMax) {
    CHECK(got == 0);  // refused (kv_cache_bytes reports 0 for a config it cannot hold)
    Arena measuring = Arena::measuring();
    KVCache cache;
    CHECK(kv_cache_init(c, measuring, &cache).code == StatusCode::out_of_memory);
  } else {
    CHECK(got >= k_bytes * 2);
  }
  // Wraps even 64 bits: refused everywhere.
  c.n_layers = 4096;
  c.n_kv_heads = 4096;
  c.head_dim = 1 << 24;
  c.capacity = INT32_MAX;
  CHECK(kv_cache_bytes(c) == 0);
}

TEST_CASE("rope table: a size beyond size_t is SIZE_MAX (no arena holds it), never wrapped") {
  const uint64_t want = uint64_t{1} << 19 << 22 << 2;  // half x positions x float
  const size_t got = rope_table_bytes(1 << 20, 1 << 22);
  if (want * 2 > kSizeMax)
    CHECK(got == SIZE_MAX);
  else
    CHECK(got >= want * 2);
}

TEST_CASE("session sizing: context or window 4,194,304 is refused on 32-bit, exact on 64-bit") {
  const ModelConfig c = llama_config(512, 1376, 8, 8, 64, 32000, 4194304);
  const uint64_t kv_bytes = uint64_t{8} * 8 * 4194304 * 64 * 4 * 2;  // K and V, f32
  for (int mode = 0; mode < 3; ++mode) {
    RunOptions o;
    if (mode == 1) o.window = 4194304;
    if (mode == 2) o.context = 4194304;
    CAPTURE(mode);
    size_t bytes = 0;
    const Status s = session_arena_bytes(c, o, &bytes);
    if (kv_bytes > kSizeMax) {
      CHECK(s.code == StatusCode::out_of_memory);
    } else {
      REQUIRE(s.ok());
      CHECK(bytes >= kv_bytes);
    }
  }
  // An int8 cache of 4,194,304 slots: exact figure or refusal too.
  RunOptions o;
  o.kv_dtype = DType::i8;
  size_t bytes = 0;
  const Status s = session_arena_bytes(c, o, &bytes);
  const uint64_t i8_bytes = kv_bytes / 4;
  if (i8_bytes > kSizeMax)
    CHECK_FALSE(s.ok());
  else
    CHECK((s.ok() && bytes >= i8_bytes));
}

TEST_CASE("run options: context, window and batch have upper bounds named in the status") {
  const ModelConfig c = llama_config(64, 172, 2, 4, 16, 512, 128);
  size_t bytes = 0;
  RunOptions o;
  REQUIRE(session_arena_bytes(c, o, &bytes).ok());
  o.context = kMaxRunPositions + 1;
  Status s = session_arena_bytes(c, o, &bytes);
  CHECK(s.code == StatusCode::out_of_range);
  CHECK(std::strstr(s.message, "context") != nullptr);
  CHECK(s.need == kMaxRunPositions);
  o = RunOptions{};
  o.window = INT32_MAX;
  s = session_arena_bytes(c, o, &bytes);
  CHECK(std::strstr(s.message, "window") != nullptr);
  o = RunOptions{};
  o.max_batch = kMaxRunBatch + 1;
  s = session_arena_bytes(c, o, &bytes);
  CHECK(std::strstr(s.message, "max_batch") != nullptr);
}

TEST_CASE("encoder: the sequence length has an upper bound and checked sizes") {
  ModelConfig c;
  c.arch = ArchKind::encoder;
  c.dim = 1024;
  c.hidden_dim = 4 * c.dim;
  c.n_layers = 1;
  c.n_heads = c.n_kv_heads = 16;
  c.head_dim = 64;
  c.context_length = 0;  // no trained limit: the caller's sequence length decides
  c.norm = NormKind::layernorm;
  c.norm_eps = 1e-5f;
  c.activation = Activation::relu;
  c.rope = RopeMode::none;
  size_t bytes = 0;
  Status s = encoder_arena_bytes(c, kMaxRunPositions + 1, &bytes);
  CHECK(s.code == StatusCode::out_of_range);
  CHECK(std::strstr(s.message, "sequence length") != nullptr);
  // 4,194,304 x 4096 floats of FFN activations: 2^36 bytes, beyond a 32-bit size_t.
  s = encoder_arena_bytes(c, 4194304, &bytes);
  const uint64_t ffn = uint64_t{4194304} * 4096 * 4;
  if (ffn > kSizeMax)
    CHECK(s.code == StatusCode::out_of_memory);
  else
    CHECK((s.ok() && bytes >= ffn));
}

TEST_CASE("sampler: NaN and Inf logits give an id inside the vocabulary, never a broken sort") {
  constexpr int32_t kVocab = 257;
  alignas(8) unsigned char scratch[kVocab * 8];
  for (int variant = 0; variant < 4; ++variant) {
    Sampler s;
    SamplerConfig sc;
    sc.temperature = 0.9f;
    sc.top_p = variant & 1 ? 0.5f : 1.0f;
    sc.top_k = variant & 2 ? 40 : 0;
    sc.seed = 7;
    REQUIRE(sampler_init(&s, sc, kVocab, scratch, sizeof scratch).ok());
    for (int round = 0; round < 20; ++round) {
      std::vector<float> logits(kVocab);
      for (int32_t i = 0; i < kVocab; ++i) {
        const int k = (i * 7 + round) % 5;
        // The conversion is unconditional: GCC 12 for Cortex-M55 emits a conditional vcvt in an IT
        // block for the nested ternary, which its assembler rejects.
        const float special[3] = {NAN, INFINITY, -INFINITY};
        const float finite = static_cast<float>(i % 13);
        logits[i] = k < 3 ? special[k] : finite;
      }
      if (round == 19)
        for (float& x : logits) x = NAN;
      const int32_t id = sampler_sample(&s, logits.data());
      CHECK((id >= 0 && id < kVocab));
    }
  }
}

TEST_CASE("attention: NaN and Inf activations (a hostile model) never reach an undefined cast") {
  // int8 KV quantizes queries and softmax weights to integers; a float->int cast of NaN or Inf is
  // undefined behaviour (the debug preset's UBSan, with float-cast-overflow, aborts on it).
  for (DType dtype : {DType::i8, DType::f32}) {
    AttentionShape sh;
    sh.n_heads = 4;
    sh.n_kv_heads = 2;
    sh.head_dim = 16;
    sh.scale = attention_default_scale(16);
    sh.causal = true;
    KVCacheConfig cfg{1, 2, 16, 32, 0, dtype};
    einfer_test::TestKVCache kv_cache(cfg);
    KVCache& cache = kv_cache.cache;
    std::vector<unsigned char> scratch(attention_scratch_bytes(sh, 1, dtype));
    const float specials[4] = {NAN, INFINITY, -INFINITY, 1e38f};
    for (int32_t pos = 0; pos < 24; ++pos) {
      float q[4 * 16], k[2 * 16], v[2 * 16], out[4 * 16];
      for (int i = 0; i < 64; ++i) q[i] = (i + pos) % 9 == 0 ? specials[(i + pos) % 4] : 0.1f * i;
      for (int i = 0; i < 32; ++i) {
        k[i] = (i * 3 + pos) % 7 == 0 ? specials[i % 4] : 0.05f * i;
        v[i] = (i + 2 * pos) % 5 == 0 ? specials[(i + 1) % 4] : -0.02f * i;
      }
      const KVLayerView view = kv_cache_layer(cache, 0);
      CHECK(attention_f32(sh, q, k, v, 1, pos, &view, out, scratch.data(), scratch.size()).ok());
      REQUIRE(kv_cache_write(cache, 0, pos, k, v).ok());
    }
  }
}
