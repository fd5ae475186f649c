// Fixtures of the model-level suites: memory sized exactly for a session (C++ or C API), a KV
// cache and an encoder in arenas of their own, each in 64-byte aligned memory (tests/test_util.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "models/einfer.h"
#include "models/encoder.h"
#include "models/kv_cache.h"
#include "models/session.h"
#include "runtime/model.h"
#include "tests/test_util.h"

namespace einfer_test {

// The model of a packed image, which must load.
inline einfer::Model loaded_model(const void* image, size_t size) {
  einfer::Model m;
  const einfer::Status s = einfer::load_model(image, size, einfer::LoadOptions{}, &m);
  REQUIRE_MESSAGE(s.ok(), s.message);
  return m;
}

// Memory of exactly session_arena_bytes for `image` run with `options`; *model (optional) gets the
// loaded model. Allocates before any session exists (the no-heap tests watch only what follows).
inline AlignedMemory session_memory(const void* image, size_t size,
                                    const einfer::RunOptions& options,
                                    einfer::Model* model = nullptr) {
  const einfer::Model m = loaded_model(image, size);
  size_t need = 0;
  REQUIRE(einfer::session_arena_bytes(m.config, options, &need).ok());
  if (model != nullptr) *model = m;
  return AlignedMemory(need);
}

// `steps` greedy decode steps of session s from its current logits (vocab V), each step's logits
// appended to *all.
inline void append_greedy_logits(einfer::Session* s, int32_t V, int steps,
                                 std::vector<float>* all) {
  for (int step = 0; step < steps; ++step) {
    const float* l = einfer::session_logits(*s);
    int32_t best = 0;
    for (int32_t i = 1; i < V; ++i) best = l[i] > l[best] ? i : best;
    REQUIRE(einfer::session_eval(s, &best, 1).ok());
    all->insert(all->end(), einfer::session_logits(*s), einfer::session_logits(*s) + V);
  }
}

// Logits of an 11-token prompt (ids (37i + 1) mod V) and `steps` greedy steps of the image
// (64-byte aligned) run with max_batch 8: what the layout tests compare bit for bit.
inline std::vector<float> prompt_greedy_logits(const void* image, size_t size, int steps) {
  einfer::Model m;
  einfer::RunOptions o;
  o.max_batch = 8;
  AlignedMemory mem = session_memory(image, size, o, &m);
  einfer::Arena arena(mem.base, mem.bytes);
  einfer::Session* s = nullptr;
  REQUIRE(einfer::session_create(image, size, einfer::LoadOptions{}, o, arena, &s).ok());
  const int32_t V = m.config.vocab_size;
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < 11; ++i) prompt.push_back((i * 37 + 1) % V);
  REQUIRE(einfer::session_eval(s, prompt.data(), static_cast<int32_t>(prompt.size())).ok());
  std::vector<float> all(einfer::session_logits(*s), einfer::session_logits(*s) + V);
  append_greedy_logits(s, V, steps, &all);
  return all;
}

// The same for the C API (einfer_arena_bytes).
inline AlignedMemory capi_memory(const void* image, size_t size, const einfer_options& options) {
  char err[160] = {};
  size_t need = 0;
  REQUIRE_MESSAGE(einfer_arena_bytes(image, size, &options, &need, err, sizeof err) == EINFER_OK,
                  err);
  return AlignedMemory(need);
}

// A C API session in memory of exactly einfer_arena_bytes, which it must use to the byte.
struct CapiSession {
  AlignedMemory memory;
  einfer_session* s = nullptr;
  CapiSession(const void* image, size_t size, const einfer_options& options)
      : memory(capi_memory(image, size, options)) {
    char err[160] = {};
    REQUIRE_MESSAGE(einfer_session_create(image, size, &options, memory.base, memory.bytes, &s, err,
                                          sizeof err) == EINFER_OK,
                    err);
    CHECK(einfer_arena_used(s) == memory.bytes);
  }
};

// A KV cache with its own arena of exactly kv_cache_bytes.
struct TestKVCache {
  AlignedMemory memory;
  einfer::Arena arena;
  einfer::KVCache cache;
  explicit TestKVCache(const einfer::KVCacheConfig& config)
      : memory(einfer::kv_cache_bytes(config)), arena(memory.base, memory.bytes) {
    REQUIRE(einfer::kv_cache_init(config, arena, &cache).ok());
  }
};

// An encoder's weights and state for sequences up to `seq`, in an arena of exactly
// encoder_arena_bytes.
struct EncoderRun {
  AlignedMemory memory;
  einfer::Arena arena;
  einfer::EncoderWeights w;
  einfer::EncoderState s;
  static size_t bytes(const einfer::Model& m, int32_t seq) {
    size_t need = 0;
    REQUIRE(einfer::encoder_arena_bytes(m.config, seq, &need).ok());
    return need;
  }
  EncoderRun(const einfer::Model& m, int32_t seq)
      : memory(bytes(m, seq)), arena(memory.base, memory.bytes) {
    REQUIRE(einfer::encoder_bind_weights(m, arena, &w).ok());
    REQUIRE(einfer::encoder_state_init(m.config, seq, arena, &s).ok());
  }
};

}  // namespace einfer_test
