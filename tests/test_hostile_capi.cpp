// The C API under hostile use (issue 16): NULL arguments to every entry point, calls out of the
// documented order (next_token before any prefill), and sampling options out of their domains are
// refused with a status and a message, never a crash or silent garbage.
#if EINFER_HAS_PACK_LIB
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "models/einfer.h"
#include "models/tokenizer_packed.h"
#include "tests/tiny_model.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

namespace {

struct Image {
  std::vector<uint8_t> bytes;
  void* data = nullptr;
  explicit Image(std::vector<uint8_t> b) : bytes(std::move(b)) {
    data = std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64);
    std::memcpy(data, bytes.data(), bytes.size());
  }
  ~Image() { std::free(data); }
};

std::vector<uint8_t> tiny_model(bool hostile_tokenizer = false) {
  pack::EinImage e = einfer_test::tiny_tokenized_model();
  if (hostile_tokenizer) {
    // The packed image's max_piece_bytes claims 2^31 - 1 (a 2 GB encode scratch if believed).
    const uint32_t huge = INT32_MAX;
    std::memcpy(e.tokenizer.data() + offsetof(TokenizerHeader, max_piece_bytes), &huge, 4);
  }
  return pack::write_ein(e);
}

struct Session {
  std::vector<unsigned char> mem;
  einfer_session* s = nullptr;
  Session(const Image& m, const einfer_options& o) {
    size_t need = 0;
    char err[128];
    REQUIRE(einfer_arena_bytes(m.data, m.bytes.size(), &o, &need, err, sizeof err) == EINFER_OK);
    mem.resize(need + 64);
    void* arena = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
    REQUIRE(einfer_session_create(m.data, m.bytes.size(), &o, arena, need, &s, err, sizeof err) ==
            EINFER_OK);
  }
};

}  // namespace

TEST_CASE("C API: NULL arguments to every entry point give a status, not a crash") {
  const Image m(tiny_model());
  einfer_options o;
  einfer_options_default(&o);
  o.with_tokenizer = 1;
  Session live(m, o);
  einfer_session* s = live.s;
  char err[128];
  size_t len = 7;
  int32_t n_ids = 0, ids[4];
  CHECK(einfer_prefill(nullptr, ids, 1) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_prefill(s, nullptr, 1) == EINFER_E_INVALID_ARGUMENT);
  CHECK(std::string(einfer_error(s)).find("einfer_prefill") != std::string::npos);
  CHECK(einfer_decode(nullptr, 1) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_next_token(nullptr) < 0);
  CHECK(einfer_logits(nullptr) == nullptr);
  einfer_reset(nullptr);
  CHECK(einfer_vocab_size(nullptr) == 0);
  CHECK(einfer_context_length(nullptr) == 0);
  CHECK(einfer_position(nullptr) == -1);
  CHECK(einfer_arena_used(nullptr) == 0);
  CHECK(std::string(einfer_error(nullptr)).find("NULL") != std::string::npos);
  CHECK(einfer_tokenize(nullptr, "a", 1, ids, 4, &n_ids) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_tokenize(s, nullptr, 1, ids, 4, &n_ids) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_tokenize(s, "a", 1, nullptr, 4, &n_ids) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_tokenize(s, "a", 1, ids, 4, nullptr) == EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_tokenize(s, "a", 1, ids, -1, &n_ids) == EINFER_E_INVALID_ARGUMENT);
  CHECK(std::strlen(einfer_token_text(nullptr, 1, 5, &len)) == 0);
  CHECK(len == 0);
  CHECK(einfer_token_text(s, 1, 5, nullptr) != nullptr);
  CHECK(einfer_arena_bytes(m.data, m.bytes.size(), &o, nullptr, err, sizeof err) ==
        EINFER_E_INVALID_ARGUMENT);
  size_t need = 0;
  CHECK(einfer_arena_bytes(nullptr, 0, nullptr, &need, err, sizeof err) ==
        EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_session_create(m.data, m.bytes.size(), &o, live.mem.data(), 0, nullptr, err,
                              sizeof err) == EINFER_E_INVALID_ARGUMENT);
  einfer_session* none = nullptr;
  CHECK(einfer_session_create(m.data, m.bytes.size(), &o, nullptr, 1 << 20, &none, err,
                              sizeof err) == EINFER_E_INVALID_ARGUMENT);
  CHECK(none == nullptr);
  einfer_options_default(nullptr);
}

