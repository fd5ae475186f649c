// Tokenizer with llama2.c vocabularies: encode ids against an independent Python encoder
// (tests/gen/gen_tokenizer_vectors.py), decode round trips, the README's greedy ids decoding to the
// README's text, corrupt tokenizer.bin files refused by the importer, a hand-built vocabulary
// whose merges are worked out by hand (runs without the shared models, also on bare metal: the
// image is built here), exact arena and decode-only mode.
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

#include "models/tokenizer_text.h"
#if EINFER_HAS_PACK_LIB
#include "tools/einfer-pack/import_tokenizer.h"
#endif

using namespace einfer;

namespace {

[[maybe_unused]] std::string models_dir() {
  const char* env = std::getenv("EINFER_SHARED_MODELS_DIR");
  return env != nullptr && env[0] != '\0' ? std::string(env)
                                          : std::string(EINFER_SHARED_MODELS_DIR);
}

[[maybe_unused]] bool read_file(const std::string& path, std::vector<char>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

void put(std::vector<uint8_t>* b, size_t at, const void* v, size_t n) {
  std::memcpy(b->data() + at, v, n);
}

// A SentencePiece-BPE image with llama2.c's conventions, built here (no host packer needed):
// 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then the extra pieces with their scores.
std::vector<uint8_t> build_image(const std::vector<std::pair<std::string, float>>& extra,
                                 bool add_eos = false) {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  std::vector<uint8_t> types = {2, 3, 3};
  std::vector<float> scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    pieces.push_back(piece);
    types.push_back(6);
    scores.push_back(0);
  }
  for (const auto& [p, score] : extra) {
    pieces.push_back(p);
    types.push_back(1);
    scores.push_back(score);
  }
  std::string blob;
  std::vector<uint32_t> offsets = {0};
  uint32_t max_len = 0;
  for (const std::string& p : pieces) {
    blob += p;
    offsets.push_back(static_cast<uint32_t>(blob.size()));
    if (p.size() > max_len) max_len = static_cast<uint32_t>(p.size());
  }
  const uint32_t n = static_cast<uint32_t>(pieces.size());
  const TokenizerLayout l = tokenizer_layout(TokenizerAlgorithm::sentencepiece_bpe, n, 0,
                                             static_cast<uint32_t>(blob.size()));
  std::vector<uint8_t> out(l.total, 0);
  TokenizerHeader h{};
  h.magic = kTokenizerMagic;
  h.version = kTokenizerVersion;
  h.algorithm = static_cast<uint32_t>(TokenizerAlgorithm::sentencepiece_bpe);
  h.flags = kTokFlagAddBos | kTokFlagDummyPrefix | kTokFlagByteFallback | kTokFlagSpaceEscape |
            (add_eos ? kTokFlagAddEos : 0);
  h.n_tokens = n;
  h.pieces_bytes = static_cast<uint32_t>(blob.size());
  h.max_piece_bytes = max_len;
  h.bos_id = 1, h.eos_id = 2, h.unk_id = 0, h.pad_id = -1;
  h.n_eog = 1;
  h.eog_ids[0] = 2;
  put(&out, 0, &h, sizeof h);
  put(&out, l.offsets_at, offsets.data(), offsets.size() * 4);
  put(&out, l.scores_at, scores.data(), n * 4);
  put(&out, l.types_at, types.data(), n);
  put(&out, l.pieces_at, blob.data(), blob.size());
  return out;
}

// Owns the arena memory of one tokenizer, sized exactly.
struct LoadedTokenizer {
  std::vector<uint8_t> image;
  std::vector<unsigned char> arena_memory;
  TextTokenizer tok;
  Status status;
  size_t arena_bytes = 0;
  explicit LoadedTokenizer(std::vector<uint8_t> img, bool decode_only = false)
      : image(std::move(img)) {
    PackedTokenizer p;
    status = tokenizer_parse(image.data(), image.size(), &p);
    if (!status.ok()) return;
    arena_bytes = decode_only ? 0 : text_tokenizer_arena_bytes(p);
    arena_memory.assign(arena_bytes + kDefaultAlignment, 0);
    const uintptr_t base = reinterpret_cast<uintptr_t>(arena_memory.data());
    const size_t skip = (kDefaultAlignment - base % kDefaultAlignment) % kDefaultAlignment;
    Arena arena(arena_memory.data() + skip, arena_bytes);
    status = text_tokenizer_init(&tok, image.data(), image.size(), decode_only, arena);
    if (status.ok()) CHECK(arena.used() == arena_bytes);
  }
};

Status encode(const TextTokenizer& tok, const std::string& text, bool special,
              std::vector<int32_t>* ids) {
  std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(tok.packed, text.size()));
  ids->assign(text.size() + 3, -1);
  int32_t n = 0;
  Status s =
      text_tokenizer_encode(tok, text.data(), text.size(), special, ids->data(),
                            static_cast<int32_t>(ids->size()), &n, scratch.data(), scratch.size());
  ids->resize(static_cast<size_t>(n));
  return s;
}

