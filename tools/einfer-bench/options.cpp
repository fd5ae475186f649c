// einfer-bench command line (tools/common/cli.h): flags, failure exits.
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "tools/common/cli.h"
#include "tools/common/run_flags.h"
#include "tools/einfer-bench/bench.h"

namespace einfer::bench {

[[noreturn]] void fail(const char* what, const Status& s) {
  char msg[256];
  format_status(s, msg, sizeof msg);
  std::fprintf(stderr, "einfer-bench: %s: %s\n", what, msg);
  std::exit(1);
}

[[noreturn]] void usage(const char* why) {
  // One line, as the parser reports its own errors (tools/common/cli.h).
  std::fprintf(stderr, "einfer-bench: %s (see einfer-bench --help)\n",
               why ? why : "bad command line");
  std::exit(2);
}

// "128,512,2048" -> positive integers; false with *error on anything else.
bool parse_contexts(const std::string& s, std::vector<long>* out, std::string* error) {
  out->clear();
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item =
        s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t c = 0;
    if (!tools::cli::read_integer_in(item, 1, kMaxRunPositions, &c, error)) return false;
    out->push_back(static_cast<long>(c));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

bool parse(int argc, char** argv, Args* a, int* exit_code) {
  namespace cli = tools::cli;
  int64_t prompt = a->prompt, gen = a->gen, repeat = a->repeat;
  tools::RunFlags run_flags;
  int64_t threads = cli::default_threads();
  bool no_ratio_check = false;
  cli::Parser p(
      "einfer-bench", "-m MODEL.ein | --synthetic SPEC [options]",
      "On-device benchmark of a llama model against the machine's own limits (streaming "
      "bandwidth,\nFMA peak): prefill and decode tokens/s (wall clock, mean +- stddev over "
      "repetitions; thread\nCPU time beside it), latency percentiles, memory, stage split. "
      "docs/bench.md.");
  p.option({"-m", "--model"}, &a->model, "FILE", "the packed model (.ein)");
  p.positional("MODEL", &a->model, "the model, as the first argument instead of -m");
  p.option({"--synthetic"}, &a->synthetic, "SPEC",
           "benchmark deterministic random weights instead: "
           "dim=288,hidden=768,layers=6,heads=6,kv_heads=6,vocab=32000,seq=256,dtype=q8 (keys: dim "
           "hidden layers heads kv_heads vocab seq dtype group seed tied)");
  p.section("what to run");
  p.option({"-p", "--n-prompt", "--prompt"}, &prompt, "N",
           "prompt tokens for prefill (default 128)")
      .range(1, 1 << 30);
  p.option({"-n", "--n-gen", "--gen"}, &gen, "N", "decode steps per repetition (default 32)")
      .range(1, 1 << 30);
  p.option({"--contexts"}, "LIST", "contexts decode is measured at (default 128,512,2048)",
           [a](const std::string& v, std::string* error) {
             return parse_contexts(v, &a->contexts, error);
           });
  p.option({"-r", "--repetitions", "--repeat"}, &repeat, "R", "repetitions (default 3)")
      .range(1, 1 << 30);
  run_flags.declare(p, false);
  p.option({"-t", "--threads"}, &threads, "N", "threads (default: the online cores)")
      .range(1, 4096)
      .hint("threads are a whole number");
  p.section("output");
  p.option({"-o", "--output"}, &a->output, "FORMAT",
           "stdout format: md (default), csv, json, jsonl, or text (the full report)")
      .choices({"md", "csv", "json", "jsonl", "text"});
  p.option({"--json"}, &a->json, "FILE", "write the full report as JSON");
  p.option({"--svg"}, &a->svg, "FILE", "plot tokens/s and memory against context");
  p.flag({"-v", "--verbose"}, &a->verbose, "also print the full report on stderr");
  p.section("checks and microbenchmarks");
  p.flag({"--smoke"}, &a->smoke, "SIMD vs scalar f32 GEMV in this process; fails below 2x");
  p.flag({"--no-ratio-check"}, &no_ratio_check, "--smoke without the 2x requirement");
  p.flag({"--kernels"}, &a->kernels,
         "run einfer-kernel-bench, -vec-bench, -quant-bench and -attn-bench");
  p.flag({"--quick"}, &a->quick, "--kernels: the short versions");
  if (!p.parse(argc, argv, exit_code)) return false;
  a->prompt = prompt;
  a->gen = gen;
  a->repeat = repeat;
  run_flags.apply(&a->run);
  a->threads = static_cast<int>(threads);
  a->ratio_check = !no_ratio_check;
  if (!a->model.empty() && !a->synthetic.empty()) {
    *exit_code = p.fail("give a model file or --synthetic, not both");
    return false;
  }
  if (a->model.empty() && a->synthetic.empty() && !a->smoke && !a->kernels) {
    *exit_code = p.fail("no model given (-m MODEL.ein or --synthetic SPEC)");
    return false;
  }
  std::sort(a->contexts.begin(), a->contexts.end());
  a->contexts.erase(std::unique(a->contexts.begin(), a->contexts.end()), a->contexts.end());
  return true;
}

}  // namespace einfer::bench
