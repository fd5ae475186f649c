// einfer-run: generate text with a packed llama model, or transform sequences with an encoder.
//
//   einfer-run MODEL.ein [-z TOKENIZER] [-p PROMPT | --prompt-ids "1 2 3"] [-n STEPS] [-t TEMP]
//              [--top-p P] [--top-k K] [--seed S] [--window W] [--sinks S] [--kv f32|q8]
//              [--context N] [--batch B] [--ids] [--ignore-eos] [--logits FILE] [--no-crc]
//   einfer-run MODEL.ein --tokenize -p PROMPT   (prints the prompt's ids, as the model is fed them)
//   einfer-run ENCODER.ein --input X.npy --output Y.npy
//
// Text streams to stdout as it is generated; timing and memory go to stderr at the end.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "models/session.h"
#include "runtime/format.h"
#include "tools/common/cli_number.h"
#include "tools/common/file.h"
#include "tools/common/npy.h"
#include "tools/common/thread_pool.h"
#include "tools/einfer-pack/import_tokenizer.h"

using namespace einfer;

namespace {

struct Args {
  const char* model = nullptr;
  const char* tokenizer = nullptr;
  const char* prompt = nullptr;
  const char* prompt_ids = nullptr;
  int64_t steps = -1;  // -1: not given
  float temperature = 0.f;
  float top_p = 1.f;
  int64_t top_k = 0;
  unsigned long long seed = 0;
  bool seed_set = false;
  RunOptions run;
  long threads = 0;  // 0: the online cores
  bool ids = false;
  bool ignore_eos = false;
  bool tokenize = false;
  bool verify_crc = true;
  const char* logits = nullptr;
  const char* input = nullptr;
  const char* output = nullptr;
};

[[noreturn]] void usage(const char* why) {
  if (why) std::fprintf(stderr, "einfer-run: %s\n", why);
  std::fprintf(
      stderr,
      "usage: einfer-run MODEL.ein [-z TOKENIZER] [-p PROMPT | --prompt-ids \"1 2 3\"] [-n STEPS]\n"
      "                  [-t|--threads N] [--temp T] [--top-p P] [--top-k K] [--seed S] [--window "
      "W] [--sinks S]\n"
      "                  [--kv f32|q8] [--context N] [--batch B] [--ids] [--ignore-eos] [--logits "
      "FILE]\n"
      "                  [--no-crc]\n"
      "       einfer-run MODEL.ein --tokenize -p PROMPT   (prints the prompt's token ids)\n"
      "       einfer-run ENCODER.ein --input X.npy --output Y.npy\n");
  std::exit(2);
}

[[noreturn]] void die(const char* what, const Status& s) {
  char msg[256];
  format_status(s, msg, sizeof msg);
  std::fprintf(stderr, "einfer-run: %s: %s\n", what, msg);
  std::exit(1);
}

// Whole numbers within each option's bounds; one line naming the option and its range otherwise.
int64_t parse_long(const char* flag, const char* v, int64_t lo, int64_t hi) {
  int64_t x = 0;
  std::string err;
  if (!tools::parse_int_option(flag, v, lo, hi, &x, &err)) {
    std::fprintf(stderr, "einfer-run: %s\n", err.c_str());
    std::exit(2);
  }
  return x;
}

float parse_float(const char* flag, const char* v, double lo, double hi, bool lo_open) {
  float x = 0.f;
  std::string err;
  if (!tools::parse_float_option(flag, v, lo, hi, lo_open, &x, &err)) {
    std::fprintf(stderr, "einfer-run: %s\n", err.c_str());
    std::exit(2);
  }
  return x;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const char* f = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "einfer-run: %s needs a value\n", f);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(f, "-z"))
      a.tokenizer = value();
    else if (!std::strcmp(f, "-p"))
      a.prompt = value();
    else if (!std::strcmp(f, "--prompt-ids"))
      a.prompt_ids = value();
    else if (!std::strcmp(f, "-n"))
      a.steps = parse_long(f, value(), 0, int64_t{1} << 40);
    else if (!std::strcmp(f, "-t") || !std::strcmp(f, "--threads")) {
      const char* v = value();
      char* end = nullptr;
      a.threads = std::strtol(v, &end, 10);
      if (!v[0] || *end || a.threads < 1 || a.threads > 256) {
        std::fprintf(stderr,
                     "einfer-run: %s is the thread count (1..256), got '%s'; the sampling "
                     "temperature is --temp\n",
                     f, v);
        std::exit(2);
      }
    } else if (!std::strcmp(f, "--temp") || !std::strcmp(f, "--temperature"))
      a.temperature = parse_float(f, value(), 0, 1e6, false);
    else if (!std::strcmp(f, "--top-p"))
      a.top_p = parse_float(f, value(), 0, 1, true);
    else if (!std::strcmp(f, "--top-k"))
      a.top_k = parse_long(f, value(), 0, INT32_MAX);
    else if (!std::strcmp(f, "--seed")) {
      a.seed = static_cast<unsigned long long>(parse_long(f, value(), 0, INT64_MAX));
      a.seed_set = true;
    } else if (!std::strcmp(f, "--window"))
      a.run.window = static_cast<int32_t>(parse_long(f, value(), 0, kMaxRunPositions));
    else if (!std::strcmp(f, "--sinks"))
      a.run.sinks = static_cast<int32_t>(parse_long(f, value(), 0, kMaxRunPositions));
    else if (!std::strcmp(f, "--context"))
      a.run.context = static_cast<int32_t>(parse_long(f, value(), 0, kMaxRunPositions));
    else if (!std::strcmp(f, "--batch"))
      a.run.max_batch = static_cast<int32_t>(parse_long(f, value(), 0, kMaxRunBatch));
    else if (!std::strcmp(f, "--kv")) {
      const char* v = value();
      if (!std::strcmp(v, "f32"))
        a.run.kv_dtype = DType::f32;
      else if (!std::strcmp(v, "q8") || !std::strcmp(v, "i8"))
        a.run.kv_dtype = DType::i8;
      else
        usage("--kv takes f32 or q8");
    } else if (!std::strcmp(f, "--ids"))
      a.ids = true;
    else if (!std::strcmp(f, "--ignore-eos"))
      a.ignore_eos = true;
    else if (!std::strcmp(f, "--tokenize"))
      a.tokenize = true;
    else if (!std::strcmp(f, "--no-crc"))
      a.verify_crc = false;
    else if (!std::strcmp(f, "--logits"))
      a.logits = value();
    else if (!std::strcmp(f, "--input"))
      a.input = value();
    else if (!std::strcmp(f, "--output"))
      a.output = value();
    else if (!std::strcmp(f, "-h") || !std::strcmp(f, "--help"))
      usage(nullptr);
    else if (f[0] == '-') {
      std::fprintf(stderr, "einfer-run: unknown option %s\n", f);
      usage(nullptr);
    } else if (!a.model)
      a.model = f;
    else
      usage("more than one model given");
  }
  if (!a.model) usage("no model given");
  if (a.prompt && a.prompt_ids) usage("-p and --prompt-ids exclude each other");
  if (a.tokenize && !a.prompt) usage("--tokenize needs -p PROMPT");
  return a;
}

