// Deterministic synthetic llama2.c-shaped models of any shape (einfer-pack --synthetic SPEC,
// einfer-bench --synthetic SPEC), so builds, tests and benchmarks that want a model of a given
// shape work without any checkpoint on disk.
//
// Weights come from a fixed-seed xorshift generator, uniform in [-a, a] with a = 1/sqrt(fan_in)
// (norm weights are 1), so activations keep the same scale at any width and greedy decoding is not
// stuck on one token. The tokenizer (llama2.c tokenizer.bin layout) has <unk>, <s>, </s>, the 256
// byte pieces "<0xNN>", then vocab - 259 pieces " ab", "cd", ... made of lower-case letters, so
// text output is printable. Same SPEC, same bytes, on every host.
//
// family=NAME gives the model that family's features (runtime/model.h ModelConfig) with typical
// settings: qwen3 per-head q/k norm; gemma2 GeGLU, sandwich norms, sqrt(dim) embeddings, a query
// scale, soft-capping 50 / 30, a window of seq/4 on every other layer; gemma3 q/k norm, the same
// window on 5 layers in 6, local RoPE base 10000 (theta 1e6), no soft-capping; phi3 a window of
// seq/2 on every layer and longrope over an original context of seq/2. Norm weights are 1 and the
// long RoPE factors 4 (the short ones 1), so the features change the arithmetic, not the scale.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/format.h"
#include "tools/common/cli.h"
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

[[noreturn]] void spec_error(const std::string& what) {
  throw PackError("--synthetic: " + what);
}

// The architecture a spec describes; throws when einfer cannot run it.
ModelConfig synthetic_config(const SyntheticSpec& s) {
  const int32_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (s.heads <= 0 || s.dim % s.heads != 0 || (s.dim / s.heads) % 2 != 0)
    spec_error("dim (" + std::to_string(s.dim) + ") must be heads (" + std::to_string(s.heads) +
               ") x an even head size");
  if (s.heads % kv_heads != 0)
    spec_error("heads (" + std::to_string(s.heads) + ") must be a multiple of kv_heads (" +
               std::to_string(kv_heads) + ")");
  if (dtype_is_quantized(s.dtype) && (s.group <= 0 || s.group % 2 != 0))
    spec_error("group must be even");
  ModelConfig c;
  c.arch = ArchKind::llama;
  c.dim = s.dim;
  c.hidden_dim = s.hidden;
  c.n_layers = s.layers;
  c.n_heads = s.heads;
  c.n_kv_heads = kv_heads;
  c.head_dim = s.dim / s.heads;
  c.vocab_size = s.vocab;
  c.context_length = s.seq;
  c.norm = NormKind::rmsnorm;
  c.norm_eps = 1e-5f;
  c.activation = Activation::swiglu;
  c.rope = RopeMode::interleaved;
  c.rope_theta = 10000.f;
  c.tied_classifier = s.tied ? 1 : 0;
  c.weight_dtype = s.dtype;
  c.group_size = dtype_is_quantized(s.dtype) ? s.group : 0;
  c.family = s.family;
  const int32_t window = s.seq / 4 > 1 ? s.seq / 4 : 1;
  switch (s.family) {
    case ArchFamily::qwen3:
      c.qk_norm = 1;
      c.rope = RopeMode::half_split;
      break;
    case ArchFamily::gemma2:
    case ArchFamily::gemma3:
      c.rope = RopeMode::half_split;
      c.activation = Activation::geglu_tanh;
      c.post_norms = 1;
      c.embed_scale = std::sqrt(static_cast<float>(c.dim));
      c.attn_scale = 1.f / std::sqrt(static_cast<float>(c.head_dim) * 2.f);
      c.sliding_window = window;
      if (s.family == ArchFamily::gemma2) {
        c.attn_softcap = 50.f;
        c.final_softcap = 30.f;
        c.sliding_window_period = 2;
      } else {
        c.qk_norm = 1;
        c.sliding_window_period = 6;
        c.rope_theta = 1e6f;
        c.rope_local_theta = 10000.f;
      }
      break;
    case ArchFamily::phi3:
      c.rope = RopeMode::half_split;
      c.sliding_window = s.seq / 2 > 1 ? s.seq / 2 : 1;
      c.rope_scaling = RopeScaling::longrope;
      c.rope_freq_factors = 1;
      c.rope_original_context = c.sliding_window;
      c.rope_attn_factor = 1.1f;
      break;
    default:
      break;
  }
  require_valid_config(c, "--synthetic: unsupported shape: ");
  return c;
}

