// einfer-bench: on-device benchmark of a llama model against the machine's own physical limits.
//
//   einfer-bench MODEL.ein | --synthetic
//   "dim=288,hidden=768,layers=6,heads=6,kv_heads=6,vocab=32000,
//                seq=256,dtype=q8" [--prompt N] [--gen N] [--contexts 128,512,2048] [--window W]
//                [--kv f32|q8] [--batch B] [--repeat R] [--json FILE] [--svg FILE] [--smoke]
//   einfer-bench --smoke      SIMD vs scalar f32 GEMV in this process; fails below 2x
//   einfer-bench --kernels [--quick]   the einsum, vector, quant and attention microbenchmarks
//                             (runs einfer-kernel-bench, -vec-bench, -quant-bench, -attn-bench)
//
// What it measures, single thread, times in thread CPU time (the board may be shared):
//   prefill tokens/s of --prompt tokens; decode tokens/s and per-token latency percentiles at each
//   context C (cache filled to C-1 positions, then --gen tokens x --repeat, greedy sampling
//   included); the time split by stage (one extra profiled pass, clock-read cost subtracted, so the
//   timed passes run with the profiling hook off); arena, weight and KV bytes.
// Roofline, measured in the same run: streaming-read bandwidth over a buffer as large as the bytes
// one decode step reads (weights touched + KV attended, so the same cache level is measured), and
// the FMA peak of the selected SIMD path (register-resident loop). decode_fraction is
// (bytes per token / bandwidth) / measured time per token: 1.0 means the decode runs at the
// memory bound. Prefill GEMMs are compared with the FMA peak.
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "kernels/gemm_f32.h"
#include "kernels/simd.h"
#include "kernels/vec.h"
#include "models/profile.h"
#include "models/sampler.h"
#include "models/session.h"
#include "runtime/format.h"
#include "tools/common/bench_probes.h"
#include "tools/common/file.h"
#include "tools/einfer-bench/bench_kernels.h"
#include "tools/einfer-pack/importers.h"

#ifndef EINFER_BENCH_COMPILER
#define EINFER_BENCH_COMPILER "unknown"
#endif
#ifndef EINFER_BENCH_FLAGS
#define EINFER_BENCH_FLAGS ""
#endif
#ifndef EINFER_BENCH_COMMIT
#define EINFER_BENCH_COMMIT "unknown"
#endif

using namespace einfer;
using tools::stream_read;
using tools::thread_ns;

namespace {

// ---------------------------------------------------------------------------------------------
// Clocks and statistics

// Nearest-rank percentile (q in [0, 1]) of unsorted samples.
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  if (i > 0) --i;
  return v[std::min(i, v.size() - 1)];
}

// Cost of one thread_ns() read (median), subtracted from every profiled stage interval: the
// thread CPU clock is a system call (~0.3 us), which matters at dozens of reads per token. The
// monotonic clock would be cheaper but counts time the thread spends descheduled.
double clock_read_ns() {
  std::vector<double> d;
  for (int i = 0; i < 2001; ++i) {
    const uint64_t t0 = thread_ns();
    const uint64_t t1 = thread_ns();
    d.push_back(double(t1 - t0));
  }
  return percentile(d, 0.5);
}

[[noreturn]] void fail(const char* what, const Status& s) {
  char msg[256];
  format_status(s, msg, sizeof msg);
  std::fprintf(stderr, "einfer-bench: %s: %s\n", what, msg);
  std::exit(1);
}

[[noreturn]] void usage(const char* why) {
  if (why) std::fprintf(stderr, "einfer-bench: %s\n", why);
  std::fprintf(
      stderr,
      "usage: einfer-bench MODEL.ein | --synthetic "
      "\"dim=288,hidden=768,layers=6,heads=6,kv_heads=6,"
      "vocab=32000,seq=256,dtype=q8\"\n"
      "         [--prompt N] [--gen N] [--contexts 128,512,2048] [--window W] [--kv f32|q8]\n"
      "         [--batch B] [--repeat R] [--json FILE] [--svg FILE] [--smoke]\n"
      "       einfer-bench --smoke       SIMD vs scalar f32 GEMV (needs >= 2x)\n"
      "       einfer-bench --kernels [--quick]   einsum, vector, quant and attention "
      "microbenchmarks\n"
      "synthetic keys: dim hidden layers heads kv_heads vocab seq dtype(f32|f16|q8|q4) group seed "
      "tied(0|1)\n");
  std::exit(2);
}

// ---------------------------------------------------------------------------------------------
// Arguments

struct Args {
  const char* model = nullptr;
  const char* synthetic = nullptr;
  long prompt = 128;
  long gen = 32;
  std::vector<long> contexts = {128, 512, 2048};
  RunOptions run;
  long repeat = 3;
  const char* json = nullptr;
  const char* svg = nullptr;
  bool smoke = false;
  bool ratio_check = true;
  bool kernels = false;
  bool quick = false;
};

bool parse_long_strict(const char* v, long* out) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (!v[0] || *end || errno) return false;
  *out = x;
  return true;
}

long parse_count(const char* flag, const char* v, long lo) {
  long x = 0;
  if (!parse_long_strict(v, &x) || x < lo || x > (1l << 30)) {
    std::fprintf(stderr, "einfer-bench: %s needs an integer >= %ld, got '%s'\n", flag, lo, v);
    std::exit(2);
  }
  return x;
}

