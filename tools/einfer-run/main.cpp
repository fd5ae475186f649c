// einfer-run: generate text with a packed llama model, embed text with a sentence encoder, or
// transform sequences with an encoder.
//
//   einfer-run MODEL.ein [-z TOKENIZER] [-p PROMPT | --prompt-ids "1 2 3"] [-n STEPS] [-t TEMP]
//              [--top-p P] [--top-k K] [--seed S] [--window W] [--sinks S] [--kv f32|q8]
//              [--context N] [--batch B] [--ids] [--ignore-eos] [--logits FILE] [--no-crc]
//   einfer-run MODEL.ein --tokenize -p PROMPT   (prints the prompt's ids, as the model is fed them)
//   einfer-run BERT.ein --embed -p TEXT | -f FILE [--json] [--pooling none|mean|cls]
//   einfer-run ENCODER.ein --input X.npy --output Y.npy
//   einfer-run TRANSFORMER.ein --input SRC.npy --target TGT.npy --output Y.npy [--incremental]
//
// Text streams to stdout as it is generated; timing and memory go to stderr at the end.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "models/session.h"
#include "runtime/format.h"
#include "tools/common/cli.h"
#include "tools/common/file.h"
#include "tools/common/layout_report.h"
#include "tools/common/npy.h"
#include "tools/common/thread_pool.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-run/embed.h"
#include "tools/einfer-run/interactive.h"
#include "tools/einfer-run/options.h"

using namespace einfer;
using namespace einfer::run_tool;

namespace {

// A usage error found after parsing: one line, as the parser reports its own (cli.h).
[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "einfer-run: %s (see einfer-run --help)\n", why);
  std::exit(2);
}

[[noreturn]] void die(const char* what, const Status& s) {
  char msg[256];
  format_status(s, msg, sizeof msg);
  std::fprintf(stderr, "einfer-run: %s: %s\n", what, msg);
  std::exit(1);
}

