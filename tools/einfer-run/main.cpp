// einfer-run: generate text with a packed llama model, or transform sequences with an encoder.
//
//   einfer-run MODEL.ein [-z TOKENIZER] [-p PROMPT | --prompt-ids "1 2 3"] [-n STEPS] [-t TEMP]
//              [--top-p P] [--top-k K] [--seed S] [--window W] [--sinks S] [--kv f32|q8]
//              [--context N] [--batch B] [--ids] [--ignore-eos] [--logits FILE] [--no-crc]
//   einfer-run ENCODER.ein --input X.npy --output Y.npy
//
// Text streams to stdout as it is generated; timing and memory go to stderr at the end.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "models/encoder.h"
#include "models/sampler.h"
#include "models/session.h"
#include "models/tokenizer.h"
#include "runtime/format.h"
#include "tools/common/file.h"
#include "tools/common/npy.h"
#include "tools/einfer-run/interactive.h"
#include "tools/einfer-run/options.h"

using namespace einfer;
using namespace einfer::run_tool;

namespace {

[[noreturn]] void die(const char* what, const Status& s) {
  char msg[256];
  format_status(s, msg, sizeof msg);
  std::fprintf(stderr, "einfer-run: %s: %s\n", what, msg);
  std::exit(1);
}

// A 64-byte aligned heap buffer for the arena (the tool may allocate; the libraries never do).
struct AlignedBuffer {
  void* p = nullptr;
  explicit AlignedBuffer(size_t n) { p = std::aligned_alloc(64, (n + 63) / 64 * 64); }
  ~AlignedBuffer() { std::free(p); }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_encoder(const Args& a, const Model& model) {
  if (a.input.empty() || a.output.empty()) {
    std::fprintf(stderr, "einfer-run: an encoder model needs --input X.npy and --output Y.npy\n");
    return 2;
  }
  tools::NpyArray x;
  std::string err;
  if (!tools::read_npy(a.input, &x, &err)) {
    std::fprintf(stderr, "einfer-run: %s: %s\n", a.input.c_str(), err.c_str());
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
  size_t need = 0;
  Status s = encoder_arena_bytes(c, static_cast<int32_t>(seq), &need);
  if (!s.ok()) die("sizing the arena", s);
  AlignedBuffer mem(need);
  Arena arena(mem.p, need);
  EncoderWeights w;
  EncoderState st;
  if (!(s = encoder_bind_weights(model, arena, &w)).ok()) die("binding weights", s);
  if (!(s = encoder_state_init(c, static_cast<int32_t>(seq), arena, &st)).ok())
    die("creating the state", s);
  std::vector<float> y(x.data.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < batch; ++b) {
    const size_t off = static_cast<size_t>(b * seq * c.dim);
    s = encoder_forward(w, &st, x.data.data() + off, static_cast<int32_t>(seq), y.data() + off);
    if (!s.ok()) die("encoder forward", s);
  }
  const double dt = seconds_since(t0);
  if (!tools::write_npy(a.output, y.data(), x.shape, &err)) {
    std::fprintf(stderr, "einfer-run: %s: %s\n", a.output.c_str(), err.c_str());
    return 1;
  }
  std::fprintf(stderr, "encoder: %lld x %lld positions in %.3f ms (%.1f positions/s)\n",
               static_cast<long long>(batch), static_cast<long long>(seq), dt * 1e3,
               static_cast<double>(batch * seq) / dt);
  std::fprintf(stderr, "memory: arena %zu bytes used of %zu reserved, weights %zu bytes\n",
               arena.high_water(), need, model_weight_bytes(model));
  return 0;
}

std::vector<int32_t> parse_ids(const std::string& list) {
  const char* text = list.c_str();
  std::vector<int32_t> ids;
  const char* p = text;
  while (*p) {
    while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') ++p;
    if (!*p) break;
    char* end = nullptr;
    const long v = std::strtol(p, &end, 10);
    if (end == p) {
      std::fprintf(stderr, "einfer-run: --prompt-ids: '%s' is not a list of integers\n", text);
      std::exit(2);
    }
    ids.push_back(static_cast<int32_t>(v));
    p = end;
  }
  return ids;
}

// The value of `key` in the image's metadata ("key=value" lines), "" when absent. The image is
// loaded and checked already, so the header's metadata region lies inside it.
std::string metadata_value(const void* image, size_t size, const std::string& key) {
  FileHeader h;
  if (size < sizeof h) return "";
  std::memcpy(&h, image, sizeof h);
  if (!(h.flags & kEinFlagMetadata) || h.metadata_offset + h.metadata_bytes > size) return "";
  const std::string text(static_cast<const char*>(image) + h.metadata_offset, h.metadata_bytes);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, key.size() + 1, key + "=") == 0)
      return text.substr(at + key.size() + 1, end - at - key.size() - 1);
    at = end + 1;
  }
  return "";
}

