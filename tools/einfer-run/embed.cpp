#include "tools/einfer-run/embed.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/bert.h"
#include "models/session.h"

namespace einfer::run_tool {

namespace {

int fail(const char* what, const Status& s) {
  char msg[256];
  format_status(s, msg, sizeof msg);
  std::fprintf(stderr, "einfer-run: %s: %s\n", what, msg);
  return 1;
}

// The texts: -p TEXT is one, -f FILE one per line (a final newline ends the last line).
std::vector<std::string> texts_of(const Args& a) {
  if (!a.prompt_from_file) return {a.prompt};
  std::vector<std::string> lines;
  size_t at = 0;
  for (;;) {
    const size_t end = a.prompt.find('\n', at);
    lines.push_back(a.prompt.substr(at, end == std::string::npos ? end : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return lines;
}

// One vector as space-separated floats (round-trip precision), or a JSON list of them.
void print_vector(const float* v, int32_t d, bool json) {
  for (int32_t j = 0; j < d; ++j)
    std::printf(json ? (j ? ",%.9g" : "%.9g") : (j ? " %.9g" : "%.9g"), static_cast<double>(v[j]));
}

}  // namespace

int run_embed(const Args& a, const tools::MappedFile& file, const LoadOptions& load,
              const Model& model) {
  const ModelConfig& c = model.config;
  if (c.arch != ArchKind::bert) {
    std::fprintf(stderr, "einfer-run: --embed needs a sentence encoder (bert); %s is not one\n",
                 a.model.c_str());
    return 2;
  }
  if (!a.prompt_given && a.prompt_ids.empty()) {
    std::fprintf(stderr,
                 "einfer-run: a sentence encoder embeds -p TEXT, each line of -f FILE, or "
                 "--prompt-ids \"101 ... 102\"\n");
    return 2;
  }
  ModelConfig pool = c;  // --pooling overrides the model's for printing
  if (a.pooling == "none") pool.pooling = PoolingKind::none;
  if (a.pooling == "mean") pool.pooling = PoolingKind::mean;
  if (a.pooling == "cls") pool.pooling = PoolingKind::cls;
  if (pool.pooling == PoolingKind::none) pool.normalize = 0;

  std::vector<uint8_t> tok_image;
  if (!read_run_tokenizer(a, c.vocab_size, &tok_image)) return 1;
  const std::vector<std::string> texts = a.prompt_given ? texts_of(a) : std::vector<std::string>{};
  const bool have_tok = !a.tokenizer.empty() || model.tokenizer;
  if (a.prompt_given && !have_tok) {
    std::fprintf(stderr,
                 "einfer-run: no tokenizer: pass -z TOKENIZER, pack one, or use --prompt-ids\n");
    return 1;
  }
  // sentence-transformers truncates to the model's max_seq_length: -c, else that, else the model's
  // positions.
  SessionOptions options;
  options.run.context = a.run.context;
  if (options.run.context == 0) {
    const std::string msl = tools::ein_metadata_value(file.data, file.size, "max_seq_length");
    options.run.context = msl.empty() ? 0 : std::atoi(msl.c_str());
  }
  size_t longest = 0;
  for (const std::string& t : texts) longest = t.size() > longest ? t.size() : longest;
  options.tokenizer = a.prompt_given ? 1 : 0;
  options.max_prompt_bytes = longest > 0 ? longest : 1;
  if (!a.tokenizer.empty()) {
    options.tokenizer_image = tok_image.data();
    options.tokenizer_image_bytes = tok_image.size();
  }
  size_t need = 0;
  Status s = session_arena_bytes(model, options, &need);
  if (!s.ok()) return fail("run options", s);
  tools::LargeBuffer memory;
  if (!memory.allocate(need)) {
    std::fprintf(stderr, "einfer-run: cannot allocate %zu bytes for the session arena\n", need);
    return 1;
  }
  Arena arena(memory.data(), need);
  Session* session = nullptr;
  if (!(s = session_create(file.data, file.size, load, options, arena, &session)).ok())
    return fail("creating the session", s);
  const int32_t max_seq = session->encoder_state.max_seq, d = c.dim;

  std::vector<std::vector<int32_t>> seqs;
  if (!a.prompt_ids.empty()) {
    seqs.emplace_back();
    std::string why;
    if (!parse_id_list(a.prompt_ids, &seqs.back(), &why)) {
      std::fprintf(stderr, "einfer-run: %s\n", why.c_str());
      return 2;
    }
    if (seqs.back().empty()) {
      std::fprintf(stderr, "einfer-run: --prompt-ids is empty\n");
      return 2;
    }
    if (seqs.back().size() > static_cast<size_t>(max_seq)) {
      std::fprintf(stderr, "einfer-run: --prompt-ids: %zu tokens, more than the context (%d)\n",
                   seqs.back().size(), max_seq);
      return 1;
    }
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    const int32_t* ids = nullptr;
    int32_t n = 0, n_text = 0;
    if (!(s = session_embed_ids(session, texts[i].data(), texts[i].size(), &ids, &n, &n_text)).ok())
      return fail(("text " + std::to_string(i + 1)).c_str(), s);
    if (n_text > n)
      std::fprintf(stderr, "einfer-run: text %zu: %d tokens truncated to %d\n", i + 1, n_text, n);
    seqs.emplace_back(ids, ids + n);
  }

  if (a.tokenize) {  // the ids each text is embedded from
    for (const std::vector<int32_t>& ids : seqs)
      for (size_t i = 0; i < ids.size(); ++i)
        std::printf(i + 1 < ids.size() ? "%d " : "%d\n", ids[i]);
    return 0;
  }
  if (a.json) std::printf("{\"object\": \"list\", \"data\": [\n");
  std::vector<float> out(static_cast<size_t>(d));
  int64_t tokens = 0, index = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const std::vector<int32_t>& ids : seqs) {
    const int32_t n = static_cast<int32_t>(ids.size());
    tokens += n;
    if (!(s = bert_forward(session->bert_weights, &session->encoder_state, ids.data(), nullptr, n))
             .ok())
      return fail("embedding", s);
    // One vector per text, or with pooling none one per token.
    const int32_t rows = pool.pooling == PoolingKind::none ? n : 1;
    for (int32_t r = 0; r < rows; ++r, ++index) {
      const float* v = session->encoder_state.x + static_cast<size_t>(r) * d;
      if (pool.pooling != PoolingKind::none) {
        if (!(s = bert_pool(pool, session->encoder_state.x, n, out.data())).ok())
          return fail("pooling", s);
        v = out.data();
      }
      if (a.json)
        std::printf("%s  {\"object\": \"embedding\", \"index\": %" PRId64 ", \"embedding\": [",
                    index ? ",\n" : "", index);
      print_vector(v, d, a.json);
      std::printf(a.json ? "]}" : "\n");
    }
  }
  if (a.json) std::printf("\n], \"usage\": {\"prompt_tokens\": %" PRId64 "}}\n", tokens);
  std::fflush(stdout);
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "embed: %zu sequence%s, %" PRId64 " tokens in %.2f ms (%.1f tokens/s)\n",
               seqs.size(), seqs.size() == 1 ? "" : "s", tokens, dt * 1e3,
               static_cast<double>(tokens) / dt);
  std::fprintf(stderr, "memory: arena %zu bytes used of %zu reserved, weights %zu bytes\n",
               arena.high_water(), need, model_weight_bytes(model));
  return 0;
}

}  // namespace einfer::run_tool