std::vector<long> parse_contexts(const char* v) {
  std::vector<long> out;
  std::string s(v);
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    long c = 0;
    if (!parse_long_strict(item.c_str(), &c) || c < 1 || c > (1l << 24)) {
      std::fprintf(stderr, "einfer-bench: --contexts: '%s' is not a positive integer\n",
                   item.c_str());
      std::exit(2);
    }
    out.push_back(c);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const char* f = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "einfer-bench: %s needs a value\n", f);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(f, "--synthetic"))
      a.synthetic = value();
    else if (!std::strcmp(f, "--prompt"))
      a.prompt = parse_count(f, value(), 1);
    else if (!std::strcmp(f, "--gen"))
      a.gen = parse_count(f, value(), 1);
    else if (!std::strcmp(f, "--contexts"))
      a.contexts = parse_contexts(value());
    else if (!std::strcmp(f, "--window"))
      a.run.window = static_cast<int32_t>(parse_count(f, value(), 0));
    else if (!std::strcmp(f, "--sinks"))
      a.run.sinks = static_cast<int32_t>(parse_count(f, value(), 0));
    else if (!std::strcmp(f, "--batch"))
      a.run.max_batch = static_cast<int32_t>(parse_count(f, value(), 1));
    else if (!std::strcmp(f, "--repeat"))
      a.repeat = parse_count(f, value(), 1);
    else if (!std::strcmp(f, "--json"))
      a.json = value();
    else if (!std::strcmp(f, "--svg"))
      a.svg = value();
    else if (!std::strcmp(f, "--smoke"))
      a.smoke = true;
    else if (!std::strcmp(f, "--no-ratio-check"))
      a.ratio_check = false;
    else if (!std::strcmp(f, "--kernels"))
      a.kernels = true;
    else if (!std::strcmp(f, "--quick"))
      a.quick = true;
    else if (!std::strcmp(f, "--kv")) {
      const char* v = value();
      if (!std::strcmp(v, "f32"))
        a.run.kv_dtype = DType::f32;
      else if (!std::strcmp(v, "q8") || !std::strcmp(v, "i8"))
        a.run.kv_dtype = DType::i8;
      else
        usage("--kv takes f32 or q8");
    } else if (!std::strcmp(f, "-h") || !std::strcmp(f, "--help"))
      usage(nullptr);
    else if (f[0] == '-') {
      std::fprintf(stderr, "einfer-bench: unknown option %s\n", f);
      usage(nullptr);
    } else if (!a.model)
      a.model = f;
    else
      usage("more than one model given");
  }
  if (a.model && a.synthetic) usage("give a model file or --synthetic, not both");
  if (!a.model && !a.synthetic && !a.smoke && !a.kernels) usage("no model given");
  std::sort(a.contexts.begin(), a.contexts.end());
  a.contexts.erase(std::unique(a.contexts.begin(), a.contexts.end()), a.contexts.end());
  return a;
}

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
constexpr pack::SyntheticSpec kBenchSyntheticDefaults = {
    .dim = 288, .hidden = 768, .layers = 6, .heads = 6, .kv_heads = 0, .vocab = 32000, .seq = 256};

// ---------------------------------------------------------------------------------------------
// What one step reads and computes

size_t view_bytes(const TensorView& t) {
  if (!t.data || t.rank == 0) return 0;
  int64_t rows = 1;
  for (int i = 0; i + 1 < t.rank; ++i) rows *= t.shape[i];
  const int64_t k = t.shape[t.rank - 1];
  if (dtype_is_quantized(t.dtype)) {
    return static_cast<size_t>(rows) *
           (quant_row_bytes(t.dtype, k) + static_cast<size_t>(quant_groups(k, t.group_size)) * 4);
  }
  return static_cast<size_t>(rows * k) * dtype_size(t.dtype);
}

// Bytes of every tensor the file holds (values and scales), from its tensor table.
size_t file_weights_bytes(const Model& m) {
  const auto* records = static_cast<const TensorRecord*>(m.tensor_table);
  size_t total = 0;
  for (uint32_t i = 0; i < m.tensor_count; ++i)
    total += records[i].data_bytes + records[i].scales_bytes;
  return total;
}

struct StepCost {
  double projection_bytes = 0, ffn_bytes = 0, classifier_bytes = 0, other_bytes = 0, kv_bytes = 0;
  double projection_flops = 0, ffn_flops = 0, classifier_flops = 0, attention_flops = 0;
  double bytes() const {
    return projection_bytes + ffn_bytes + classifier_bytes + other_bytes + kv_bytes;
  }
  double flops() const { return projection_flops + ffn_flops + classifier_flops + attention_flops; }
};

