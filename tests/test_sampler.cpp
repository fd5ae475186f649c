// Sampler: greedy, reproducibility, the sampled distribution against softmax, top-k / top-p
// candidate sets computed independently here, config validation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "models/sampler.h"

using namespace einfer;

namespace {

struct TestSampler {
  std::vector<ProbIndex> scratch;
  Sampler sampler;
  Status status;
  TestSampler(const SamplerConfig& config, int32_t vocab)
      : scratch(static_cast<size_t>(vocab > 0 ? vocab : 1)) {
    status = sampler_init(&sampler, config, vocab, scratch.data(), sampler_scratch_bytes(vocab));
  }
  int32_t sample(std::vector<float> logits) { return sampler_sample(&sampler, logits.data()); }
};

// Reproducible pseudo-random logits for the tests (not the sampler's generator).
std::vector<float> test_logits(int32_t n, uint32_t seed, float spread) {
  std::vector<float> v(static_cast<size_t>(n));
  uint32_t x = seed;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = spread * (static_cast<float>(x >> 8) / 16777216.0f - 0.5f);
  }
  return v;
}

std::vector<double> softmax_double(const std::vector<float>& logits, double temperature) {
  const double m = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp((logits[i] - m) / temperature);
  for (auto& x : p) x /= sum;
  return p;
}

// Indices by descending probability (ties: lower index first).
std::vector<int32_t> order_by_prob(const std::vector<double>& p) {
  std::vector<int32_t> idx(p.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return p[a] > p[b]; });
  return idx;
}

// Pearson chi-square statistic of observed counts against expected probabilities.
double chi_square(const std::vector<int>& counts, const std::vector<double>& p, int total) {
  double chi2 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] * total;
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi2;
}

}  // namespace

TEST_CASE("sampler: xorshift64* matches values computed with Python integers") {
  // Reference: state ^= state >> 12; ^= << 25; ^= >> 27; (state * 0x2545F4914F6CDD1D) >> 32,
  // evaluated with Python's arbitrary-precision integers for seed 42.
  uint64_t state = 42;
  CHECK(sampler_random_u32(&state) == 1456360119u);
  CHECK(sampler_random_u32(&state) == 3359763283u);
  CHECK(sampler_random_u32(&state) == 3393612768u);
  CHECK(sampler_random_u32(&state) == 4054632243u);
  for (int i = 0; i < 1000; ++i) {
    const float f = sampler_random_f32(&state);
    REQUIRE(f >= 0.0f);
    REQUIRE(f < 1.0f);
  }
}

TEST_CASE("sampler: greedy is the argmax, lowest index on ties; temperature 0 is greedy") {
  CHECK(sampler_argmax(std::vector<float>{1, 3, 2, 3}.data(), 4) == 1);
  CHECK(sampler_argmax(std::vector<float>{-5, -7, -1}.data(), 3) == 2);
  CHECK(sampler_argmax(std::vector<float>{0}.data(), 1) == 0);
  SamplerConfig greedy;
  greedy.temperature = 0.0f;
  greedy.top_k = 3;  // ignored by greedy
  greedy.top_p = 0.5f;
  TestSampler s(greedy, 300);
  REQUIRE(s.status.ok());
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const auto logits = test_logits(300, seed, 10.0f);
    const int32_t expect =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    CHECK(s.sample(logits) == expect);
  }
}

TEST_CASE("sampler: same seed, same sequence; different seed, different sequence") {
  SamplerConfig c;
  c.temperature = 1.0f;
  c.seed = 1234;
  TestSampler a(c, 64), b(c, 64);
  c.seed = 1235;
  TestSampler other(c, 64);
  REQUIRE(a.status.ok());
  const auto logits = test_logits(64, 7, 2.0f);  // flat-ish: many likely tokens
  int differ = 0;
  for (int i = 0; i < 200; ++i) {
    const int32_t x = a.sample(logits);
    CHECK(x == b.sample(logits));
    differ += x != other.sample(logits);
  }
  CHECK(differ > 100);
  // Seed 0 still samples (it is replaced by a non-zero state).
  c.seed = 0;
  TestSampler zero(c, 64);
  REQUIRE(zero.status.ok());
  int distinct_first = -1, changes = 0;
  for (int i = 0; i < 50; ++i) {
    const int32_t x = zero.sample(logits);
    changes += distinct_first >= 0 && x != distinct_first;
    distinct_first = x;
  }
  CHECK(changes > 10);
}

