// TextTokenizer without the shared files: hand-built vocabularies whose merges are worked out by
// hand, pre-tokenizer splits derived from the regexes by hand, every corruption the image parser
// must refuse, importer refusals, buffer limits, decode-only mode and exact arena use.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/tokenizer_pretokenize.h"
#include "models/tokenizer_text.h"

using namespace einfer;

namespace {

std::vector<std::string> split(Pretokenizer kind, const std::string& s) {
  std::vector<std::string> words;
  for (size_t i = 0; i < s.size();) {
    const size_t end = pretokenize_next(kind, s.data(), s.size(), i);
    REQUIRE(end > i);
    words.push_back(s.substr(i, end - i));
    i = end;
  }
  return words;
}

}  // namespace

TEST_CASE("pre-tokenizers split as their regexes do (hand-derived)") {
  using V = std::vector<std::string>;
  // \s+(?!\S) leaves the last space of a run for the next word; contractions split off.
  CHECK(split(Pretokenizer::gpt2, "Hello world  \n\n x's 123") ==
        V{"Hello", " world", "  \n\n", " x", "'s", " 123"});
  CHECK(split(Pretokenizer::gpt2, "a  ") == V{"a", "  "});
  CHECK(split(Pretokenizer::gpt2, "I'M ok!?") == V{"I", "'", "M", " ok", "!?"});
  // Llama 3: newline runs end at their last newline, numbers in threes, case-free contractions,
  // one leading non-letter glued to letters.
  CHECK(split(Pretokenizer::llama3, "Hello world  \n\n x's 12345") ==
        V{"Hello", " world", "  \n\n", " x", "'s", " ", "123", "45"});
  CHECK(split(Pretokenizer::llama3, "I'M (ok)\r\n") == V{"I", "'M", " (", "ok", ")\r\n"});
  CHECK(split(Pretokenizer::qwen2, "x 123") == V{"x", " ", "1", "2", "3"});
  // Digits alone first; GPT-2 sees the text between digits on its own.
  CHECK(split(Pretokenizer::digits_gpt2, "ab 12 c") == V{"ab", " ", "1", "2", " c"});
  // Unicode classes: letters (CJK, accented), numbers (Arabic-Indic), White_Space (U+3000).
  CHECK(split(Pretokenizer::gpt2, "日本 é٣٤\xE3\x80\x80x") ==
        V{"日本", " é", "٣٤", "\xE3\x80\x80", "x"});
  // Invalid UTF-8 is one `other` byte at a time, never dropped.
  CHECK(split(Pretokenizer::gpt2, "a\xff\xfe b") == V{"a", "\xff\xfe", " b"});
  CHECK(char_class(0x1F600) == CharClass::other);
  CHECK(char_class(0x2167) == CharClass::number);  // Ⅷ (Nl)
  CHECK(char_class(0x00A0) == CharClass::space);
}

#if EINFER_HAS_PACK_LIB
#include "models/einfer.h"
#include "tests/format_fixtures.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

namespace {

// SentencePiece-style vocabulary: <unk>, <s>, </s>, 256 byte pieces, then scored pieces.
pack::TokenizerSpec spm_spec() {
  pack::TokenizerSpec s;
  s.algorithm = TokenizerAlgorithm::sentencepiece_bpe;
  s.pieces = {"<unk>", "<s>", "</s>"};
  s.types = {2, 3, 3};
  s.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char p[8];
    std::snprintf(p, sizeof p, "<0x%02X>", b);
    s.pieces.push_back(p);
    s.types.push_back(6);
    s.scores.push_back(0);
  }
  const std::vector<std::pair<std::string, float>> words = {{" ", -10},     {"a", -10}, {"b", -10},
                                                            {"c", -10},     {"ab", -1}, {" a", -2},
                                                            {" ab", -0.5f}, {" c", -3}, {"aa", -4}};
  for (const auto& [p, score] : words) {
    s.pieces.push_back(p);
    s.types.push_back(1);
    s.scores.push_back(score);
  }
  s.unk = 0, s.bos = 1, s.eos = 2;
  s.eog = {2};
  s.flags = kTokFlagAddBos | kTokFlagDummyPrefix | kTokFlagByteFallback | kTokFlagSpaceEscape;
  return s;
}
constexpr int32_t kSpace = 259, kA = 260, kAB = 263, kSpaceAB = 265, kSpaceC = 266, kAA = 267;