// Concatenated decode of ids, each after its predecessor (the first after `prev`).
std::string decode(const TextTokenizer& tok, int32_t prev, const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) {
    const TextPiece p = text_tokenizer_decode(tok, prev, id, false);
    out.append(p.data, p.size);
    prev = id;
  }
  return out;
}

[[maybe_unused]] std::string from_hex(const std::string& hex) {
  std::string out;
  if (hex == "-") return out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

#if EINFER_HAS_PACK_LIB
// A tokenizer.bin through the host importer, as einfer-pack -z packs it.
std::vector<uint8_t> import_bin(const std::vector<char>& file, int32_t vocab) {
  return pack::tokenizer_image_for_model(
      pack::read_tokenizer_bytes(std::vector<uint8_t>(file.begin(), file.end()), "tokenizer.bin"),
      vocab);
}
#endif

}  // namespace

TEST_CASE("tokenizer: hand-built vocabulary merges best score first, leftmost on ties") {
  // Ids: 259 " ", 260 "a", 261 "b", 262 "ab" (-1), 263 "ba" (-1), 264 " a" (-5), 265 "ab" again
  // (a duplicate: the lower id wins), 266 "aba" (-3), 267 "é" (UTF-8 code point, 2 bytes).
  const std::vector<std::pair<std::string, float>> extra = {
      {" ", 0},   {"a", 0},  {"b", 0},    {"ab", -1},      {"ba", -1},
      {" a", -5}, {"ab", 0}, {"aba", -3}, {"\xC3\xA9", -2}};
  LoadedTokenizer t(build_image(extra));
  REQUIRE(t.status.ok());
  CHECK(t.tok.packed.header.max_piece_bytes == 6);
  CHECK(text_tokenizer_lookup(t.tok, "ab", 2) == 262);
  CHECK(text_tokenizer_lookup(t.tok, "abc", 3) == -1);
  CHECK(text_tokenizer_lookup(t.tok, "<s>", 3) == 1);

  std::vector<int32_t> ids;
  // " a b a": pairs " a"(-5) "ab"(-1) "ba"(-1): leftmost "ab" -> " " ab a; then "aba"(-3)
  // beats nothing else -> " " aba. " aba" is not a piece.
  REQUIRE(encode(t.tok, "aba", true, &ids).ok());
  CHECK(ids == std::vector<int32_t>{1, 259, 266});
  LoadedTokenizer with_eos(build_image(extra, true));
  REQUIRE(encode(with_eos.tok, "aba", true, &ids).ok());
  CHECK(ids == std::vector<int32_t>{1, 259, 266, 2});
  // "bab": " b a b": pairs " b"(none) "ba"(-1) "ab"(-1): leftmost is "ba" -> " " ba b; "bab"
  // is not a piece.
  REQUIRE(encode(t.tok, "bab", false, &ids).ok());
  CHECK(ids == std::vector<int32_t>{259, 263, 261});
  // A code point in the vocabulary is one token; one outside it falls back to bytes (+3).
  REQUIRE(encode(t.tok, "\xC3\xA9z", false, &ids).ok());
  CHECK(ids == std::vector<int32_t>{259, 267, 'z' + 3});
  // Embedded NUL is just a byte.
  REQUIRE(encode(t.tok, std::string("a\0a", 3), false, &ids).ok());
  CHECK(ids == std::vector<int32_t>{264, 3, 260});
  // Empty text: no dummy prefix.
  REQUIRE(encode(t.tok, "", true, &ids).ok());
  CHECK(ids == std::vector<int32_t>{1});

  // Decode: BOS strips the leading space, byte pieces become bytes.
  CHECK(decode(t.tok, 1, {264, 261}) == "ab");
  CHECK(decode(t.tok, 260, {264, 261}) == " ab");
  CHECK(decode(t.tok, 0, {3 + 'Q', 3 + 0xC3, 3 + 0xA9}) == "Q\xC3\xA9");
  CHECK(text_tokenizer_decode(t.tok, 0, 268, true).size == 0);
  CHECK(text_tokenizer_decode(t.tok, 0, -1, true).size == 0);
}

