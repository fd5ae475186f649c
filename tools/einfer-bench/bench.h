// einfer-bench internals shared by its files: options (options.cpp), model setup and timed
// passes (measure.cpp), report output (report.cpp), the smoke check and main (main.cpp).
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/isa/isa.h"
#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"
#include "models/profile.h"
#include "models/sampler.h"
#include "models/session.h"
#include "runtime/format.h"
#include "tools/common/bench_probes.h"
#include "tools/common/file.h"
#include "tools/common/thread_pool.h"
#include "tools/einfer-bench/bench_kernels.h"
#include "tools/einfer-pack/importers.h"

namespace einfer::bench {

using tools::stream_read;
using tools::thread_ns;

[[noreturn]] void fail(const char* what, const Status& s);
[[noreturn]] void usage(const char* why);

// ---------------------------------------------------------------------------------------------
// Arguments

struct Args {
  std::string model;
  std::string synthetic;
  long prompt = 128;
  long gen = 32;
  std::vector<long> contexts = {128, 512, 2048};
  RunOptions run;
  long repeat = 3;
  std::string json;           // --json FILE (the full report)
  std::string svg;            // --svg FILE
  std::string output = "md";  // -o: md | csv | json | jsonl (to stdout), text (the full report)
  int threads = 1;            // -t / --threads: the worker pool (default: the online cores)
  bool verbose = false;
  bool smoke = false;
  bool ratio_check = true;
  bool kernels = false;
  bool quick = false;
};

// Parses argv (tools/common/cli.h). Returns true to run; false to exit with *exit_code.
bool parse(int argc, char** argv, Args* a, int* exit_code);

// Mean and sample standard deviation (0 for fewer than two values).
struct MeanSd {
  double mean = 0, sd = 0;
};
MeanSd mean_sd(const std::vector<double>& v);

// Wall-clock seconds (steady clock): what a user waits; the thread CPU clock is kept beside it.
double wall_seconds();

// xorshift64*: the same benchmark tokens and smoke inputs on every platform.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ull) {}
  uint64_t next() {
    s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  // Uniform with standard deviation `sd`.
  float uniform(float sd) {
    const float u = static_cast<float>(next() >> 40) / 16777216.f;  // [0, 1)
    return (2.f * u - 1.f) * sd * 1.7320508f;
  }
};

// --synthetic keys left out take stories15M's shape (pack::SyntheticSpec, einfer_pack_lib).
inline constexpr pack::SyntheticSpec kBenchSyntheticDefaults = {
    .dim = 288, .hidden = 768, .layers = 6, .heads = 6, .kv_heads = 0, .vocab = 32000, .seq = 256};

struct StepCost {
  double projection_bytes = 0, ffn_bytes = 0, classifier_bytes = 0, other_bytes = 0, kv_bytes = 0;
  double projection_flops = 0, ffn_flops = 0, classifier_flops = 0, attention_flops = 0;
  double bytes() const {
    return projection_bytes + ffn_bytes + classifier_bytes + other_bytes + kv_bytes;
  }
  double flops() const { return projection_flops + ffn_flops + classifier_flops + attention_flops; }
};

// Bytes one decode step reads and flops it does when the token attends `attended` positions.
StepCost decode_cost(const LlamaWeights& w, const KVCache& cache, int64_t attended);

// The bandwidth probe's buffer: huge-page memory like the model's (tools::LargeBuffer), so the
// bound is read through the same page size as the weights.
struct StreamBuffer {
  tools::LargeBuffer mem;
  int32_t* p = nullptr;
  size_t n = 0;
};

// Nearest-rank percentile (q in [0, 1]) of unsorted samples.
double percentile(std::vector<double> v, double q);
// Median cost of one thread_ns() read (see measure.cpp).
double clock_read_ns();
// Median read bandwidth in GB/s over the first `bytes` of the buffer (grown as needed).
double measure_bandwidth(StreamBuffer* buf, size_t bytes);
// FMA peak of the selected SIMD path in GFLOP/s.
double measure_fma_peak();

inline const char* const kStageNames[kStageCount] = {"projections", "attention",  "feed_forward",
                                                     "norms_rope",  "classifier", "sampling"};

struct StageSplit {
  double ns_per_token[kStageCount] = {};
  double total_ns_per_token = 0;
};

extern double g_clock_ns;  // clock_read_ns(), measured once at start-up
// The benchmark clock: the thread's CPU time with one thread (immune to sharing the board), the
// monotonic wall clock with more (CPU time would add up the workers' time).
extern uint64_t (*g_now_ns)();
extern const char* g_clock_name;  // "thread_cputime" or "monotonic_wall"
uint64_t wall_ns();
StageSplit split_of(const StageProfile& p, double tokens);

struct PrefillResult {
  int64_t tokens = 0;
  double seconds = 0;  // median, thread CPU time
  double tokens_per_s = 0;
  std::vector<double> wall_tokens_per_s;   // one per repetition, wall clock
  double gemm_flops = 0, gemm_gflops = 0;  // projections + feed-forward, from the profiled pass
  double projection_gflops = 0, ffn_gflops = 0;
  StageSplit stages;              // per prompt token
  double seconds_one_thread = 0;  // with threads > 1: median of 1-thread passes alternated
  double speedup = 0;             // seconds_one_thread / seconds (threads > 1)
};

struct DecodeResult {
  int64_t context = 0, attended = 0;
  std::vector<double> latency_ms;
  std::vector<double> latency_one_ms;  // threads > 1: 1-thread passes alternated with the others
  double p50_one = 0, speedup = 0;     // 1-thread median latency; p50_one / p50
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double tokens_per_s = 0;                // from the median latency
  std::vector<double> wall_tokens_per_s;  // one per repetition (--gen tokens), wall clock
  StepCost cost;
  double bandwidth_gbps = 0;  // streaming read over cost.bytes()
  double achieved_gbps = 0, achieved_gflops = 0;
  double decode_fraction = 0, compute_fraction = 0;
  size_t kv_bytes_at_context = 0, arena_bytes_at_context = 0;
  StageSplit stages;
};

struct Bench {
  Session* session = nullptr;
  einfer_threads workers{nullptr, 1, nullptr};  // the pool (n == 1: none)
  int n_threads() const { return workers.run ? workers.n : 1; }
  // Runs the next calls on every worker, or on the calling thread only (the arena has a slot per
  // worker either way; one thread uses the first).
  void use_workers(bool all) {
    session->state.options.threads = all ? workers : einfer_threads{nullptr, workers.n, nullptr};
  }
  Sampler sampler;
  Rng rng{42};
  int32_t next_token() {
    return static_cast<int32_t>(rng.next() % uint64_t(session->weights.config.vocab_size));
  }

