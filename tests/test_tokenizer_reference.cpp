// TextTokenizer against the reference libraries, id for id: the strings of
// tests/data/tokenizer/corpus.txt encoded by sentencepiece
// (tests/gen/gen_tokenizer_sentencepiece.py) and Hugging Face tokenizers
// (tests/gen/gen_tokenizer_hf.js), for every shared tokenizer file and every route that carries it
// (.model, tokenizer.bin, tokenizer.json, GGUF); llama.cpp's own conformance strings
// (../shared/tokenizers/llamacpp-vocab-tests); round trips; exact arena bytes. Skips with a message
// when ../shared is absent.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "models/tokenizer_text.h"

#if EINFER_HAS_PACK_LIB
#include "tests/tokenizer_test_util.h"
#include "tools/einfer-pack/import_tokenizer.h"

using namespace einfer;

namespace {

using namespace einfer::tokenizer_test;

// llama.cpp's conformance strings and the ids llama.cpp produced (no BOS).
void check_llamacpp(const TextTokenizer& tok, const std::string& vocab) {
  const std::string dir = shared_dir() + "/tokenizers/llamacpp-vocab-tests/ggml-vocab-" + vocab;
  const std::string inp = slurp(dir + ".gguf.inp");
  std::istringstream out(slurp(dir + ".gguf.out"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  size_t at = 0;
  int n = 0, mismatches = 0;
  std::string line;
  while (at < inp.size()) {
    const size_t end = inp.find(sep, at);
    if (end == std::string::npos) break;
    const std::string text = inp.substr(at, end - at);
    at = end + sep.size();
    REQUIRE(std::getline(out, line));
    const std::vector<int32_t> got = encode(tok, text, false);
    ++n;
    if (got != parse_ids(line) && ++mismatches <= 5)
      MESSAGE(vocab << ": text hex " << hex(text) << "\n  want" << line << "\n  got  "
                    << join(got));
  }
  CHECK(mismatches == 0);
  CHECK(n > 30);
}

}  // namespace

TEST_CASE("tokenizer reference: Llama 2 SentencePiece through .model, .bin, GGUF and .json") {
  const std::string d = shared_dir() + "/tokenizers/llama2/";
  SKIP_UNLESS(d + "tokenizer.model");
  SUBCASE("tokenizer.model vs sentencepiece") {
    Loaded l;
    load(pack::read_tokenizer_file(d + "tokenizer.model"), &l);
    CHECK(l.arena_used == l.arena_bytes);
    check_corpus(l.tok, "llama2.spm.ids");
    check_llamacpp(l.tok, "llama-spm");
    CHECK(encode(l.tok, "Hello", true) == std::vector<int32_t>{1, 15043});
    CHECK(text_tokenizer_is_eog(l.tok, 2));
    CHECK_FALSE(text_tokenizer_is_eog(l.tok, 1));
  }
  SUBCASE("llama2.c tokenizer.bin vs sentencepiece") {
    Loaded l;
    load(pack::read_tokenizer_file(d + "tokenizer.bin"), &l);
    check_corpus(l.tok, "llama2.spm.ids");
  }
  SUBCASE("GGUF vocabulary (llama2-tiny-random-f16.gguf) vs sentencepiece") {
    const std::string g = shared_dir() + "/models/llama2-tiny-random-f16.gguf";
    SKIP_UNLESS(g);
    Loaded l;
    load(pack::read_tokenizer_file(g), &l);
    check_corpus(l.tok, "llama2.spm.ids");
  }
  SUBCASE("tokenizer.json vs Hugging Face tokenizers") {
    Loaded l;
    load(pack::read_tokenizer_file(d + "tokenizer.json"), &l);
    CHECK(l.arena_used == l.arena_bytes);
    check_corpus(l.tok, "llama2.hf.ids");
    check_special(l.tok, "llama2.hf.special");
  }
}

TEST_CASE("tokenizer reference: byte-level BPE (GPT-2, SmolLM, Llama 3) vs Hugging Face") {
  const std::string d = shared_dir() + "/tokenizers/";
  SKIP_UNLESS(d + "gpt2/tokenizer.json");
  SUBCASE("gpt2") {
    Loaded l;
    load(pack::read_tokenizer_file(d + "gpt2/tokenizer.json"), &l);
    CHECK(l.arena_used == l.arena_bytes);
    check_corpus(l.tok, "gpt2.hf.ids");
    check_special(l.tok, "gpt2.hf.special");
    check_llamacpp(l.tok, "gpt-2");
    CHECK(text_tokenizer_is_eog(l.tok, 50256));
  }
  SUBCASE("smollm") {
    Loaded l;
    load(pack::read_tokenizer_file(d + "smollm-135m/tokenizer.json"), &l);
    check_corpus(l.tok, "smollm-135m.hf.ids");
    check_special(l.tok, "smollm-135m.hf.special");
    CHECK(text_tokenizer_is_eog(l.tok, 0));  // <|endoftext|>
    CHECK(text_tokenizer_is_eog(l.tok, 2));  // <|im_end|>
  }
  SUBCASE("llama3") {
    Loaded l;
    load(pack::read_tokenizer_file(d + "llama3/tokenizer.json"), &l);
    CHECK(l.arena_used == l.arena_bytes);
    check_corpus(l.tok, "llama3.hf.ids");
    check_special(l.tok, "llama3.hf.special");
    check_llamacpp(l.tok, "llama-bpe");
    CHECK(text_tokenizer_bos(l.tok) == 128000);
    CHECK(encode(l.tok, "Hi", true).front() == 128000);
    CHECK(text_tokenizer_is_eog(l.tok, 128001));  // <|end_of_text|>
    CHECK(text_tokenizer_is_eog(l.tok, 128009));  // <|eot_id|>
    CHECK_FALSE(text_tokenizer_is_eog(l.tok, 128000));
    // Special tokens are hidden when printing unless asked.
    const std::vector<int32_t> ids = encode(l.tok, "a<|eot_id|>b", false);
    CHECK(decode(l.tok, ids, false) == "ab");
    CHECK(decode(l.tok, ids, true) == "a<|eot_id|>b");
  }
}

#endif  // EINFER_HAS_PACK_LIB

#if EINFER_HAS_PACK_LIB
TEST_CASE("tokenizer reference: stories260K.gguf carries tok512.bin's vocabulary") {
  const std::string d = shared_dir() + "/models/tinystories260K/";
  SKIP_UNLESS(d + "stories260K.gguf");
  Loaded gguf, bin;
  load(pack::read_tokenizer_file(d + "stories260K.gguf"), &gguf);
  load(pack::read_tokenizer_file(d + "tok512.bin"), &bin);
  REQUIRE(text_tokenizer_vocab(gguf.tok) == 512);
  REQUIRE(text_tokenizer_vocab(bin.tok) == 512);
  CHECK(text_tokenizer_bos(gguf.tok) == 1);
  CHECK(text_tokenizer_is_eog(gguf.tok, 2));
  // Every id decodes to the same bytes, first after BOS and in running text (control tokens are
  // hidden: llama2.c's export spells them "\n<s>\n", the GGUF "<s>").
  for (int32_t id = 0; id < 512; ++id) {
    for (int32_t prev : {int32_t{1}, int32_t{300}}) {
      const TextPiece a = text_tokenizer_decode(gguf.tok, prev, id, false);
      const TextPiece b = text_tokenizer_decode(bin.tok, prev, id, false);
      CHECK(std::string(a.data, a.size) == std::string(b.data, b.size));
    }
  }
  // And every corpus string encodes to the same ids (same scores, same rules).
  std::istringstream corpus(slurp(EINFER_TEST_DATA_DIR "/tokenizer/corpus.txt"));
  std::string c;
  int n = 0;
  while (std::getline(corpus, c)) {
    const std::string text = unhex(c[0] == '!' ? c.substr(1) : c);
    CHECK(encode(gguf.tok, text, true) == encode(bin.tok, text, true));
    ++n;
  }
  CHECK(n > 400);
  // The README's greedy start: "Once upon a time" is 4 tok512 words after BOS.
  const std::vector<int32_t> ids = encode(gguf.tok, "Once upon a time", true);
  CHECK(ids.front() == 1);
  CHECK(decode(gguf.tok, ids, false) == "Once upon a time");
}
#endif

#if EINFER_HAS_PACK_LIB
namespace {

// GPT-2's bytes_to_unicode, forward: raw bytes -> the byte-level spelling GGUF files store.
std::string byte_level_encode(const std::string& raw) {
  std::string out;
  for (unsigned char b : raw) {
    int k = 0, cp = -1;
    for (int x = 0; x < 256 && cp < 0; ++x) {
      const bool keep = (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE;
      if (x == b) cp = keep ? x : 0x100 + k;
      if (!keep) ++k;
    }
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

// A GGUF v3 file holding only llama.cpp's tokenizer keys for a "gpt2" vocabulary, written from a
// tokenizer.json's spec the way llama.cpp's converter lays them out.
std::vector<uint8_t> gguf_gpt2_vocab(const pack::TokenizerSpec& s, const char* pre) {
  std::vector<uint8_t> b;
  auto raw = [&b](const void* p, size_t n) {
    const size_t at = b.size();
    b.resize(at + n);
    std::memcpy(b.data() + at, p, n);
  };
  auto u32 = [&](uint32_t v) { raw(&v, 4); };
  auto u64 = [&](uint64_t v) { raw(&v, 8); };
  auto str = [&](const std::string& x) {
    u64(x.size());
    raw(x.data(), x.size());
  };
  raw("GGUF", 4);
  u32(3);
  u64(0);  // tensors
  u64(6);  // metadata
  str("tokenizer.ggml.model");
  u32(8);
  str("gpt2");
  str("tokenizer.ggml.pre");
  u32(8);
  str(pre);
  str("tokenizer.ggml.tokens");
  u32(9);
  u32(8);
  u64(s.pieces.size());
  for (size_t i = 0; i < s.pieces.size(); ++i)
    str(s.types[i] == 3 ? s.pieces[i] : byte_level_encode(s.pieces[i]));
  str("tokenizer.ggml.token_type");
  u32(9);
  u32(5);
  u64(s.types.size());
  for (uint8_t t : s.types) u32(t);
  str("tokenizer.ggml.merges");
  u32(9);
  u32(8);
  u64(s.merges.size());
  for (const auto& m : s.merges)
    str(byte_level_encode(s.pieces[m[0]]) + " " + byte_level_encode(s.pieces[m[1]]));
  str("tokenizer.ggml.eos_token_id");
  u32(4);
  u32(static_cast<uint32_t>(s.eos));
  return b;
}

}  // namespace

TEST_CASE("tokenizer reference: GGUF gpt2 vocabularies (GPT-2, Llama 3) vs Hugging Face") {
  const std::string d = shared_dir() + "/tokenizers/";
  SKIP_UNLESS(d + "gpt2/tokenizer.json");
  struct Case {
    const char* folder;
    const char* pre;
    const char* ids;
  };
  for (const Case& c :
       {Case{"gpt2", "gpt-2", "gpt2.hf.ids"}, Case{"llama3", "llama-bpe", "llama3.hf.ids"}}) {
    CAPTURE(c.folder);
    const pack::TokenizerSpec json = pack::read_tokenizer_file(d + c.folder + "/tokenizer.json");
    const std::vector<uint8_t> gguf = gguf_gpt2_vocab(json, c.pre);
    pack::TokenizerSpec spec;
    REQUIRE(pack::gguf_tokenizer_if_any(gguf, "test.gguf", &spec));
    CHECK(spec.pieces == json.pieces);
    CHECK(spec.merges == json.merges);
    Loaded l;
    load(spec, &l);
    check_corpus(l.tok, c.ids);
  }
}
#endif

#if EINFER_HAS_PACK_LIB
TEST_CASE("tokenizer reference: a Hugging Face folder packs its tokenizer.json, else .model") {
  const std::string d = shared_dir() + "/tokenizers/llama2/";
  SKIP_UNLESS(d + "tokenizer.json");
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "einfer_hf_folder_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  pack::TokenizerSpec spec;
  CHECK_FALSE(pack::read_folder_tokenizer(dir.string(), &spec));
  fs::create_symlink(fs::absolute(d + "tokenizer.model"), dir / "tokenizer.model");
  REQUIRE(pack::read_folder_tokenizer(dir.string(), &spec));
  CHECK(spec.source == "sentencepiece tokenizer.model");
  fs::create_symlink(fs::absolute(d + "tokenizer.json"), dir / "tokenizer.json");
  REQUIRE(pack::read_folder_tokenizer(dir.string(), &spec));
  CHECK(spec.source == "tokenizer.json");
  fs::remove_all(dir);
}
#endif
