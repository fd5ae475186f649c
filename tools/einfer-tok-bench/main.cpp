// einfer-tok-bench [TOKENIZER] [--reps N]: encodes 1 KB, 16 KB and 256 KB of mixed text (prose,
// code, numbers, CJK, emoji) and two pathological texts (one 256 KB word, 256 KB of spaces) with
// the on-device tokenizer, reporting the median thread CPU time of N runs as tokens/s and MB/s,
// plus the cost per byte relative to 1 KB (quadratic encoding would grow it 256x). TOKENIZER
// defaults to Llama 3's tokenizer.json (128K vocabulary) in ../shared/tokenizers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "models/tokenizer_text.h"
#include "tools/common/cli.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

namespace {

const char* const kSample =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
    "park.\n\nint main(int argc, char** argv) {\n    for (int i = 0; i < 1024; ++i) "
    "total += values[i] * 3.14159;\n    return 0;\n}\n"
    "The year 2024 had 366 days; I'm sure you'll agree it's a leap year. "
    "日本語のテキストと中文字符串。 Привет, мир! 😀🚀 naïve café — “quotes” and ‘more’.\n";

std::string make_text(size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += kSample;
  s.resize(bytes);
  // Do not cut a UTF-8 character in half at the end.
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();
  return s;
}

// Thread CPU time: the machine is shared, and a run longer than a time slice would otherwise
// count the other processes' slices as tokenizer time.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;  // empty: the default below (a preset default would clash with the argument)
  int64_t reps_arg = 7;
  einfer::tools::cli::Parser p("einfer-tok-bench", "[TOKENIZER] [options]",
                               "On-device tokenizer throughput on mixed and pathological texts.");
  p.positional(
      "TOKENIZER", &path,
      "any tokenizer einfer-pack takes (default ../shared/tokenizers/llama3/tokenizer.json)");
  p.option({"-r", "--reps"}, &reps_arg, "N", "runs per text, the median is reported (default 7)")
      .range(1, 1 << 20);
  if (int code; !p.parse(argc, argv, &code)) return code;
  if (path.empty()) path = "../shared/tokenizers/llama3/tokenizer.json";
  const int reps = static_cast<int>(reps_arg);
  std::vector<uint8_t> image;
  try {
    image = pack::write_tokenizer_image(pack::read_tokenizer_file(path));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "einfer-tok-bench: %s\n", e.what());
    return 1;
  }
  PackedTokenizer packed;
  tokenizer_parse(image.data(), image.size(), &packed);
  const size_t arena_bytes = text_tokenizer_arena_bytes(packed);
  std::vector<unsigned char> memory(arena_bytes + kDefaultAlignment);
  const uintptr_t base = reinterpret_cast<uintptr_t>(memory.data());
  Arena arena(memory.data() + (kDefaultAlignment - base % kDefaultAlignment) % kDefaultAlignment,
              arena_bytes);
  TextTokenizer tok;
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = text_tokenizer_init(&tok, image.data(), image.size(), false, arena);
  const double init_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::fprintf(stderr, "einfer-tok-bench: %s\n", s.message);
    return 1;
  }
  std::printf(
      "tokenizer %s: %u tokens, %u merges, image %zu bytes, arena %zu bytes, init %.1f ms\n",
      path.c_str(), packed.header.n_tokens, packed.header.n_merges, image.size(), arena_bytes,
      init_ms);
  struct Case {
    const char* name;
    std::string text;
  };
  std::vector<Case> cases = {{"mixed 1 KB", make_text(1024)},
                             {"mixed 16 KB", make_text(16 * 1024)},
                             {"mixed 256 KB", make_text(256 * 1024)},
                             {"one 256 KB word", std::string(256 * 1024, 'a')},
                             {"256 KB of spaces", std::string(256 * 1024, ' ')}};
  double first_ns_per_byte = 0;
  std::printf("%-18s %10s %12s %10s %14s\n", "text", "tokens", "tokens/s", "MB/s", "ns/byte ratio");
  for (const Case& c : cases) {
    std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(tok.packed, c.text.size()));
    std::vector<int32_t> ids(c.text.size() + 8);
    std::vector<double> secs;
    int32_t n = 0;
    for (int r = 0; r < reps; ++r) {
      const double a = cpu_seconds();
      const Status e = text_tokenizer_encode(tok, c.text.data(), c.text.size(), true, ids.data(),
                                             static_cast<int32_t>(ids.size()), &n, scratch.data(),
                                             scratch.size());
      secs.push_back(cpu_seconds() - a);
      if (!e.ok()) {
        std::fprintf(stderr, "einfer-tok-bench: %s\n", e.message);
        return 1;
      }
    }
    std::sort(secs.begin(), secs.end());
    const double t = secs[secs.size() / 2];
    const double ns_per_byte = t * 1e9 / static_cast<double>(c.text.size());
    if (first_ns_per_byte == 0) first_ns_per_byte = ns_per_byte;
    std::printf("%-18s %10d %12.0f %10.2f %14.2f\n", c.name, n, n / t,
                static_cast<double>(c.text.size()) / t / 1e6, ns_per_byte / first_ns_per_byte);
  }
  return 0;
}