// A 64-byte aligned heap buffer for the arena (the tool may allocate; the libraries never do).
// A failed allocation ends the run with one line: a null buffer would make a *measuring* arena.
struct AlignedBuffer {
  void* p = nullptr;
  AlignedBuffer(size_t n, const char* what) {
    const size_t rounded = n > SIZE_MAX - 63 ? 0 : (n + 63) / 64 * 64;
    p = rounded ? std::aligned_alloc(64, rounded) : nullptr;
    if (p == nullptr) {
      std::fprintf(stderr,
                   "einfer-run: cannot allocate %zu bytes for the %s (reduce --context, "
                   "--window or --batch)\n",
                   n, what);
      std::exit(1);
    }
  }
  ~AlignedBuffer() { std::free(p); }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_encoder(const Args& a, const tools::MappedFile& file, const LoadOptions& load,
                const Model& model) {
  if (!a.input || !a.output) usage("an encoder model needs --input X.npy and --output Y.npy");
  tools::NpyArray x;
  std::string err;
  if (!tools::read_npy(a.input, &x, &err)) {
    std::fprintf(stderr, "einfer-run: %s\n", err.c_str());  // err names the file
    return 1;
  }
  const ModelConfig& c = model.config;
  const size_t rank = x.shape.size();
  if ((rank != 2 && rank != 3) || x.shape.back() != c.dim) {
    std::fprintf(stderr, "einfer-run: --input must be [seq, %d] or [batch, seq, %d]\n", c.dim,
                 c.dim);
    return 1;
  }
  const int64_t batch = rank == 3 ? x.shape[0] : 1;
  const int64_t seq = x.shape[rank - 2];
  if (seq <= 0 || (c.context_length > 0 && seq > c.context_length)) {
    std::fprintf(stderr, "einfer-run: sequence length %lld outside 1..%d (the model's maximum)\n",
                 static_cast<long long>(seq), c.context_length);
    return 1;
  }
  SessionOptions options;
  options.run.context = static_cast<int32_t>(seq);
  size_t need = 0;
  Status s = session_arena_bytes(model, options, &need);
  if (!s.ok()) die("sizing the arena", s);
  AlignedBuffer mem(need, "encoder arena");
  Arena arena(mem.p, need);
  Session* session = nullptr;
  if (!(s = session_create(file.data, file.size, load, options, arena, &session)).ok())
    die("creating the session", s);
  std::vector<float> y(x.data.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < batch; ++b) {
    const size_t off = static_cast<size_t>(b * seq * c.dim);
    s = session_encode(session, x.data.data() + off, static_cast<int32_t>(seq), y.data() + off);
    if (!s.ok()) die("encoder forward", s);
  }
  const double dt = seconds_since(t0);
  if (!tools::write_npy(a.output, y.data(), x.shape, &err)) {
    std::fprintf(stderr, "einfer-run: %s: %s\n", a.output, err.c_str());
    return 1;
  }
  std::fprintf(stderr, "encoder: %lld x %lld positions in %.3f ms (%.1f positions/s)\n",
               static_cast<long long>(batch), static_cast<long long>(seq), dt * 1e3,
               static_cast<double>(batch * seq) / dt);
  std::fprintf(stderr, "memory: arena %zu bytes used of %zu reserved, weights %zu bytes\n",
               arena.high_water(), need, model_weight_bytes(model));
  return 0;
}

std::vector<int32_t> parse_ids(const char* text) {
  std::vector<int32_t> ids;
  const char* p = text;
  while (*p) {
    while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') ++p;
    if (!*p) break;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(p, &end, 10);
    if (end == p || errno == ERANGE || v < 0 || v > INT32_MAX) {
      std::fprintf(stderr,
                   "einfer-run: --prompt-ids: expected token ids in 0..%d separated by spaces or "
                   "commas, got '%s'\n",
                   INT32_MAX, text);
      std::exit(2);
    }
    ids.push_back(static_cast<int32_t>(v));
    p = end;
  }
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  tools::MappedFile file;
  if (!tools::map_file(a.model, &file)) {
    std::fprintf(stderr, "einfer-run: cannot read model file %s\n", a.model);
    return 1;
  }
  LoadOptions load;
  load.verify_crc = a.verify_crc;
  Model model;
  Status s = load_model(file.data, file.size, load, &model);
  if (!s.ok()) die(a.model, s);
  if (model.config.arch == ArchKind::encoder) return run_encoder(a, file, load, model);

  const ModelConfig& c = model.config;

  // Tokenizer: -z (any file einfer-pack takes) wins over the one packed into the model; ids-only
  // runs need none. The session owns it, and the sampler.
  std::vector<uint8_t> tok_image;
  if (a.tokenizer) {
    try {
      tok_image =
          pack::tokenizer_image_for_model(pack::read_tokenizer_file(a.tokenizer), c.vocab_size);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "einfer-run: %s\n", e.what());
      return 1;
    }
  }
  const bool have_tok = a.tokenizer || model.tokenizer;
  if (!have_tok && (a.prompt || !a.ids)) {
    std::fprintf(stderr,
                 "einfer-run: no tokenizer: pass -z TOKENIZER, pack one with -z, or use "
                 "--prompt-ids and --ids\n");
    return 1;
  }
  tools::ThreadPool pool(a.threads > 0 ? static_cast<int>(a.threads) : tools::online_cores());
  SessionOptions options;
  options.run = a.run;
  options.run.threads = pool.threads();
  options.sampler.temperature = a.temperature;
  options.sampler.top_p = a.top_p;
  options.sampler.top_k = static_cast<int32_t>(a.top_k);
  options.sampler.seed =
      a.seed_set
          ? a.seed
          : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  options.tokenizer = have_tok ? 1 : 0;
  options.max_prompt_bytes = a.prompt ? std::strlen(a.prompt) : 0;
  if (a.tokenizer) {
    options.tokenizer_image = tok_image.data();
    options.tokenizer_image_bytes = tok_image.size();
  }
  size_t need = 0;
  if (!(s = session_arena_bytes(model, options, &need)).ok()) die("run options", s);
  AlignedBuffer mem(need, "session arena");
  Arena arena(mem.p, need);
  Session* session = nullptr;
  if (!(s = session_create(file.data, file.size, load, options, arena, &session)).ok())
    die("creating the session", s);
  const RunOptions& run = session->state.options;

