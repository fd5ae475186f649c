// Hugging Face tokenizer.json (+ tokenizer_config.json beside it): BPE models, byte-level
// (GPT-2, SmolLM, Llama 3, Qwen2 families) or character BPE with byte fallback (Llama 2's
// conversion). Every component einfer cannot reproduce exactly is refused, by name.
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

namespace einfer::pack {
namespace {

using nlohmann::json;

const char* const kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

[[noreturn]] void unsupported(const std::string& what, const json& j) {
  std::string dump = j.dump();
  if (dump.size() > 200) dump = dump.substr(0, 200) + "...";
  throw PackError("tokenizer.json: unsupported " + what + ": " + dump);
}

bool is_byte_level(const json& pt) {
  return pt.is_object() && pt.value("type", "") == "ByteLevel";
}

// The pre-tokenizer families einfer implements (models/tokenizer_pretokenize.h).
Pretokenizer pretokenizer_of(const json& pt, bool* byte_level) {
  *byte_level = false;
  if (pt.is_null()) return Pretokenizer::none;
  if (is_byte_level(pt)) {
    if (pt.value("add_prefix_space", false)) unsupported("ByteLevel add_prefix_space", pt);
    *byte_level = true;
    return pt.value("use_regex", true) ? Pretokenizer::gpt2 : Pretokenizer::none;
  }
  if (pt.value("type", "") == "Sequence") {
    const json& list = pt.at("pretokenizers");
    if (list.size() == 2 && list[0].value("type", "") == "Digits" &&
        list[0].value("individual_digits", false) && is_byte_level(list[1]) &&
        list[1].value("use_regex", true) && !list[1].value("add_prefix_space", false)) {
      *byte_level = true;
      return Pretokenizer::digits_gpt2;
    }
    if (list.size() == 2 && list[0].value("type", "") == "Split" && is_byte_level(list[1]) &&
        !list[1].value("use_regex", true) && !list[1].value("add_prefix_space", false) &&
        list[0].value("behavior", "") == "Isolated" && !list[0].value("invert", false)) {
      const std::string re = list[0].at("pattern").value("Regex", "");
      *byte_level = true;
      if (re == kLlama3Regex) return Pretokenizer::llama3;
      if (re == kQwen2Regex) return Pretokenizer::qwen2;
    }
  }
  unsupported("pre_tokenizer", pt);
}

std::string token_text(const json& j) {  // "x" or {"content": "x"}
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content")) return j.at("content").get<std::string>();
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
  } catch (const nlohmann::json::exception& e) {
    throw PackError(path + ": malformed tokenizer.json (" + e.what() + ")");
  }
}

namespace {
TokenizerSpec read_json_checked(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file(path);
  json j;
  try {
    j = json::parse(bytes.begin(), bytes.end());
  } catch (const std::exception& e) {
    throw PackError(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("model") || !j.at("model").is_object())
    throw PackError(path + ": no \"model\" object: not a Hugging Face tokenizer.json");
  const json& model = j.at("model");
  if (model.value("type", "BPE") != "BPE" || !model.contains("merges"))
    unsupported("model type (only BPE)", model.value("type", json("?")));
  if (model.contains("dropout") && !model.at("dropout").is_null() &&
      model.at("dropout").get<double>() != 0.0)
    unsupported("BPE dropout", model.at("dropout"));
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(k) && model[k].is_string() && !model[k].get<std::string>().empty())
      unsupported(k, model[k]);

  TokenizerSpec s;
  s.algorithm = TokenizerAlgorithm::bpe;
  bool byte_level = false;
  s.pretokenizer = pretokenizer_of(j.value("pre_tokenizer", json()), &byte_level);
  const json norm = j.value("normalizer", json());
  bool spm_style = false;
  if (!norm.is_null()) {
    // Llama 2's conversion: Prepend("▁") then Replace(" ", "▁").
    const json& list = norm.value("normalizers", json::array());
    if (norm.value("type", "") == "Sequence" && list.size() == 2 &&
        list[0].value("type", "") == "Prepend" && list[0].value("prepend", "") == "\xE2\x96\x81" &&
        list[1].value("type", "") == "Replace" &&
        list[1].at("pattern").value("String", "") == " " &&
        list[1].value("content", "") == "\xE2\x96\x81" && !byte_level) {
      spm_style = true;
    } else {
      unsupported("normalizer", norm);
    }
  }
  if (byte_level) s.flags |= kTokFlagByteLevel;
  if (spm_style) s.flags |= kTokFlagDummyPrefix | kTokFlagPrefixEachSegment | kTokFlagSpaceEscape;
  if (model.value("byte_fallback", false)) s.flags |= kTokFlagByteFallback;
  if (model.value("ignore_merges", false)) s.flags |= kTokFlagIgnoreMerges;
  s.flags |= kTokFlagMatchControl;

  // Vocabulary (+ added tokens) by id; no gaps.
  std::map<int64_t, std::string> by_id;
  std::map<std::string, int32_t> by_piece;  // the stored (json) spelling
  for (auto it = model.at("vocab").begin(); it != model.at("vocab").end(); ++it) {
    const int64_t id = it.value().get<int64_t>();
    if (id < 0 || id >= (1 << 24)) throw PackError(path + ": vocab id out of range");
    by_id[id] = it.key();
    by_piece[it.key()] = static_cast<int32_t>(id);
  }
  std::map<int64_t, bool> added_special;
  for (const json& a : j.value("added_tokens", json::array())) {
    const int64_t id = a.at("id").get<int64_t>();
    if (id < 0 || id >= (1 << 24)) throw PackError(path + ": added token id out of range");
    if (a.value("single_word", false) || a.value("lstrip", false) || a.value("rstrip", false))
      unsupported("added token option (single_word/lstrip/rstrip)", a);
    if (!a.value("special", false) && a.value("normalized", false) && spm_style)
      unsupported("normalized added token", a);
    by_id[id] = a.at("content").get<std::string>();
    added_special[id] = a.value("special", false);
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
  for (const json& m : model.at("merges")) {
    std::string a, b;
    if (m.is_string()) {
      const std::string t = m.get<std::string>();
      const size_t sp = t.find(' ');
      if (sp == std::string::npos || t.find(' ', sp + 1) != std::string::npos)
        throw PackError(path + ": malformed merge \"" + t + "\"");
      a = t.substr(0, sp), b = t.substr(sp + 1);
    } else if (m.is_array() && m.size() == 2) {
      a = m[0].get<std::string>(), b = m[1].get<std::string>();
    } else {
      throw PackError(path + ": malformed merge " + m.dump());
    }
    const auto ia = by_piece.find(a), ib = by_piece.find(b), ic = by_piece.find(a + b);
    if (ia == by_piece.end() || ib == by_piece.end() || ic == by_piece.end())
      throw PackError(path + ": merge \"" + a + " " + b + "\" refers to a piece not in the vocab");
    s.merges.push_back({ia->second, ib->second, ic->second});
  }
  if (model.contains("unk_token") && model.at("unk_token").is_string()) {
    const auto it = by_piece.find(model.at("unk_token").get<std::string>());
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
  std::function<void(const json&)> scan_post = [&](const json& pp) {
    if (!pp.is_object()) return;
    if (pp.value("type", "") == "Sequence")
      for (const json& q : pp.at("processors")) scan_post(q);
    if (pp.value("type", "") == "TemplateProcessing") {
      const json& single = pp.at("single");
      if (!single.empty() && single[0].contains("SpecialToken")) {
        s.bos = id_of(single[0].at("SpecialToken").at("id").get<std::string>());
        if (s.bos >= 0) s.flags |= kTokFlagAddBos;
      }
      if (single.size() >= 2 && single[single.size() - 1].contains("SpecialToken")) {
        s.eos = id_of(single[single.size() - 1].at("SpecialToken").at("id").get<std::string>());
        if (s.eos >= 0) s.flags |= kTokFlagAddEos;
      }
    }
  };
  scan_post(j.value("post_processor", json()));
  // tokenizer_config.json beside it: bos/eos names (add_bos_token is what transformers'
  // LlamaTokenizerFast turns into the template above, so the template stays authoritative).
  const std::filesystem::path config =
      std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config)) {
    const std::vector<uint8_t> cb = read_file(config.string());
    json c;
    try {
      c = json::parse(cb.begin(), cb.end());
    } catch (const std::exception& e) {
      throw PackError(config.string() + ": not valid JSON: " + e.what());
    }
    if (c.contains("bos_token") && s.bos < 0) s.bos = id_of(token_text(c.at("bos_token")));
    if (c.contains("eos_token")) {
      const int32_t e = id_of(token_text(c.at("eos_token")));
      if (e >= 0 && !(s.flags & kTokFlagAddEos)) s.eos = e;
    }
    if (c.contains("pad_token")) s.pad = id_of(token_text(c.at("pad_token")));
  }
  if (s.eos >= 0 && !(s.flags & kTokFlagAddEos)) s.eog.push_back(s.eos);
  add_conventional_eog(s);
  if (s.eos < 0 && !s.eog.empty()) s.eos = s.eog[0];
  s.source = "tokenizer.json";
  return s;
}
}  // namespace

}  // namespace einfer::pack
