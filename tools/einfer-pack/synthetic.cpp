// Deterministic synthetic llama2.c-shaped models (einfer-pack --synthetic SPEC), so builds and
// tests that want a model of a given shape work without any checkpoint on disk.
//
// Weights come from a fixed-seed xorshift generator, uniform in [-a, a] with a = 1/sqrt(fan_in)
// (norm weights are 1), so activations stay in a sane range and greedy decoding is not stuck on
// one token. The tokenizer (llama2.c tokenizer.bin layout) has <unk>, <s>, </s>, the 256 byte
// pieces "<0xNN>", then vocab - 259 pieces " ab", "cd", ... made of lower-case letters, so text
// output is printable. Same SPEC, same bytes, on every host.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/einfer-pack/importers.h"

namespace einfer::pack {

namespace {

struct Xorshift {
  uint64_t s;
  uint32_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return static_cast<uint32_t>(s >> 32);
  }
  float uniform(float a) { return (static_cast<float>(next() >> 8) / 16777216.f * 2.f - 1.f) * a; }
};

void add_tensor(SourceModel& m, Xorshift& rng, TensorRole role, int32_t layer,
                std::vector<int64_t> shape, bool ones) {
  SourceTensor t;
  t.role = role;
  t.layer = layer;
  t.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  t.values.resize(static_cast<size_t>(n));
  const float a = 1.f / std::sqrt(static_cast<float>(t.shape.back()));
  for (float& v : t.values) v = ones ? 1.f : rng.uniform(a);
  m.tensors.push_back(std::move(t));
}

void append(std::vector<uint8_t>& out, const void* p, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, p, n);
}

void append_piece(std::vector<uint8_t>& out, const std::string& piece, float score) {
  const int32_t len = static_cast<int32_t>(piece.size());
  append(out, &score, 4);
  append(out, &len, 4);
  append(out, piece.data(), piece.size());
}

}  // namespace

SyntheticSpec parse_synthetic_spec(const std::string& text) {
  SyntheticSpec s;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw PackError("--synthetic: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    char* stop = nullptr;
    const long v = std::strtol(value.c_str(), &stop, 10);
    if (value.empty() || *stop != '\0' || v <= 0 || v > (1L << 24))
      throw PackError("--synthetic: " + key + ": bad value '" + value + "'");
    const int32_t n = static_cast<int32_t>(v);
    if (key == "dim") s.dim = n;
    else if (key == "hidden") s.hidden = n;
    else if (key == "layers") s.layers = n;
    else if (key == "heads") s.heads = n;
    else if (key == "kv_heads") s.kv_heads = n;
    else if (key == "vocab") s.vocab = n;
    else if (key == "seq") s.seq = n;
    else if (key == "seed") s.seed = static_cast<uint64_t>(v);
    else throw PackError("--synthetic: unknown key '" + key + "' (dim, hidden, layers, heads, kv_heads, vocab, seq, seed)");
  }
  return s;
}

SourceModel make_synthetic(const SyntheticSpec& s) {
  if (s.dim % s.heads != 0) throw PackError("--synthetic: dim must be a multiple of heads");
  if (s.heads % s.kv_heads != 0) throw PackError("--synthetic: heads must be a multiple of kv_heads");
  SourceModel m;
  m.kind = "synthetic";
  ModelConfig& c = m.config;
  c.arch = ArchKind::llama;
  c.dim = s.dim;
  c.hidden_dim = s.hidden;
  c.n_layers = s.layers;
  c.n_heads = s.heads;
  c.n_kv_heads = s.kv_heads;
  c.head_dim = s.dim / s.heads;
  c.vocab_size = s.vocab;
  c.context_length = s.seq;
  c.norm = NormKind::rmsnorm;
  c.norm_eps = 1e-5f;
  c.activation = Activation::swiglu;
  c.rope = RopeMode::interleaved;
  c.rope_theta = 10000.f;
  c.tied_classifier = 1;
  const Status st = ein_validate_config(c);
  if (!st.ok()) throw PackError("--synthetic: unsupported shape: " + status_text(st));
  const int64_t d = c.dim, f = c.hidden_dim, v = c.vocab_size, k = c.head_dim;
  const int64_t q = int64_t{c.n_heads} * k, kv = int64_t{c.n_kv_heads} * k;
  Xorshift rng{s.seed * 0x9E3779B97F4A7C15ull + 1};
  add_tensor(m, rng, TensorRole::token_embedding, -1, {v, d}, false);
  for (int32_t l = 0; l < c.n_layers; ++l) {
    add_tensor(m, rng, TensorRole::attn_norm, l, {d}, true);
    add_tensor(m, rng, TensorRole::wq, l, {q, d}, false);
    add_tensor(m, rng, TensorRole::wk, l, {kv, d}, false);
    add_tensor(m, rng, TensorRole::wv, l, {kv, d}, false);
    add_tensor(m, rng, TensorRole::wo, l, {d, q}, false);
    add_tensor(m, rng, TensorRole::ffn_norm, l, {d}, true);
    add_tensor(m, rng, TensorRole::w1, l, {f, d}, false);
    add_tensor(m, rng, TensorRole::w2, l, {d, f}, false);
    add_tensor(m, rng, TensorRole::w3, l, {f, d}, false);
  }
  add_tensor(m, rng, TensorRole::final_norm, -1, {d}, true);
  m.notes = "synthetic model, seed " + std::to_string(s.seed);
  return m;
}

std::vector<uint8_t> make_synthetic_tokenizer(int32_t vocab) {
  if (vocab < 259) throw PackError("--synthetic: a tokenizer needs vocab >= 259 (specials and bytes)");
  std::vector<uint8_t> out;
  const int32_t max_len = 8;
  append(out, &max_len, 4);
  append_piece(out, "<unk>", 0.f);
  append_piece(out, "\n<s>\n", 0.f);
  append_piece(out, "\n</s>\n", 0.f);
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    append_piece(out, piece, 0.f);
  }
  // Word-ish pieces: every fourth starts with a space, so decoded text has words.
  for (int32_t id = 259; id < vocab; ++id) {
    const int32_t i = id - 259;
    std::string piece = i % 4 == 0 ? " " : "";
    piece += static_cast<char>('a' + i % 26);
    piece += static_cast<char>('a' + (i / 26 + i) % 26);
    if (i % 3 == 0) piece += static_cast<char>('a' + (i * 7) % 26);
    append_piece(out, piece, -static_cast<float>(i));
  }
  return out;
}

}  // namespace einfer::pack