struct Built {
  std::vector<uint8_t> image;
  std::vector<unsigned char> memory;
  TextTokenizer tok;
  size_t arena_bytes = 0, used = 0;
  explicit Built(const pack::TokenizerSpec& spec, bool decode_only = false) {
    image = pack::write_tokenizer_image(spec);
    PackedTokenizer p;
    REQUIRE(tokenizer_parse(image.data(), image.size(), &p).ok());
    arena_bytes = decode_only ? 0 : text_tokenizer_arena_bytes(p);
    memory.assign(arena_bytes + kDefaultAlignment, 0);
    const uintptr_t base = reinterpret_cast<uintptr_t>(memory.data());
    Arena arena(memory.data() + (kDefaultAlignment - base % kDefaultAlignment) % kDefaultAlignment,
                arena_bytes);
    const Status s = text_tokenizer_init(&tok, image.data(), image.size(), decode_only, arena);
    REQUIRE_MESSAGE(s.ok(), s.message);
    used = arena.used();
  }
};

std::vector<int32_t> enc(const TextTokenizer& t, const std::string& text, bool special = false) {
  std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(t.packed, text.size()));
  std::vector<int32_t> ids(4 * text.size() + 4);
  int32_t n = 0;
  const Status s =
      text_tokenizer_encode(t, text.data(), text.size(), special, ids.data(),
                            static_cast<int32_t>(ids.size()), &n, scratch.data(), scratch.size());
  REQUIRE_MESSAGE(s.ok(), s.message);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

}  // namespace

TEST_CASE("SentencePiece BPE: merges by score worked out by hand") {
  Built b(spm_spec());
  CHECK(b.used == b.arena_bytes);
  // " ab c": "ab" (-1) first, then " ab" (-0.5), then " c" (-3); "b " never forms.
  CHECK(enc(b.tok, "ab c") == std::vector<int32_t>{kSpaceAB, kSpaceC});
  CHECK(enc(b.tok, "ab c", true) == std::vector<int32_t>{1, kSpaceAB, kSpaceC});
  // Ties go to the leftmost pair: " aaa" -> " a" (-2) beats "aa" (-4): " a", then "aa".
  CHECK(enc(b.tok, "aaa") == std::vector<int32_t>{kSpace + 5, kAA});
  // Unknown characters fall back to bytes; invalid UTF-8 is U+FFFD (EF BF BD), byte by byte.
  CHECK(enc(b.tok, "é") == std::vector<int32_t>{kSpace, 3 + 0xC3, 3 + 0xA9});
  CHECK(enc(b.tok, "\xff") == std::vector<int32_t>{kSpace, 3 + 0xEF, 3 + 0xBF, 3 + 0xBD});
  // U+2581 in text is a space; "<s>" is not matched in SentencePiece text.
  CHECK(enc(b.tok,
            "\xE2\x96\x81"
            "a") == enc(b.tok, " a"));
  CHECK(enc(b.tok, "<s>").size() > 1);
  CHECK(enc(b.tok, "").empty());
  // Decoding: the dummy-prefix space goes after BOS or at the start; bytes are bytes; control
  // tokens only when asked.
  CHECK(std::string(text_tokenizer_decode(b.tok, 1, kSpaceAB, false).data, 2) == "ab");
  CHECK(text_tokenizer_decode(b.tok, kA, kSpaceAB, false).size == 3);
  CHECK(text_tokenizer_decode(b.tok, -1, 3 + 'Q', false).data[0] == 'Q');
  CHECK(text_tokenizer_decode(b.tok, -1, 2, false).size == 0);
  CHECK(text_tokenizer_decode(b.tok, -1, 2, true).size == 4);
  CHECK(text_tokenizer_decode(b.tok, -1, 99999, true).size == 0);
  CHECK(text_tokenizer_is_eog(b.tok, 2));
  CHECK_FALSE(text_tokenizer_is_eog(b.tok, 1));
  CHECK(text_tokenizer_bos(b.tok) == 1);
  (void)kAB;
}