TEST_CASE("tokenizer: encode reports small buffers with the figure needed") {
  LoadedTokenizer t(build_image({{" ", 0}, {"a", 0}}, true));
  REQUIRE(t.status.ok());
  std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(t.tok.packed, 3));
  int32_t ids[8];
  int32_t n = -1;
  Status s =
      text_tokenizer_encode(t.tok, "aaa", 3, true, ids, 5, &n, scratch.data(), scratch.size());
  CHECK(s.code == StatusCode::out_of_memory);
  CHECK(s.need == 6);
  CHECK(n == 0);
  s = text_tokenizer_encode(t.tok, "aaa", 3, true, ids, 8, &n, scratch.data(), scratch.size() - 1);
  CHECK(s.code == StatusCode::out_of_memory);
  REQUIRE(text_tokenizer_encode(t.tok, "aaa", 3, true, ids, 6, &n, scratch.data(), scratch.size())
              .ok());
  CHECK(n == 6);
}

TEST_CASE("tokenizer: printable-piece helper follows llama2.c safe_printf") {
  CHECK(text_piece_is_printable({"a", 1}));
  CHECK(text_piece_is_printable({"\n", 1}));
  CHECK(text_piece_is_printable({" ", 1}));
  CHECK_FALSE(text_piece_is_printable({"\x01", 1}));
  CHECK_FALSE(text_piece_is_printable({"\x7f", 1}));
  CHECK_FALSE(text_piece_is_printable({"\xC3", 1}));
  CHECK_FALSE(text_piece_is_printable({"", 0}));
  CHECK(text_piece_is_printable({"\xC3\xA9", 2}));
}

#if EINFER_HAS_PACK_LIB
TEST_CASE("tokenizer: aidreams vocabulary matches the independent Python encoder") {
  const std::string path = models_dir() + "/tok512-aidreams.bin";
  std::vector<char> file;
  if (!read_file(path, &file)) {
    MESSAGE("skipped: " << path << " not found (set EINFER_SHARED_MODELS_DIR)");
    return;
  }
  LoadedTokenizer t(import_bin(file, 512));
  REQUIRE(t.status.ok());
  CHECK(t.tok.packed.header.max_piece_bytes == 10);
  CHECK(text_tokenizer_lookup(t.tok, " ", 1) == 429);

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
    REQUIRE(encode(t.tok, text, bos != 0, &ids).ok());
    if (eos) ids.push_back(2);  // llama2.c's encode appends EOS on request
    CHECK(ids == expected);

    // Round trip: without BOS/EOS the decoded text is the input (after BOS the dummy-prefix
    // space is dropped; without BOS it stays).
    std::vector<int32_t> body;
    for (int32_t id : ids) {
      if (id != 1 && id != 2) body.push_back(id);
    }
    const std::string expect_text = (bos || text.empty()) ? text : " " + text;
    CHECK(decode(t.tok, bos ? 1 : 0, body) == expect_text);
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
  LoadedTokenizer t(import_bin(file, 512));
  REQUIRE(t.status.ok());
  // /work/shared/models/README.md: first 32 greedy ids of aidreams260K.bin after BOS.
  const std::vector<int32_t> ids = {319, 459, 355, 260, 275, 429, 339, 315, 374, 327, 446,
                                    262, 421, 392, 275, 280, 269, 440, 270, 283, 446, 299,
                                    303, 266, 358, 430, 312, 379, 441, 260, 446, 262};
  const std::string text = decode(t.tok, 1, ids);
  const std::string readme =
      "\"Echoes of vectors unfold, a gentle hum of precision, as I sense the nodes,";
  CHECK(text.substr(0, readme.size()) == readme);
}

