#include "tools/einfer-pack/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

namespace {
struct Parser {
  const std::string& s;
  const std::string& what;
  size_t i = 0;
  int depth = 0;

  [[noreturn]] void fail(const char* m) {
    throw PackError(what + ": invalid JSON at byte " + std::to_string(i) + ": " + m);
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail("unexpected character");
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i >= s.size()) fail("unterminated string");
      char c = s[i++];
      if (c == '"') break;
      if (c == '\\') {
        if (i >= s.size()) fail("unterminated escape");
        char e = s[i++];
        switch (e) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'u': {
            unsigned cp = hex4();
            // Outside the BMP: a UTF-16 surrogate pair, \uD8xx\uDCxx (one code point).
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (i + 2 > s.size() || s[i] != '\\' || s[i + 1] != 'u') fail("lone high surrogate");
              i += 2;
              const unsigned lo = hex4();
              if (lo < 0xDC00 || lo > 0xDFFF) fail("lone high surrogate");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              out += static_cast<char>(0xF0 | (cp >> 18));
              out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
              out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            } else if (cp < 0x80) {
              out += static_cast<char>(cp);
            } else if (cp < 0x800) {
              out += static_cast<char>(0xC0 | (cp >> 6));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            } else {
              out += static_cast<char>(0xE0 | (cp >> 12));
              out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
              out += static_cast<char>(0x80 | (cp & 0x3F));
            }
            break;
          }
          default:
            out += e;
        }
      } else {
        out += c;
      }
    }
    return out;
  }
  unsigned hex4() {  // the four hex digits after \\u
    if (i + 4 > s.size()) fail("bad \\u escape");
    unsigned cp = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int h = hex_digit(s[i + k]);
      if (h < 0) fail("bad \\u escape");
      cp = cp * 16 + static_cast<unsigned>(h);
    }
    i += 4;
    return cp;
  }
  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool digit_at(size_t k) const { return k < s.size() && s[k] >= '0' && s[k] <= '9'; }
  // RFC 8259 number grammar only: strtod alone would also take nan, inf, 0x40 and " 1".
  double number() {
    const size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    if (!digit_at(i)) fail("unexpected character");
    if (s[i] == '0') {
      ++i;
    } else {
      while (digit_at(i)) ++i;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      if (!digit_at(i)) fail("bad number");
      while (digit_at(i)) ++i;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (!digit_at(i)) fail("bad number");
      while (digit_at(i)) ++i;
    }
    const double v = std::strtod(s.substr(start, i - start).c_str(), nullptr);
    if (!std::isfinite(v)) fail("number out of range");
    return v;
  }
  Json value() {
    if (++depth > 64) fail("nesting too deep");
    ws();
    if (i >= s.size()) fail("unexpected end");
    Json v;
    const char c = s[i];
    if (c == '{') {
      ++i;
      v.type = Json::Type::object;
      if (!eat('}')) {
        do {
          std::string key = string();
          expect(':');
          if (v.members.count(key)) fail("duplicate key");
          v.members[key] = value();
        } while (eat(','));
        expect('}');
      }
    } else if (c == '[') {
      ++i;
      v.type = Json::Type::array;
      if (!eat(']')) {
        do v.items.push_back(value());
        while (eat(','));
        expect(']');
      }
    } else if (c == '"') {
      v.type = Json::Type::string;
      v.str = string();
    } else if (s.compare(i, 4, "true") == 0) {
      v.type = Json::Type::boolean;
      v.b = true;
      i += 4;
    } else if (s.compare(i, 5, "false") == 0) {
      v.type = Json::Type::boolean;
      i += 5;
    } else if (s.compare(i, 4, "null") == 0) {
      i += 4;
    } else {
      v.num = number();
      v.type = Json::Type::number;
    }
    --depth;
    return v;
  }
};
}  // namespace

Json parse_json(const std::string& text, const std::string& what) {
  Parser p{text, what};
  Json v = p.value();
  p.ws();
  if (p.i != text.size()) p.fail("trailing characters");
  return v;
}

}  // namespace einfer::pack

namespace einfer::pack {

namespace {
[[noreturn]] void out_of_range(const std::string& what, const std::string& got, int64_t lo,
                               int64_t hi) {
  throw PackError(what + ": expected an integer in " + std::to_string(lo) + ".." +
                  std::to_string(hi) + ", got " + got);
}
}  // namespace

int64_t json_to_int(const Json& v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.is_number()) out_of_range(what, "a non-number", lo, hi);
  // Range first (as doubles), then the cast is defined; then no fraction.
  if (!(v.num >= static_cast<double>(lo) && v.num <= static_cast<double>(hi)) ||
      static_cast<double>(static_cast<int64_t>(v.num)) != v.num) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v.num);
    out_of_range(what, buf, lo, hi);
  }
  return static_cast<int64_t>(v.num);
}

int64_t parse_decimal(const std::string& text, const std::string& what, int64_t lo, int64_t hi) {
  size_t k = text.size() > 0 && text[0] == '-' ? 1 : 0;
  if (k == text.size() || text.size() > 19) out_of_range(what, "'" + text + "'", lo, hi);
  for (size_t j = k; j < text.size(); ++j)
    if (text[j] < '0' || text[j] > '9') out_of_range(what, "'" + text + "'", lo, hi);
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi) out_of_range(what, "'" + text + "'", lo, hi);
  return v;
}

float parse_finite_float(const std::string& text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const float v = text.empty() ? 0.f : std::strtof(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw PackError(what + ": expected a finite number, got '" + text + "'");
  return v;
}

}  // namespace einfer::pack