TEST_CASE("sampler: softmax matches a double-precision reference") {
  // Shift so the maximum is exactly 0: the sampler's own x - max is then exact and the figure
  // measures exp and normalisation (float rounding of x - max alone would add ~ulp(40) = 4e-6).
  auto logits = test_logits(1000, 3, 40.0f);
  const float m = *std::max_element(logits.begin(), logits.end());
  for (auto& x : logits) x -= m;
  const auto ref = softmax_double(logits, 1.0);
  sampler_softmax(logits.data(), 1000);
  double max_rel = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (ref[i] < 1e-30) continue;  // beyond float's exp range the sampler returns 0
    max_rel = std::max(max_rel, std::fabs(logits[i] - ref[i]) / ref[i]);
  }
  CHECK(max_rel < 2e-6);
}

TEST_CASE("sampler: 20000 draws at temperature 1 follow the softmax (chi-square)") {
  // 8 tokens: 7 degrees of freedom. The 99.9% quantile of chi-square(7) is 24.32; the seed is
  // fixed, so the outcome is reproducible, and a wrong distribution (e.g. temperature ignored,
  // off-by-one in the cdf) gives statistics in the hundreds.
  const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 0.0f, 1.0f, -0.5f, 1.5f, -2.0f};
  for (float temperature : {1.0f, 0.7f}) {
    SamplerConfig c;
    c.temperature = temperature;
    c.seed = 20240607;
    TestSampler s(c, 8);
    REQUIRE(s.status.ok());
    const int total = 20000;
    std::vector<int> counts(8, 0);
    for (int i = 0; i < total; ++i) counts[static_cast<size_t>(s.sample(logits))]++;
    const double chi2 = chi_square(counts, softmax_double(logits, temperature), total);
    INFO("temperature " << temperature << " chi2 " << chi2);
    CHECK(chi2 < 24.32);
  }
}

TEST_CASE("sampler: top-k draws only the k most probable, in proportion") {
  const int32_t n = 50, k = 5;
  const auto logits = test_logits(n, 11, 6.0f);
  const auto p = softmax_double(logits, 1.0);
  const auto order = order_by_prob(p);
  std::vector<bool> in_top(n, false);
  double kept = 0;
  for (int32_t i = 0; i < k; ++i) {
    in_top[static_cast<size_t>(order[i])] = true;
    kept += p[static_cast<size_t>(order[i])];
  }
  SamplerConfig c;
  c.top_k = k;
  c.seed = 99;
  TestSampler s(c, n);
  REQUIRE(s.status.ok());
  const int total = 20000;
  std::vector<int> counts(n, 0);
  for (int i = 0; i < total; ++i) {
    const int32_t t = s.sample(logits);
    REQUIRE(t >= 0);
    REQUIRE(t < n);
    CHECK(in_top[static_cast<size_t>(t)]);
    counts[static_cast<size_t>(t)]++;
  }
  // Within the top k: proportional to the renormalised probabilities. chi-square(4) 99.9%: 18.47.
  std::vector<int> top_counts;
  std::vector<double> top_p;
  for (int32_t i = 0; i < k; ++i) {
    top_counts.push_back(counts[static_cast<size_t>(order[i])]);
    top_p.push_back(p[static_cast<size_t>(order[i])] / kept);
  }
  CHECK(chi_square(top_counts, top_p, total) < 18.47);
}

