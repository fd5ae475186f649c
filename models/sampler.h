// Sampler: the next token id from a vector of logits (greedy, temperature, top-k, top-p).
//
// As in llama2.c: temperature 0 takes the argmax (lowest index on ties). Otherwise the logits are
// divided by the temperature, softmaxed, optionally filtered, and one token is drawn with a coin
// from a seeded xorshift64* generator. Filtering, when enabled:
//   top_k in (0, vocab): only the k most probable tokens stay candidates;
//   top_p in (0, 1):    only the nucleus stays: the most probable tokens, in order, up to and
//                       including the first one at which the cumulative probability exceeds top_p.
// Both together keep the intersection (the shorter of the two prefixes of the sorted order). The
// token is drawn among the candidates in proportion to their probabilities.
//
// Reproducible: the same seed gives the same sequence on every platform. Probabilities are sorted
// by (probability desc, index asc), a total order, and the softmax uses its own exp built from
// IEEE basic operations (not libm, not SIMD).
//
// No heap: the caller passes sampler_scratch_bytes(vocab) bytes of scratch, kept by the sampler.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace einfer {

struct SamplerConfig {
  float temperature = 1.0f;  // 0: greedy; must be finite and >= 0
  int32_t top_k = 0;         // 0 (or >= vocab): off
  float top_p = 1.0f;        // in (0, 1]; 1: off
  uint64_t seed = 0;         // 0 is replaced by a fixed non-zero constant (xorshift needs one)
};

struct ProbIndex {
  float prob;
  int32_t index;
};

struct Sampler {
  SamplerConfig config;
  int32_t vocab_size = 0;
  ProbIndex* candidates = nullptr;  // vocab_size entries of caller scratch
  uint64_t rng_state = 0;
};

size_t sampler_scratch_bytes(int32_t vocab_size);

// invalid_argument for a bad config or vocab_size <= 0; out_of_memory for short scratch.
Status sampler_init(Sampler* sampler, const SamplerConfig& config, int32_t vocab_size,
                    void* scratch, size_t scratch_bytes);

// Draws the next token. logits (vocab_size floats) is overwritten with probabilities (unless
// temperature is 0). sampler must have been initialised successfully.
int32_t sampler_sample(Sampler* sampler, float* logits);

// The generator, exposed for tests: xorshift64* (state must be non-zero); f32 is in [0, 1).
uint32_t sampler_random_u32(uint64_t* state);
float sampler_random_f32(uint64_t* state);

// Index of the largest value (lowest index on ties); n > 0.
int32_t sampler_argmax(const float* values, int32_t n);

// In-place softmax with the sampler's deterministic exp (sequential sums; n > 0).
void sampler_softmax(float* values, int32_t n);

}  // namespace einfer
