// einfer's normalizers (models/tokenizer_normalize.h) against Hugging Face tokenizers over every
// Unicode scalar value and every code point U+0300..U+1FFFF between a letter and a combining
// mark: the FNV-1a hashes tests/gen/gen_tokenizer_normalize.js computed from the reference
// library (tests/data/tokenizer/normalize.hf.txt). EINFER_NORMALIZE_DUMP=DIR writes einfer's
// outputs (one hex line per item) for finding the first difference. Worked examples and the
// capacity bound: test_tokenizer_normalize_cases.cpp (which the Cortex-M images run too).
// einfer-test: no-bare-metal (~20 million normalizations: minutes under qemu-system-arm)
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/tokenizer_normalize.h"
#include "tests/normalize_test_util.h"

using namespace einfer;
using namespace einfer::normalize_test;

namespace {

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

struct Hash {
  uint64_t h = 0xcbf29ce484222325ull;
  uint64_t n = 0;
  std::FILE* dump = nullptr;
  void add(const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ 0xFF) * 0x100000001b3ull;
    ++n;
    if (dump) {
      for (unsigned char c : s) std::fprintf(dump, "%02x", c);
      std::fputc('\n', dump);
    }
  }
};

// Letters of Unicode 15.0-16.0 with a lowercase the reference has and the tables do not.
bool newer_lowercase(uint32_t cp) {
  return cp == 0x1C89 || cp == 0xA7CB || cp == 0xA7CC || cp == 0xA7CE || cp == 0xA7D2 ||
         cp == 0xA7D4 || cp == 0xA7DA || cp == 0xA7DC || (cp >= 0x10D50 && cp <= 0x10D65) ||
         (cp >= 0x16EA0 && cp <= 0x16EB8);
}

}  // namespace

TEST_CASE("normalize: every code point as Hugging Face tokenizers normalizes it") {
  std::map<std::string, std::pair<uint64_t, uint64_t>> want;  // name -> count, hash
  {
    std::ifstream f(EINFER_TEST_DATA_DIR "/tokenizer/normalize.hf.txt");
    REQUIRE(f);
    std::string name, hex;
    uint64_t count;
    while (f >> name >> count >> hex) want[name] = {count, std::stoull(hex, nullptr, 16)};
  }
  REQUIRE(want.size() == 14);
  const auto form = [](UnicodeForm f) { return static_cast<uint32_t>(f); };
  const std::vector<std::pair<std::string, uint32_t>> single = {
      {"nfc", form(UnicodeForm::nfc)},   {"nfd", form(UnicodeForm::nfd)},
      {"nfkc", form(UnicodeForm::nfkc)}, {"nfkd", form(UnicodeForm::nfkd)},
      {"lowercase", kNormLowercase},     {"strip_accents", kNormStripMarks},
      {"bert_uncased", kBertUncased},    {"bert_cased", kNormBertClean | kNormBertChinese},
  };
  std::map<std::string, Hash> got;
  if (const char* dir = std::getenv("EINFER_NORMALIZE_DUMP")) {
    for (const auto& w : want)
      got[w.first].dump = std::fopen((std::string(dir) + "/" + w.first + ".txt").c_str(), "w");
  }
  for (uint32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string s = utf8(cp);
    for (const auto& [name, steps] : single) {
      if ((steps & kNormLowercase) && newer_lowercase(cp)) continue;
      got[name].add(normalize(steps, s));
    }
    got["nfc_of_nfd"].add(normalize(form(UnicodeForm::nfc), normalize(form(UnicodeForm::nfd), s)));
    got["nfkc_of_nfkd"].add(
        normalize(form(UnicodeForm::nfkc), normalize(form(UnicodeForm::nfkd), s)));
  }
  for (uint32_t cp = 0x300; cp < 0x20000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    const std::string c = utf8(cp);
    for (const std::string& s :
         {"a" + c + "\xCC\x81", "a\xCC\x81" + c, "a" + c + "\xCC\x96", "a\xCC\x96" + c}) {
      got["marks_nfc"].add(normalize(form(UnicodeForm::nfc), s));
      got["marks_nfd"].add(normalize(form(UnicodeForm::nfd), s));
      got["marks_nfkc"].add(normalize(form(UnicodeForm::nfkc), s));
      got["marks_nfkd"].add(normalize(form(UnicodeForm::nfkd), s));
    }
  }
  for (auto& [name, h] : got) {
    CAPTURE(name);
    if (h.dump) std::fclose(h.dump);
    CHECK(h.n == want[name].first);
    CHECK(h.h == want[name].second);
  }
  CHECK(normalize_overruns() == 0);
  // The documented difference: einfer's Unicode 14.0 tables leave those letters as they are.
  for (uint32_t cp : {0x1C89u, 0xA7CBu, 0x10D50u, 0x16EB8u})
    CHECK(normalize(kNormLowercase, utf8(cp)) == utf8(cp));
}