// Bytes one decode step reads and flops it does when the token attends `attended` positions.
StepCost decode_cost(const LlamaWeights& w, const KVCache& cache, int64_t attended) {
  const ModelConfig& c = w.config;
  StepCost s;
  const double d = c.dim, f = c.hidden_dim, V = c.vocab_size;
  const double qd = double(c.n_heads) * c.head_dim, kv = double(c.n_kv_heads) * c.head_dim;
  // Per-layer tensors are looked up in the model (the session keeps no per-layer view table).
  auto layer_bytes = [&](TensorRole role, int32_t l) {
    TensorView v;
    return model_tensor(*w.model, role, l, &v).ok() ? double(view_bytes(v)) : 0.0;
  };
  for (int32_t l = 0; l < c.n_layers; ++l) {
    for (TensorRole r : {TensorRole::wq, TensorRole::wk, TensorRole::wv, TensorRole::wo})
      s.projection_bytes += layer_bytes(r, l);
    for (TensorRole r : {TensorRole::w1, TensorRole::w2, TensorRole::w3})
      s.ffn_bytes += layer_bytes(r, l);
    s.other_bytes += layer_bytes(TensorRole::attn_norm, l) + layer_bytes(TensorRole::ffn_norm, l);
  }
  s.classifier_bytes = double(view_bytes(w.classifier));
  s.other_bytes += double(view_bytes(w.final_norm)) + double(view_bytes(w.token_embedding)) / V;
  const bool i8 = cache.config.dtype == DType::i8;
  const double per_position =
      2.0 * c.n_kv_heads * (c.head_dim * (i8 ? 1.0 : 4.0) + (i8 ? 4.0 : 0.0));
  s.kv_bytes = double(c.n_layers) * double(attended) * per_position;
  s.projection_flops = 2.0 * c.n_layers * (qd * d * 2 + 2 * kv * d);
  s.ffn_flops = 2.0 * c.n_layers * 3 * d * f;
  s.classifier_flops = 2.0 * V * d;
  s.attention_flops = 4.0 * c.n_layers * qd * double(attended);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Roofline probes

struct StreamBuffer {
  int32_t* p = nullptr;
  size_t n = 0;
  ~StreamBuffer() { std::free(p); }
};

volatile uint32_t g_sink;

// Median read bandwidth in GB/s over the first `bytes` of the buffer (grown as needed).
double measure_bandwidth(StreamBuffer* buf, size_t bytes) {
  const size_t n = std::max<size_t>(bytes / 4, 1024);
  if (n > buf->n) {
    std::free(buf->p);
    buf->p = static_cast<int32_t*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64));
    if (!buf->p) {
      std::fprintf(stderr, "einfer-bench: out of memory for the bandwidth probe\n");
      std::exit(1);
    }
    for (size_t i = 0; i < n; ++i) buf->p[i] = static_cast<int32_t>(i * 2654435761u);
    buf->n = n;
  }
  const int passes = static_cast<int>(std::clamp<double>(4e8 / double(n * 4), 7, 401));
  std::vector<double> gbps;
  g_sink = g_sink + stream_read(buf->p, n * 4);  // warm-up: bring it to the cache level it fits
  for (int r = 0; r < passes; ++r) {
    const uint64_t t0 = thread_ns();
    g_sink = g_sink + stream_read(buf->p, n * 4);
    const uint64_t t1 = thread_ns();
    gbps.push_back(double(n * 4) / double(std::max<uint64_t>(t1 - t0, 1)));
  }
  return percentile(gbps, 0.5);
}