TEST_CASE("rank BPE, byte-level, added tokens matched leftmost-longest, never merged") {
  pack::TokenizerSpec s;
  s.algorithm = TokenizerAlgorithm::bpe;
  for (int b = 0; b < 256; ++b) s.pieces.push_back(std::string(1, static_cast<char>(b)));
  s.pieces.insert(s.pieces.end(), {"ab", "abc", " ab", "<|x|>", "<|xy|>"});
  s.types.assign(s.pieces.size(), 1);
  s.types[259] = s.types[260] = 3;  // control
  s.merges = {{'a', 'b', 256}, {' ', 256, 258}, {256, 'c', 257}};
  s.flags = kTokFlagByteLevel | kTokFlagMatchControl;
  s.pretokenizer = Pretokenizer::gpt2;
  s.eos = 259;
  s.eog = {259, 260};
  Built b(s);
  CHECK(b.used == b.arena_bytes);
  // "ab abc": words "ab", " abc". " abc": ranks ab(0) then " ab"(1) beats "abc"(2).
  CHECK(enc(b.tok, "ab abc") == std::vector<int32_t>{256, 258, 'c'});
  CHECK(enc(b.tok, "abc") == std::vector<int32_t>{257});
  // The longest added token wins; the text around it is encoded on its own.
  CHECK(enc(b.tok, "ab<|xy|>ab") == std::vector<int32_t>{256, 260, 256});
  CHECK(enc(b.tok, "<|x|><|x") == std::vector<int32_t>{259, '<', '|', 'x'});
  CHECK(text_tokenizer_is_eog(b.tok, 260));
  // Buffers: too few ids reports the count needed; a short scratch is refused.
  std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(b.tok.packed, 6));
  int32_t ids[2];
  int32_t n = 0;
  Status st =
      text_tokenizer_encode(b.tok, "ab abc", 6, false, ids, 2, &n, scratch.data(), scratch.size());
  CHECK(st.code == StatusCode::out_of_memory);
  CHECK(st.need == 3);
  st = text_tokenizer_encode(b.tok, "ab abc", 6, false, ids, 2, &n, scratch.data(), 10);
  CHECK(st.code == StatusCode::out_of_memory);
  // Decode-only: no arena, decoding works, encoding is refused.
  Built d(s, true);
  CHECK(d.used == 0);
  CHECK(std::string(text_tokenizer_decode(d.tok, -1, 258, false).data, 3) == " ab");
  st = text_tokenizer_encode(d.tok, "ab", 2, false, ids, 2, &n, scratch.data(), scratch.size());
  CHECK(st.code == StatusCode::invalid_argument);
}