// The arena's memory (the tool may allocate; the libraries never do): 2 MiB aligned, huge pages
// asked for (tools::LargeBuffer: the KV cache is streamed every step). A failed allocation ends
// the run with one line: a null buffer would make a *measuring* arena.
struct AlignedBuffer {
  tools::LargeBuffer mem;
  void* p = nullptr;
  AlignedBuffer(size_t n, const char* what) {
    if (n == 0 || n > (SIZE_MAX >> 1) || !mem.allocate(n)) {
      std::fprintf(stderr,
                   "einfer-run: cannot allocate %zu bytes for the %s (reduce --context, "
                   "--window or --batch)\n",
                   n, what);
      std::exit(1);
    }
    p = mem.data();
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A session for sequences of up to `longest` vectors in an exactly sized arena (encoders and
// encoder-decoders); dies with the library's message when it cannot be made.
struct VectorSession {
  size_t need = 0;
  std::unique_ptr<AlignedBuffer> memory;
  Arena arena;
  Session* session = nullptr;
  VectorSession(const tools::MappedFile& file, const LoadOptions& load, const Model& model,
                int64_t longest) {
    SessionOptions options;
    options.run.context = static_cast<int32_t>(longest);
    Status s = session_arena_bytes(model, options, &need);
    if (!s.ok()) die("sizing the arena", s);
    memory = std::make_unique<AlignedBuffer>(need, "session arena");
    arena = Arena(memory->p, need);
    if (!(s = session_create(file.data, file.size, load, options, arena, &session)).ok())
      die("creating the session", s);
  }

  // Writes the output rows to `path` as .npy; false (with a message) on failure.
  static bool write_output(const std::string& path, const std::vector<float>& y,
                           const std::vector<int64_t>& shape) {
    std::string err;
    if (tools::write_npy(path, y.data(), shape, &err)) return true;
    std::fprintf(stderr, "einfer-run: %s: %s\n", path.c_str(), err.c_str());
    return false;
  }

  void print_memory(const Model& model) const {
    std::fprintf(stderr, "memory: arena %zu bytes used of %zu reserved, weights %zu bytes\n",
                 arena.high_water(), need, model_weight_bytes(model));
  }
};

int run_encoder(const Args& a, const tools::MappedFile& file, const LoadOptions& load,
                const Model& model) {
  if (a.input.empty() || a.output.empty()) {
    std::fprintf(stderr, "einfer-run: an encoder model needs --input X.npy and --output Y.npy\n");
    return 2;
  }
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
  VectorSession vs(file, load, model, seq);
  std::vector<float> y(x.data.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < batch; ++b) {
    const size_t off = static_cast<size_t>(b * seq * c.dim);
    const Status s =
        session_encode(vs.session, x.data.data() + off, static_cast<int32_t>(seq), y.data() + off);
    if (!s.ok()) die("encoder forward", s);
  }
  const double dt = seconds_since(t0);
  if (!VectorSession::write_output(a.output, y, x.shape)) return 1;
  std::fprintf(stderr, "encoder: %lld x %lld positions in %.3f ms (%.1f positions/s)\n",
               static_cast<long long>(batch), static_cast<long long>(seq), dt * 1e3,
               static_cast<double>(batch * seq) / dt);
  vs.print_memory(model);
  return 0;
}

bool read_sequences(const std::string& path, const char* flag, int32_t dim, tools::NpyArray* x,
                    int64_t* batch, int64_t* seq) {
  std::string err;
  if (!tools::read_npy(path, x, &err)) {
    std::fprintf(stderr, "einfer-run: %s: %s\n", path.c_str(), err.c_str());
    return false;
  }
  const size_t rank = x->shape.size();
  if ((rank != 2 && rank != 3) || x->shape.back() != dim || x->shape[rank - 2] <= 0) {
    std::fprintf(stderr, "einfer-run: %s must be [seq, %d] or [batch, seq, %d]\n", flag, dim, dim);
    return false;
  }
  *batch = rank == 3 ? x->shape[0] : 1;
  *seq = x->shape[rank - 2];
  return true;
}

// nn.Transformer: memory = encoder(SRC), output = decoder(TGT, memory) with a causal target mask;
// --incremental decodes one target row at a time through the KV cache.
int run_transformer(const Args& a, const tools::MappedFile& file, const LoadOptions& load,
                    const Model& model) {
  if (a.input.empty() || a.target.empty() || a.output.empty()) {
    std::fprintf(stderr,
                 "einfer-run: an encoder-decoder model needs --input SRC.npy --target TGT.npy "
                 "--output Y.npy\n");
    return 2;
  }
  const ModelConfig& c = model.config;
  tools::NpyArray src, tgt;
  int64_t src_batch = 0, src_len = 0, tgt_batch = 0, tgt_len = 0;
  if (!read_sequences(a.input, "--input", c.dim, &src, &src_batch, &src_len) ||
      !read_sequences(a.target, "--target", c.dim, &tgt, &tgt_batch, &tgt_len))
    return 1;
  if (src.shape.size() != tgt.shape.size() || src_batch != tgt_batch) {
    std::fprintf(stderr, "einfer-run: --input and --target must have the same batch\n");
    return 1;
  }
  const int64_t longest = src_len > tgt_len ? src_len : tgt_len;
  if (c.context_length > 0 && longest > c.context_length) {
    std::fprintf(stderr, "einfer-run: sequence length %lld over the model's maximum %d\n",
                 static_cast<long long>(longest), c.context_length);
    return 1;
  }
  VectorSession vs(file, load, model, longest);
  Session* session = vs.session;
  Status s;
  std::vector<float> y(tgt.data.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < src_batch; ++b) {
    const float* sb = src.data.data() + b * src_len * c.dim;
    const float* tb = tgt.data.data() + b * tgt_len * c.dim;
    float* yb = y.data() + b * tgt_len * c.dim;
    if (!(s = session_encode_memory(session, sb, static_cast<int32_t>(src_len))).ok())
      die("encoding the source", s);
    if (a.incremental) {
      for (int64_t i = 0; i < tgt_len; ++i)
        if (!(s = session_decode_step(session, tb + i * c.dim, yb + i * c.dim)).ok())
          die("decode step", s);
    } else if (!(s = session_decode_target(session, tb, static_cast<int32_t>(tgt_len), yb)).ok()) {
      die("decoding the target", s);
    }
  }
  const double dt = seconds_since(t0);
  if (!VectorSession::write_output(a.output, y, tgt.shape)) return 1;
  std::fprintf(stderr, "encoder-decoder: %lld x (%lld source, %lld target%s) in %.3f ms\n",
               static_cast<long long>(src_batch), static_cast<long long>(src_len),
               static_cast<long long>(tgt_len), a.incremental ? ", incremental" : "", dt * 1e3);
  vs.print_memory(model);
  return 0;
}

// --prompt-ids, or a usage error.
std::vector<int32_t> parse_ids(const std::string& list) {
  std::vector<int32_t> ids;
  std::string why;
  if (!parse_id_list(list, &ids, &why)) usage(why.c_str());
  return ids;
}

// einfer-run -i: the chat REPL (interactive.h) on this session.
int run_interactive(const Args& a, const tools::MappedFile& file, Session* session) {
  ChatOptions co;
  const std::string name = !a.chat_template.empty()
                               ? a.chat_template
                               : tools::ein_metadata_value(file.data, file.size, "chat_template");
  if (!name.empty() && !tools::chat::parse_format(name, &co.format))
    std::fprintf(stderr, "einfer-run: unknown chat template '%s' in the model: plain text\n",
                 name.c_str());
  co.system_prompt = !a.system_prompt.empty() ? a.system_prompt : a.prompt;
  co.max_reply_tokens = a.steps;
  co.verbose = a.verbose;
  const RunOptions& run = session->state.options;
  ChatSession cs;
  cs.context = run.window > 0 ? 0 : run.context;
  cs.bos = session_token_bos(*session);
  cs.eos = session_token_eos(*session);
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
    ids->resize(text_tokenizer_max_ids(session->tokenizer.packed, text.size()));
    int32_t n = 0;
    const Status st = session_tokenize(session, text.c_str(), text.size(), false, ids->data(),
                                       static_cast<int32_t>(ids->size()), &n);
    ids->resize(static_cast<size_t>(n));
    return st.ok();
  };
  cs.piece = [&](int32_t prev, int32_t token) {
    const TextPiece p = session_token_text(*session, prev, token);
    return std::string(p.data, p.size);
  };
  cs.next_token = [&](const std::vector<int32_t>&) { return session_next_token(session); };
  cs.reset = [&] { session_reset(session); };
  cs.position = [&] { return session_position(*session); };
  return run_chat(cs, co, stdin);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (int code; !parse_args(argc, argv, &a, &code)) return code;
  if (a.repeat_penalty != 1.0) {
    // The session samples inside session_next_token; a penalty needs a hook there (follow-up).
    std::fprintf(stderr,
                 "einfer-run: --repeat-penalty is not supported by the session sampler yet\n");
    return 2;
  }
  tools::MappedFile file;
  if (!tools::map_file(a.model.c_str(), &file, a.no_mmap)) {
    std::fprintf(stderr, "einfer-run: cannot read model file %s\n", a.model.c_str());
    return 1;
  }
  LoadOptions load;
  load.verify_crc = a.verify_crc;
  Model model;
  Status s = load_model(file.data, file.size, load, &model);
  if (!s.ok()) die(a.model.c_str(), s);
  // The mapped bytes were just verified: the session's own load need not read the file again.
  load.verify_crc = false;
  if (model.config.arch == ArchKind::bert || a.embed) return run_embed(a, file, load, model);
  if (model.config.arch == ArchKind::encoder) return run_encoder(a, file, load, model);
  if (model.config.arch == ArchKind::transformer) return run_transformer(a, file, load, model);

  const ModelConfig& c = model.config;

  // Tokenizer: -z (any file einfer-pack takes) wins over the one packed into the model; ids-only
  // runs need none. The session owns it, and the sampler.
  std::vector<uint8_t> tok_image;
  if (!read_run_tokenizer(a, c.vocab_size, &tok_image)) return 1;
  const bool have_tok = !a.tokenizer.empty() || model.tokenizer;
  if (!have_tok && (a.prompt_given || !a.ids)) {
    std::fprintf(stderr,
                 "einfer-run: no tokenizer: pass -z TOKENIZER, pack one with -z, or use "
                 "--prompt-ids and --ids\n");
    return 1;
  }
  // The pool lives as long as the session that runs its kernels on it.
  const std::unique_ptr<tools::ThreadPool> pool = apply_threads(a, &a.run);
  if (a.verbose && (dtype_is_quantized(c.weight_dtype) || dtype_is_gguf_block(c.weight_dtype)))
    std::fprintf(stderr, "einfer-run: weights %s, layout %s\n", dtype_name(c.weight_dtype),
                 tools::describe_layout(model).c_str());
  SessionOptions options;
  options.run = a.run;
  options.sampler.temperature = static_cast<float>(a.temperature);
  options.sampler.top_p = static_cast<float>(a.top_p);
  options.sampler.top_k = static_cast<int32_t>(a.top_k);
  options.sampler.seed =
      a.seed_set
          ? a.seed
          : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  options.tokenizer = have_tok ? 1 : 0;
  // -i reads turns of any length up to a line buffer's worth.
  options.max_prompt_bytes = a.interactive ? 4096 : a.prompt_given ? a.prompt.size() : 0;
  if (!a.tokenizer.empty()) {
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
  if (a.interactive) return run_interactive(a, file, session);
  if (!a.prompt_ids.empty()) {
    prompt = parse_ids(a.prompt_ids);
    if (prompt.empty()) usage("--prompt-ids is empty");
  } else if (a.prompt_given) {
    const size_t len = a.prompt.size();
    // As many ids as the tokenizer can make of it (a normalizer like NFKC can grow a text).
    prompt.resize(text_tokenizer_max_ids(session->tokenizer.packed, len));
    int32_t n = 0;
    s = session_tokenize(session, a.prompt.c_str(), len, true, prompt.data(),
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
  if (!a.logits.empty()) all_logits.resize(prompt.size() * static_cast<size_t>(c.vocab_size));
  const auto t_prefill = std::chrono::steady_clock::now();
  s = session_eval(session, prompt.data(), static_cast<int32_t>(prompt.size()),
                   !a.logits.empty() ? all_logits.data() : nullptr);
  if (!s.ok()) die("prefill", s);
  const double prefill_s = seconds_since(t_prefill);

  if (!a.ids && a.prompt_given) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      const TextPiece p = session_token_text(*session, i ? prompt[i - 1] : -1, prompt[i]);
      if (p.size > 0) std::fwrite(p.data, 1, p.size, stdout);  // hidden pieces have no data
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
      if (p.size > 0) std::fwrite(p.data, 1, p.size, stdout);  // hidden pieces have no data
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
  std::fprintf(stderr, "prefill: %zu tokens in %.2f ms (%.1f tokens/s), %d thread%s\n",
               prompt.size(), prefill_s * 1e3, static_cast<double>(prompt.size()) / prefill_s,
               pool->size(), pool->size() > 1 ? "s" : "");
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
