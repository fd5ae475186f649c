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
// What it measures, on -t N threads (default: the online cores), times in thread CPU time with one
// thread (the board may be shared) and in monotonic wall-clock time with more; with more, every
// timed pass is alternated with a one-thread pass and the speedup of the medians is reported:
//   prefill tokens/s of --prompt tokens; decode tokens/s and per-token latency percentiles at each
//   context C (cache filled to C-1 positions, then --gen tokens x --repeat, greedy sampling
//   included); the time split by stage (one extra profiled pass, clock-read cost subtracted, so the
//   timed passes run with the profiling hook off); arena, weight and KV bytes.
// Roofline, measured in the same run: streaming-read bandwidth over a buffer as large as the bytes
// one decode step reads (weights touched + KV attended, so the same cache level is measured), and
// the FMA peak of the selected SIMD path (register-resident loop). decode_fraction is
// (bytes per token / bandwidth) / measured time per token: 1.0 means the decode runs at the
// memory bound. Prefill GEMMs are compared with the FMA peak.
#include "tools/einfer-bench/bench.h"

using namespace einfer;
using namespace einfer::bench;

namespace {

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
  Args a;
  if (int code; !parse(argc, argv, &a, &code)) return code;
  const int threads = a.threads > 0 ? a.threads : tools::online_cores();
  if (a.kernels) return run_kernel_benches(stdout, a.quick, threads);
  int smoke_status = 0;
  if (a.smoke) smoke_status = run_smoke(a.ratio_check);
  if (a.model.empty() && a.synthetic.empty()) return smoke_status;

  // The model image, in huge-page memory: a file, or synthetic weights packed in memory.
  tools::LargeBuffer image;
  std::vector<uint8_t> bytes;
  Report rep;
  rep.args = a;
  if (!a.synthetic.empty()) {
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
    if (!tools::read_file_large(a.model.c_str(), &image)) {
      std::fprintf(stderr, "einfer-bench: cannot read model file %s\n", a.model.c_str());
      return 1;
    }
    rep.source = a.model;
  }
  if (!bytes.empty()) {  // the synthetic image, into huge-page memory as a file's would be
    if (!image.allocate(bytes.size())) {
      std::fprintf(stderr, "einfer-bench: cannot allocate %zu bytes for the model\n", bytes.size());
      return 1;
    }
    std::memcpy(image.data(), bytes.data(), bytes.size());
    bytes.clear();
    bytes.shrink_to_fit();
  }
  Model model;
  Status s = load_model(image.data(), image.size(), LoadOptions{}, &model);
  if (!s.ok()) fail("loading the model", s);
  const ModelConfig& c = model.config;
  if (c.arch != ArchKind::llama) {
    std::fprintf(stderr, "einfer-bench: only llama decoders are benchmarked\n");
    return 1;
  }

  // One session whose cache holds every position the run reaches.
  RunOptions run = a.run;
  tools::ThreadPool pool(threads);
  run.threads = pool.threads();
  if (pool.size() > 1) {
    g_now_ns = wall_ns;
    g_clock_name = "monotonic_wall";
  }
  const int64_t need = std::max<int64_t>(a.prompt, a.contexts.back() - 1 + a.gen);
  if (run.window == 0) {
    if (need > (1l << 24)) usage("contexts too large");
    run.context = static_cast<int32_t>(need);
  }
  size_t arena_bytes = 0;
  if (!(s = session_arena_bytes(c, run, &arena_bytes)).ok()) fail("run options", s);
  tools::LargeBuffer arena_mem(arena_bytes);
  if (!arena_mem.data()) {
    std::fprintf(stderr, "einfer-bench: cannot allocate a %zu-byte arena\n", arena_bytes);
    return 1;
  }
  Arena arena(arena_mem.data(), arena_bytes);
  Bench b;
  b.workers = pool.threads();
  if (!(s = session_create(image.data(), image.size(), LoadOptions{}, run, arena, &b.session))
           .ok()) {
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
  rep.threads = pool.size();
  rep.weights_bytes = model_weight_bytes(model);
  rep.kv_bytes = kv_cache_bytes(b.session->state.cache.config);
  rep.arena_bytes = arena_bytes;

  g_clock_ns = clock_read_ns();
  rep.peak_gflops = measure_fma_peak();
  const int steps = 1 + static_cast<int>(a.contexts.size());
  progress("prefill", 0, steps);
  rep.prefill = bench_prefill(b, a.prompt, a.repeat);
  StreamBuffer stream;
  session_reset(b.session);
  for (long ctx : a.contexts) {
    const std::string what = "decode at context " + std::to_string(ctx);
    progress(what.c_str(), static_cast<int>(rep.decode.size()) + 1, steps);
    DecodeResult d = bench_decode(b, ctx, a.gen, a.repeat, &stream, rep.peak_gflops);
    RunOptions at = a.run;
    at.threads.n = pool.size();
    if (at.window == 0) at.context = static_cast<int32_t>(ctx);
    size_t bytes_at = 0;
    if (session_arena_bytes(c, at, &bytes_at).ok()) d.arena_bytes_at_context = bytes_at;
    KVCacheConfig kc = b.session->state.cache.config;
    kc.capacity = at.window > 0 ? at.window : static_cast<int32_t>(ctx);
    d.kv_bytes_at_context = kv_cache_bytes(kc);
    rep.decode.push_back(std::move(d));
  }

  progress("done", steps, steps);
  if (a.output == "text")
    print_report(rep, stdout);
  else
    print_table(rep, a.output, stdout);
  if (a.verbose && a.output != "text") print_report(rep, stderr);
  if (!a.json.empty()) write_json(rep, a.json.c_str());
  if (!a.svg.empty()) write_svg(rep, a.svg.c_str());
  return smoke_status;
}