// FMA peak of the selected SIMD path in GFLOP/s: 12 independent register-resident accumulators
// hide the FMA latency on every core we target. Best of several runs.
double measure_fma_peak() {
  volatile float seed = 0.999999f, add = 1e-7f;
  const float m = seed, a = add;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const int64_t iters = 2000000;
    float sink = 0;
    const uint64_t t0 = thread_ns();
#if EINFER_HAS_SIMD
    using B = xsimd::batch<float>;
    const B vm(m), va(a);
    B r[12];
    for (int j = 0; j < 12; ++j) r[j] = B(1.f + 0.01f * float(j));
    for (int64_t i = 0; i < iters; ++i) {
      for (int j = 0; j < 12; ++j) r[j] = xsimd::fma(r[j], vm, va);
    }
    B total = r[0];
    for (int j = 1; j < 12; ++j) total += r[j];
    sink = xsimd::hadd(total);
    const double flops = 2.0 * 12 * B::size * double(iters);
#else
    float r[12];
    for (int j = 0; j < 12; ++j) r[j] = 1.f + 0.01f * float(j);
    for (int64_t i = 0; i < iters; ++i) {
      for (int j = 0; j < 12; ++j) r[j] = std::fma(r[j], m, a);
    }
    for (int j = 0; j < 12; ++j) sink += r[j];
    const double flops = 2.0 * 12 * double(iters);
#endif
    const uint64_t t1 = thread_ns();
    g_sink = g_sink + static_cast<uint32_t>(sink);
    best = std::max(best, flops / double(std::max<uint64_t>(t1 - t0, 1)));
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Measurements

const char* const kStageNames[kStageCount] = {"projections", "attention",  "feed_forward",
                                              "norms_rope",  "classifier", "sampling"};

struct StageSplit {
  double ns_per_token[kStageCount] = {};
  double total_ns_per_token = 0;
};

double g_clock_ns = 0;  // clock_read_ns(), measured once at start-up

StageSplit split_of(const StageProfile& p, double tokens) {
  StageSplit s;
  for (int i = 0; i < kStageCount; ++i) {
    s.ns_per_token[i] = std::max(0.0, double(p.ns[i]) - g_clock_ns * double(p.calls[i])) / tokens;
    s.total_ns_per_token += s.ns_per_token[i];
  }
  return s;
}

struct PrefillResult {
  int64_t tokens = 0;
  double seconds = 0;  // median
  double tokens_per_s = 0;
  double gemm_flops = 0, gemm_gflops = 0;  // projections + feed-forward, from the profiled pass
  double projection_gflops = 0, ffn_gflops = 0;
  StageSplit stages;  // per prompt token
};

struct DecodeResult {
  int64_t context = 0, attended = 0;
  std::vector<double> latency_ms;
  double p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double tokens_per_s = 0;  // from the median latency
  StepCost cost;
  double bandwidth_gbps = 0;  // streaming read over cost.bytes()
  double achieved_gbps = 0, achieved_gflops = 0;
  double decode_fraction = 0, compute_fraction = 0;
  size_t kv_bytes_at_context = 0, arena_bytes_at_context = 0;
  StageSplit stages;
};

struct Bench {
  Session* session = nullptr;
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

PrefillResult bench_prefill(Bench& b, int64_t n, long repeat) {
  PrefillResult r;
  r.tokens = n;
  std::vector<int32_t> toks(static_cast<size_t>(n));
  for (auto& t : toks) t = b.next_token();
  std::vector<double> secs;
  for (long rep = 0; rep < repeat + 1; ++rep) {
    session_reset(b.session);
    const uint64_t t0 = thread_ns();
    b.eval(toks.data(), static_cast<int32_t>(n));
    const uint64_t t1 = thread_ns();
    if (rep > 0) secs.push_back(double(t1 - t0) * 1e-9);  // the first is a warm-up
  }
  r.seconds = percentile(secs, 0.5);
  r.tokens_per_s = double(n) / r.seconds;
  StageProfile prof;
  prof.now_ns = thread_ns;
  session_reset(b.session);
  b.session->state.profile = &prof;
  b.eval(toks.data(), static_cast<int32_t>(n));
  b.session->state.profile = nullptr;
  r.stages = split_of(prof, double(n));
  // GEMM flops of the prompt (the classifier runs on the last token only).
  const StepCost c = decode_cost(b.session->weights, b.session->state.cache, 0);
  const double proj_ns = double(prof.ns[int(Stage::projections)]),
               ffn_ns = double(prof.ns[int(Stage::feed_forward)]);
  r.gemm_flops = double(n) * (c.projection_flops + c.ffn_flops);
  r.gemm_gflops = r.gemm_flops / (proj_ns + ffn_ns);
  r.projection_gflops = double(n) * c.projection_flops / proj_ns;
  r.ffn_gflops = double(n) * c.ffn_flops / ffn_ns;
  return r;
}

DecodeResult bench_decode(Bench& b, int64_t context, long gen, long repeat, StreamBuffer* stream,
                          double peak_gflops) {
  DecodeResult r;
  r.context = context;
  LlamaState& st = b.session->state;
  const int64_t capacity = st.options.context;  // ring size when windowed
  r.attended = st.options.window > 0 ? std::min<int64_t>(context, st.options.window) : context;
  b.fill_to(context - 1);
  // Warm-up step (not timed), then --repeat passes of --gen tokens from the same position.
  int32_t tok = b.next_token();
  b.step(tok, nullptr);
  for (long rep = 0; rep < repeat; ++rep) {
    b.rewind(context - 1);
    for (long g = 0; g < gen; ++g) {
      const uint64_t t0 = thread_ns();
      tok = b.step(tok, nullptr);
      const uint64_t t1 = thread_ns();
      r.latency_ms.push_back(double(t1 - t0) * 1e-6);
    }
  }
  StageProfile prof;
  prof.now_ns = thread_ns;
  b.rewind(context - 1);
  st.profile = &prof;
  for (long g = 0; g < gen; ++g) tok = b.step(tok, &prof);
  st.profile = nullptr;
  r.stages = split_of(prof, double(gen));
  (void)capacity;

  r.p50 = percentile(r.latency_ms, 0.5);
  r.p90 = percentile(r.latency_ms, 0.9);
  r.p99 = percentile(r.latency_ms, 0.99);
  r.max = *std::max_element(r.latency_ms.begin(), r.latency_ms.end());
  for (double x : r.latency_ms) r.mean += x / double(r.latency_ms.size());
  r.tokens_per_s = 1e3 / r.p50;
  r.cost = decode_cost(b.session->weights, st.cache, r.attended);
  r.bandwidth_gbps = measure_bandwidth(stream, static_cast<size_t>(r.cost.bytes()));
  const double step_ns = r.p50 * 1e6;
  r.achieved_gbps = r.cost.bytes() / step_ns;
  r.achieved_gflops = r.cost.flops() / step_ns;
  r.decode_fraction = (r.cost.bytes() / r.bandwidth_gbps) / step_ns;
  r.compute_fraction = (r.cost.flops() / peak_gflops) / step_ns;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Output

std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\')
      out += '\\', out += ch;
    else if (static_cast<unsigned char>(ch) < 0x20)
      out += ' ';
    else
      out += ch;
  }
  return out + "\"";
}

struct Report {
  std::string source;
  ModelConfig config;
  RunOptions run;
  Args args;
  size_t weights_bytes = 0, kv_bytes = 0, arena_bytes = 0;
  double peak_gflops = 0;
  PrefillResult prefill;
  std::vector<DecodeResult> decode;
};

std::string stages_json(const StageSplit& s) {
  std::string out = "{";
  for (int i = 0; i < kStageCount; ++i) {
    out += std::string(i ? ", " : "") + json_string(kStageNames[i]) + ": " +
           json_number(s.ns_per_token[i] * 1e-6);
  }
  return out + "}";
}

void write_json(const Report& r, const char* path) {
  const DecodeResult& d0 = r.decode.front();
  const ModelConfig& c = r.config;
  std::string o = "{\n";
  o += "  \"tool\": \"einfer-bench\",\n";
  o += "  \"simd\": " + json_string(simd_arch_name()) + ",\n";
  o += "  \"threads\": 1,\n";
  o += "  \"clock\": \"thread_cputime\",\n";
  o += "  \"build\": {\"compiler\": " + json_string(EINFER_BENCH_COMPILER) +
       ", \"simd\": " + json_string(simd_arch_name()) +
       ", \"simd_float_lanes\": " + std::to_string(simd_float_lanes()) +
       ", \"flags\": " + json_string(EINFER_BENCH_FLAGS) +
       ", \"commit\": " + json_string(EINFER_BENCH_COMMIT) + "},\n";
  o += "  \"model\": {\"source\": " + json_string(r.source) +
       ", \"dim\": " + std::to_string(c.dim) + ", \"hidden_dim\": " + std::to_string(c.hidden_dim) +
       ", \"n_layers\": " + std::to_string(c.n_layers) +
       ", \"n_heads\": " + std::to_string(c.n_heads) +
       ", \"n_kv_heads\": " + std::to_string(c.n_kv_heads) +
       ", \"vocab_size\": " + std::to_string(c.vocab_size) +
       ", \"context_length\": " + std::to_string(c.context_length) +
       ", \"weight_dtype\": " + json_string(dtype_name(c.weight_dtype)) +
       ", \"group_size\": " + std::to_string(c.group_size) +
       ", \"tied_classifier\": " + (c.tied_classifier ? "true" : "false") + "},\n";
  o += "  \"options\": {\"prompt\": " + std::to_string(r.args.prompt) +
       ", \"gen\": " + std::to_string(r.args.gen) +
       ", \"repeat\": " + std::to_string(r.args.repeat) +
       ", \"window\": " + std::to_string(r.run.window) +
       ", \"sinks\": " + std::to_string(r.run.sinks) +
       ", \"kv\": " + json_string(r.run.kv_dtype == DType::i8 ? "q8" : "f32") +
       ", \"max_batch\": " + std::to_string(r.run.max_batch) +
       ", \"cache_positions\": " + std::to_string(r.run.context) + "},\n";
  o += "  \"weights_bytes\": " + std::to_string(r.weights_bytes) + ",\n";
  o += "  \"kv_bytes\": " + std::to_string(r.kv_bytes) + ",\n";
  o += "  \"arena_bytes\": " + std::to_string(r.arena_bytes) + ",\n";
  o += "  \"prefill_tokens_per_s\": " + json_number(r.prefill.tokens_per_s) + ",\n";
  o += "  \"decode_tokens_per_s\": " + json_number(d0.tokens_per_s) + ",\n";
  o += "  \"latency_ms\": {\"context\": " + std::to_string(d0.context) +
       ", \"p50\": " + json_number(d0.p50) + ", \"p90\": " + json_number(d0.p90) +
       ", \"p99\": " + json_number(d0.p99) + ", \"max\": " + json_number(d0.max) +
       ", \"mean\": " + json_number(d0.mean) +
       ", \"samples\": " + std::to_string(d0.latency_ms.size()) + "},\n";
  o += "  \"roofline\": {\"bandwidth_gbps\": " + json_number(d0.bandwidth_gbps) +
       ", \"peak_gflops\": " + json_number(r.peak_gflops) +
       ", \"decode_fraction\": " + json_number(d0.decode_fraction) +
       ", \"decode_bytes_per_token\": " + json_number(d0.cost.bytes()) +
       ", \"decode_compute_fraction\": " + json_number(d0.compute_fraction) +
       ", \"prefill_gemm_gflops\": " + json_number(r.prefill.gemm_gflops) +
       ", \"prefill_gemm_fraction\": " + json_number(r.prefill.gemm_gflops / r.peak_gflops) +
       "},\n";
  o += "  \"prefill\": {\"tokens\": " + std::to_string(r.prefill.tokens) +
       ", \"ms\": " + json_number(r.prefill.seconds * 1e3) +
       ", \"tokens_per_s\": " + json_number(r.prefill.tokens_per_s) +
       ", \"gemm_gflops\": " + json_number(r.prefill.gemm_gflops) +
       ", \"projection_gflops\": " + json_number(r.prefill.projection_gflops) +
       ", \"feed_forward_gflops\": " + json_number(r.prefill.ffn_gflops) +
       ", \"gemm_fraction_of_peak\": " + json_number(r.prefill.gemm_gflops / r.peak_gflops) +
       ", \"stage_ms_per_token\": " + stages_json(r.prefill.stages) + "},\n";
  o += "  \"decode\": [\n";
  for (size_t i = 0; i < r.decode.size(); ++i) {
    const DecodeResult& d = r.decode[i];
    o += "    {\"context\": " + std::to_string(d.context) +
         ", \"attended\": " + std::to_string(d.attended) +
         ", \"tokens_per_s\": " + json_number(d.tokens_per_s) +
         ", \"latency_ms\": {\"p50\": " + json_number(d.p50) + ", \"p90\": " + json_number(d.p90) +
         ", \"p99\": " + json_number(d.p99) + ", \"max\": " + json_number(d.max) +
         ", \"mean\": " + json_number(d.mean) +
         "}, \"bytes_per_token\": " + json_number(d.cost.bytes()) +
         ", \"weight_bytes_per_token\": " + json_number(d.cost.bytes() - d.cost.kv_bytes) +
         ", \"kv_bytes_per_token\": " + json_number(d.cost.kv_bytes) +
         ", \"flops_per_token\": " + json_number(d.cost.flops()) +
         ", \"bandwidth_gbps\": " + json_number(d.bandwidth_gbps) +
         ", \"achieved_gbps\": " + json_number(d.achieved_gbps) +
         ", \"achieved_gflops\": " + json_number(d.achieved_gflops) +
         ", \"decode_fraction\": " + json_number(d.decode_fraction) +
         ", \"compute_fraction\": " + json_number(d.compute_fraction) +
         ", \"kv_bytes\": " + std::to_string(d.kv_bytes_at_context) +
         ", \"arena_bytes\": " + std::to_string(d.arena_bytes_at_context) +
         ", \"stage_ms_per_token\": " + stages_json(d.stages) + "}" +
         (i + 1 < r.decode.size() ? ",\n" : "\n");
  }
  o += "  ]\n}\n";
  FILE* f = std::fopen(path, "w");
  if (!f || std::fwrite(o.data(), 1, o.size(), f) != o.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "einfer-bench: cannot write %s\n", path);
    std::exit(1);
  }
}