  // Without a tokenizer, llama2.c's ids: BOS 1 starts a run, EOS 2 (or BOS) ends it; llama2.c
  // checkpoints also delimit sequences with BOS.
  const int32_t bos = session_token_bos(*session);
  auto ends_generation = [&](int32_t id) {
    return session_token_is_eog(*session, id) || (bos >= 0 && id == bos);
  };

  std::vector<int32_t> prompt;
  if (a.prompt_ids) {
    prompt = parse_ids(a.prompt_ids);
    if (prompt.empty()) usage("--prompt-ids is empty");
  } else if (a.prompt) {
    const size_t len = std::strlen(a.prompt);
    prompt.resize(2 * len + 3);
    int32_t n = 0;
    s = session_tokenize(session, a.prompt, len, true, prompt.data(),
                         static_cast<int32_t>(prompt.size()), &n);
    if (!s.ok()) die("encoding the prompt", s);
    prompt.resize(static_cast<size_t>(n));
    if (a.tokenize) {
      for (size_t i = 0; i < prompt.size(); ++i) std::printf(i ? " %d" : "%d", prompt[i]);
      std::printf("\n");
      return 0;
    }
    if (prompt.empty()) usage("the prompt encodes to no tokens (and the model adds no BOS)");
  } else {
    if (bos < 0) usage("the model has no BOS token: give -p PROMPT or --prompt-ids");
    prompt.push_back(bos);
  }