  void eval(const int32_t* tokens, int32_t n) {
    const Status s = session_eval(session, tokens, n);
    if (!s.ok()) fail("forward", s);
  }

  // Steps the stream back to position `pos` so a pass of decode steps can be repeated at the same
  // context. Without a window the cache still holds every position below pos; with one, ring slots
  // overwritten since hold later positions, which changes values but not the work timed.
  void rewind(int64_t pos) {
    LlamaState& st = session->state;
    st.pos = std::min(st.pos, pos);
    for (int32_t l = 0; l < st.cache.config.n_layers; ++l) {
      st.cache.n_positions[l] = std::min(st.cache.n_positions[l], st.pos);
    }
  }

  // Fills the cache with random tokens up to position `target` (exclusive).
  void fill_to(int64_t target) {
    LlamaState& st = session->state;
    rewind(target);
    std::vector<int32_t> toks;
    while (st.pos < target) {
      const int64_t n = std::min<int64_t>(target - st.pos, 4096);
      toks.resize(static_cast<size_t>(n));
      for (auto& t : toks) t = next_token();
      eval(toks.data(), static_cast<int32_t>(n));
    }
  }

  // One decode step (forward + greedy sampling); returns the sampled token.
  int32_t step(int32_t token, StageProfile* prof) {
    eval(&token, 1);
    const uint64_t t = profile_start(prof);
    const int32_t next = sampler_sample(&sampler, session->state.logits);
    profile_charge(prof, Stage::sampling, t);
    return next;
  }
};

PrefillResult bench_prefill(Bench& b, int64_t n, long repeat);
DecodeResult bench_decode(Bench& b, int64_t context, long gen, long repeat, StreamBuffer* stream,
                          double peak_gflops);

struct Report {
  std::string source;
  int threads = 1;
  ModelConfig config;
  RunOptions run;
  Args args;
  size_t weights_bytes = 0, kv_bytes = 0, arena_bytes = 0;
  double peak_gflops = 0;
  PrefillResult prefill;
  std::vector<DecodeResult> decode;
};

void write_json(const Report& r, const char* path);
// Two panels against context length (log2 axis): decode tokens/s, and memory (MB).
void write_svg(const Report& r, const char* path);
// The full human report (model, build, memory, roofline, latency, stage split).
void print_report(const Report& r, std::FILE* out);
// The summary table (llama-bench style) to `out`: format md, csv, json or jsonl.
void print_table(const Report& r, const std::string& format, std::FILE* out);

// A progress line on stderr, only when stderr is a terminal (quiet in pipes, logs and CI).
void progress(const char* what, int done, int total);

}  // namespace einfer::bench
