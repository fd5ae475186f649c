// Text normalization of the Hugging Face tokenizers normalizers einfer reproduces: the Unicode
// normalization forms NFC, NFD, NFKC, NFKD (decomposition, canonical reordering, composition),
// BertNormalizer's steps (clean_text, handle_chinese_chars, strip_accents, lowercase),
// StripAccents and Lowercase, exactly as the reference library does them, with its Unicode
// versions (tools/scripts/gen_unicode_tables.py generates the tables; docs/format.md lists them).
// No heap: the caller hands in the output buffer and a work area of code points, both sized by
// normalize_capacity / normalize_work_count.
#pragma once

#include <cstddef>
#include <cstdint>

namespace einfer {

// The steps, as the tokenizer image's `normalizer` field stores them. They run in this order:
// clean, chinese, the Unicode form, strip nonspacing, strip marks, lowercase.
enum class UnicodeForm : uint32_t { none = 0, nfc = 1, nfd = 2, nfkc = 3, nfkd = 4 };
inline constexpr uint32_t kNormFormMask = 7;  // a UnicodeForm in the low bits
inline constexpr uint32_t kNormBertClean =
    1u << 3;  // drop NUL, U+FFFD and Cc/Cf/Co except \t \n \r; whitespace becomes ' '
inline constexpr uint32_t kNormBertChinese = 1u << 4;      // a space each side of CJK ideographs
inline constexpr uint32_t kNormStripNonspacing = 1u << 5;  // drop Mn (BERT strip_accents)
inline constexpr uint32_t kNormStripMarks = 1u << 6;       // drop M* (StripAccents)
inline constexpr uint32_t kNormLowercase = 1u << 7;        // Rust's char::to_lowercase
inline constexpr uint32_t kNormKnown = (1u << 8) - 1;

// Options of one normalization call.
struct NormalizeInput {
  const char* text;
  size_t len;
  uint32_t steps;     // kNorm* with a UnicodeForm
  bool keep_invalid;  // invalid UTF-8 bytes stay as they are (byte-level BPE), else U+FFFD
  bool space_escape;  // U+2581 in the text becomes a space (pieces store SentencePiece's ▁ so)
  bool prefix_space;  // a space before the text (a non-empty one)
};

// Bytes the normalized form of `len` input bytes takes at most (prefix space and U+FFFD for
// invalid bytes included); SIZE_MAX when that does not fit the address space.
size_t normalize_capacity(uint32_t steps, size_t len);
// Code points of work area normalize_text needs for an output capacity of `capacity` bytes.
size_t normalize_work_count(size_t capacity);

// Normalizes into out[0 .. capacity) and returns the bytes written. `work` holds
// normalize_work_count(capacity) code points. capacity must be normalize_capacity(steps, len)
// or more.
size_t normalize_text(const NormalizeInput& in, char* out, size_t capacity, uint32_t* work);

// Character classes of the BERT pre-tokenizer (Unicode as the reference library has them).
bool is_bert_punctuation(uint32_t cp);
bool is_cjk_ideograph(uint32_t cp);  // BertNormalizer's "Chinese character" ranges
uint8_t canonical_combining_class(uint32_t cp);

}  // namespace einfer