TEST_CASE("tokenizer image: every corruption is refused with a message") {
  const std::vector<uint8_t> good = pack::write_tokenizer_image(spm_spec());
  PackedTokenizer p;
  REQUIRE(tokenizer_parse(good.data(), good.size(), &p).ok());
  const TokenizerLayout l = tokenizer_layout(TokenizerAlgorithm::sentencepiece_bpe,
                                             p.header.n_tokens, 0, p.header.pieces_bytes);
  auto put32 = [](std::vector<uint8_t>& b, size_t at, uint32_t v) { std::memcpy(&b[at], &v, 4); };
  struct Case {
    const char* what;
    size_t at;
    uint32_t value;
    StatusCode code;
  };
  const float nan = __builtin_nanf("");
  uint32_t nan_bits;
  std::memcpy(&nan_bits, &nan, 4);
  const Case cases[] = {
      {"magic", 0, 0x12345678, StatusCode::bad_format},
      {"version", 4, 3, StatusCode::unsupported},
      {"version 0", 4, 0, StatusCode::unsupported},
      {"a version 2 flag in version 1", 12, 1u << 10, StatusCode::bad_format},
      {"a normalizer in version 1", 88, 1, StatusCode::bad_format},
      {"max_word_chars in version 1", 92, 100, StatusCode::bad_format},
      {"algorithm", 8, 7, StatusCode::bad_format},
      {"flags", 12, 1u << 20, StatusCode::bad_format},
      {"pretokenizer on sentencepiece", 16, 1, StatusCode::bad_format},
      {"n_tokens", 20, p.header.n_tokens + 1, StatusCode::bad_format},
      {"pieces_bytes", 28, p.header.pieces_bytes - 1, StatusCode::bad_format},
      {"max_piece_bytes", 32, 99, StatusCode::bad_format},
      {"bos past vocab", 36, 100000, StatusCode::bad_format},
      {"n_eog", 52, 9, StatusCode::bad_format},
      {"eog id", 56, 100000, StatusCode::bad_format},
      {"unused eog slot", 60, 5, StatusCode::bad_format},
      {"reserved", 100, 1, StatusCode::bad_format},
      {"first offset", l.offsets_at, 1, StatusCode::bad_format},
      {"offset decreasing", l.offsets_at + 8, 0xFFFF, StatusCode::bad_format},
      {"NaN score", l.scores_at + 4 * 260, nan_bits, StatusCode::bad_format},
      {"type", l.types_at, 0x09090909, StatusCode::bad_format},
      {"byte piece text", l.pieces_at + 3 + 5 + 3 + 1, 0x5A5A5A5A, StatusCode::bad_format},
      {"byte piece hex digits", l.pieces_at + 5 + 3 + 4, 0x5A78303C, StatusCode::bad_format},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    std::vector<uint8_t> bad = good;
    put32(bad, c.at, c.value);
    const Status s = tokenizer_parse(bad.data(), bad.size(), &p);
    CHECK(s.code == c.code);
    CHECK(std::strlen(s.message) > 10);
  }
  CHECK(tokenizer_parse(good.data(), good.size() - 1, &p).code == StatusCode::bad_format);
  CHECK(tokenizer_parse(good.data(), 64, &p).code == StatusCode::bad_format);
  // A merge whose parts do not concatenate to its result.
  pack::TokenizerSpec s;
  s.algorithm = TokenizerAlgorithm::bpe;
  s.pieces = {"a", "b", "ab", "ba"};
  s.types = {1, 1, 1, 1};
  s.merges = {{0, 1, 2}};
  std::vector<uint8_t> m = pack::write_tokenizer_image(s);
  put32(m, tokenizer_layout(TokenizerAlgorithm::bpe, 4, 1, 6).merges_at + 8, 3);
  CHECK(tokenizer_parse(m.data(), m.size(), &p).code == StatusCode::bad_format);
}

TEST_CASE("tokenizer importers refuse what they cannot read, naming it") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/einfer_" + name, std::ios::binary) << bytes;
    return dir + "/einfer_" + name;
  };
  auto refused = [](const std::string& path, const char* word) {
    try {
      pack::read_tokenizer_file(path);
    } catch (const std::exception& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(word) != std::string::npos);
      return;
    }
    FAIL("accepted " << path);
  };
  refused(write("tok_garbage.bin", std::string(100, '\x07')), "not a tokenizer");
  refused(write("tok_empty.bin", ""), "empty");
  refused(write("tok_bad.json", "{\"model\": [1, 2"), "not valid JSON");
  refused(write("tok_unigram.json", "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}"),
          "model type");
  refused(write("tok_pre.json",
                "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []},"
                " \"pre_tokenizer\": {\"type\": \"Whitespace\"}}"),
          "pre_tokenizer");
  refused(
      write("tok_gap.json",
            "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 2}, \"merges\": []}}"),
      "gaps");
  refused(write("tok_merge.json",
                "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": "
                "[\"a b\"]}}"),
          "not in the vocab");
  refused(write("tok_gguf.bin", std::string("GGUF\x03\0\0\0", 8) + std::string(16, '\0')),
          "no tokenizer");
  // A tokenizer.bin cut in the middle of a record is not a tokenizer.bin.
  std::vector<uint8_t> tb = {8, 0, 0, 0};
  for (int i = 0; i < 300; ++i) {
    const float score = 0;
    const int32_t len = 1;
    tb.insert(tb.end(), reinterpret_cast<const uint8_t*>(&score),
              reinterpret_cast<const uint8_t*>(&score) + 4);
    tb.insert(tb.end(), reinterpret_cast<const uint8_t*>(&len),
              reinterpret_cast<const uint8_t*>(&len) + 4);
    tb.push_back('x');
  }
  tb.resize(tb.size() - 3);
  refused(write("tok_cut.bin", std::string(tb.begin(), tb.end())), "not a tokenizer");
}