// --repeat-penalty, llama.cpp's rule: the logit of a token among the last `last_n` is divided by
// the penalty when positive and multiplied by it when negative.
void penalize_repeats(float* logits, int32_t vocab, const std::vector<int32_t>& recent,
                      double penalty, int64_t last_n) {
  if (penalty == 1.0 || last_n == 0) return;
  const size_t from = recent.size() > static_cast<size_t>(last_n) ? recent.size() - last_n : 0;
  std::vector<bool> seen(static_cast<size_t>(vocab), false);
  for (size_t i = from; i < recent.size(); ++i) {
    const int32_t t = recent[i];
    if (t < 0 || t >= vocab || seen[static_cast<size_t>(t)]) continue;
    seen[static_cast<size_t>(t)] = true;
    float& l = logits[t];
    l = l > 0 ? static_cast<float>(l / penalty) : static_cast<float>(l * penalty);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (int code; !parse_args(argc, argv, &a, &code)) return code;
  apply_threads(a, &a.run);
  tools::MappedFile file;
  if (!tools::map_file(a.model.c_str(), &file)) {
    std::fprintf(stderr, "einfer-run: cannot read model file %s\n", a.model.c_str());
    return 1;
  }
  LoadOptions load;
  load.verify_crc = a.verify_crc;
  Model model;
  Status s = load_model(file.data, file.size, load, &model);
  if (!s.ok()) die(a.model.c_str(), s);
  if (model.config.arch == ArchKind::encoder) return run_encoder(a, model);

  const ModelConfig& c = model.config;
  size_t need = 0;
  if (!(s = session_arena_bytes(c, a.run, &need)).ok()) die("run options", s);
  AlignedBuffer mem(need);
  Arena arena(mem.p, need);
  Session* session = nullptr;
  if (!(s = session_create(file.data, file.size, load, a.run, arena, &session)).ok())
    die("creating the session", s);
  const RunOptions& run = session->state.options;

  // Tokenizer: -z wins over the one packed into the model; ids-only runs need none.
  std::vector<uint8_t> tok_file;
  const void* tok_bytes = model.tokenizer;
  size_t tok_size = model.tokenizer_bytes;
  if (!a.tokenizer.empty()) {
    if (!tools::read_file(a.tokenizer.c_str(), &tok_file) || tok_file.empty()) {
      std::fprintf(stderr, "einfer-run: cannot read tokenizer %s\n", a.tokenizer.c_str());
      return 1;
    }
    tok_bytes = tok_file.data();
    tok_size = tok_file.size();
  }
  Tokenizer tok;
  const bool have_tok = tok_bytes != nullptr;
  AlignedBuffer tok_mem(have_tok ? tokenizer_arena_bytes(c.vocab_size) : 64);
  if (have_tok) {
    Arena tok_arena(tok_mem.p, tokenizer_arena_bytes(c.vocab_size));
    if (!(s = tokenizer_init(&tok, tok_bytes, tok_size, c.vocab_size, tok_arena)).ok())
      die("tokenizer", s);
  } else if (a.prompt_given || !a.ids) {
    std::fprintf(stderr,
                 "einfer-run: no tokenizer: pass -z TOKENIZER, pack one with -z, or use "
                 "--prompt-ids and --ids\n");
    return 1;
  }

  std::vector<int32_t> prompt;
  if (!a.prompt_ids.empty()) {
    prompt = parse_ids(a.prompt_ids);
    if (prompt.empty()) {
      std::fprintf(stderr, "einfer-run: --prompt-ids is empty\n");
      return 2;
    }
  } else if (a.prompt_given && !a.interactive) {
    const size_t len = a.prompt.size();
    std::vector<unsigned char> scratch(tokenizer_encode_scratch_bytes(tok, len));
    prompt.resize(len + 3);
    int32_t n = 0;
    s = tokenizer_encode(tok, a.prompt.c_str(), len, true, false, prompt.data(),
                         static_cast<int32_t>(prompt.size()), &n, scratch.data(), scratch.size());
    if (!s.ok()) die("encoding the prompt", s);
    prompt.resize(static_cast<size_t>(n));
  } else {
    prompt.push_back(kTokenBos);
  }

  Sampler sampler;
  std::vector<unsigned char> sampler_mem(sampler_scratch_bytes(c.vocab_size));
  SamplerConfig sc;
  sc.temperature = static_cast<float>(a.temperature);
  sc.top_p = static_cast<float>(a.top_p);
  sc.top_k = static_cast<int32_t>(a.top_k);
  sc.seed =
      a.seed_set
          ? a.seed
          : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  if (!(s = sampler_init(&sampler, sc, c.vocab_size, sampler_mem.data(), sampler_mem.size())).ok())
    die("sampler", s);

  if (a.verbose)
    std::fprintf(
        stderr,
        "einfer-run: context %d, window %d, sinks %d, kv %s, batch %d, temp %g, top-k %lld, "
        "top-p %g, repeat-penalty %g (last %lld), seed %llu\n",
        run.context, run.window, run.sinks, run.kv_dtype == DType::i8 ? "q8" : "f32", run.max_batch,
        a.temperature, static_cast<long long>(a.top_k), a.top_p, a.repeat_penalty,
        static_cast<long long>(a.repeat_last_n), static_cast<unsigned long long>(sc.seed));
  std::vector<float> sample_logits(static_cast<size_t>(c.vocab_size));
  auto next_token = [&](const std::vector<int32_t>& recent) {
    std::memcpy(sample_logits.data(), session_logits(*session),
                sample_logits.size() * sizeof(float));
    penalize_repeats(sample_logits.data(), c.vocab_size, recent, a.repeat_penalty, a.repeat_last_n);
    return sampler_sample(&sampler, sample_logits.data());
  };

  if (a.interactive) {
    if (!have_tok) {
      std::fprintf(stderr, "einfer-run: -i needs a tokenizer (packed with -z, or -z here)\n");
      return 1;
    }
    ChatOptions co;
    const std::string name = !a.chat_template.empty()
                                 ? a.chat_template
                                 : metadata_value(file.data, file.size, "chat_template");
    if (!name.empty() && !tools::chat::parse_format(name, &co.format))
      std::fprintf(stderr, "einfer-run: unknown chat template '%s' in the model: plain text\n",
                   name.c_str());
    co.system_prompt = !a.system_prompt.empty() ? a.system_prompt : a.prompt;
    co.max_reply_tokens = a.steps;
    co.verbose = a.verbose;
    ChatSession cs;
    cs.context = run.window > 0 ? 0 : run.context;
    cs.bos = kTokenBos;
    cs.eos = kTokenEos;
    cs.eval = [&](const std::vector<int32_t>& ids, std::string* error) {
      const Status st = session_eval(session, ids.data(), static_cast<int32_t>(ids.size()));
      if (!st.ok()) {
        char msg[256];
        format_status(st, msg, sizeof msg);
        *error = msg;
      }
      return st.ok();
    };
    cs.encode = [&](const std::string& text, std::vector<int32_t>* ids) {
      std::vector<unsigned char> scratch(tokenizer_encode_scratch_bytes(tok, text.size()));
      ids->resize(text.size() + 3);
      int32_t n = 0;
      const Status st =
          tokenizer_encode(tok, text.c_str(), text.size(), false, false, ids->data(),
                           static_cast<int32_t>(ids->size()), &n, scratch.data(), scratch.size());
      ids->resize(static_cast<size_t>(n));
      return st.ok();
    };
    cs.piece = [&](int32_t prev, int32_t token) {
      const TokenPiece p = tokenizer_decode(tok, prev, token);
      return token_piece_is_printable(p) ? std::string(p.data, p.size) : std::string();
    };
    cs.next_token = next_token;
    cs.reset = [&] { session_reset(session); };
    cs.position = [&] { return session_position(*session); };
    return run_chat(cs, co, stdin);
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
  if (!a.logits.empty()) all_logits.resize(prompt.size() * static_cast<size_t>(c.vocab_size));
  const auto t_prefill = std::chrono::steady_clock::now();
  s = session_eval(session, prompt.data(), static_cast<int32_t>(prompt.size()),
                   !a.logits.empty() ? all_logits.data() : nullptr);
  if (!s.ok()) die("prefill", s);
  const double prefill_s = seconds_since(t_prefill);

  if (!a.ids && a.prompt_given) {
    for (size_t i = 1; i < prompt.size(); ++i) {
      const TokenPiece p = tokenizer_decode(tok, prompt[i - 1], prompt[i]);
      if (token_piece_is_printable(p)) std::fwrite(p.data, 1, p.size, stdout);
    }
  }
  std::vector<int32_t> generated;
  std::vector<double> step_ms;
  int32_t prev = prompt.back();
  std::vector<int32_t> recent = prompt;  // what --repeat-penalty looks back over
  for (int64_t i = 0; i < steps; ++i) {
    const int32_t next = next_token(recent);
    // llama2.c checkpoints delimit sequences with BOS; EOS ends a sequence too (unless streaming
    // on through sequence boundaries was asked for).
    if (!a.ignore_eos && (next == kTokenEos || next == kTokenBos)) break;
    generated.push_back(next);
    recent.push_back(next);
    if (a.ids) {
      std::printf(generated.size() > 1 ? " %d" : "%d", next);
    } else {
      const TokenPiece p = tokenizer_decode(tok, prev, next);
      if (token_piece_is_printable(p)) std::fwrite(p.data, 1, p.size, stdout);
    }
    std::fflush(stdout);
    prev = next;
    if (i + 1 == steps && a.logits.empty()) break;  // the last token's logits are not needed
    const auto t0 = std::chrono::steady_clock::now();
    s = session_eval(session, &next, 1);
    if (!s.ok()) die("decode", s);
    step_ms.push_back(seconds_since(t0) * 1e3);
    if (!a.logits.empty())
      all_logits.insert(all_logits.end(), session_logits(*session),
                        session_logits(*session) + c.vocab_size);
  }
  std::printf("\n");
  std::fflush(stdout);  // the text before the statistics on stderr, also through a pipe

  if (!a.logits.empty()) {
    std::string err;
    const std::vector<int64_t> shape = {
        static_cast<int64_t>(all_logits.size() / static_cast<size_t>(c.vocab_size)), c.vocab_size};
    if (!tools::write_npy(a.logits, all_logits.data(), shape, &err)) {
      std::fprintf(stderr, "einfer-run: %s: %s\n", a.logits.c_str(), err.c_str());
      return 1;
    }
  }
  double decode_s = 0;
  for (double ms : step_ms) decode_s += ms / 1e3;
  std::fprintf(stderr, "prefill: %zu tokens in %.2f ms (%.1f tokens/s)\n", prompt.size(),
               prefill_s * 1e3, static_cast<double>(prompt.size()) / prefill_s);
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
