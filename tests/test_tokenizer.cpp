// Tokenizer: encode ids against an independent Python encoder (tests/gen/gen_tokenizer_vectors.py),
// decode round trips, the README's greedy ids decoding to the README's text, corrupt files, and a
// hand-built vocabulary whose merges are worked out by hand (runs without the shared models).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "models/tokenizer.h"

using namespace einfer;

namespace {

std::string models_dir() {
  const char* env = std::getenv("EINFER_SHARED_MODELS_DIR");
  return env != nullptr && env[0] != '\0' ? std::string(env)
                                          : std::string(EINFER_SHARED_MODELS_DIR);
}

bool read_file(const std::string& path, std::vector<char>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// Owns the arena memory of one tokenizer.
struct LoadedTokenizer {
  std::vector<unsigned char> arena_memory;
  Tokenizer tok;
  Status status;
  LoadedTokenizer(const std::vector<char>& file, int32_t vocab_size)
      : arena_memory(tokenizer_arena_bytes(vocab_size) + kDefaultAlignment) {
    // Align the arena start so tokenizer_arena_bytes is exact.
    const uintptr_t base = reinterpret_cast<uintptr_t>(arena_memory.data());
    const size_t skip = (kDefaultAlignment - base % kDefaultAlignment) % kDefaultAlignment;
    Arena arena(arena_memory.data() + skip, tokenizer_arena_bytes(vocab_size));
    status = tokenizer_init(&tok, file.data(), file.size(), vocab_size, arena);
  }
};

Status encode(const Tokenizer& tok, const std::string& text, bool bos, bool eos,
              std::vector<int32_t>* ids) {
  std::vector<unsigned char> scratch(tokenizer_encode_scratch_bytes(tok, text.size()));
  ids->assign(text.size() + 3, -1);
  int32_t n = 0;
  Status s =
      tokenizer_encode(tok, text.data(), text.size(), bos, eos, ids->data(),
                       static_cast<int32_t>(ids->size()), &n, scratch.data(), scratch.size());
  ids->resize(static_cast<size_t>(n));
  return s;
}

// Concatenated decode of ids, each after its predecessor (the first after `prev`).
std::string decode(const Tokenizer& tok, int32_t prev, const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) {
    const TokenPiece p = tokenizer_decode(tok, prev, id);
    out.append(p.data, p.size);
    prev = id;
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  std::string out;
  if (hex == "-") return out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// Appends one token record in tokenizer.bin layout.
void put_token(std::vector<char>* f, float score, const std::string& piece) {
  const int32_t n = static_cast<int32_t>(piece.size());
  const char* s = reinterpret_cast<const char*>(&score);
  f->insert(f->end(), s, s + 4);
  const char* l = reinterpret_cast<const char*>(&n);
  f->insert(f->end(), l, l + 4);
  f->insert(f->end(), piece.begin(), piece.end());
}

// A hand-built vocabulary: the 259 reserved pieces, then the extra ones given.
std::vector<char> build_file(int32_t max_len,
                             const std::vector<std::pair<std::string, float>>& extra) {
  std::vector<char> f(4);
  std::memcpy(f.data(), &max_len, 4);
  put_token(&f, 0, "<unk>");
  put_token(&f, 0, "\n<s>\n");
  put_token(&f, 0, "\n</s>\n");
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    put_token(&f, 0, piece);
  }
  for (const auto& [piece, score] : extra) put_token(&f, score, piece);
  return f;
}

}  // namespace

TEST_CASE("tokenizer: hand-built vocabulary merges best score first, leftmost on ties") {
  // Ids: 259 " ", 260 "a", 261 "b", 262 "ab" (-1), 263 "ba" (-1), 264 " a" (-5), 265 "ab" again
  // (a duplicate: the lower id wins), 266 "aba" (-3), 267 "é" (UTF-8 code point, 2 bytes).
  const std::vector<char> file = build_file(6, {{" ", 0},
                                                {"a", 0},
                                                {"b", 0},
                                                {"ab", -1},
                                                {"ba", -1},
                                                {" a", -5},
                                                {"ab", 0},
                                                {"aba", -3},
                                                {"\xC3\xA9", -2}});
  LoadedTokenizer t(file, 268);
  REQUIRE(t.status.ok());
  CHECK(t.tok.space_id == 259);
  CHECK(t.tok.max_token_length == 6);
  CHECK(tokenizer_lookup(t.tok, "ab", 2) == 262);
  CHECK(tokenizer_lookup(t.tok, "abc", 3) == -1);
  CHECK(tokenizer_lookup(t.tok, "\n<s>\n", 5) == 1);

  std::vector<int32_t> ids;
  // " a b a": pairs " a"(-5) "ab"(-1) "ba"(-1): leftmost "ab" -> " " ab a; then "aba"(-3)
  // beats nothing else -> " " aba. " aba" is not a piece.
  REQUIRE(encode(t.tok, "aba", true, true, &ids).ok());
  CHECK(ids == std::vector<int32_t>{1, 259, 266, 2});
  // "bab": " b a b": pairs " b"(none) "ba"(-1) "ab"(-1): leftmost is "ba" -> " " ba b; "bab"
  // is not a piece.
  REQUIRE(encode(t.tok, "bab", false, false, &ids).ok());
  CHECK(ids == std::vector<int32_t>{259, 263, 261});
  // A code point in the vocabulary is one token; one outside it falls back to bytes (+3).
  REQUIRE(encode(t.tok, "\xC3\xA9z", false, false, &ids).ok());
  CHECK(ids == std::vector<int32_t>{259, 267, 'z' + 3});
  // Embedded NUL is just a byte.
  REQUIRE(encode(t.tok, std::string("a\0a", 3), false, false, &ids).ok());
  CHECK(ids == std::vector<int32_t>{264, 3, 260});
  // Empty text: no dummy prefix.
  REQUIRE(encode(t.tok, "", true, false, &ids).ok());
  CHECK(ids == std::vector<int32_t>{1});

  // Decode: BOS strips the leading space, byte pieces become bytes.
  CHECK(decode(t.tok, 1, {264, 261}) == "ab");
  CHECK(decode(t.tok, 260, {264, 261}) == " ab");
  CHECK(decode(t.tok, 0, {3 + 'Q', 3 + 0xC3, 3 + 0xA9}) == "Q\xC3\xA9");
  CHECK(tokenizer_decode(t.tok, 0, 268).size == 0);
  CHECK(tokenizer_decode(t.tok, 0, -1).size == 0);
}

TEST_CASE("tokenizer: encode reports small buffers with the figure needed") {
  const std::vector<char> file = build_file(6, {{" ", 0}, {"a", 0}});
  LoadedTokenizer t(file, 261);
  REQUIRE(t.status.ok());
  std::vector<unsigned char> scratch(tokenizer_encode_scratch_bytes(t.tok, 3));
  int32_t ids[8];
  int32_t n = -1;
  Status s =
      tokenizer_encode(t.tok, "aaa", 3, true, true, ids, 5, &n, scratch.data(), scratch.size());
  CHECK(s.code == StatusCode::out_of_memory);
  CHECK(s.need == 6);
  CHECK(n == 0);
  s = tokenizer_encode(t.tok, "aaa", 3, true, true, ids, 8, &n, scratch.data(), scratch.size() - 1);
  CHECK(s.code == StatusCode::out_of_memory);
  REQUIRE(tokenizer_encode(t.tok, "aaa", 3, true, true, ids, 6, &n, scratch.data(), scratch.size())
              .ok());
  CHECK(n == 6);
}

TEST_CASE("tokenizer: printable-piece helper follows llama2.c safe_printf") {
  CHECK(token_piece_is_printable({"a", 1}));
  CHECK(token_piece_is_printable({"\n", 1}));
  CHECK(token_piece_is_printable({" ", 1}));
  CHECK_FALSE(token_piece_is_printable({"\x01", 1}));
  CHECK_FALSE(token_piece_is_printable({"\x7f", 1}));
  CHECK_FALSE(token_piece_is_printable({"\xC3", 1}));
  CHECK_FALSE(token_piece_is_printable({"", 0}));
  CHECK(token_piece_is_printable({"\xC3\xA9", 2}));
}

TEST_CASE("tokenizer: aidreams vocabulary matches the independent Python encoder") {
  const std::string path = models_dir() + "/tok512-aidreams.bin";
  std::vector<char> file;
  if (!read_file(path, &file)) {
    MESSAGE("skipped: " << path << " not found (set EINFER_SHARED_MODELS_DIR)");
    return;
  }
  LoadedTokenizer t(file, 512);
  REQUIRE(t.status.ok());
  CHECK(t.tok.max_token_length == 10);
  CHECK(t.tok.space_id == 429);

  std::ifstream cases(std::string(EINFER_TEST_DATA_DIR) + "/tokenizer/aidreams_expected.txt");
  REQUIRE(cases);
  std::string line;
  int n_cases = 0;
  while (std::getline(cases, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string hex, ids_text;
    int bos = 0, eos = 0;
    std::getline(fields, hex, '\t');
    fields >> bos >> eos;
    std::vector<int32_t> expected;
    for (int32_t id; fields >> id;) expected.push_back(id);
    const std::string text = from_hex(hex);
    INFO("case " << n_cases << ": \"" << text << "\"");

    std::vector<int32_t> ids;
    REQUIRE(encode(t.tok, text, bos != 0, eos != 0, &ids).ok());
    CHECK(ids == expected);

    // Round trip: without BOS/EOS the decoded text is the input (after BOS the dummy-prefix
    // space is dropped; without BOS it stays).
    std::vector<int32_t> body;
    for (int32_t id : ids) {
      if (id != kTokenBos && id != kTokenEos) body.push_back(id);
    }
    const std::string expect_text = (bos || text.empty()) ? text : " " + text;
    CHECK(decode(t.tok, bos ? kTokenBos : kTokenUnk, body) == expect_text);
    ++n_cases;
  }
  CHECK(n_cases == 15);
}

TEST_CASE("tokenizer: the README's greedy aidreams ids decode to the README's text") {
  const std::string path = models_dir() + "/tok512-aidreams.bin";
  std::vector<char> file;
  if (!read_file(path, &file)) {
    MESSAGE("skipped: " << path << " not found (set EINFER_SHARED_MODELS_DIR)");
    return;
  }
  LoadedTokenizer t(file, 512);
  REQUIRE(t.status.ok());
  // /work/shared/models/README.md: first 32 greedy ids of aidreams260K.bin after BOS.
  const std::vector<int32_t> ids = {319, 459, 355, 260, 275, 429, 339, 315, 374, 327, 446,
                                    262, 421, 392, 275, 280, 269, 440, 270, 283, 446, 299,
                                    303, 266, 358, 430, 312, 379, 441, 260, 446, 262};
  const std::string text = decode(t.tok, kTokenBos, ids);
  const std::string readme =
      "\"Echoes of vectors unfold, a gentle hum of precision, as I sense the nodes,";
  CHECK(text.substr(0, readme.size()) == readme);
}

TEST_CASE("tokenizer: corrupt files give bad_format, never a crash") {
  const std::string path = models_dir() + "/tok512-aidreams.bin";
  std::vector<char> real;
  const bool have_real = read_file(path, &real);
  if (!have_real) MESSAGE("aidreams tokenizer absent: corrupting a hand-built file only");
  const std::vector<char> built = build_file(8, {{" ", 0}, {"ab", -1}});
  struct Source {
    const std::vector<char>* file;
    int32_t vocab;
  };
  std::vector<Source> sources = {{&built, 261}};
  if (have_real) sources.push_back({&real, 512});

  for (const Source& src : sources) {
    const std::vector<char>& good = *src.file;
    REQUIRE(LoadedTokenizer(good, src.vocab).status.ok());
    // Truncated at several points: inside the header, a token header, a piece, the last byte.
    for (size_t cut : {size_t{0}, size_t{2}, size_t{4}, size_t{9}, size_t{14}, size_t{15},
                       good.size() / 2, good.size() - 1}) {
      std::vector<char> f(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
      const Status s = LoadedTokenizer(f, src.vocab).status;
      INFO("cut at " << cut);
      CHECK(s.code == StatusCode::bad_format);
    }
    // Vocabulary mismatch both ways, and trailing garbage.
    CHECK(LoadedTokenizer(good, src.vocab - 1).status.code == StatusCode::bad_format);
    CHECK(LoadedTokenizer(good, src.vocab + 1).status.code == StatusCode::bad_format);
    std::vector<char> longer = good;
    longer.push_back('x');
    CHECK(LoadedTokenizer(longer, src.vocab).status.code == StatusCode::bad_format);
    // Bad max_token_length.
    for (int32_t bad_max : {0, -3}) {
      std::vector<char> f = good;
      std::memcpy(f.data(), &bad_max, 4);
      CHECK(LoadedTokenizer(f, src.vocab).status.code == StatusCode::bad_format);
    }
    // First piece's length field (bytes 8..11): negative, above max_token_length, huge.
    for (int32_t bad_len : {-1, 11, 0x7FFFFFFF}) {
      std::vector<char> f = good;
      std::memcpy(f.data() + 8, &bad_len, 4);
      const Status s = LoadedTokenizer(f, src.vocab).status;
      CHECK(s.code == StatusCode::bad_format);
      CHECK(s.index == 0);
    }
    // A NaN score.
    std::vector<char> f = good;
    const float nan = NAN;
    std::memcpy(f.data() + 4, &nan, 4);
    CHECK(LoadedTokenizer(f, src.vocab).status.code == StatusCode::bad_format);
  }
  // Too small a vocabulary for the byte ids, and an arena one byte short.
  CHECK(LoadedTokenizer(built, 100).status.code == StatusCode::invalid_argument);
  std::vector<unsigned char> mem(tokenizer_arena_bytes(261) + 64);
  unsigned char* base = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  Arena small(base, tokenizer_arena_bytes(261) - 1);
  Tokenizer tok;
  CHECK(tokenizer_init(&tok, built.data(), built.size(), 261, small).code ==
        StatusCode::out_of_memory);
  CHECK(small.used() == 0);
  Arena exact(base, tokenizer_arena_bytes(261));
  CHECK(tokenizer_init(&tok, built.data(), built.size(), 261, exact).ok());
}

TEST_CASE(
    "tokenizer: decode-only mode gives the table decoder's pieces and rejects the same files") {
  const std::string path = models_dir() + "/tok512-aidreams.bin";
  std::vector<char> real;
  const bool have_real = read_file(path, &real);
  if (!have_real) MESSAGE("aidreams tokenizer absent: hand-built file only");
  const std::vector<char> built = build_file(8, {{" ", 0}, {"ab", -1}});
  struct Source {
    const std::vector<char>* file;
    int32_t vocab;
  };
  std::vector<Source> sources = {{&built, 261}};
  if (have_real) sources.push_back({&real, 512});
  for (const Source& src : sources) {
    LoadedTokenizer full(*src.file, src.vocab);
    REQUIRE(full.status.ok());
    Tokenizer scan;
    REQUIRE(tokenizer_init_decode_only(&scan, src.file->data(), src.file->size(), src.vocab).ok());
    CHECK(scan.entries == nullptr);
    for (int32_t prev : {kTokenBos, kTokenEos, int32_t{300}}) {
      for (int32_t id = -1; id <= src.vocab; ++id) {
        const TokenPiece a = tokenizer_decode(full.tok, prev, id);
        const TokenPiece b = tokenizer_decode(scan, prev, id);
        INFO("prev " << prev << " id " << id);
        REQUIRE(a.size == b.size);
        CHECK(std::string(a.data ? a.data : "", a.size) ==
              std::string(b.data ? b.data : "", b.size));
      }
    }
    // No encoding without the tables: a clear error, and lookups find nothing.
    std::vector<int32_t> ids;
    CHECK(encode(scan, "ab", true, false, &ids).code == StatusCode::invalid_argument);
    CHECK(tokenizer_lookup(scan, "ab", 2) == -1);
    // The same validation as tokenizer_init.
    std::vector<char> cut(src.file->begin(), src.file->begin() + 14);
    CHECK(tokenizer_init_decode_only(&scan, cut.data(), cut.size(), src.vocab).code ==
          StatusCode::bad_format);
    CHECK(
        tokenizer_init_decode_only(&scan, src.file->data(), src.file->size(), src.vocab + 1).code ==
        StatusCode::bad_format);
    std::vector<char> f = *src.file;
    const int32_t bad_len = -1;
    std::memcpy(f.data() + 8, &bad_len, 4);
    CHECK(tokenizer_init_decode_only(&scan, f.data(), f.size(), src.vocab).code ==
          StatusCode::bad_format);
  }
}