TEST_CASE("sampler: top-p draws only from the nucleus") {
  const int32_t n = 200;
  for (float top_p : {0.3f, 0.7f, 0.9f}) {
    const auto logits = test_logits(n, 5, 8.0f);
    const auto p = softmax_double(logits, 1.0);
    const auto order = order_by_prob(p);
    // Nucleus: most probable first, up to and including the token where the cumulative mass
    // first exceeds top_p. Require a clear margin so float rounding cannot move the boundary.
    std::vector<bool> in_nucleus(n, false);
    double cum = 0;
    size_t size = 0;
    for (int32_t idx : order) {
      const double before = cum;
      cum += p[static_cast<size_t>(idx)];
      in_nucleus[static_cast<size_t>(idx)] = true;
      ++size;
      if (cum > top_p) {
        REQUIRE(before < top_p - 1e-4);
        REQUIRE(cum > top_p + 1e-4);
        break;
      }
    }
    REQUIRE(size > 1);
    REQUIRE(size < static_cast<size_t>(n) / 2);
    SamplerConfig c;
    c.top_p = top_p;
    c.seed = 7;
    TestSampler s(c, n);
    REQUIRE(s.status.ok());
    std::vector<bool> seen(n, false);
    for (int i = 0; i < 5000; ++i) {
      const int32_t t = s.sample(logits);
      REQUIRE(t >= 0);
      REQUIRE(t < n);
      CHECK(in_nucleus[static_cast<size_t>(t)]);
      seen[static_cast<size_t>(t)] = true;
    }
    INFO("top_p " << top_p << " nucleus size " << size);
    CHECK(std::count(seen.begin(), seen.end(), true) == static_cast<long>(size));
  }
}

TEST_CASE("sampler: top-k with top-p keeps the intersection") {
  const int32_t n = 200;
  const auto logits = test_logits(n, 5, 8.0f);
  const auto order = order_by_prob(softmax_double(logits, 1.0));
  SamplerConfig c;
  c.top_p = 0.9f;  // nucleus larger than 3 tokens (checked by the top-p case above)
  c.top_k = 3;
  c.seed = 3;
  TestSampler s(c, n);
  REQUIRE(s.status.ok());
  std::vector<int> counts(n, 0);
  for (int i = 0; i < 3000; ++i) counts[static_cast<size_t>(s.sample(logits))]++;
  int in_top3 = 0;
  for (int i = 0; i < 3; ++i) in_top3 += counts[static_cast<size_t>(order[i])] > 0;
  CHECK(in_top3 == 3);
  CHECK(std::accumulate(counts.begin(), counts.end(), 0) ==
        counts[static_cast<size_t>(order[0])] + counts[static_cast<size_t>(order[1])] +
            counts[static_cast<size_t>(order[2])]);
}

TEST_CASE("sampler: a top_p too small for llama2.c's pre-filter still returns the top token") {
  // Uniform logits, top_p < 1/n: every probability is below the cut-off (llama2.c would read
  // index -1 here). The nucleus is the single most probable token: index 0 by the tie rule.
  SamplerConfig c;
  c.top_p = 0.001f;
  TestSampler s(c, 512);
  REQUIRE(s.status.ok());
  for (int i = 0; i < 10; ++i) CHECK(s.sample(std::vector<float>(512, 0.25f)) == 0);
}

TEST_CASE("sampler: invalid configurations are rejected") {
  auto code = [](SamplerConfig c, int32_t vocab = 10) { return TestSampler(c, vocab).status.code; };
  SamplerConfig c;
  CHECK(code(c) == StatusCode::ok);
  c.temperature = -0.1f;
  CHECK(code(c) == StatusCode::invalid_argument);
  c.temperature = NAN;
  CHECK(code(c) == StatusCode::invalid_argument);
  c.temperature = INFINITY;
  CHECK(code(c) == StatusCode::invalid_argument);
  c = SamplerConfig{};
  for (float bad : {0.0f, -0.5f, 1.01f, NAN}) {
    c.top_p = bad;
    CHECK(code(c) == StatusCode::invalid_argument);
  }
  c.top_p = 1.0f;
  c.top_k = -1;
  CHECK(code(c) == StatusCode::invalid_argument);
  c.top_k = 0;
  CHECK(code(c, 0) == StatusCode::invalid_argument);
  Sampler s;
  std::vector<ProbIndex> small(9);
  CHECK(sampler_init(&s, c, 10, small.data(), 9 * sizeof(ProbIndex)).code ==
        StatusCode::out_of_memory);
  CHECK(sampler_init(&s, c, 10, nullptr, 1000).code == StatusCode::out_of_memory);
}