// Two panels against context length (log2 axis): decode tokens/s, and memory (MB).
void write_svg(const Report& r, const char* path) {
  const double W = 420, H = 300, L = 60, B = 40, T = 30, R = 20;
  std::string o =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"860\" height=\"300\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n";
  o += "<rect width=\"860\" height=\"300\" fill=\"white\"/>\n";
  const double x0 = std::log2(double(r.decode.front().context));
  const double x1 = std::log2(double(r.decode.back().context));
  auto panel = [&](double ox, const char* title, const std::vector<std::vector<double>>& series,
                   const std::vector<const char*>& names, const std::vector<const char*>& colors) {
    double ymax = 0;
    for (const auto& s : series)
      for (double y : s) ymax = std::max(ymax, y);
    ymax = ymax > 0 ? ymax * 1.1 : 1;
    char buf[512];
    auto px = [&](double ctx) {
      return ox + L + (x1 > x0 ? (std::log2(ctx) - x0) / (x1 - x0) : 0.5) * (W - L - R);
    };
    auto py = [&](double y) { return H - B - y / ymax * (H - B - T); };
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%.0f\" y=\"18\" font-size=\"13\">%s</text>\n"
                  "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                  "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                  "<text x=\"%.0f\" y=\"%.0f\">context (positions)</text>\n",
                  ox + L, title, ox + L, H - B, ox + W - R, H - B, ox + L, T, ox + L, H - B,
                  ox + L + 120, H - 5);
    o += buf;
    for (int i = 0; i <= 4; ++i) {
      const double y = ymax * i / 4;
      std::snprintf(buf, sizeof buf,
                    "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.4g</text>\n", ox + L - 4,
                    py(y) + 4, y);
      o += buf;
    }
    for (const DecodeResult& d : r.decode) {
      std::snprintf(buf, sizeof buf,
                    "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%lld</text>\n",
                    px(double(d.context)), H - B + 14, static_cast<long long>(d.context));
      o += buf;
    }
    for (size_t k = 0; k < series.size(); ++k) {
      std::string pts;
      for (size_t i = 0; i < r.decode.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%.1f,%.1f ", px(double(r.decode[i].context)),
                      py(series[k][i]));
        pts += buf;
        std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                      px(double(r.decode[i].context)), py(series[k][i]), colors[k]);
        o += buf;
      }
      o += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(colors[k]) +
           "\" points=\"" + pts + "\"/>\n";
      std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>\n",
                    ox + W - R - 150, T + 14.0 * double(k + 1), colors[k], names[k]);
      o += buf;
    }
  };
  std::vector<double> tps, kv, arena, weights;
  for (const DecodeResult& d : r.decode) {
    tps.push_back(d.tokens_per_s);
    kv.push_back(double(d.kv_bytes_at_context) / 1e6);
    arena.push_back(double(d.arena_bytes_at_context) / 1e6);
    weights.push_back(double(r.weights_bytes) / 1e6);
  }
  panel(0, "decode tokens/s", {tps}, {"tokens/s"}, {"#1f77b4"});
  panel(430, "memory (MB)", {weights, arena, kv}, {"weights", "arena (incl. KV)", "KV cache"},
        {"#2ca02c", "#ff7f0e", "#d62728"});
  o += "</svg>\n";
  FILE* f = std::fopen(path, "w");
  if (!f || std::fwrite(o.data(), 1, o.size(), f) != o.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "einfer-bench: cannot write %s\n", path);
    std::exit(1);
  }
}

