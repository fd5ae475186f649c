// The normalizer called through std::string for the normalizer tests: the output buffer and
// work area sized as normalize_capacity / normalize_work_count say, with slack so an output
// longer than promised is counted (normalize_overruns) rather than written out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/tokenizer_normalize.h"

namespace einfer::normalize_test {

inline int& normalize_overruns() {
  static int count = 0;
  return count;
}

inline std::string normalize(uint32_t steps, const std::string& text, bool keep_invalid = false,
                             bool escape = false, bool prefix = false) {
  const size_t cap = normalize_capacity(steps, text.size());
  std::string out(cap + 64, '\0');
  std::vector<uint32_t> work(normalize_work_count(cap));
  const NormalizeInput in{text.data(), text.size(), steps, keep_invalid, escape, prefix};
  const size_t n = normalize_text(in, out.data(), cap, work.data());
  normalize_overruns() += n > cap;
  out.resize(n < cap ? n : cap);
  return out;
}

// BertNormalizer's defaults (bert-base-uncased, all-MiniLM-L6-v2).
inline constexpr uint32_t kBertUncased = kNormBertClean | kNormBertChinese |
                                         static_cast<uint32_t>(UnicodeForm::nfd) |
                                         kNormStripNonspacing | kNormLowercase;

}  // namespace einfer::normalize_test
