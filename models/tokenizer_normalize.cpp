// Normalization: the text is decoded into code points (cleaned, spaced and decomposed on the way),
// non-starters are put in canonical order, the composed forms compose, and the result is
// stripped, lowercased and encoded back to UTF-8. All lookups are binary searches in the
// generated tables (tokenizer_normalize_tables.inc).
#include "models/tokenizer_normalize.h"

#include "models/tokenizer_pretokenize.h"
#include "models/tokenizer_unicode.h"

namespace einfer {
namespace {

#include "models/tokenizer_normalize_tables.inc"

// Invalid UTF-8 bytes kept as they are travel as these (never a Unicode scalar value).
constexpr uint32_t kRawByte = 0x110000;

constexpr uint32_t kHangulS = 0xAC00, kHangulL = 0x1100, kHangulV = 0x1161, kHangulT = 0x11A7;
constexpr uint32_t kHangulVCount = 21, kHangulTCount = 28, kHangulSCount = 11172;

// Index of the last entry whose key (entry >> shift) is <= key, or -1.
template <typename T, size_t N>
ptrdiff_t floor_index(const T (&table)[N], int shift, uint64_t key) {
  size_t lo = 0, hi = N;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if ((uint64_t(table[mid]) >> shift) <= key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return static_cast<ptrdiff_t>(lo) - 1;
}

uint32_t field(uint64_t w, int shift, int bits) {
  return static_cast<uint32_t>((w >> shift) & ((uint64_t(1) << bits) - 1));
}

struct CodePoints {
  uint32_t* cp;
  size_t n = 0;
  void push(uint32_t c) { cp[n++] = c; }
};

void push_utf8(CodePoints& out, const uint8_t* s, size_t len) {
  for (size_t i = 0; i < len;) {
    const CodePoint c = utf8_decode(reinterpret_cast<const char*>(s), len, i);
    out.push(c.cp);
    i += c.bytes;
  }
}

// Full canonical (compat: and compatibility) decomposition of cp.
void decompose(uint32_t cp, bool compat, CodePoints& out) {
  if (cp < (compat ? 0xA0u : 0xC0u) || cp >= kRawByte) return out.push(cp);
  if (cp >= kHangulS && cp < kHangulS + kHangulSCount) {
    const uint32_t s = cp - kHangulS;
    out.push(kHangulL + s / (kHangulVCount * kHangulTCount));
    out.push(kHangulV + (s % (kHangulVCount * kHangulTCount)) / kHangulTCount);
    if (s % kHangulTCount) out.push(kHangulT + s % kHangulTCount);
    return;
  }
  const ptrdiff_t c = floor_index(kCanonical, 42, cp);
  if (c >= 0 && field(kCanonical[c], 42, 21) == cp) {
    decompose(field(kCanonical[c], 21, 21), compat, out);
    if (const uint32_t second = field(kCanonical[c], 0, 21)) out.push(second);  // never decomposes
    return;
  }
  if (compat) {
    const ptrdiff_t k = floor_index(kCompat, 43, cp);
    if (k >= 0) {
      const uint64_t w = kCompat[k];
      const uint32_t first = field(w, 43, 21), n = field(w, 32, 11), x = field(w, 0, 32);
      if (n > 0 && cp < first + n) return out.push(x + (cp - first));
      if (n == 0 && cp == first) return push_utf8(out, kCompatText + (x >> 8), x & 0xFF);
    }
  }
  out.push(cp);
}

// The primary composite of (a, b), or 0.
uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= kHangulL && a < kHangulL + 19 && b >= kHangulV && b < kHangulV + kHangulVCount)
    return kHangulS + ((a - kHangulL) * kHangulVCount + (b - kHangulV)) * kHangulTCount;
  if (a >= kHangulS && a < kHangulS + kHangulSCount && (a - kHangulS) % kHangulTCount == 0 &&
      b > kHangulT && b < kHangulT + kHangulTCount)
    return a + (b - kHangulT);
  size_t lo = 0, hi = sizeof kComposites / sizeof kComposites[0];
  const uint64_t key = (uint64_t(a) << 21) | b;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const uint64_t w = kCanonical[kComposites[mid]];
    const uint64_t k = w & ((uint64_t(1) << 42) - 1);
    if (k == key) return field(w, 42, 21);
    if (k < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return 0;
}

uint32_t lowercase(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if (cp >= kRawByte) return cp;
  const ptrdiff_t i = floor_index(kLowercase, 43, cp);
  if (i < 0) return cp;
  const uint64_t w = kLowercase[i];
  const uint32_t first = field(w, 43, 21), count = field(w, 33, 10), stride = field(w, 31, 2);
  const int64_t delta = int64_t(field(w, 0, 31)) - (int64_t(1) << 30);
  const uint32_t off = cp - first;
  if (off % stride != 0 || off / stride >= count) return cp;
  return static_cast<uint32_t>(int64_t(cp) + delta);
}

bool is_bert_control(uint32_t cp) {
  return in_ranges(kBertControl, cp);
}

// Stable sort of c[0..n) by combining class (merge sort through tmp; n >= 2).
void sort_by_class(uint32_t* c, size_t n, uint32_t* tmp) {
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i)
    sorted = canonical_combining_class(c[i - 1]) <= canonical_combining_class(c[i]);
  if (sorted) return;
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = lo + width < n ? lo + width : n;
      const size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi)
        tmp[k++] =
            canonical_combining_class(c[b]) < canonical_combining_class(c[a]) ? c[b++] : c[a++];
      while (a < mid) tmp[k++] = c[a++];
      while (b < hi) tmp[k++] = c[b++];
    }
    for (size_t i = 0; i < n; ++i) c[i] = tmp[i];
  }
}