void print_report(const Report& r, double bw_note) {
  const ModelConfig& c = r.config;
  (void)bw_note;
  std::printf("einfer-bench  %s\n", r.source.c_str());
  std::printf("model: dim %d, hidden %d, layers %d, heads %d/%d, vocab %d, seq %d, weights %s%s\n",
              c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
              c.context_length, dtype_name(c.weight_dtype),
              c.group_size ? (" g" + std::to_string(c.group_size)).c_str() : "");
  std::printf("build: %s, simd %s, 1 thread, thread CPU time, commit %s\n", EINFER_BENCH_COMPILER,
              simd_arch_name(), EINFER_BENCH_COMMIT);
  std::printf("memory: weights %.2f MB, KV cache %.2f MB (%d positions, %s), arena %.2f MB\n",
              double(r.weights_bytes) / 1e6, double(r.kv_bytes) / 1e6, r.run.context,
              r.run.kv_dtype == DType::i8 ? "int8" : "f32", double(r.arena_bytes) / 1e6);
  std::printf("roofline: FMA peak %.1f GFLOP/s (%s)\n\n", r.peak_gflops, simd_arch_name());
  const PrefillResult& p = r.prefill;
  std::printf(
      "prefill  %lld tokens: %.2f ms, %.1f tokens/s; GEMMs %.1f GFLOP/s = %.2f of peak "
      "(projections %.1f, feed-forward %.1f)\n\n",
      static_cast<long long>(p.tokens), p.seconds * 1e3, p.tokens_per_s, p.gemm_gflops,
      p.gemm_gflops / r.peak_gflops, p.projection_gflops, p.ffn_gflops);
  std::printf("decode   %7s %9s %8s %8s %8s %8s %9s %9s %9s %8s %8s\n", "context", "tokens/s",
              "p50 ms", "p90 ms", "p99 ms", "max ms", "MB/token", "GB/s", "bound GB/s", "mem frac",
              "flop frac");
  for (const DecodeResult& d : r.decode) {
    std::printf("         %7lld %9.1f %8.3f %8.3f %8.3f %8.3f %9.3f %9.2f %9.2f %8.2f %8.3f%s\n",
                static_cast<long long>(d.context), d.tokens_per_s, d.p50, d.p90, d.p99, d.max,
                d.cost.bytes() / 1e6, d.achieved_gbps, d.bandwidth_gbps, d.decode_fraction,
                d.compute_fraction,
                d.context > c.context_length ? "  (beyond trained context)" : "");
  }
  std::printf("\nstage split, ms per token (share)   prefill");
  for (const DecodeResult& d : r.decode)
    std::printf("     decode@%-6lld", static_cast<long long>(d.context));
  std::printf("\n");
  for (int i = 0; i < kStageCount; ++i) {
    std::printf("  %-32s %7.4f (%4.1f%%)", kStageNames[i], p.stages.ns_per_token[i] * 1e-6,
                100 * p.stages.ns_per_token[i] / p.stages.total_ns_per_token);
    for (const DecodeResult& d : r.decode) {
      std::printf("  %7.4f (%4.1f%%)", d.stages.ns_per_token[i] * 1e-6,
                  100 * d.stages.ns_per_token[i] / d.stages.total_ns_per_token);
    }
    std::printf("\n");
  }
  // Per-stage roofline at the first context: bytes each stage streams over its own time.
  const DecodeResult& d0 = r.decode.front();
  const double bw = d0.bandwidth_gbps;
  struct Row {
    const char* name;
    double bytes, flops, ns;
  } rows[] = {
      {"projections", d0.cost.projection_bytes, d0.cost.projection_flops,
       d0.stages.ns_per_token[0]},
      {"attention (KV)", d0.cost.kv_bytes, d0.cost.attention_flops, d0.stages.ns_per_token[1]},
      {"feed_forward", d0.cost.ffn_bytes, d0.cost.ffn_flops, d0.stages.ns_per_token[2]},
      {"classifier", d0.cost.classifier_bytes, d0.cost.classifier_flops,
       d0.stages.ns_per_token[4]}};
  std::printf("\ndecode@%lld per stage (profiled pass)   GB/s  mem frac   GFLOP/s  flop frac\n",
              static_cast<long long>(d0.context));
  for (const Row& row : rows) {
    std::printf("  %-34s %7.2f %8.2f %9.2f %9.3f\n", row.name, row.bytes / row.ns,
                (row.bytes / bw) / row.ns, row.flops / row.ns,
                (row.flops / r.peak_gflops) / row.ns);
  }
  std::printf(
      "  profiled pass %.4f ms/token (clock reads of %.0f ns subtracted) vs timed p50 %.4f ms\n",
      d0.stages.total_ns_per_token * 1e-6, g_clock_ns, d0.p50);
}

