// libFuzzer target for the C API (models/einfer.h) driven by a byte stream: the bytes pick the
// options (context, window, sinks, KV dtype, batch, tokenizer mode, and raw float bits for the
// sampling options, so NaN, negative and huge values appear), then a sequence of calls in any
// order (prefill with any ids, decode, next_token before or after prefill, reset, tokenize,
// token_text with any ids, and every entry point with NULL arguments). Every call must return a
// status or a defined value: never a crash, an ASan/UBSan report or a hang.
//
// The model is a small synthetic llama (einfer-pack's generator) with a 300-token tokenizer, built
// once; an input starting with 'B' runs a small bert sentence encoder with the same tokenizer
// instead (embed ids, token states and texts, any ids and lengths). The arena is sized by
// einfer_arena_bytes and capped at 64 MiB.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "models/einfer.h"
#include "tests/tiny_model.h"
#include "tools/einfer-pack/arch_names.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

namespace {

struct Image {
  void* data = nullptr;
  size_t size = 0;
};

// A copy of the packed bytes in 64-byte aligned memory (kept for the process's lifetime).
Image aligned_image(const std::vector<uint8_t>& bytes) {
  Image im;
  im.size = bytes.size();
  im.data = std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64);
  std::memcpy(im.data, bytes.data(), bytes.size());
  return im;
}

const Image& model() {
  static const Image image = [] {
    // One kv head: the grouped-query path.
    return aligned_image(pack::write_ein(einfer_test::tiny_tokenized_model(1)));
  }();
  return image;
}

// A bert with every role filled from a fixed pseudo-random sequence (norm weights near 1).
const Image& bert_model() {
  static const Image image = [] {
    pack::SourceModel src;
    ModelConfig& c = src.config;
    c.arch = ArchKind::bert;
    c.dim = 16;
    c.hidden_dim = 32;
    c.n_layers = 1;
    c.n_heads = c.n_kv_heads = 2;
    c.head_dim = 8;
    c.vocab_size = 300;
    c.context_length = 24;
    c.type_vocab_size = 2;
    c.norm = NormKind::layernorm;
    c.norm_eps = 1e-12f;
    c.activation = Activation::gelu_erf;
    c.rope = RopeMode::none;
    c.has_bias = 1;
    c.pooling = PoolingKind::mean;
    c.normalize = 1;
    uint32_t state = 12345;
    pack::for_each_arch_tensor(arch_bert(), c, [&](const ArchTensorNames& t, int32_t layer) {
      const std::vector<int64_t> shape = pack::arch_tensor_shape(c, t.role);
      int64_t n = 1;
      for (int64_t e : shape) n *= e;
      std::vector<float> v(static_cast<size_t>(n));
      for (float& x : v) {
        state = state * 1664525u + 1013904223u;
        x = (static_cast<float>(state >> 8) / 16777216.f - 0.5f) * (shape.size() == 1 ? 0.2f : 1.f);
        if (shape.size() == 1 &&
            (t.role == TensorRole::embed_norm || t.role == TensorRole::attn_norm ||
             t.role == TensorRole::ffn_norm))
          x += 1.f;
      }
      pack::add_float_tensor(src, t.role, layer, shape, std::move(v));
    });
    pack::EinImage e = pack::pack_source(src, DType::q8, 8, nullptr);
    e.tokenizer = pack::tokenizer_image_for_model(
        pack::read_tokenizer_bytes(pack::make_synthetic_tokenizer(300), "synthetic"), 300);
    return aligned_image(pack::write_ein(e));
  }();
  return image;
}

struct Stream {
  const uint8_t* p;
  size_t n;
  uint8_t byte() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  int32_t i32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{byte()} << (8 * i);
    return static_cast<int32_t>(v);
  }
  float f32() {
    const int32_t v = i32();
    float f;
    std::memcpy(&f, &v, 4);
    return f;
  }
  // A small value most of the time, any 32-bit value sometimes.
  int32_t small_or_any() {
    const uint8_t b = byte();
    return b < 200 ? b % 48 : i32();
  }
};

