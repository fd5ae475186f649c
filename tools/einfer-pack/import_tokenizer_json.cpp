// Hugging Face tokenizer.json (+ tokenizer_config.json beside it): BPE models, byte-level
// (GPT-2, SmolLM, Llama 3, Qwen2 families) or character BPE with byte fallback (Llama 2's
// conversion). Every component einfer cannot reproduce exactly is refused, by name.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"

namespace einfer::pack {
namespace {

const char* const kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// A value of the wrong JSON type where the format fixes one (a string "type", an array of
// merges, ...): read_tokenizer_json turns it into "malformed tokenizer.json (...)".
struct ShapeError {
  std::string what;
};

const Json kNull;
const Json kEmptyArray = [] {
  Json a;
  a.type = Json::Type::array;
  return a;
}();

const char* type_name(Json::Type t) {
  switch (t) {
    case Json::Type::null:
      return "null";
    case Json::Type::boolean:
      return "a boolean";
    case Json::Type::number:
      return "a number";
    case Json::Type::string:
      return "a string";
    case Json::Type::array:
      return "an array";
    case Json::Type::object:
      return "an object";
  }
  return "?";
}

void expect_type(const Json& v, Json::Type t, const std::string& what) {
  if (v.type != t)
    throw ShapeError{what + " must be " + type_name(t) + ", is " + type_name(v.type)};
}

// obj[key] or null when absent; obj must be an object.
const Json* find_in(const Json& obj, const std::string& key) {
  expect_type(obj, Json::Type::object, "the holder of \"" + key + "\"");
  return obj.find(key);
}
// obj[key], a null value when absent.
const Json& member(const Json& obj, const std::string& key) {
  const Json* v = find_in(obj, key);
  return v ? *v : kNull;
}
// obj[key], which must be present.
const Json& at(const Json& obj, const std::string& key) {
  const Json* v = find_in(obj, key);
  if (!v) throw ShapeError{"key \"" + key + "\" is missing"};
  return *v;
}
bool contains(const Json& obj, const std::string& key) {
  return obj.type == Json::Type::object && obj.find(key) != nullptr;
}
// nlohmann-style value(): the default when absent, the value when of the right type, else an error.
std::string str_or(const Json& obj, const std::string& key, const std::string& def) {
  const Json* v = find_in(obj, key);
  if (!v) return def;
  expect_type(*v, Json::Type::string, "\"" + key + "\"");
  return v->str;
}
bool bool_or(const Json& obj, const std::string& key, bool def) {
  const Json* v = find_in(obj, key);
  if (!v) return def;
  expect_type(*v, Json::Type::boolean, "\"" + key + "\"");
  return v->b;
}
const std::string& str(const Json& v, const std::string& what) {
  expect_type(v, Json::Type::string, what);
  return v.str;
}
const std::vector<Json>& items(const Json& v, const std::string& what) {
  expect_type(v, Json::Type::array, what);
  return v.items;
}

// A JSON string literal (quotes, backslashes and control characters escaped).
void dump_string(const std::string& text, std::string* out) {
  *out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      *out += buf;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

// Compact JSON text of a value, for messages.
void dump_to(const Json& v, std::string* out) {
  switch (v.type) {
    case Json::Type::null:
      *out += "null";
      break;
    case Json::Type::boolean:
      *out += v.b ? "true" : "false";
      break;
    case Json::Type::number: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.num);
      *out += buf;
      break;
    }
    case Json::Type::string:
      dump_string(v.str, out);
      break;
    case Json::Type::array: {
      *out += '[';
      const char* sep = "";
      for (const Json& e : v.items) *out += sep, dump_to(e, out), sep = ",";
      *out += ']';
      break;
    }
    case Json::Type::object: {
      *out += '{';
      const char* sep = "";
      for (const auto& [k, e] : v.members) {
        *out += sep;
        dump_string(k, out);
        *out += ':';
        dump_to(e, out);
        sep = ",";
      }
      *out += '}';
      break;
    }
  }
}
std::string dump(const Json& v) {
  std::string out;
  dump_to(v, &out);
  return out;
}

[[noreturn]] void unsupported(const std::string& what, const Json& j) {
  std::string text = dump(j);
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  throw PackError("tokenizer.json: unsupported " + what + ": " + text);
}

bool is_byte_level(const Json& pt) {
  return pt.type == Json::Type::object && str_or(pt, "type", "") == "ByteLevel";
}

// The pre-tokenizer families einfer implements (models/tokenizer_pretokenize.h).
Pretokenizer pretokenizer_of(const Json& pt, bool* byte_level) {
  *byte_level = false;
  if (pt.type == Json::Type::null) return Pretokenizer::none;
  if (is_byte_level(pt)) {
    if (bool_or(pt, "add_prefix_space", false)) unsupported("ByteLevel add_prefix_space", pt);
    *byte_level = true;
    return bool_or(pt, "use_regex", true) ? Pretokenizer::gpt2 : Pretokenizer::none;
  }
  if (str_or(pt, "type", "") == "Sequence") {
    const std::vector<Json>& list = items(at(pt, "pretokenizers"), "\"pretokenizers\"");
    if (list.size() == 2 && str_or(list[0], "type", "") == "Digits" &&
        bool_or(list[0], "individual_digits", false) && is_byte_level(list[1]) &&
        bool_or(list[1], "use_regex", true) && !bool_or(list[1], "add_prefix_space", false)) {
      *byte_level = true;
      return Pretokenizer::digits_gpt2;
    }
    if (list.size() == 2 && str_or(list[0], "type", "") == "Split" && is_byte_level(list[1]) &&
        !bool_or(list[1], "use_regex", true) && !bool_or(list[1], "add_prefix_space", false) &&
        str_or(list[0], "behavior", "") == "Isolated" && !bool_or(list[0], "invert", false)) {
      const std::string re = str_or(at(list[0], "pattern"), "Regex", "");
      *byte_level = true;
      if (re == kLlama3Regex) return Pretokenizer::llama3;
      if (re == kQwen2Regex) return Pretokenizer::qwen2;
    }
  }
  unsupported("pre_tokenizer", pt);
}

std::string token_text(const Json& j) {  // "x" or {"content": "x"}
  if (j.type == Json::Type::string) return j.str;
  if (contains(j, "content")) return str(at(j, "content"), "\"content\"");
  return "";
}

}  // namespace

