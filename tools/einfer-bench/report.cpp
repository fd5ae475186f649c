// einfer-bench output: the JSON report, the SVG plot and the console summary.
#include <cmath>
#include <cstdio>

#include "einfer/version.h"
#include "tools/einfer-bench/bench.h"

#ifndef EINFER_BENCH_COMPILER
#define EINFER_BENCH_COMPILER "unknown"
#endif
#ifndef EINFER_BENCH_FLAGS
#define EINFER_BENCH_FLAGS ""
#endif
#ifndef EINFER_BENCH_COMMIT
#define EINFER_BENCH_COMMIT "unknown"
#endif

namespace einfer::bench {

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
  o += "  \"isa\": " + json_string(isa_name()) + ",\n";
  o += "  \"threads\": " + std::to_string(r.threads) + ",\n";
  o += "  \"clock\": " + json_string(g_clock_name) + ",\n";
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
       (r.threads > 1 ? ", \"ms_1_thread\": " + json_number(r.prefill.seconds_one_thread * 1e3) +
                            ", \"speedup_vs_1_thread\": " + json_number(r.prefill.speedup)
                      : std::string()) +
       ", \"stage_ms_per_token\": " + stages_json(r.prefill.stages) + "},\n";
  o += "  \"decode\": [\n";
  for (size_t i = 0; i < r.decode.size(); ++i) {
    const DecodeResult& d = r.decode[i];
    o += "    {\"context\": " + std::to_string(d.context) +
         ", \"attended\": " + std::to_string(d.attended) +
         ", \"tokens_per_s\": " + json_number(d.tokens_per_s) +
         (r.threads > 1 ? ", \"p50_ms_1_thread\": " + json_number(d.p50_one) +
                              ", \"speedup_vs_1_thread\": " + json_number(d.speedup)
                        : std::string()) +
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

void print_report(const Report& r, std::FILE* out) {
  const ModelConfig& c = r.config;
  std::fprintf(out, "einfer-bench  %s\n", r.source.c_str());
  std::fprintf(out,
               "model: dim %d, hidden %d, layers %d, heads %d/%d, vocab %d, seq %d, weights %s%s\n",
               c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
               c.context_length, dtype_name(c.weight_dtype),
               c.group_size ? (" g" + std::to_string(c.group_size)).c_str() : "");
  std::fprintf(out,
               "build: %s, isa %s (%s), simd %s, %d thread%s, clock %s (wall clock in the table), "
               "commit %s\n",
               EINFER_BENCH_COMPILER, isa_name(), isa_dispatches() ? "runtime dispatch" : "pinned",
               simd_arch_name(), r.threads, r.threads > 1 ? "s" : "", g_clock_name,
               EINFER_BENCH_COMMIT);
  std::fprintf(out, "memory: weights %.2f MB, KV cache %.2f MB (%d positions, %s), arena %.2f MB\n",
               double(r.weights_bytes) / 1e6, double(r.kv_bytes) / 1e6, r.run.context,
               r.run.kv_dtype == DType::i8 ? "int8" : "f32", double(r.arena_bytes) / 1e6);
  std::fprintf(out, "roofline: FMA peak %.1f GFLOP/s (%s, %d-float registers as the f32 GEMM)\n\n",
               r.peak_gflops, simd_arch_name(), gemm_f32_lanes());
  const PrefillResult& p = r.prefill;
  std::fprintf(out,
               "prefill  %lld tokens: %.2f ms, %.1f tokens/s; GEMMs %.1f GFLOP/s = %.2f of peak "
               "(projections %.1f, feed-forward %.1f)\n\n",
               static_cast<long long>(p.tokens), p.seconds * 1e3, p.tokens_per_s, p.gemm_gflops,
               p.gemm_gflops / r.peak_gflops, p.projection_gflops, p.ffn_gflops);
  if (r.threads > 1) {
    std::fprintf(out,
                 "threads  prefill %d threads vs 1 (alternated passes, medians, %s): %.2f ms vs "
                 "%.2f ms = %.2fx\n",
                 r.threads, g_clock_name, p.seconds * 1e3, p.seconds_one_thread * 1e3, p.speedup);
    for (const DecodeResult& d : r.decode) {
      std::fprintf(out, "threads  decode@%lld p50 %.3f ms vs %.3f ms = %.2fx\n",
                   static_cast<long long>(d.context), d.p50, d.p50_one, d.speedup);
    }
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "decode   %7s %9s %8s %8s %8s %8s %9s %9s %9s %8s %8s\n", "context", "tokens/s",
               "p50 ms", "p90 ms", "p99 ms", "max ms", "MB/token", "GB/s", "bound GB/s", "mem frac",
               "flop frac");
  for (const DecodeResult& d : r.decode) {
    std::fprintf(
        out, "         %7lld %9.1f %8.3f %8.3f %8.3f %8.3f %9.3f %9.2f %9.2f %8.2f %8.3f%s\n",
        static_cast<long long>(d.context), d.tokens_per_s, d.p50, d.p90, d.p99, d.max,
        d.cost.bytes() / 1e6, d.achieved_gbps, d.bandwidth_gbps, d.decode_fraction,
        d.compute_fraction, d.context > c.context_length ? "  (beyond trained context)" : "");
  }
  std::fprintf(out, "\nstage split, ms per token (share)   prefill");
  for (const DecodeResult& d : r.decode)
    std::fprintf(out, "     decode@%-6lld", static_cast<long long>(d.context));
  std::fprintf(out, "\n");
  for (int i = 0; i < kStageCount; ++i) {
    std::fprintf(out, "  %-32s %7.4f (%4.1f%%)", kStageNames[i], p.stages.ns_per_token[i] * 1e-6,
                 100 * p.stages.ns_per_token[i] / p.stages.total_ns_per_token);
    for (const DecodeResult& d : r.decode) {
      std::fprintf(out, "  %7.4f (%4.1f%%)", d.stages.ns_per_token[i] * 1e-6,
                   100 * d.stages.ns_per_token[i] / d.stages.total_ns_per_token);
    }
    std::fprintf(out, "\n");
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
  std::fprintf(out,
               "\ndecode@%lld per stage (profiled pass)   GB/s  mem frac   GFLOP/s  flop frac\n",
               static_cast<long long>(d0.context));
  for (const Row& row : rows) {
    std::fprintf(out, "  %-34s %7.2f %8.2f %9.2f %9.3f\n", row.name, row.bytes / row.ns,
                 (row.bytes / bw) / row.ns, row.flops / row.ns,
                 (row.flops / r.peak_gflops) / row.ns);
  }
  std::fprintf(
      out,
      "  profiled pass %.4f ms/token (clock reads of %.0f ns subtracted) vs timed p50 %.4f ms\n",
      d0.stages.total_ns_per_token * 1e-6, g_clock_ns, d0.p50);
}

}  // namespace einfer::bench

namespace einfer::bench {

namespace {

// One row of the summary table: a prefill (pp) or decode (tg) test.
struct Row {
  std::string test;  // "pp128", "tg32@c512"
  int64_t n_prompt = 0, n_gen = 0, context = 0;
  MeanSd wall;         // tokens/s, wall clock, over repetitions
  double cpu_tps = 0;  // tokens/s from the thread CPU time (median)
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
};

std::vector<Row> rows_of(const Report& r) {
  std::vector<Row> rows;
  Row p;
  p.test = "pp" + std::to_string(r.prefill.tokens);
  p.n_prompt = r.prefill.tokens;
  p.wall = mean_sd(r.prefill.wall_tokens_per_s);
  p.cpu_tps = r.prefill.tokens_per_s;
  rows.push_back(p);
  for (const DecodeResult& d : r.decode) {
    Row t;
    t.test = "tg" + std::to_string(r.args.gen) + "@c" + std::to_string(d.context);
    t.n_gen = r.args.gen;
    t.context = d.context;
    t.wall = mean_sd(d.wall_tokens_per_s);
    t.cpu_tps = d.tokens_per_s;
    t.p50_ms = d.p50;
    t.p90_ms = d.p90;
    t.p99_ms = d.p99;
    rows.push_back(t);
  }
  return rows;
}

std::string model_name(const Report& r) {
  const ModelConfig& c = r.config;
  std::string name = "llama " + std::to_string(c.dim) + "d" + std::to_string(c.n_layers) + "L " +
                     dtype_name(c.weight_dtype);
  return name;
}

}  // namespace

void print_table(const Report& r, const std::string& format, std::FILE* out) {
  const std::vector<Row> rows = rows_of(r);
  const std::string model = model_name(r);
  const char* kv = r.run.kv_dtype == DType::i8 ? "q8" : "f32";
  const long long reps = r.args.repeat;
  if (format == "md") {
    std::fprintf(out, "einfer %s, commit %s, %s, ISA %s; wall clock, %lld repetitions\n\n",
                 EINFER_VERSION_STRING, EINFER_BENCH_COMMIT, EINFER_BENCH_COMPILER,
                 simd_arch_name(), reps);
    std::fprintf(out, "| model | weights | kv | threads | test | t/s | t/s (CPU) | p50 ms |\n");
    std::fprintf(out, "| --- | ---: | --- | ---: | --- | ---: | ---: | ---: |\n");
    for (const Row& row : rows) {
      std::fprintf(out, "| %s | %.2f MB | %s | %d | %s | %.2f ± %.2f | %.2f | %s |\n",
                   model.c_str(), double(r.weights_bytes) / 1e6, kv, r.threads, row.test.c_str(),
                   row.wall.mean, row.wall.sd, row.cpu_tps,
                   row.n_gen ? json_number(row.p50_ms).c_str() : "");
    }
    return;
  }
  auto object = [&](const Row& row) {
    return std::string("{") + "\"model\": " + json_string(model) +
           ", \"source\": " + json_string(r.source) +
           ", \"weights_bytes\": " + std::to_string(r.weights_bytes) + ", \"kv\": \"" + kv +
           "\", \"threads\": " + std::to_string(r.threads) +
           ", \"test\": " + json_string(row.test) +
           ", \"n_prompt\": " + std::to_string(row.n_prompt) +
           ", \"n_gen\": " + std::to_string(row.n_gen) +
           ", \"context\": " + std::to_string(row.context) +
           ", \"repetitions\": " + std::to_string(reps) +
           ", \"tokens_per_s\": " + json_number(row.wall.mean) +
           ", \"tokens_per_s_stddev\": " + json_number(row.wall.sd) +
           ", \"tokens_per_s_cpu\": " + json_number(row.cpu_tps) +
           ", \"p50_ms\": " + (row.n_gen ? json_number(row.p50_ms) : "null") +
           ", \"p90_ms\": " + (row.n_gen ? json_number(row.p90_ms) : "null") +
           ", \"p99_ms\": " + (row.n_gen ? json_number(row.p99_ms) : "null") +
           ", \"einfer_version\": \"" EINFER_VERSION_STRING "\"" +
           ", \"commit\": " + json_string(EINFER_BENCH_COMMIT) +
           ", \"compiler\": " + json_string(EINFER_BENCH_COMPILER) +
           ", \"isa\": " + json_string(simd_arch_name()) + "}";
  };
  if (format == "csv") {
    std::fprintf(out,
                 "model,weights_bytes,kv,threads,test,n_prompt,n_gen,context,repetitions,"
                 "tokens_per_s,tokens_per_s_stddev,tokens_per_s_cpu,p50_ms,p90_ms,p99_ms,"
                 "einfer_version,commit,compiler,isa\n");
    for (const Row& row : rows) {
      std::fprintf(out,
                   "\"%s\",%zu,%s,%d,%s,%lld,%lld,%lld,%lld,%s,%s,%s,%s,%s,%s,%s,%s,\"%s\",%s\n",
                   model.c_str(), r.weights_bytes, kv, r.threads, row.test.c_str(),
                   static_cast<long long>(row.n_prompt), static_cast<long long>(row.n_gen),
                   static_cast<long long>(row.context), reps, json_number(row.wall.mean).c_str(),
                   json_number(row.wall.sd).c_str(), json_number(row.cpu_tps).c_str(),
                   row.n_gen ? json_number(row.p50_ms).c_str() : "",
                   row.n_gen ? json_number(row.p90_ms).c_str() : "",
                   row.n_gen ? json_number(row.p99_ms).c_str() : "", EINFER_VERSION_STRING,
                   EINFER_BENCH_COMMIT, EINFER_BENCH_COMPILER, simd_arch_name());
    }
  } else if (format == "json") {
    std::fprintf(out, "[\n");
    for (size_t i = 0; i < rows.size(); ++i)
      std::fprintf(out, "  %s%s\n", object(rows[i]).c_str(), i + 1 < rows.size() ? "," : "");
    std::fprintf(out, "]\n");
  } else {  // jsonl
    for (const Row& row : rows) std::fprintf(out, "%s\n", object(row).c_str());
  }
}

}  // namespace einfer::bench