void reorder(uint32_t* c, size_t n, uint32_t* tmp) {
  for (size_t i = 0; i < n;) {
    if (canonical_combining_class(c[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < n && canonical_combining_class(c[j]) != 0) ++j;
    if (j - i > 1) sort_by_class(c + i, j - i, tmp);
    i = j;
  }
}

// Canonical composition in place (UAX #15): a character joins the last starter unless a
// character between has class 0 or >= its own.
size_t compose_all(uint32_t* c, size_t n) {
  size_t out = 0;
  ptrdiff_t starter = -1;
  int last_class = -1;  // class of the last character kept after the starter; -1: none
  for (size_t i = 0; i < n; ++i) {
    const uint32_t ch = c[i];
    const int cls = canonical_combining_class(ch);
    // Nothing below U+0300 is the second part of a composite (the common case: skip the search).
    if (starter >= 0 && ch >= 0x300 && (last_class < 0 || (last_class != 0 && last_class < cls))) {
      if (const uint32_t composite = compose(c[starter], ch)) {
        c[starter] = composite;
        continue;
      }
    }
    if (cls == 0) {
      starter = static_cast<ptrdiff_t>(out);
      last_class = -1;
    } else {
      last_class = cls;
    }
    c[out++] = ch;
  }
  return out;
}

size_t put_utf8(uint32_t cp, char* out) {
  if (cp >= kRawByte) {
    out[0] = static_cast<char>(cp - kRawByte);
    return 1;
  }
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

uint64_t grow6(uint64_t g6, uint32_t factor6) {
  return (g6 * factor6 + 5) / 6;
}

}  // namespace

uint8_t canonical_combining_class(uint32_t cp) {
  if (cp < 0x300 || cp >= kRawByte) return 0;
  const ptrdiff_t i = floor_index(kCombiningClass, 29, cp);
  if (i < 0 || field(kCombiningClass[i], 8, 21) < cp) return 0;
  return static_cast<uint8_t>(kCombiningClass[i] & 0xFF);
}

bool is_cjk_ideograph(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_bert_punctuation(uint32_t cp) {
  return in_ranges(kBertPunctuation, cp);
}

size_t normalize_capacity(uint32_t steps, size_t len) {
  // Growth per input byte, times 6: an invalid byte may become U+FFFD (3 bytes, which no later
  // step grows); a valid character grows by at most the product of its steps' bounds.
  uint64_t g6 = 6;
  if (steps & kNormBertChinese) g6 = grow6(g6, 10);  // 3-byte ideograph -> 5 bytes
  const auto form = static_cast<UnicodeForm>(steps & kNormFormMask);
  if (form == UnicodeForm::nfc || form == UnicodeForm::nfd) g6 = grow6(g6, kGrowth6Canonical);
  if (form == UnicodeForm::nfkc || form == UnicodeForm::nfkd) g6 = grow6(g6, kGrowth6Compat);
  if (steps & kNormLowercase) g6 = grow6(g6, kGrowth6Lowercase);
  if (g6 < 18) g6 = 18;
  const uint64_t limit = (SIZE_MAX - 8) / g6;
  if (len > limit) return SIZE_MAX;
  return static_cast<size_t>((uint64_t(len) * g6 + 5) / 6) + 1;  // + the prefix space
}

size_t normalize_work_count(size_t capacity) {
  return capacity > SIZE_MAX / 8 ? SIZE_MAX : 2 * capacity;  // code points, then merge space
}

namespace {

// The whole pipeline over text[0..len), written to out; returns the bytes written.
size_t normalize_chunk(const NormalizeInput& in, const char* text, size_t len, char* out,
                       size_t capacity, uint32_t* work) {
  const uint32_t steps = in.steps;
  const auto form = static_cast<UnicodeForm>(steps & kNormFormMask);
  const bool decomposing = form != UnicodeForm::none;
  const bool compat = form == UnicodeForm::nfkc || form == UnicodeForm::nfkd;
  CodePoints cps{work};
  for (size_t i = 0; i < len;) {
    const CodePoint c = utf8_decode(text, len, i);
    uint32_t cp = c.cp;
    if (cp == kInvalidCodePoint)
      cp = in.keep_invalid ? kRawByte + static_cast<unsigned char>(text[i]) : 0xFFFD;
    i += c.bytes;
    if (cp == 0x2581 && in.space_escape) cp = ' ';
    if (steps & kNormBertClean) {
      if (cp == '\t' || cp == '\n' || cp == '\r') {
        cp = ' ';
      } else if (cp == 0 || cp == 0xFFFD || is_bert_control(cp)) {
        continue;
      } else if (is_white_space(cp)) {
        cp = ' ';
      }
    }
    const bool spaced = (steps & kNormBertChinese) && is_cjk_ideograph(cp);
    if (spaced) cps.push(' ');
    if (decomposing)
      decompose(cp, compat, cps);
    else
      cps.push(cp);
    if (spaced) cps.push(' ');
  }
  size_t n = cps.n;
  if (decomposing) {
    reorder(work, n, work + capacity);
    if (form == UnicodeForm::nfc || form == UnicodeForm::nfkc) n = compose_all(work, n);
  }
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t cp = work[i];
    if ((steps & kNormStripNonspacing) && cp >= 0x300 && cp < kRawByte &&
        in_ranges(kNonspacingMarks, cp))
      continue;
    if ((steps & kNormStripMarks) && cp >= 0x300 && cp < kRawByte && in_ranges(kMarks, cp))
      continue;
    if (steps & kNormLowercase) {
      if (cp == 0x130) {  // the one character whose lowercase is two: i + combining dot above
        m += put_utf8('i', out + m);
        cp = 0x307;
      } else {
        cp = lowercase(cp);
      }
    }
    m += put_utf8(cp, out + m);
  }
  return m;
}

}  // namespace

size_t normalize_text(const NormalizeInput& in, char* out, size_t capacity, uint32_t* work) {
  size_t m = 0;
  if (in.prefix_space && in.len > 0) out[m++] = ' ';  // no step changes a space or joins it
  // A Unicode form alone leaves ASCII as it is, and no character below U+0300 joins the one
  // before it or moves past it: runs of ASCII are copied, the rest goes through the pipeline in
  // chunks that end before an ASCII character (the last ASCII character before other text goes
  // with it, as a mark may compose with it).
  if ((in.steps & ~kNormFormMask) != 0)
    return m + normalize_chunk(in, in.text, in.len, out + m, capacity, work);
  const auto* t = reinterpret_cast<const unsigned char*>(in.text);
  for (size_t i = 0; i < in.len;) {
    size_t j = i;
    while (j < in.len && t[j] < 0x80) ++j;
    const size_t copy_end = j < in.len && j > i ? j - 1 : j;
    for (size_t k = i; k < copy_end; ++k) out[m++] = in.text[k];
    i = copy_end;
    if (i >= in.len) break;
    size_t k = t[i] < 0x80 ? i + 1 : i;
    while (k < in.len && t[k] >= 0x80) ++k;
    m += normalize_chunk(in, in.text + i, k - i, out + m, capacity, work);
    i = k;
  }
  return m;
}

}  // namespace einfer
