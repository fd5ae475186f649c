// einfer-bench command line: flags, usage, failure exits.
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "tools/einfer-bench/bench.h"

namespace einfer::bench {

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
      "         [--batch B] [--repeat R] [-t|--threads N] [--json FILE] [--svg FILE] [--smoke]\n"
      "       einfer-bench --smoke       SIMD vs scalar f32 GEMV (needs >= 2x)\n"
      "       einfer-bench --kernels [--quick] [-t N]   einsum, vector, quant and attention "
      "microbenchmarks\n"
      "synthetic keys: dim hidden layers heads kv_heads vocab seq dtype(f32|f16|q8|q4) group seed "
      "tied(0|1)\n");
  std::exit(2);
}

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
    else if (!std::strcmp(f, "-t") || !std::strcmp(f, "--threads")) {
      const char* v = value();
      if (!parse_long_strict(v, &a.threads) || a.threads < 1 || a.threads > 256) {
        std::fprintf(stderr, "einfer-bench: %s is the thread count (1..256), got '%s'\n", f, v);
        std::exit(2);
      }
    } else if (!std::strcmp(f, "--kv")) {
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

}  // namespace einfer::bench
