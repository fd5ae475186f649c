// Helpers of the tokenizer reference tests: a packed image set up in an arena of exactly its
// reported size, encode/decode through std types, and the corpus comparison against the ids a
// reference library produced (tests/data/tokenizer/*.ids: "R|ids" per corpus line).
#pragma once

#include <doctest/doctest.h>

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
#include "tools/einfer-pack/import_tokenizer.h"

namespace einfer::tokenizer_test {

inline std::string shared_dir() {
  const char* env = std::getenv("EINFER_SHARED_MODELS_DIR");
  return (env != nullptr && env[0] != '\0' ? std::string(env)
                                           : std::string(EINFER_SHARED_MODELS_DIR)) +
         "/..";
}

inline bool exists(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return static_cast<bool>(f);
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

inline std::string hex(const std::string& s) {
  std::string out;
  char b[4];
  for (unsigned char c : s) {
    std::snprintf(b, sizeof b, "%02x", c);
    out += b;
  }
  return out;
}

inline std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  std::istringstream in(s);
  int32_t v;
  while (in >> v) ids.push_back(v);
  return ids;
}

inline std::string join(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) {
    if (!s.empty()) s.push_back(' ');
    s.append(std::to_string(id));
  }
  return s;
}

// A packed image with its tokenizer, built in an arena of exactly the reported size.
struct Loaded {
  std::vector<uint8_t> image;
  std::vector<unsigned char> arena_memory;
  TextTokenizer tok;
  size_t arena_bytes = 0;
  size_t arena_used = 0;
};

inline void load(const pack::TokenizerSpec& spec, Loaded* out) {
  out->image = pack::write_tokenizer_image(spec);
  PackedTokenizer packed;
  REQUIRE(tokenizer_parse(out->image.data(), out->image.size(), &packed).ok());
  out->arena_bytes = text_tokenizer_arena_bytes(packed);
  out->arena_memory.assign(out->arena_bytes + kDefaultAlignment, 0);
  const uintptr_t base = reinterpret_cast<uintptr_t>(out->arena_memory.data());
  const size_t skip = (kDefaultAlignment - base % kDefaultAlignment) % kDefaultAlignment;
  Arena arena(out->arena_memory.data() + skip, out->arena_bytes);
  const Status s =
      text_tokenizer_init(&out->tok, out->image.data(), out->image.size(), false, arena);
  REQUIRE_MESSAGE(s.ok(), s.message);
  out->arena_used = arena.used();
}

inline std::vector<int32_t> encode(const TextTokenizer& tok, const std::string& text,
                                   bool special) {
  std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(tok.packed, text.size()));
  std::vector<int32_t> ids(text_tokenizer_max_ids(tok.packed, text.size()));
  int32_t n = 0;
  const Status s =
      text_tokenizer_encode(tok, text.data(), text.size(), special, ids.data(),
                            static_cast<int32_t>(ids.size()), &n, scratch.data(), scratch.size());
  REQUIRE_MESSAGE(s.ok(), s.message);
  ids.resize(static_cast<size_t>(n));
  return ids;
}

inline std::string decode(const TextTokenizer& tok, const std::vector<int32_t>& ids, bool special) {
  std::string out;
  int32_t prev = -1;
  for (int32_t id : ids) {
    const TextPiece p = text_tokenizer_decode(tok, prev, id, special);
    out.append(p.data, p.size);
    prev = id;
  }
  return out;
}

struct CorpusResult {
  int compared = 0, mismatches = 0, round_trips = 0, round_trip_failures = 0;
};

// Every corpus line against the reference's ids (ids_file under tests/data/tokenizer/); lines
// the reference decodes back to the input must decode so with einfer too. `quiet`: no messages
// (negative controls, which expect mismatches).
inline CorpusResult compare_corpus(const TextTokenizer& tok, const std::string& ids_file,
                                   bool quiet = false) {
  std::istringstream corpus(slurp(EINFER_TEST_DATA_DIR "/tokenizer/corpus.txt"));
  std::istringstream expected(slurp(EINFER_TEST_DATA_DIR "/tokenizer/" + ids_file));
  std::string c, e;
  CorpusResult r;
  while (std::getline(corpus, c) && std::getline(expected, e)) {
    if (e == "-") continue;  // invalid UTF-8: the reference cannot take it
    const std::string text = unhex(c[0] == '!' ? c.substr(1) : c);
    const std::vector<int32_t> want = parse_ids(e.substr(2));
    const std::vector<int32_t> got = encode(tok, text, false);
    ++r.compared;
    if (got != want) {
      if (++r.mismatches <= 8 && !quiet)
        MESSAGE(ids_file << ": text hex " << hex(text) << "\n  want " << join(want) << "\n  got  "
                         << join(got));
    } else if (e[0] == '1') {
      ++r.round_trips;
      r.round_trip_failures += decode(tok, got, true) != text;
    }
  }
  return r;
}

// The same as checks: no mismatch, the whole corpus compared, at least `min_round_trips` lines
// decoded back exactly. Returns the number compared.
inline int check_corpus(const TextTokenizer& tok, const std::string& ids_file,
                        int min_round_trips = 300) {
  const CorpusResult r = compare_corpus(tok, ids_file);
  CHECK(r.mismatches == 0);
  CHECK(r.compared > 400);
  CHECK(r.round_trip_failures == 0);
  CHECK(r.round_trips >= min_round_trips);
  return r.compared;
}

// The special-token encodings of the first corpus lines (<name>.hf.special) match.
inline void check_special(const TextTokenizer& tok, const std::string& file) {
  std::istringstream corpus(slurp(EINFER_TEST_DATA_DIR "/tokenizer/corpus.txt"));
  std::istringstream expected(slurp(EINFER_TEST_DATA_DIR "/tokenizer/" + file));
  std::string c, e;
  int n = 0;
  while (std::getline(expected, e) && std::getline(corpus, c)) {
    const std::string text = unhex(c[0] == '!' ? c.substr(1) : c);
    CAPTURE(hex(text));
    CHECK(encode(tok, text, true) == parse_ids(e));
    ++n;
  }
  CHECK(n == 40);
}

}  // namespace einfer::tokenizer_test

#define SKIP_UNLESS(path)                           \
  if (!einfer::tokenizer_test::exists(path)) {      \
    MESSAGE("skipped: " << (path) << " not found"); \
    return;                                         \
  }