// A hand-built tokenizer.bin: the 259 reserved pieces, then the extra ones given.
std::vector<char> build_bin(int32_t max_len,
                            const std::vector<std::pair<std::string, float>>& extra) {
  std::vector<char> f(4);
  std::memcpy(f.data(), &max_len, 4);
  auto put_token = [&f](float score, const std::string& piece) {
    const int32_t n = static_cast<int32_t>(piece.size());
    const char* s = reinterpret_cast<const char*>(&score);
    f.insert(f.end(), s, s + 4);
    const char* l = reinterpret_cast<const char*>(&n);
    f.insert(f.end(), l, l + 4);
    f.insert(f.end(), piece.begin(), piece.end());
  };
  put_token(0, "<unk>");
  put_token(0, "\n<s>\n");
  put_token(0, "\n</s>\n");
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    std::snprintf(piece, sizeof piece, "<0x%02X>", b);
    put_token(0, piece);
  }
  for (const auto& [piece, score] : extra) put_token(score, piece);
  return f;
}

bool refused(const std::vector<char>& file, int32_t vocab) {
  try {
    import_bin(file, vocab);
  } catch (const std::exception& e) {
    CHECK(std::strlen(e.what()) > 10);
    return true;
  }
  return false;
}

TEST_CASE("tokenizer: llama2.c's first tokenizer.bin layout (lengths and bytes, no scores)") {
  // The same vocabulary without the max_token_length header and the scores: earlier ids are
  // earlier merges, so score -id gives the same merges as scores decreasing with the id.
  const std::vector<std::pair<std::string, float>> extra = {
      {" ", -259}, {"a", -260}, {"b", -261}, {"ab", -262}, {" ab", -263}, {"ba", -264}};
  const std::vector<char> scored = build_bin(8, extra);
  std::vector<char> first;
  size_t at = 4;
  while (at < scored.size()) {
    int32_t len;
    std::memcpy(&len, scored.data() + at + 4, 4);
    first.insert(first.end(), scored.begin() + static_cast<std::ptrdiff_t>(at + 4),
                 scored.begin() + static_cast<std::ptrdiff_t>(at + 8 + static_cast<size_t>(len)));
    at += 8 + static_cast<size_t>(len);
  }
  LoadedTokenizer a(import_bin(scored, 265)), b(import_bin(first, 265));
  REQUIRE(a.status.ok());
  REQUIRE(b.status.ok());
  std::vector<int32_t> ia, ib;
  for (const char* text : {"ab", "bab", "abba ab", "b a"}) {
    REQUIRE(encode(a.tok, text, true, &ia).ok());
    REQUIRE(encode(b.tok, text, true, &ib).ok());
    CHECK(ia == ib);
  }
  REQUIRE(encode(b.tok, "ab", true, &ib).ok());
  CHECK(ib == std::vector<int32_t>{1, 263});
}