TEST_CASE("tokenizer in a model: --inspect arena bytes are exact; C API special ids and sizing") {
  ModelConfig c = test::tiny_llama_config();
  c.vocab_size = 300;  // more embedding rows than the 268 tokens: allowed
  pack::EinImage img = test::synthetic_image(c);
  img.tokenizer = pack::tokenizer_image_for_model(spm_spec(), c.vocab_size);
  pack::AlignedBuffer buf(pack::write_ein(img));
  Model m;
  REQUIRE(load_model(buf.data, buf.size, LoadOptions{}, &m).ok());
  // --inspect reports the arena the tables really take.
  Built b(spm_spec());
  const std::string text = pack::describe_model(m, RunOptions{}, false);
  const std::string want = "tokenizer arena bytes " + std::to_string(b.used) + " ";
  CHECK(text.find(want) != std::string::npos);
  CHECK(pack::describe_model(m, RunOptions{}, true)
            .find("\"tokenizer_arena_bytes\": " + std::to_string(b.used)) != std::string::npos);
  // The C API's arena grows by exactly the tables plus the encode scratch; decode-only by nothing.
  einfer_options o;
  einfer_options_default(&o);
  char err[160];
  size_t none = 0, full = 0, decode_only = 0;
  REQUIRE(einfer_arena_bytes(buf.data, buf.size, &o, &none, err, sizeof err) == EINFER_OK);
  o.with_tokenizer = 2;
  REQUIRE(einfer_arena_bytes(buf.data, buf.size, &o, &decode_only, err, sizeof err) == EINFER_OK);
  o.with_tokenizer = 1;
  o.max_prompt_bytes = 100;
  REQUIRE(einfer_arena_bytes(buf.data, buf.size, &o, &full, err, sizeof err) == EINFER_OK);
  CHECK(decode_only == none);
  auto align64 = [](size_t n) { return (n + 63) / 64 * 64; };
  CHECK(full == align64(align64(none) + b.used) + text_tokenizer_scratch_bytes(b.tok.packed, 100));
  std::vector<unsigned char> mem(full + 64);
  void* base = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  einfer_session* s = nullptr;
  REQUIRE(einfer_session_create(buf.data, buf.size, &o, base, full, &s, err, sizeof err) ==
          EINFER_OK);
  CHECK(einfer_token_bos(s) == 1);
  CHECK(einfer_token_eos(s) == 2);
  CHECK(einfer_token_is_eog(s, 2) == 1);
  CHECK(einfer_token_is_eog(s, 1) == 0);
  int32_t ids[16];
  int32_t n = 0;
  REQUIRE(einfer_tokenize(s, "ab c", 1, ids, 16, &n) == EINFER_OK);
  CHECK(std::vector<int32_t>(ids, ids + n) == std::vector<int32_t>{1, kSpaceAB, kSpaceC});
  size_t len = 99;
  einfer_token_text(s, kSpaceAB, 2, &len);  // control tokens never reach the text
  CHECK(len == 0);
  const char* piece = einfer_token_text(s, 1, kSpaceAB, &len);
  CHECK(std::string(piece, len) == "ab");
  // A prompt over max_prompt_bytes is refused, not truncated.
  const std::string longer(101, 'a');
  CHECK(einfer_tokenize(s, longer.c_str(), 1, ids, 16, &n) == EINFER_E_OUT_OF_RANGE);
  // Without a tokenizer, llama2.c's ids.
  o.with_tokenizer = 0;
  REQUIRE(einfer_session_create(buf.data, buf.size, &o, base, full, &s, err, sizeof err) ==
          EINFER_OK);
  CHECK(einfer_token_bos(s) == EINFER_TOKEN_BOS);
  CHECK(einfer_token_is_eog(s, EINFER_TOKEN_EOS) == 1);
  // More tokens than embedding rows is refused by the packer.
  CHECK_THROWS_WITH_AS(pack::tokenizer_image_for_model(spm_spec(), 100),
                       doctest::Contains("more than the model"), std::exception);
}

#endif  // EINFER_HAS_PACK_LIB
