// einfer-bench measurements: what a decode step reads and computes, the roofline probes, and the
// timed prefill and decode passes.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <unistd.h>

#include "tools/einfer-bench/bench.h"

namespace einfer::bench {

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

// Cost of one g_now_ns() read (median), subtracted from every profiled stage interval: the
// thread CPU clock is a system call (~0.3 us), which matters at dozens of reads per token. The
// monotonic clock would be cheaper but counts time the thread spends descheduled.
double clock_read_ns() {
  std::vector<double> d;
  for (int i = 0; i < 2001; ++i) {
    const uint64_t t0 = g_now_ns();
    const uint64_t t1 = g_now_ns();
    d.push_back(double(t1 - t0));
  }
  return percentile(d, 0.5);
}

// ---------------------------------------------------------------------------------------------
// What one step reads and computes

size_t view_bytes(const TensorView& t) {
  if (!t.data || t.rank == 0) return 0;
  int64_t rows = 1;
  for (int i = 0; i + 1 < t.rank; ++i) rows *= t.shape[i];
  const int64_t k = t.shape[t.rank - 1];
  if (dtype_is_gguf_block(t.dtype)) return static_cast<size_t>(rows) * quant_row_bytes(t.dtype, k);
  if (dtype_is_quantized(t.dtype)) {
    return static_cast<size_t>(rows) *
           (quant_row_bytes(t.dtype, k) + static_cast<size_t>(quant_groups(k, t.group_size)) * 4);
  }
  return static_cast<size_t>(rows * k) * dtype_size(t.dtype);
}

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

volatile uint32_t g_sink;

// Median read bandwidth in GB/s over the first `bytes` of the buffer (grown as needed).
double measure_bandwidth(StreamBuffer* buf, size_t bytes) {
  const size_t n = std::max<size_t>(bytes / 4, 1024);
  if (n > buf->n) {
    buf->p = buf->mem.allocate(n * 4) ? reinterpret_cast<int32_t*>(buf->mem.data()) : nullptr;
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
    const uint64_t t0 = g_now_ns();
    g_sink = g_sink + stream_read(buf->p, n * 4);
    const uint64_t t1 = g_now_ns();
    gbps.push_back(double(n * 4) / double(std::max<uint64_t>(t1 - t0, 1)));
  }
  return percentile(gbps, 0.5);
}

// FMA peak of the f32 GEMM's registers in GFLOP/s (fma_chains_gemm_f32,
// kernels/gemm_f32/gemm_f32.h: 12 independent register-resident chains hide the FMA latency on
// every core we target). Best of several runs.
double measure_fma_peak() {
  volatile float seed = 0.999999f, add = 1e-7f;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    const int64_t iters = 2000000;
    const uint64_t t0 = g_now_ns();
    const float sink = fma_chains_gemm_f32(iters, seed, add);
    const uint64_t t1 = g_now_ns();
    g_sink = g_sink + static_cast<uint32_t>(sink);
    const double flops = 24.0 * gemm_f32_lanes() * double(iters);
    best = std::max(best, flops / double(std::max<uint64_t>(t1 - t0, 1)));
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Measurements

double g_clock_ns = 0;
uint64_t (*g_now_ns)() = thread_ns;
const char* g_clock_name = "thread_cputime";

uint64_t wall_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

StageSplit split_of(const StageProfile& p, double tokens) {
  StageSplit s;
  for (int i = 0; i < kStageCount; ++i) {
    s.ns_per_token[i] = std::max(0.0, double(p.ns[i]) - g_clock_ns * double(p.calls[i])) / tokens;
    s.total_ns_per_token += s.ns_per_token[i];
  }
  return s;
}

MeanSd mean_sd(const std::vector<double>& v) {
  MeanSd m;
  if (v.empty()) return m;
  for (double x : v) m.mean += x / double(v.size());
  if (v.size() < 2) return m;
  double ss = 0;
  for (double x : v) ss += (x - m.mean) * (x - m.mean);
  m.sd = std::sqrt(ss / double(v.size() - 1));
  return m;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void progress(const char* what, int done, int total) {
  static const bool tty = isatty(2);
  if (!tty || total <= 0) return;
  const int width = 24, filled = done * width / total;
  std::fprintf(stderr, "\r[%.*s%*s] %d/%d %-28s", filled, "########################",
               width - filled, "", done, total, what);
  if (done >= total) std::fprintf(stderr, "\r%*s\r", width + 40, "");
  std::fflush(stderr);
}

PrefillResult bench_prefill(Bench& b, int64_t n, long repeat) {
  PrefillResult r;
  r.tokens = n;
  std::vector<int32_t> toks(static_cast<size_t>(n));
  for (auto& t : toks) t = b.next_token();
  // With workers, every repetition times one pass on all of them and one on the calling thread
  // alone, in alternating order, so load on a shared board hits both alike.
  const bool compare = b.n_threads() > 1;
  std::vector<double> secs, secs_one;
  for (long rep = 0; rep < repeat + 1; ++rep) {
    for (int pass = 0; pass < (compare ? 2 : 1); ++pass) {
      const bool all = !compare || (pass == (rep % 2));
      b.use_workers(all);
      session_reset(b.session);
      const double w0 = wall_seconds();
      const uint64_t t0 = g_now_ns();
      b.eval(toks.data(), static_cast<int32_t>(n));
      const uint64_t t1 = g_now_ns();
      const double w1 = wall_seconds();
      if (rep > 0) {  // rep 0: warm-up
        (all ? secs : secs_one).push_back(double(t1 - t0) * 1e-9);
        if (all) r.wall_tokens_per_s.push_back(double(n) / (w1 - w0));
      }
    }
  }
  b.use_workers(true);
  if (compare) {
    r.seconds_one_thread = percentile(secs_one, 0.5);
    r.speedup = r.seconds_one_thread / percentile(secs, 0.5);
  }
  r.seconds = percentile(secs, 0.5);
  r.tokens_per_s = double(n) / r.seconds;
  StageProfile prof;
  prof.now_ns = g_now_ns;
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
  const bool compare = b.n_threads() > 1;
  for (long rep = 0; rep < repeat; ++rep) {
    for (int pass = 0; pass < (compare ? 2 : 1); ++pass) {
      const bool all = !compare || (pass == (rep % 2));
      b.use_workers(all);
      b.rewind(context - 1);
      const double w0 = wall_seconds();
      for (long g = 0; g < gen; ++g) {
        const uint64_t t0 = g_now_ns();
        tok = b.step(tok, nullptr);
        const uint64_t t1 = g_now_ns();
        (all ? r.latency_ms : r.latency_one_ms).push_back(double(t1 - t0) * 1e-6);
      }
      if (all) r.wall_tokens_per_s.push_back(double(gen) / (wall_seconds() - w0));
    }
  }
  b.use_workers(true);
  StageProfile prof;
  prof.now_ns = g_now_ns;
  b.rewind(context - 1);
  st.profile = &prof;
  for (long g = 0; g < gen; ++g) tok = b.step(tok, &prof);
  st.profile = nullptr;
  r.stages = split_of(prof, double(gen));
  (void)capacity;

  r.p50 = percentile(r.latency_ms, 0.5);
  if (compare) {
    r.p50_one = percentile(r.latency_one_ms, 0.5);
    r.speedup = r.p50_one / r.p50;
  }
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

}  // namespace einfer::bench