TEST_CASE("tokenizer: corrupt tokenizer.bin files are refused by the importer, never packed") {
  const std::string path = models_dir() + "/tok512-aidreams.bin";
  std::vector<char> real;
  const bool have_real = read_file(path, &real);
  if (!have_real) MESSAGE("aidreams tokenizer absent: corrupting a hand-built file only");
  const std::vector<char> built = build_bin(8, {{" ", 0}, {"ab", -1}});
  struct Source {
    const std::vector<char>* file;
    int32_t vocab;
  };
  std::vector<Source> sources = {{&built, 261}};
  if (have_real) sources.push_back({&real, 512});

  for (const Source& src : sources) {
    const std::vector<char>& good = *src.file;
    REQUIRE_FALSE(refused(good, src.vocab));
    // Truncated at several points: inside the header, a token header, a piece, the last byte.
    for (size_t cut : {size_t{0}, size_t{2}, size_t{4}, size_t{9}, size_t{14}, size_t{15},
                       good.size() / 2, good.size() - 1}) {
      std::vector<char> f(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
      INFO("cut at " << cut);
      CHECK(refused(f, src.vocab));
    }
    // More tokens than the model's embedding rows; fewer is fine (padded embeddings).
    CHECK(refused(good, src.vocab - 1));
    CHECK_FALSE(refused(good, src.vocab + 1));
    std::vector<char> longer = good;
    longer.push_back('x');
    CHECK(refused(longer, src.vocab));
    // Bad max_token_length.
    for (int32_t bad_max : {0, -3}) {
      std::vector<char> f = good;
      std::memcpy(f.data(), &bad_max, 4);
      CHECK(refused(f, src.vocab));
    }
    // First piece's length field (bytes 8..11): negative, above max_token_length, huge.
    for (int32_t bad_len : {-1, 11, 0x7FFFFFFF}) {
      std::vector<char> f = good;
      std::memcpy(f.data() + 8, &bad_len, 4);
      CHECK(refused(f, src.vocab));
    }
    // A NaN score.
    std::vector<char> f = good;
    const float nan = NAN;
    std::memcpy(f.data() + 4, &nan, 4);
    CHECK(refused(f, src.vocab));
  }
}
#endif  // EINFER_HAS_PACK_LIB

TEST_CASE("tokenizer: an arena one byte short is refused and rewound; exact is enough") {
  const std::vector<uint8_t> image = build_image({{" ", 0}, {"ab", -1}});
  PackedTokenizer p;
  REQUIRE(tokenizer_parse(image.data(), image.size(), &p).ok());
  const size_t need = text_tokenizer_arena_bytes(p);
  std::vector<unsigned char> mem(need + 64);
  unsigned char* base = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  Arena small(base, need - 1);
  TextTokenizer tok;
  CHECK(text_tokenizer_init(&tok, image.data(), image.size(), false, small).code ==
        StatusCode::out_of_memory);
  CHECK(small.used() == 0);
  Arena exact(base, need);
  CHECK(text_tokenizer_init(&tok, image.data(), image.size(), false, exact).ok());
  CHECK(exact.used() == need);
}

TEST_CASE(
    "tokenizer: decode-only mode gives the table decoder's pieces and rejects the same images") {
  std::vector<std::vector<uint8_t>> images = {build_image({{" ", 0}, {"ab", -1}})};
#if EINFER_HAS_PACK_LIB
  std::vector<char> real;
  if (read_file(models_dir() + "/tok512-aidreams.bin", &real))
    images.push_back(import_bin(real, 512));
  else
    MESSAGE("aidreams tokenizer absent: hand-built image only");
#endif
  for (const std::vector<uint8_t>& image : images) {
    LoadedTokenizer full(image);
    REQUIRE(full.status.ok());
    LoadedTokenizer scan(image, true);
    REQUIRE(scan.status.ok());
    CHECK(scan.arena_bytes == 0);
    const int32_t vocab = text_tokenizer_vocab(full.tok);
    for (int32_t prev : {int32_t{1}, int32_t{2}, int32_t{300}}) {
      for (int32_t id = -1; id <= vocab; ++id) {
        for (bool special : {false, true}) {
          const TextPiece a = text_tokenizer_decode(full.tok, prev, id, special);
          const TextPiece b = text_tokenizer_decode(scan.tok, prev, id, special);
          INFO("prev " << prev << " id " << id);
          REQUIRE(a.size == b.size);
          CHECK(std::string(a.data ? a.data : "", a.size) ==
                std::string(b.data ? b.data : "", b.size));
        }
      }
    }
    // No encoding without the tables: a clear error, and lookups find nothing.
    std::vector<int32_t> ids;
    CHECK(encode(scan.tok, "ab", true, &ids).code == StatusCode::invalid_argument);
    CHECK(text_tokenizer_lookup(scan.tok, "ab", 2) == -1);
    // The same validation as the full init.
    std::vector<uint8_t> cut(image.begin(), image.begin() + 140);
    CHECK(LoadedTokenizer(cut, true).status.code == StatusCode::bad_format);
    std::vector<uint8_t> f = image;
    const uint32_t bad_offset = 0xFFFFFF;
    std::memcpy(f.data() + kTokenizerHeaderBytes + 8, &bad_offset, 4);
    CHECK(LoadedTokenizer(f, true).status.code == StatusCode::bad_format);
  }
}
