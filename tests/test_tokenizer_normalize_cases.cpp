// The normalizers on worked examples (composition, Hangul, reordering, compatibility forms, the
// BERT steps, the two-character lowercase of U+0130), invalid UTF-8 kept or replaced, the ▁
// escape and the prefix space, and the output capacity on the characters that grow most. The
// exhaustive comparison with Hugging Face tokenizers is test_tokenizer_normalize.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/tokenizer_normalize.h"
#include "tests/normalize_test_util.h"

using namespace einfer;
using namespace einfer::normalize_test;

TEST_CASE("normalize: worked examples, invalid UTF-8, escape, prefix") {
  const uint32_t nfc = static_cast<uint32_t>(UnicodeForm::nfc);
  const uint32_t nfkc = static_cast<uint32_t>(UnicodeForm::nfkc);
  CHECK(normalize(nfc, "e\xCC\x81") == "\xC3\xA9");                     // e + acute = é
  CHECK(normalize(nfc, "\xE1\x84\x80\xE1\x85\xA1") == "\xEA\xB0\x80");  // ᄀ + ᅡ = 가
  CHECK(normalize(nfc, "a\xCC\x95\xCC\x81") == "\xC3\xA1\xCC\x95");     // 232 after 230
  CHECK(normalize(nfkc, "\xEF\xAC\x81") == "fi");                       // the ligature
  CHECK(normalize(nfkc, "\xEF\xBC\xA1\xE2\x91\xA0") == "A1");           // fullwidth, circled
  CHECK(normalize(kBertUncased, "H\xC3\xA9llo\t\xE4\xB8\xAD!") == "hello  \xE4\xB8\xAD !");
  CHECK(normalize(kNormLowercase, "\xC4\xB0") == "i\xCC\x87");  // İ -> i + dot
  // Invalid bytes: kept as they are for byte-level BPE, else U+FFFD (which BERT's clean drops).
  CHECK(normalize(nfc, "a\xFF\xCC\x81", true) == "a\xFF\xCC\x81");
  CHECK(normalize(nfc, "a\xFF", false) == "a\xEF\xBF\xBD");
  CHECK(normalize(kBertUncased, "a\xFF b") == "a b");
  // U+2581 read as a space; the prefix space before a non-empty text only.
  CHECK(normalize(nfc, "x\xE2\x96\x81y", false, true) == "x y");
  CHECK(normalize(nfc, "x", false, false, true) == " x");
  CHECK(normalize(nfc, "", false, false, true).empty());
}

TEST_CASE("normalize: the capacity holds the characters that grow most") {
  // U+FDFA (3 bytes) is 33 bytes under NFKC; U+1D160 (4 bytes) 12 under NFC; U+023A doubles to 3
  // bytes lowercased; an ideograph gains two spaces; an invalid byte becomes 3.
  const std::string worst[] = {"\xEF\xB7\xBA", "\xF0\x9D\x85\xA0", "\xC8\xBA", "\xE4\xB8\xAD",
                               "\xFF"};
  const uint32_t forms[] = {0, 1, 2, 3, 4};
  for (const std::string& w : worst) {
    std::string text;
    for (int i = 0; i < 50; ++i) text += w;
    for (uint32_t f : forms) {
      for (uint32_t extra : {uint32_t{0}, kNormLowercase, kNormBertChinese | kNormLowercase}) {
        const uint32_t steps = f | extra;
        CAPTURE(steps);
        normalize(steps, text, false, false, true);
        CHECK(normalize_overruns() == 0);
      }
    }
  }
  CHECK(normalize(static_cast<uint32_t>(UnicodeForm::nfkc), std::string(10, '\xEF')).size() == 30);
  CHECK(normalize_capacity(static_cast<uint32_t>(UnicodeForm::nfkc), 3) >= 33);
}
