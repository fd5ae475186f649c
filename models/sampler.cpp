// Sampler: greedy, temperature, top-k and top-p sampling over caller scratch (see sampler.h).
#include "models/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/vec/vec.h"

namespace einfer {
namespace {

constexpr uint64_t kZeroSeedReplacement = 0x9E3779B97F4A7C15ull;

// exp(x) for x <= 0 (softmax after max subtraction) from IEEE basic operations only, so every
// platform computes the same bits: x = k ln2 + r, |r| <= ln2/2, exp(r) by its degree-7 Taylor
// polynomial (relative error < 2e-7), times 2^k. One operation per statement so no compiler may
// fuse a multiply-add (clang's default -ffp-contract=on fuses within an expression).
float deterministic_exp(float x) {
  if (!(x > -87.0f)) return 0.0f;  // below FLT_MIN (and NaN): probability 0
  if (x > 88.0f) x = 88.0f;
  float t = x * 1.44269504088896341f;
  t = t + 0.5f;
  const float k = std::floor(t);
  // ln 2 split in two (Cephes): k * kLn2Hi is exact for |k| < 2^12.
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  float hi = k * kLn2Hi;
  float r = x - hi;
  float lo = k * kLn2Lo;
  r = r - lo;
  constexpr float c[8] = {1.0f,         1.0f,          0.5f,          1.0f / 6.0f,
                          1.0f / 24.0f, 1.0f / 120.0f, 1.0f / 720.0f, 1.0f / 5040.0f};
  float p = c[7];
  for (int i = 6; i >= 0; --i) {
    p = p * r;
    p = p + c[i];
  }
  const int32_t exponent = static_cast<int32_t>(k) + 127;  // in [1, 254] for x in (-87, 88]
  const uint32_t bits = static_cast<uint32_t>(exponent) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

// Total order: more probable first, lower index first among equals. Being total, any correct
// sort gives the same sequence, whatever the standard library.
bool more_probable(const ProbIndex& a, const ProbIndex& b) {
  if (a.prob != b.prob) return a.prob > b.prob;
  return a.index < b.index;
}

// Draw from probs (summing to ~1) with coin in [0, 1): llama2.c sample_mult.
int32_t sample_multinomial(const float* probs, int32_t n, float coin) {
  float cdf = 0.0f;
  for (int32_t i = 0; i < n; ++i) {
    cdf += probs[i];
    if (coin < cdf) return i;
  }
  return n - 1;  // rounding
}

int32_t sample_filtered(const Sampler& s, const float* probs, float coin) {
  const int32_t n = s.vocab_size;
  const bool use_top_p = s.config.top_p < 1.0f;
  const bool use_top_k = s.config.top_k > 0 && s.config.top_k < n;
  ProbIndex* cand = s.candidates;

  // Tokens below (1 - top_p) / (n - 1) cannot be in the nucleus (llama2.c's speed-up): the
  // tokens below the cutoff hold at most 1 - top_p together. Skipped with top-k alone, and
  // undone when nothing passes (possible for top_p < 1/n; llama2.c then reads index -1).
  int32_t n0 = 0;
  if (use_top_p && n > 1) {
    const float cutoff = (1.0f - s.config.top_p) / static_cast<float>(n - 1);
    for (int32_t i = 0; i < n; ++i) {
      if (probs[i] >= cutoff) cand[n0++] = ProbIndex{probs[i], i};
    }
  }
  if (n0 == 0) {
    for (int32_t i = 0; i < n; ++i) cand[i] = ProbIndex{probs[i], i};
    n0 = n;
  }

  // std::sort / std::partial_sort sort in place (introsort / heap): no allocation.
  if (use_top_k && s.config.top_k < n0) {
    std::partial_sort(cand, cand + s.config.top_k, cand + n0, more_probable);
    n0 = s.config.top_k;
  } else {
    std::sort(cand, cand + n0, more_probable);
  }

  float mass = 0.0f;
  int32_t last = n0 - 1;
  for (int32_t i = 0; i < n0; ++i) {
    mass += cand[i].prob;
    if (use_top_p && mass > s.config.top_p) {
      last = i;
      break;
    }
  }
  const float r = coin * mass;
  float cdf = 0.0f;
  for (int32_t i = 0; i <= last; ++i) {
    cdf += cand[i].prob;
    if (r < cdf) return cand[i].index;
  }
  return cand[last].index;  // rounding
}

}  // namespace

uint32_t sampler_random_u32(uint64_t* state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return static_cast<uint32_t>((*state * 0x2545F4914F6CDD1Dull) >> 32);
}

float sampler_random_f32(uint64_t* state) {
  return static_cast<float>(sampler_random_u32(state) >> 8) / 16777216.0f;  // 24 bits: exact
}

int32_t sampler_argmax(const float* values, int32_t n) {
  return n > 0 ? static_cast<int32_t>(argmax_f32(values, static_cast<size_t>(n))) : 0;
}

void sampler_softmax(float* values, int32_t n) {
  float max_value = values[0];
  for (int32_t i = 1; i < n; ++i) max_value = values[i] > max_value ? values[i] : max_value;
  float sum = 0.0f;
  for (int32_t i = 0; i < n; ++i) {
    values[i] = deterministic_exp(values[i] - max_value);
    sum += values[i];
  }
  for (int32_t i = 0; i < n; ++i) values[i] /= sum;
}

size_t sampler_scratch_bytes(int32_t vocab_size) {
  return vocab_size > 0 ? static_cast<size_t>(vocab_size) * sizeof(ProbIndex) : 0;
}

Status sampler_init(Sampler* sampler, const SamplerConfig& config, int32_t vocab_size,
                    void* scratch, size_t scratch_bytes) {
  if (sampler == nullptr) {
    return make_status(StatusCode::invalid_argument, "sampler_init: null sampler");
  }
  *sampler = Sampler{};
  if (vocab_size <= 0) {
    return make_status(StatusCode::invalid_argument, "sampler vocab_size must be positive",
                       vocab_size);
  }
  if (!(config.temperature >= 0.0f) || std::isinf(config.temperature)) {
    return make_status(StatusCode::invalid_argument, "sampler temperature must be finite and >= 0");
  }
  if (!(config.top_p > 0.0f && config.top_p <= 1.0f)) {
    return make_status(StatusCode::invalid_argument, "sampler top_p must be in (0, 1]");
  }
  if (config.top_k < 0) {
    return make_status(StatusCode::invalid_argument, "sampler top_k must be >= 0 (0: off)",
                       config.top_k);
  }
  const size_t need = sampler_scratch_bytes(vocab_size);
  if (scratch == nullptr || scratch_bytes < need ||
      reinterpret_cast<uintptr_t>(scratch) % alignof(ProbIndex) != 0) {
    return make_status(StatusCode::out_of_memory,
                       "sampler scratch too small or not 4-byte aligned: bytes",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  }
  sampler->config = config;
  sampler->vocab_size = vocab_size;
  sampler->candidates = static_cast<ProbIndex*>(scratch);
  sampler->rng_state = config.seed != 0 ? config.seed : kZeroSeedReplacement;
  return ok_status();
}

int32_t sampler_sample(Sampler* sampler, float* logits) {
  const int32_t n = sampler->vocab_size;
  if (sampler->config.temperature == 0.0f) return sampler_argmax(logits, n);
  for (int32_t i = 0; i < n; ++i) logits[i] /= sampler->config.temperature;
  sampler_softmax(logits, n);
  // Non-finite logits (a hostile model) give NaN probabilities, which break the sort's ordering
  // (undefined behaviour in std::sort): they count as impossible instead.
  for (int32_t i = 0; i < n; ++i)
    if (!(logits[i] >= 0.0f)) logits[i] = 0.0f;
  const float coin = sampler_random_f32(&sampler->rng_state);
  const bool filtered =
      sampler->config.top_p < 1.0f || (sampler->config.top_k > 0 && sampler->config.top_k < n);
  if (!filtered) return sample_multinomial(logits, n, coin);
  return sample_filtered(*sampler, logits, coin);
}

}  // namespace einfer