  // How many tokens to generate: -n, else until the context is full (or 256 when streaming).
  const int64_t room =
      run.window > 0 ? INT64_MAX
                     : static_cast<int64_t>(run.context) - static_cast<int64_t>(prompt.size());
  if (room < 0) {
    std::fprintf(stderr, "einfer-run: the prompt (%zu tokens) is longer than the context (%d)\n",
                 prompt.size(), run.context);
    return 1;
  }
  int64_t steps = a.steps >= 0 ? a.steps : (run.window > 0 ? 256 : room);
  if (steps > room) steps = room;

  std::vector<float> all_logits;
  if (a.logits) all_logits.resize(prompt.size() * static_cast<size_t>(c.vocab_size));
  const auto t_prefill = std::chrono::steady_clock::now();
  s = session_eval(session, prompt.data(), static_cast<int32_t>(prompt.size()),
                   a.logits ? all_logits.data() : nullptr);
  if (!s.ok()) die("prefill", s);
  const double prefill_s = seconds_since(t_prefill);

  if (!a.ids && a.prompt) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      const TextPiece p = session_token_text(*session, i ? prompt[i - 1] : -1, prompt[i]);
      std::fwrite(p.data, 1, p.size, stdout);
    }
  }
  std::vector<int32_t> generated;
  std::vector<double> step_ms;
  int32_t prev = prompt.back();
  for (int64_t i = 0; i < steps; ++i) {
    const int32_t next = session_next_token(session);  // the logits are already saved (--logits)
    // Any end-of-generation id ends the text, unless streaming on through sequence boundaries
    // was asked for (then control tokens are still never printed).
    if (!a.ignore_eos && ends_generation(next)) break;
    generated.push_back(next);
    if (a.ids) {
      std::printf(generated.size() > 1 ? " %d" : "%d", next);
    } else {
      const TextPiece p = session_token_text(*session, prev, next);
      std::fwrite(p.data, 1, p.size, stdout);
    }
    std::fflush(stdout);
    prev = next;
    if (i + 1 == steps && !a.logits) break;  // the last token's logits are not needed
    const auto t0 = std::chrono::steady_clock::now();
    s = session_eval(session, &next, 1);
    if (!s.ok()) die("decode", s);
    step_ms.push_back(seconds_since(t0) * 1e3);
    if (a.logits)
      all_logits.insert(all_logits.end(), session_logits(*session),
                        session_logits(*session) + c.vocab_size);
  }
  std::printf("\n");
  std::fflush(stdout);  // the text before the statistics on stderr, also through a pipe

  if (a.logits) {
    std::string err;
    const std::vector<int64_t> shape = {
        static_cast<int64_t>(all_logits.size() / static_cast<size_t>(c.vocab_size)), c.vocab_size};
    if (!tools::write_npy(a.logits, all_logits.data(), shape, &err)) {
      std::fprintf(stderr, "einfer-run: %s: %s\n", a.logits, err.c_str());
      return 1;
    }
  }
  double decode_s = 0;
  for (double ms : step_ms) decode_s += ms / 1e3;
  std::fprintf(stderr, "prefill: %zu tokens in %.2f ms (%.1f tokens/s), %d thread%s\n",
               prompt.size(), prefill_s * 1e3, static_cast<double>(prompt.size()) / prefill_s,
               pool.size(), pool.size() > 1 ? "s" : "");
  if (!step_ms.empty()) {
    std::fprintf(stderr, "decode: %zu tokens in %.2f ms (%.1f tokens/s)\n", step_ms.size(),
                 decode_s * 1e3, static_cast<double>(step_ms.size()) / decode_s);
  }
  std::fprintf(
      stderr,
      "memory: arena %zu bytes used of %zu reserved (KV cache %s, %d slots), weights %zu bytes\n",
      arena.high_water(), need, run.kv_dtype == DType::i8 ? "int8" : "f32", run.context,
      model_weight_bytes(model));
  return 0;
}