bool byte_level_decode(const std::string& piece, std::string* raw) {
  // GPT-2 bytes_to_unicode: printable bytes map to themselves, the others to U+0100 + k in order.
  static int32_t to_byte[0x200];
  static bool built = false;
  if (!built) {
    for (int32_t& b : to_byte) b = -1;
    int k = 0;
    for (int b = 0; b < 256; ++b) {
      const bool keep = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_byte[keep ? b : 0x100 + k++] = b;
    }
    built = true;
  }
  raw->clear();
  for (size_t i = 0; i < piece.size();) {
    const unsigned char c = static_cast<unsigned char>(piece[i]);
    uint32_t cp;
    size_t n;
    if (c < 0x80) {
      cp = c, n = 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < piece.size()) {
      cp = ((c & 0x1F) << 6) | (static_cast<unsigned char>(piece[i + 1]) & 0x3F), n = 2;
    } else {
      return false;
    }
    if (cp >= 0x200 || to_byte[cp] < 0) return false;
    raw->push_back(static_cast<char>(to_byte[cp]));
    i += n;
  }
  return true;
}

namespace {
TokenizerSpec read_json_checked(const std::string& path);
}

TokenizerSpec read_tokenizer_json(const std::string& path) {
  try {
    return read_json_checked(path);
  } catch (const ShapeError& e) {
    throw PackError(path + ": malformed tokenizer.json (" + e.what + ")");
  }
}

namespace {
Json parse_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return parse_json(std::string(bytes.begin(), bytes.end()), path + ": not valid JSON");
}