volatile float g_sink;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool bert = size > 0 && data[0] == 'B';
  const Image& m = bert ? bert_model() : model();
  Stream in{data + (bert ? 1 : 0), size - (bert ? 1 : 0)};
  einfer_options o;
  einfer_options_default(&o);
  o.context = in.small_or_any();
  o.window = in.byte() < 128 ? 0 : in.small_or_any();
  o.sinks = in.byte() < 200 ? 0 : in.small_or_any();
  o.kv_int8 = in.byte() & 1;
  o.max_batch = in.small_or_any();
  o.with_tokenizer = in.byte() % 4;
  o.max_prompt_bytes = in.small_or_any();
  const uint8_t sampling = in.byte();
  if (sampling & 1) o.temperature = (sampling & 2) ? in.f32() : 0.8f;
  if (sampling & 4) o.top_p = (sampling & 8) ? in.f32() : 0.9f;
  if (sampling & 16) o.top_k = (sampling & 32) ? in.i32() : 5;
  o.seed = static_cast<uint64_t>(in.i32());

  char err[128];
  size_t need = 0;
  if (einfer_arena_bytes(m.data, m.size, &o, &need, err, sizeof err) != EINFER_OK) return 0;
  if (need > (size_t{64} << 20)) return 0;
  void* arena = std::aligned_alloc(64, (need + 63) / 64 * 64 + 64);
  einfer_session* s = nullptr;
  if (einfer_session_create(m.data, m.size, &o, arena, need, &s, err, sizeof err) != EINFER_OK) {
    std::free(arena);
    return 0;
  }
  const int32_t vocab = einfer_vocab_size(s);
  for (int step = 0; step < 64 && in.n > 0; ++step) {
    switch (in.byte() % 11) {
      case 0: {  // prefill a few ids, some outside the vocabulary
        int32_t ids[8];
        const int32_t n = in.byte() % 9;
        for (int32_t i = 0; i < n; ++i) ids[i] = in.byte() < 240 ? in.byte() % vocab : in.i32();
        (void)einfer_prefill(s, ids, n);
        break;
      }
      case 1:
        (void)einfer_decode(s, in.byte() < 240 ? in.byte() % vocab : in.i32());
        break;
      case 2: {
        const int32_t t = einfer_next_token(s);
        if (t >= 0 && t < vocab) (void)einfer_decode(s, t);
        break;
      }
      case 3:
        einfer_reset(s);
        break;
      case 4: {
        const float* logits = einfer_logits(s);
        if (logits) g_sink = logits[in.byte() % vocab];
        break;
      }
      case 5: {
        char text[40];
        const size_t n = in.byte() % sizeof text;
        for (size_t i = 0; i < n; ++i) text[i] = static_cast<char>(in.byte() | 1);  // no NUL
        text[n] = '\0';
        int32_t ids[48];
        int32_t n_ids = 0;
        (void)einfer_tokenize(s, text, in.byte() & 1, ids, in.byte() % 49, &n_ids);
        break;
      }
      case 6: {
        size_t len = 0;
        const char* p = einfer_token_text(s, in.small_or_any(), in.small_or_any(), &len);
        if (p && len) g_sink = static_cast<float>(p[0] ^ p[len - 1]);
        break;
      }
      case 7:
        g_sink = static_cast<float>(einfer_position(s) + einfer_context_length(s) +
                                    static_cast<int64_t>(einfer_arena_used(s)));
        break;
      case 8: {  // NULL arguments to every entry point: a status, never a crash
        int32_t n_ids = 0;
        size_t len = 0;
        (void)einfer_prefill(nullptr, nullptr, 1);
        (void)einfer_prefill(s, nullptr, 1);
        (void)einfer_decode(nullptr, 1);
        (void)einfer_next_token(nullptr);
        (void)einfer_logits(nullptr);
        einfer_reset(nullptr);
        (void)einfer_vocab_size(nullptr);
        (void)einfer_context_length(nullptr);
        (void)einfer_position(nullptr);
        (void)einfer_arena_used(nullptr);
        (void)einfer_error(nullptr);
        (void)einfer_tokenize(nullptr, "a", 1, nullptr, 0, &n_ids);
        (void)einfer_tokenize(s, nullptr, 1, nullptr, 4, &n_ids);
        (void)einfer_tokenize(s, "a", 1, nullptr, 4, nullptr);
        (void)einfer_token_text(nullptr, 1, 2, &len);
        (void)einfer_token_text(s, 1, 2, nullptr);
        (void)einfer_arena_bytes(nullptr, 0, nullptr, nullptr, nullptr, 0);
        (void)einfer_arena_bytes(m.data, m.size, &o, nullptr, err, sizeof err);
        (void)einfer_session_create(m.data, m.size, &o, nullptr, 0, nullptr, err, sizeof err);
        einfer_options_default(nullptr);
        break;
      }
      case 9: {  // sentence embeddings: any ids and lengths, token states, texts, NULLs
        int32_t ids[40];
        const int32_t n = in.byte() < 240 ? in.byte() % 41 : in.i32();
        for (int32_t i = 0; i < 40; ++i) ids[i] = in.byte() < 240 ? in.byte() % 300 : in.i32();
        float out[40 * 16];
        const uint8_t which = in.byte();
        if (which % 3 == 0) (void)einfer_embed(s, ids, n > 40 ? 40 : n, out);
        if (which % 3 == 1) (void)einfer_embed_tokens(s, ids, n > 40 ? 40 : n, out);
        if (which % 3 == 2) {
          char text[64];
          const size_t len = in.byte() % sizeof text;
          for (size_t i = 0; i < len; ++i) text[i] = static_cast<char>(in.byte() | 1);  // no NUL
          text[len] = '\0';
          int32_t n_tokens = 0;
          (void)einfer_embed_text(s, text, out, (which & 8) ? &n_tokens : nullptr);
        }
        (void)einfer_embed(nullptr, ids, 1, out);
        (void)einfer_embed(s, nullptr, 1, out);
        (void)einfer_embed_tokens(s, ids, 1, nullptr);
        (void)einfer_embed_text(s, nullptr, out, nullptr);
        (void)einfer_embed_text(nullptr, "a", out, nullptr);
        break;
      }
      default:
        (void)einfer_error(s);
        break;
    }
  }
  std::free(arena);
  return 0;
}