// Generates every tensor of the model in file order and hands it to
// emit(role, layer, shape, values); `values` is reused, so one tensor is held at a time.
template <class Emit>
void generate_synthetic(const SyntheticSpec& s, const ModelConfig& c, Emit emit) {
  Xorshift rng{s.seed * 0x9E3779B97F4A7C15ull + 1};
  std::vector<float> values;
  auto tensor = [&](TensorRole role, int32_t layer, std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    values.resize(static_cast<size_t>(n));
    if (shape.size() == 1) {  // norm weights; RoPE frequency divisors (the long ones 4)
      for (float& x : values) x = role == TensorRole::rope_freq_factors_long ? 4.f : 1.f;
    } else {
      const float a = 1.f / std::sqrt(static_cast<float>(shape.back()));
      for (float& x : values) x = rng.uniform(a);
    }
    emit(role, layer, shape, values);
  };
  // Every tensor the config stores, in the file's canonical order (a plain llama: the embedding,
  // each layer's attn_norm wq wk wv wo ffn_norm w1 w2 w3, final_norm, the classifier).
  const int64_t count = ein_expected_tensor_count(c);
  for (int64_t i = 0; i < count; ++i) {
    TensorRole role;
    int32_t layer;
    ein_canonical_entry(c, i, &role, &layer);
    int64_t shape[kEinMaxRank];
    const int rank = ein_expected_shape(c, role, shape);
    tensor(role, layer, std::vector<int64_t>(shape, shape + rank));
  }
}

}  // namespace

SyntheticSpec parse_synthetic_spec(const std::string& text, const SyntheticSpec& defaults) {
  SyntheticSpec s = defaults;
  struct Field {
    const char* name;
    int32_t* target;
    long lo, hi;
  };
  const Field fields[] = {{"dim", &s.dim, 2, 1 << 16},
                          {"hidden", &s.hidden, 1, 1 << 18},
                          {"layers", &s.layers, 1, 1024},
                          {"heads", &s.heads, 1, 4096},
                          {"kv_heads", &s.kv_heads, 1, 4096},
                          {"vocab", &s.vocab, 1, 1 << 22},
                          {"seq", &s.seq, 1, 1 << 24},
                          {"group", &s.group, 2, 65536},
                          {"tied", &s.tied, 0, 1}};
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) spec_error("'" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "family") {
      if (value == "llama")
        s.family = ArchFamily::llama;
      else if (value == "qwen3")
        s.family = ArchFamily::qwen3;
      else if (value == "gemma2")
        s.family = ArchFamily::gemma2;
      else if (value == "gemma3")
        s.family = ArchFamily::gemma3;
      else if (value == "phi3")
        s.family = ArchFamily::phi3;
      else
        spec_error("family must be llama, qwen3, gemma2, gemma3 or phi3, got '" + value + "'");
      continue;
    }
    if (key == "dtype") {
      if (value == "f32")
        s.dtype = DType::f32;
      else if (value == "f16")
        s.dtype = DType::f16;
      else if (value == "bf16")
        s.dtype = DType::bf16;
      else if (value == "q8")
        s.dtype = DType::q8;
      else if (value == "q4")
        s.dtype = DType::q4;
      else
        spec_error("dtype must be f32, f16, bf16, q8 or q4, got '" + value + "'");
      continue;
    }
    const bool is_seed = key == "seed";
    const Field* hit = nullptr;
    for (const Field& fd : fields)
      if (key == fd.name) hit = &fd;
    if (!hit && !is_seed)
      spec_error("unknown key '" + key +
                 "' (dim, hidden, layers, heads, kv_heads, vocab, seq, tied, dtype, group, seed, "
                 "family)");
    const long long lo = is_seed ? 0 : hit->lo, hi = is_seed ? (1ll << 62) : hit->hi;
    int64_t v = 0;
    std::string why;
    if (!tools::cli::read_integer_in(value, lo, hi, &v, &why)) spec_error(key + ": " + why);
    if (is_seed)
      s.seed = static_cast<uint64_t>(v);
    else
      *hit->target = static_cast<int32_t>(v);
  }
  synthetic_config(s);  // shape errors belong to the spec too
  return s;
}

SourceModel make_synthetic(const SyntheticSpec& s) {
  SourceModel m;
  m.kind = "synthetic";
  m.config = synthetic_config(s);
  generate_synthetic(
      s, m.config,
      [&](TensorRole role, int32_t layer, const std::vector<int64_t>& shape,
          const std::vector<float>& values) { add_float_tensor(m, role, layer, shape, values); });
  m.notes = "synthetic model, seed " + std::to_string(s.seed);
  return m;
}

EinImage make_synthetic_image(const SyntheticSpec& s) {
  EinImage image;
  image.config = synthetic_config(s);
  const int32_t group = image.config.group_size;
  // As pack_source does: matrices take the dtype, norms stay f32.
  generate_synthetic(
      s, image.config,
      [&](TensorRole role, int32_t layer, const std::vector<int64_t>& shape,
          const std::vector<float>& values) {
        const bool matrix = ein_role_is_matrix(role);
        image.tensors.push_back(encode_tensor(role, layer, shape, values.data(),
                                              matrix ? s.dtype : DType::f32, matrix ? group : 0));
      });
  image.metadata = "source=synthetic\nnotes=synthetic model, seed " + std::to_string(s.seed) + "\n";
  return image;
}

std::vector<uint8_t> make_synthetic_tokenizer(int32_t vocab) {
  if (vocab < 259)
    throw PackError("--synthetic: a tokenizer needs vocab >= 259 (specials and bytes)");
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