TokenizerSpec read_json_checked(const std::string& path) {
  const Json j = parse_file(path);
  if (j.type != Json::Type::object || !j.find("model") ||
      j.find("model")->type != Json::Type::object)
    throw PackError(path + ": no \"model\" object: not a Hugging Face tokenizer.json");
  const Json& model = at(j, "model");
  if (str_or(model, "type", "BPE") != "BPE" || !contains(model, "merges")) {
    Json type = member(model, "type");
    if (!contains(model, "type")) type.type = Json::Type::string, type.str = "?";
    unsupported("model type (only BPE)", type);
  }
  if (contains(model, "dropout") && member(model, "dropout").type != Json::Type::null) {
    const Json& dropout = member(model, "dropout");
    expect_type(dropout, Json::Type::number, "\"dropout\"");
    if (dropout.num != 0.0) unsupported("BPE dropout", dropout);
  }
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (member(model, k).type == Json::Type::string && !member(model, k).str.empty())
      unsupported(k, member(model, k));

  TokenizerSpec s;
  s.algorithm = TokenizerAlgorithm::bpe;
  bool byte_level = false;
  s.pretokenizer = pretokenizer_of(member(j, "pre_tokenizer"), &byte_level);
  const Json& norm = member(j, "normalizer");
  bool spm_style = false;
  if (norm.type != Json::Type::null) {
    // Llama 2's conversion: Prepend("▁") then Replace(" ", "▁").
    const std::vector<Json>& list = contains(norm, "normalizers")
                                        ? items(at(norm, "normalizers"), "\"normalizers\"")
                                        : kEmptyArray.items;
    if (str_or(norm, "type", "") == "Sequence" && list.size() == 2 &&
        str_or(list[0], "type", "") == "Prepend" &&
        str_or(list[0], "prepend", "") == "\xE2\x96\x81" &&
        str_or(list[1], "type", "") == "Replace" &&
        str_or(at(list[1], "pattern"), "String", "") == " " &&
        str_or(list[1], "content", "") == "\xE2\x96\x81" && !byte_level) {
      spm_style = true;
    } else {
      unsupported("normalizer", norm);
    }
  }
  if (byte_level) s.flags |= kTokFlagByteLevel;
  if (spm_style) s.flags |= kTokFlagDummyPrefix | kTokFlagPrefixEachSegment | kTokFlagSpaceEscape;
  if (bool_or(model, "byte_fallback", false)) s.flags |= kTokFlagByteFallback;
  if (bool_or(model, "ignore_merges", false)) s.flags |= kTokFlagIgnoreMerges;
  s.flags |= kTokFlagMatchControl;

  // Vocabulary (+ added tokens) by id; no gaps.
  std::map<int64_t, std::string> by_id;
  std::map<std::string, int32_t> by_piece;  // the stored (json) spelling
  const Json& vocab = at(model, "vocab");
  expect_type(vocab, Json::Type::object, "\"vocab\"");
  for (const auto& [piece, value] : vocab.members) {
    const int64_t id =
        json_to_int(value, path + ": vocab id of \"" + piece + "\"", 0, (int64_t{1} << 24) - 1);
    by_id[id] = piece;
    by_piece[piece] = static_cast<int32_t>(id);
  }
  std::map<int64_t, bool> added_special;
  const Json& added = contains(j, "added_tokens") ? at(j, "added_tokens") : kEmptyArray;
  for (const Json& a : items(added, "\"added_tokens\"")) {
    const int64_t id =
        json_to_int(at(a, "id"), path + ": added token id", 0, (int64_t{1} << 24) - 1);
    if (bool_or(a, "single_word", false) || bool_or(a, "lstrip", false) ||
        bool_or(a, "rstrip", false))
      unsupported("added token option (single_word/lstrip/rstrip)", a);
    if (!bool_or(a, "special", false) && bool_or(a, "normalized", false) && spm_style)
      unsupported("normalized added token", a);
    by_id[id] = str(at(a, "content"), "added token \"content\"");
    added_special[id] = bool_or(a, "special", false);
  }
  const int64_t n = by_id.empty() ? 0 : by_id.rbegin()->first + 1;
  if (static_cast<int64_t>(by_id.size()) != n)
    throw PackError(path + ": token ids have gaps (" + std::to_string(by_id.size()) +
                    " tokens, highest id " + std::to_string(n - 1) + ")");
  s.pieces.resize(n);
  s.types.assign(n, static_cast<uint8_t>(TokenType::normal));
  for (const auto& [id, text] : by_id) {
    std::string stored = text;
    if (added_special.count(id)) {
      s.types[id] =
          static_cast<uint8_t>(added_special[id] ? TokenType::control : TokenType::user_defined);
    } else if (byte_level) {
      if (!byte_level_decode(text, &stored))
        throw PackError(path + ": vocab piece " + std::to_string(id) +
                        " is outside the byte-level alphabet");
    } else {
      stored = sentencepiece_to_spaces(stored);
      if ((s.flags & kTokFlagByteFallback) && stored.size() == 6 &&
          stored.compare(0, 3, "<0x") == 0 && stored[5] == '>')
        s.types[id] = static_cast<uint8_t>(TokenType::byte);
    }
    s.pieces[id] = stored;
  }
  // Merges: "a b" strings or [a, b] pairs, in rank order.
  for (const Json& m : items(at(model, "merges"), "\"merges\"")) {
    std::string a, b;
    if (m.type == Json::Type::string) {
      const std::string& t = m.str;
      const size_t sp = t.find(' ');
      if (sp == std::string::npos || t.find(' ', sp + 1) != std::string::npos)
        throw PackError(path + ": malformed merge \"" + t + "\"");
      a = t.substr(0, sp), b = t.substr(sp + 1);
    } else if (m.type == Json::Type::array && m.items.size() == 2) {
      a = str(m.items[0], "a merge's first piece"), b = str(m.items[1], "a merge's second piece");
    } else {
      throw PackError(path + ": malformed merge " + dump(m));
    }
    const auto ia = by_piece.find(a), ib = by_piece.find(b), ic = by_piece.find(a + b);
    if (ia == by_piece.end() || ib == by_piece.end() || ic == by_piece.end())
      throw PackError(path + ": merge \"" + a + " " + b + "\" refers to a piece not in the vocab");
    s.merges.push_back({ia->second, ib->second, ic->second});
  }
  if (member(model, "unk_token").type == Json::Type::string) {
    const auto it = by_piece.find(member(model, "unk_token").str);
    if (it != by_piece.end()) {
      s.unk = it->second;
      s.types[s.unk] = static_cast<uint8_t>(TokenType::unknown);
    }
  }
  auto id_of = [&](const std::string& text) -> int32_t {
    for (int64_t id = 0; id < n; ++id)
      if (by_id[id] == text) return static_cast<int32_t>(id);
    return -1;
  };
  // BOS: the post-processor's template (TemplateProcessing, possibly inside a Sequence).
  std::function<void(const Json&)> scan_post = [&](const Json& pp) {
    if (pp.type != Json::Type::object) return;
    if (str_or(pp, "type", "") == "Sequence")
      for (const Json& q : items(at(pp, "processors"), "\"processors\"")) scan_post(q);
    if (str_or(pp, "type", "") == "TemplateProcessing") {
      const std::vector<Json>& single = items(at(pp, "single"), "\"single\"");
      auto special_id = [&](const Json& piece) {
        return str(at(at(piece, "SpecialToken"), "id"), "a SpecialToken's \"id\"");
      };
      if (!single.empty() && contains(single[0], "SpecialToken")) {
        s.bos = id_of(special_id(single[0]));
        if (s.bos >= 0) s.flags |= kTokFlagAddBos;
      }
      if (single.size() >= 2 && contains(single.back(), "SpecialToken")) {
        s.eos = id_of(special_id(single.back()));
        if (s.eos >= 0) s.flags |= kTokFlagAddEos;
      }
    }
  };
  scan_post(member(j, "post_processor"));
  // tokenizer_config.json beside it: bos/eos names (add_bos_token is what transformers'
  // LlamaTokenizerFast turns into the template above, so the template stays authoritative).
  const std::filesystem::path config =
      std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config)) {
    const Json c = parse_file(config.string());
    if (contains(c, "bos_token") && s.bos < 0) s.bos = id_of(token_text(at(c, "bos_token")));
    if (contains(c, "eos_token")) {
      const int32_t e = id_of(token_text(at(c, "eos_token")));
      if (e >= 0 && !(s.flags & kTokFlagAddEos)) s.eos = e;
    }
    if (contains(c, "pad_token")) s.pad = id_of(token_text(at(c, "pad_token")));
  }
  if (s.eos >= 0 && !(s.flags & kTokFlagAddEos)) s.eog.push_back(s.eos);
  add_conventional_eog(s);
  if (s.eos < 0 && !s.eog.empty()) s.eos = s.eog[0];
  s.source = "tokenizer.json";
  return s;
}
}  // namespace

}  // namespace einfer::pack
