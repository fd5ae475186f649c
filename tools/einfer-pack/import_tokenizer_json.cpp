// Hugging Face tokenizer.json (+ tokenizer_config.json beside it): BPE models, byte-level
// (GPT-2, SmolLM, Llama 3, Qwen2/2.5/3 families) or character BPE with byte fallback (Llama 2's
// and Gemma's conversions), and WordPiece (BERT); normalizers and pre-tokenizers as
// import_tokenizer_steps.cpp maps them. Every component einfer cannot reproduce exactly is
// refused, by name.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/json.h"
#include "tools/einfer-pack/tokenizer_json.h"

namespace einfer::pack {
namespace {

using namespace tokjson;

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
using namespace tokjson;
TokenizerSpec spec_from_json(const Json& j, const std::string& path);
}  // namespace

TokenizerSpec read_tokenizer_json_bytes(const std::vector<uint8_t>& bytes,
                                        const std::string& path) {
  const Json j = parse_json(std::string(bytes.begin(), bytes.end()), path + ": not valid JSON");
  try {
    return spec_from_json(j, path);
  } catch (const ShapeError& e) {
    throw PackError(path + ": malformed tokenizer.json (" + e.what + ")");
  }
}

TokenizerSpec read_tokenizer_json(const std::string& path) {
  return read_tokenizer_json_bytes(read_file(path), path);
}

namespace {
Json parse_file(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  return parse_json(std::string(bytes.begin(), bytes.end()), path + ": not valid JSON");
}

// A vocabulary piece as the image stores it (docs/format.md): byte-level pieces as raw bytes,
// ▁ as a space where the normalizer escapes spaces, WordPiece word-initial pieces after a space
// and continuations without their prefix.
std::string stored_piece(const std::string& text, int64_t id, const TokenizerSpec& s,
                         const std::string& wp_prefix, const std::string& path) {
  if (s.algorithm == TokenizerAlgorithm::wordpiece) {
    if (text.compare(0, wp_prefix.size(), wp_prefix) == 0) return text.substr(wp_prefix.size());
    return " " + text;
  }
  std::string stored = text;
  if (s.flags & kTokFlagByteLevel) {
    if (!byte_level_decode(text, &stored))
      throw PackError(path + ": vocab piece " + std::to_string(id) +
                      " is outside the byte-level alphabet");
  } else if (s.flags & kTokFlagSpaceEscape) {
    stored = sentencepiece_to_spaces(stored);
  }
  return stored;
}

TokenizerSpec spec_from_json(const Json& j, const std::string& path) {
  if (j.type != Json::Type::object || !j.find("model") ||
      j.find("model")->type != Json::Type::object)
    throw PackError(path + ": no \"model\" object: not a Hugging Face tokenizer.json");
  const Json& model = at(j, "model");
  const std::string model_type = str_or(model, "type", contains(model, "merges") ? "BPE" : "?");
  TokenizerSpec s;
  std::string wp_prefix;
  if (model_type == "BPE" && contains(model, "merges")) {
    s.algorithm = TokenizerAlgorithm::bpe;
    if (contains(model, "dropout") && member(model, "dropout").type != Json::Type::null) {
      const Json& dropout = member(model, "dropout");
      expect_type(dropout, Json::Type::number, "\"dropout\"");
      if (dropout.num != 0.0) unsupported("BPE dropout", dropout);
    }
    for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (member(model, k).type == Json::Type::string && !member(model, k).str.empty())
        unsupported(k, member(model, k));
    if (bool_or(model, "byte_fallback", false)) s.flags |= kTokFlagByteFallback;
    if (bool_or(model, "ignore_merges", false)) s.flags |= kTokFlagIgnoreMerges;
  } else if (model_type == "WordPiece") {
    s.algorithm = TokenizerAlgorithm::wordpiece;
    wp_prefix = str_or(model, "continuing_subword_prefix", "##");
    if (wp_prefix.empty())
      unsupported("WordPiece continuing_subword_prefix",
                  model.members.at("continuing_subword_prefix"));
    const Json& max_chars = member(model, "max_input_chars_per_word");
    s.max_word_chars =
        max_chars.type == Json::Type::null
            ? 100
            : static_cast<uint32_t>(json_to_int(max_chars, path + ": max_input_chars_per_word", 1,
                                                kTokenizerMaxWordChars));
  } else {
    Json type = member(model, "type");
    if (!contains(model, "type")) type.type = Json::Type::string, type.str = "?";
    unsupported("model type (only BPE and WordPiece)", type);
  }

  const NormalizerPlan norm = normalizer_plan(member(j, "normalizer"));
  bool byte_level = false;
  s.pretokenizer = pretokenizer_plan(member(j, "pre_tokenizer"), norm, &byte_level);
  if (byte_level && (norm.escape || norm.prepend))
    unsupported("normalizer escaping spaces before a byte-level pre-tokenizer",
                member(j, "normalizer"));
  if (byte_level && s.algorithm != TokenizerAlgorithm::bpe)
    unsupported("byte-level pre-tokenizer with a WordPiece model", member(j, "pre_tokenizer"));
  s.normalizer = norm.steps;
  if (byte_level) s.flags |= kTokFlagByteLevel;
  if (norm.escape) s.flags |= kTokFlagSpaceEscape;
  if (norm.prepend) s.flags |= kTokFlagDummyPrefix | kTokFlagPrefixEachSegment;
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
  bool added_escaped = false, added_spaced = false;  // some contain ▁ / a plain space
  for (const Json& a : items(added, "\"added_tokens\"")) {
    const int64_t id =
        json_to_int(at(a, "id"), path + ": added token id", 0, (int64_t{1} << 24) - 1);
    if (bool_or(a, "single_word", false) || bool_or(a, "lstrip", false) ||
        bool_or(a, "rstrip", false))
      unsupported("added token option (single_word/lstrip/rstrip)", a);
    // Hugging Face matches those in the normalized text; einfer matches added tokens in the
    // text as given, which is the same only without a normalizer.
    if (!bool_or(a, "special", false) && bool_or(a, "normalized", false) &&
        (norm.steps != 0 || norm.escape || norm.prepend))
      unsupported("normalized added token", a);
    const std::string& content = str(at(a, "content"), "added token \"content\"");
    added_escaped = added_escaped || content.find("\xE2\x96\x81") != std::string::npos;
    added_spaced = added_spaced || content.find(' ') != std::string::npos;
    by_id[id] = content;
    added_special[id] = bool_or(a, "special", false);
  }
  if (norm.escape && added_escaped) {
    // Stored with ▁ as a space like every piece; matched against a ▁ in the text, as the
    // reference matches the added token's own spelling in the text as given.
    if (added_spaced) unsupported("added tokens with both spaces and \xE2\x96\x81", added);
    s.flags |= kTokFlagMatchEscapedSpace;
  }
  const int64_t n = by_id.empty() ? 0 : by_id.rbegin()->first + 1;
  if (static_cast<int64_t>(by_id.size()) != n)
    throw PackError(path + ": token ids have gaps (" + std::to_string(by_id.size()) +
                    " tokens, highest id " + std::to_string(n - 1) + ")");
  s.pieces.resize(n);
  s.types.assign(n, static_cast<uint8_t>(TokenType::normal));
  int byte_pieces = 0;
  for (const auto& [id, text] : by_id) {
    if (added_special.count(id)) {
      s.types[id] =
          static_cast<uint8_t>(added_special[id] ? TokenType::control : TokenType::user_defined);
      s.pieces[id] = (s.flags & kTokFlagMatchEscapedSpace) ? sentencepiece_to_spaces(text) : text;
      continue;
    }
    s.pieces[id] = stored_piece(text, id, s, wp_prefix, path);
    const std::string& stored = s.pieces[id];
    if (!byte_level && (s.flags & kTokFlagByteFallback) && stored.size() == 6 &&
        stored.compare(0, 3, "<0x") == 0 && stored[5] == '>') {
      s.types[id] = static_cast<uint8_t>(TokenType::byte);
      ++byte_pieces;
    }
  }
  // Merges: "a b" strings or [a, b] pairs, in rank order. A pair listed twice keeps its last rank
  // (the reference builds a map from the list, so the later entry wins).
  std::map<std::pair<int32_t, int32_t>, size_t> last_of;
  for (const Json& m : s.algorithm == TokenizerAlgorithm::bpe
                           ? items(at(model, "merges"), "\"merges\"")
                           : kEmptyArray.items) {
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
    last_of[{ia->second, ib->second}] = s.merges.size();
    s.merges.push_back({ia->second, ib->second, ic->second});
  }
  if (last_of.size() != s.merges.size()) {
    std::vector<std::array<int32_t, 3>> kept;
    for (size_t r = 0; r < s.merges.size(); ++r)
      if (last_of[{s.merges[r][0], s.merges[r][1]}] == r) kept.push_back(s.merges[r]);
    s.merges = kept;
  }
  if (member(model, "unk_token").type == Json::Type::string) {
    const auto it = by_piece.find(member(model, "unk_token").str);
    if (it != by_piece.end()) {
      s.unk = it->second;
      s.types[s.unk] = static_cast<uint8_t>(TokenType::unknown);
    }
  }
  if (s.algorithm == TokenizerAlgorithm::wordpiece && s.unk < 0)
    throw PackError(path + ": WordPiece model without its unk_token in the vocab");
  // fuse_unk only shows when characters can be unknown: no unk, or full byte fallback, hides it.
  if (bool_or(model, "fuse_unk", false) && s.unk >= 0 &&
      !((s.flags & kTokFlagByteFallback) && byte_pieces == 256))
    s.flags |= kTokFlagFuseUnk;
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
    if (str_or(pp, "type", "") == "BertProcessing" ||
        str_or(pp, "type", "") == "RobertaProcessing") {
      // {"cls": ["[CLS]", 101], "sep": ["[SEP]", 102]}: [CLS] text [SEP]
      const std::vector<Json>& cls = items(at(pp, "cls"), "\"cls\"");
      const std::vector<Json>& sep = items(at(pp, "sep"), "\"sep\"");
      if (!cls.empty()) s.bos = id_of(str(cls[0], "the cls token"));
      if (!sep.empty()) s.eos = id_of(str(sep[0], "the sep token"));
      if (s.bos >= 0) s.flags |= kTokFlagAddBos;
      if (s.eos >= 0) s.flags |= kTokFlagAddEos;
    }
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

TokenizerSpec tokenizer_spec_from_json(const Json& tokenizer_json, const std::string& path) {
  return spec_from_json(tokenizer_json, path);
}

}  // namespace einfer::pack