TEST_CASE("C API: next_token before any prefill is an error; the state machine is enforced") {
  const Image m(tiny_model());
  einfer_options o;
  einfer_options_default(&o);
  Session live(m, o);
  einfer_session* s = live.s;
  CHECK(einfer_logits(s) == nullptr);
  CHECK(einfer_next_token(s) == -EINFER_E_INVALID_ARGUMENT);
  CHECK(std::string(einfer_error(s)).find("before any prefill") != std::string::npos);
  const int32_t bos = EINFER_TOKEN_BOS;
  REQUIRE(einfer_prefill(s, &bos, 1) == EINFER_OK);
  REQUIRE(einfer_logits(s) != nullptr);
  const int32_t t = einfer_next_token(s);
  CHECK((t >= 0 && t < einfer_vocab_size(s)));
  CHECK(einfer_decode(s, 300) == EINFER_E_OUT_OF_RANGE);  // outside the vocabulary
  CHECK(einfer_decode(s, -1) == EINFER_E_OUT_OF_RANGE);
  CHECK(einfer_prefill(s, &bos, 0) == EINFER_E_INVALID_ARGUMENT);
  einfer_reset(s);
  CHECK(einfer_next_token(s) == -EINFER_E_INVALID_ARGUMENT);
  CHECK(einfer_logits(s) == nullptr);
}

TEST_CASE("C API: sampling and run options outside their domains are refused") {
  const Image m(tiny_model());
  struct Case {
    const char* what;
    void (*set)(einfer_options*);
    int code;
  } cases[] = {
      {"temperature", [](einfer_options* o) { o->temperature = NAN; }, EINFER_E_INVALID_ARGUMENT},
      {"temperature", [](einfer_options* o) { o->temperature = -0.5f; }, EINFER_E_INVALID_ARGUMENT},
      {"temperature", [](einfer_options* o) { o->temperature = INFINITY; },
       EINFER_E_INVALID_ARGUMENT},
      {"top_p", [](einfer_options* o) { o->top_p = 0.f; }, EINFER_E_INVALID_ARGUMENT},
      {"top_p", [](einfer_options* o) { o->top_p = 1.5f; }, EINFER_E_INVALID_ARGUMENT},
      {"top_p", [](einfer_options* o) { o->top_p = NAN; }, EINFER_E_INVALID_ARGUMENT},
      {"top_k", [](einfer_options* o) { o->top_k = -1; }, EINFER_E_INVALID_ARGUMENT},
      {"kv_int8", [](einfer_options* o) { o->kv_int8 = 7; }, EINFER_E_INVALID_ARGUMENT},
      {"context", [](einfer_options* o) { o->context = (1 << 24) + 1; }, EINFER_E_OUT_OF_RANGE},
      {"window", [](einfer_options* o) { o->window = INT32_MAX; }, EINFER_E_OUT_OF_RANGE},
      {"max_batch", [](einfer_options* o) { o->max_batch = 1 << 20; }, EINFER_E_OUT_OF_RANGE},
      {"max_prompt_bytes", [](einfer_options* o) { o->max_prompt_bytes = -3; },
       EINFER_E_OUT_OF_RANGE},
      {"with_tokenizer", [](einfer_options* o) { o->with_tokenizer = 3; },
       EINFER_E_INVALID_ARGUMENT},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    einfer_options o;
    einfer_options_default(&o);
    c.set(&o);
    size_t need = 1;
    char err[160] = {};
    CHECK(einfer_arena_bytes(m.data, m.bytes.size(), &o, &need, err, sizeof err) == c.code);
    CHECK(std::string(err).find(c.what) != std::string::npos);
    CHECK(need == 0);
  }
}

TEST_CASE("C API: a tokenizer image claiming 2^31-byte pieces is refused before sizing") {
  const Image m(tiny_model(/*hostile_tokenizer=*/true));
  einfer_options o;
  einfer_options_default(&o);
  o.with_tokenizer = 1;
  size_t need = 0;
  char err[160] = {};
  CHECK(einfer_arena_bytes(m.data, m.bytes.size(), &o, &need, err, sizeof err) ==
        EINFER_E_BAD_FORMAT);
  CHECK(std::string(err).find("max_piece_bytes") != std::string::npos);
  CHECK(need == 0);
  // The parser itself refuses the figure, and accepts the true one.
  std::vector<uint8_t> image = pack::tokenizer_image_for_model(
      pack::read_tokenizer_bytes(pack::make_synthetic_tokenizer(300), "synthetic"), 300);
  PackedTokenizer parsed;
  CHECK(tokenizer_parse(image.data(), image.size(), &parsed).ok());
  const uint32_t huge = INT32_MAX;
  std::memcpy(image.data() + offsetof(TokenizerHeader, max_piece_bytes), &huge, 4);
  CHECK(tokenizer_parse(image.data(), image.size(), &parsed).code == StatusCode::bad_format);
}
#endif  // EINFER_HAS_PACK_LIB
