// Pre-tokenizer matchers and Unicode classes. Each matcher mirrors its regex alternative by
// alternative; comments quote the alternative being tried.
#include "models/tokenizer_pretokenize.h"

#include "models/tokenizer_normalize.h"
#include "models/tokenizer_unicode.h"

namespace einfer {
namespace {

#include "models/tokenizer_unicode_tables.inc"

// Cursor over the text with the class of the character at a position.
struct Text {
  const char* s;
  size_t n;
  CodePoint at(size_t i) const { return utf8_decode(s, n, i); }
  CharClass cls(size_t i) const { return char_class(at(i).cp); }
  // End of the run of characters of class c starting at i (at most max_chars of them).
  size_t run(size_t i, CharClass c, size_t max_chars = SIZE_MAX) const {
    size_t count = 0;
    while (i < n && count < max_chars) {
      const CodePoint p = at(i);
      if (char_class(p.cp) != c) break;
      i += p.bytes;
      ++count;
    }
    return i;
  }
};

char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// 's|'t|'re|'ve|'m|'ll|'d, optionally case-insensitive; 0 if none at i.
size_t contraction(const Text& t, size_t i, bool any_case) {
  if (t.s[i] != '\'' || i + 1 >= t.n) return 0;
  auto ch = [&](size_t k) { return any_case ? ascii_lower(t.s[k]) : t.s[k]; };
  const char a = ch(i + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
  if (i + 2 < t.n) {
    const char b = ch(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
  }
  return 0;
}

// \s+(?!\S)|\s+ at a whitespace character i: the run, minus its last character when a
// non-space follows and the run has more than one character.
size_t space_run(const Text& t, size_t i) {
  const size_t end = t.run(i, CharClass::space);
  if (end == t.n) return end;
  // Step back one character (whitespace characters are never invalid UTF-8).
  size_t last = end - 1;
  while (last > i && (static_cast<unsigned char>(t.s[last]) & 0xC0) == 0x80) --last;
  return last > i ? last : end;
}

size_t gpt2_next(const Text& t, size_t i) {
  if (const size_t e = contraction(t, i, false)) return e;  // 's|'t|'re|'ve|'m|'ll|'d
  const CodePoint c = t.at(i);
  const CharClass k = char_class(c.cp);
  size_t start = i;
  CharClass body = k;
  if (c.cp == ' ' && i + 1 < t.n) {  //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+ with the space
    const CharClass next = t.cls(i + 1);
    if (next != CharClass::space) {
      start = i + 1;
      body = next;
    }
  }
  if (body != CharClass::space) return t.run(start, body);
  return space_run(t, i);  // \s+(?!\S)|\s+
}

bool is_cr_lf(uint32_t cp) {
  return cp == '\r' || cp == '\n';
}

size_t llama3_next(const Text& t, size_t i, size_t max_digits) {
  if (const size_t e = contraction(t, i, true)) return e;  // (?i:'s|'t|'re|'ve|'m|'ll|'d)
  const CodePoint c = t.at(i);
  const CharClass k = char_class(c.cp);
  if (k == CharClass::letter) return t.run(i, CharClass::letter);  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (k != CharClass::number && !is_cr_lf(c.cp) && i + c.bytes < t.n &&
      t.cls(i + c.bytes) == CharClass::letter)
    return t.run(i + c.bytes, CharClass::letter);
  if (k == CharClass::number) return t.run(i, CharClass::number, max_digits);  // \p{N}{1,3}
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  size_t start = k == CharClass::other ? i : SIZE_MAX;
  if (c.cp == ' ' && i + 1 < t.n && t.cls(i + 1) == CharClass::other) start = i + 1;
  if (start != SIZE_MAX) {
    size_t e = t.run(start, CharClass::other);
    while (e < t.n && (t.s[e] == '\r' || t.s[e] == '\n')) ++e;
    return e;
  }
  // \s*[\r\n]+ : the whitespace run up to and including its last \r or \n.
  const size_t end = t.run(i, CharClass::space);
  for (size_t p = end; p > i; --p)
    if (t.s[p - 1] == '\r' || t.s[p - 1] == '\n') return p;
  return space_run(t, i);  // \s+(?!\S)|\s+
}

}  // namespace

bool is_white_space(uint32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

CodePoint utf8_decode(const char* text, size_t len, size_t pos) {
  const auto* s = reinterpret_cast<const unsigned char*>(text) + pos;
  const size_t left = len - pos;
  const unsigned c = s[0];
  if (c < 0x80) return {c, 1};
  uint32_t need, cp, min;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1, cp = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2, cp = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3, cp = c & 0x07, min = 0x10000;
  } else {
    return {kInvalidCodePoint, 1};
  }
  if (left <= need) return {kInvalidCodePoint, 1};
  for (uint32_t k = 1; k <= need; ++k) {
    if ((s[k] & 0xC0) != 0x80) return {kInvalidCodePoint, 1};
    cp = (cp << 6) | (s[k] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {kInvalidCodePoint, 1};
  return {cp, need + 1};
}

CharClass char_class(uint32_t cp) {
  if (cp < 0x80) {
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return CharClass::letter;
    if (cp >= '0' && cp <= '9') return CharClass::number;
    return is_white_space(cp) ? CharClass::space : CharClass::other;
  }
  if (cp == kInvalidCodePoint) return CharClass::other;
  if (is_white_space(cp)) return CharClass::space;
  if (in_ranges(kLetterRanges, cp)) return CharClass::letter;
  if (in_ranges(kNumberRanges, cp)) return CharClass::number;
  return CharClass::other;
}

size_t pretokenize_next(Pretokenizer kind, const char* text, size_t len, size_t pos) {
  Text t{text, len};
  switch (kind) {
    case Pretokenizer::gpt2:
      return gpt2_next(t, pos);
    case Pretokenizer::llama3:
      return llama3_next(t, pos, 3);
    case Pretokenizer::qwen2:
      return llama3_next(t, pos, 1);
    case Pretokenizer::digits_gpt2: {
      // Digits(individual_digits) first: each \p{N} alone; gpt2 sees only the text between.
      const CodePoint c = t.at(pos);
      if (char_class(c.cp) == CharClass::number) return pos + c.bytes;
      size_t stop = pos;
      while (stop < len) {
        const CodePoint d = t.at(stop);
        if (char_class(d.cp) == CharClass::number) break;
        stop += d.bytes;
      }
      return gpt2_next(Text{text, stop}, pos);
    }
    case Pretokenizer::bert: {
      // Each punctuation character alone, else the run up to whitespace or punctuation (the
      // caller drops whitespace before asking).
      const CodePoint c = t.at(pos);
      if (is_bert_punctuation(c.cp)) return pos + c.bytes;
      size_t end = pos + c.bytes;
      while (end < len) {
        const CodePoint d = t.at(end);
        if (is_white_space(d.cp) || is_bert_punctuation(d.cp)) break;
        end += d.bytes;
      }
      return end;
    }
    case Pretokenizer::split_space: {
      // Split(" ", MergedWithPrevious): a space ends the word before it; a space after a space
      // is a word of its own.
      if (text[pos] == ' ') return pos + 1;
      size_t end = pos;
      while (end < len && text[end] != ' ') ++end;
      return end < len ? end + 1 : len;
    }
    case Pretokenizer::none:
      break;
  }
  return len;
}

}  // namespace einfer
