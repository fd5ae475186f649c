#include "tools/einfer-pack/json.h"

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
            if (i + 4 > s.size()) fail("bad \\u escape");
            unsigned cp = static_cast<unsigned>(std::strtoul(s.substr(i, 4).c_str(), nullptr, 16));
            i += 4;
            if (cp < 0x80) {
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
      const char* start = s.c_str() + i;
      char* end = nullptr;
      v.num = std::strtod(start, &end);
      if (end == start) fail("unexpected character");
      v.type = Json::Type::number;
      i += static_cast<size_t>(end - start);
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