// ---------------------------------------------------------------------------------------------
// Smoke check: a fixed kernel, SIMD against scalar, in this process

// Best-of-7 time of `calls` runs of fn, in ns per call.
template <typename Fn>
double time_best(Fn fn, int calls) {
  double best = 1e300;
  for (int run = 0; run < 7; ++run) {
    const uint64_t t0 = thread_ns();
    for (int i = 0; i < calls; ++i) fn();
    const uint64_t t1 = thread_ns();
    best = std::min(best, double(t1 - t0) / calls);
  }
  return best;
}

// The fixed kernel: the f32 GEMV behind every decode projection (y[32] = W[32, 256] x), 32 KiB
// of weights so it is L1/L2-resident and the arithmetic is what is timed.
int run_smoke(bool ratio_check) {
  const int64_t rows = 32, k = 256;
  std::vector<float> w(static_cast<size_t>(rows * k)), x(static_cast<size_t>(k)),
      y(static_cast<size_t>(rows));
  Rng rng(7);
  for (float& v : w) v = rng.uniform(1.f);
  for (float& v : x) v = rng.uniform(1.f);
  const double simd_ns =
      time_best([&] { gemv_f32(rows, k, w.data(), k, 1, x.data(), y.data(), 1, false); }, 2000);
  const float y_simd = y[rows - 1];
  const double scalar_ns = time_best(
      [&] { scalar::gemv_f32(rows, k, w.data(), k, 1, x.data(), y.data(), 1, false); }, 2000);
  const double ratio = scalar_ns / simd_ns;
  std::printf(
      "smoke: gemv_f32 %lldx%lld: %s %.1f ns, scalar %.1f ns, speedup %.2fx (need >= 2x)%s\n",
      static_cast<long long>(rows), static_cast<long long>(k), simd_arch_name(), simd_ns, scalar_ns,
      ratio, ratio_check ? "" : " [ratio check skipped]");
  if (std::fabs(y_simd - y[rows - 1]) > 1e-3f * (1.f + std::fabs(y[rows - 1]))) {
    std::fprintf(stderr, "einfer-bench: smoke: SIMD and scalar GEMV disagree (%g vs %g)\n", y_simd,
                 y[rows - 1]);
    return 1;
  }
  if (ratio_check && ratio < 2.0) {
    std::fprintf(stderr, "einfer-bench: smoke: SIMD gemv_f32 is only %.2fx the scalar path\n",
                 ratio);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.kernels) return run_kernel_benches(stdout, a.quick);
  int smoke_status = 0;
  if (a.smoke) smoke_status = run_smoke(a.ratio_check);
  if (!a.model && !a.synthetic) return smoke_status;

  // The model image: a file, or synthetic weights packed in memory.
  std::vector<uint8_t> bytes;
  Report rep;
  rep.args = a;
  if (a.synthetic) {
    pack::SyntheticSpec spec;
    try {
      spec = pack::parse_synthetic_spec(a.synthetic, kBenchSyntheticDefaults);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "einfer-bench: %s\n", e.what());
      return 2;  // a bad spec is a usage error
    }
    try {
      bytes = pack::write_ein(pack::make_synthetic_image(spec));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "einfer-bench: building the synthetic model: %s\n", e.what());
      return 1;
    }
    rep.source = std::string("synthetic ") + a.synthetic;
  } else {
    if (!tools::read_file(a.model, &bytes) || bytes.empty()) {
      std::fprintf(stderr, "einfer-bench: cannot read model file %s\n", a.model);
      return 1;
    }
    rep.source = a.model;
  }
  pack::AlignedBuffer image(bytes);
  bytes.clear();
  bytes.shrink_to_fit();
  Model model;
  Status s = load_model(image.data, image.size, LoadOptions{}, &model);
  if (!s.ok()) fail("loading the model", s);
  const ModelConfig& c = model.config;
  if (c.arch != ArchKind::llama) {
    std::fprintf(stderr, "einfer-bench: only llama decoders are benchmarked\n");
    return 1;
  }

  // One session whose cache holds every position the run reaches.
  RunOptions run = a.run;
  const int64_t need = std::max<int64_t>(a.prompt, a.contexts.back() - 1 + a.gen);
  if (run.window == 0) {
    if (need > (1l << 24)) usage("contexts too large");
    run.context = static_cast<int32_t>(need);
  }
  size_t arena_bytes = 0;
  if (!(s = session_arena_bytes(c, run, &arena_bytes)).ok()) fail("run options", s);
  void* arena_mem = std::aligned_alloc(64, (arena_bytes + 63) / 64 * 64);
  if (!arena_mem) {
    std::fprintf(stderr, "einfer-bench: cannot allocate a %zu-byte arena\n", arena_bytes);
    return 1;
  }
  Arena arena(arena_mem, arena_bytes);
  Bench b;
  if (!(s = session_create(image.data, image.size, LoadOptions{}, run, arena, &b.session)).ok()) {
    fail("creating the session", s);
  }
  std::vector<uint8_t> sampler_mem(sampler_scratch_bytes(c.vocab_size));
  SamplerConfig sc;
  sc.temperature = 0.f;  // greedy: the cheapest sampler, and deterministic
  if (!(s = sampler_init(&b.sampler, sc, c.vocab_size, sampler_mem.data(), sampler_mem.size()))
           .ok())
    fail("sampler", s);

  rep.config = c;
  rep.run = b.session->state.options;
  rep.weights_bytes = file_weights_bytes(model);
  rep.kv_bytes = kv_cache_bytes(b.session->state.cache.config);
  rep.arena_bytes = arena_bytes;

  g_clock_ns = clock_read_ns();
  rep.peak_gflops = measure_fma_peak();
  rep.prefill = bench_prefill(b, a.prompt, a.repeat);
  StreamBuffer stream;
  session_reset(b.session);
  for (long ctx : a.contexts) {
    DecodeResult d = bench_decode(b, ctx, a.gen, a.repeat, &stream, rep.peak_gflops);
    RunOptions at = a.run;
    if (at.window == 0) at.context = static_cast<int32_t>(ctx);
    size_t bytes_at = 0;
    if (session_arena_bytes(c, at, &bytes_at).ok()) d.arena_bytes_at_context = bytes_at;
    KVCacheConfig kc = b.session->state.cache.config;
    kc.capacity = at.window > 0 ? at.window : static_cast<int32_t>(ctx);
    d.kv_bytes_at_context = kv_cache_bytes(kc);
    rep.decode.push_back(std::move(d));
  }

  print_report(rep, 0);
  if (a.json) write_json(rep, a.json);
  if (a.svg) write_svg(rep, a.svg);
  std::free(arena_mem);
  return smoke_status;
}
