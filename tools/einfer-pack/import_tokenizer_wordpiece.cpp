// A BERT vocab.txt (one WordPiece token per line, id = line number), as sentence-transformers and
// older BERT folders ship it without a tokenizer.json: read as the tokenizer.json transformers'
// BertTokenizerFast converts it to (BertNormalizer with tokenizer_config.json's do_lower_case,
// strip_accents and tokenize_chinese_chars, BertPreTokenizer, WordPiece with "##" and 100
// characters per word, [CLS] text [SEP], the special tokens matched in text).
#include <filesystem>
#include <string>
#include <vector>

#include "models/tokenizer_pretokenize.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/tokenizer_json.h"

namespace einfer::pack {
namespace {

using namespace tokjson;

Json string_json(const std::string& s) {
  Json j;
  j.type = Json::Type::string;
  j.str = s;
  return j;
}
Json bool_json(bool b) {
  Json j;
  j.type = Json::Type::boolean;
  j.b = b;
  return j;
}
Json number_json(double v) {
  Json j;
  j.type = Json::Type::number;
  j.num = v;
  return j;
}
Json object_json() {
  Json j;
  j.type = Json::Type::object;
  return j;
}

// The lines of the file, each without its line end and trailing whitespace (what the reference's
// WordPiece::read_file keeps: Rust's lines() then trim_end()).
std::vector<std::string> vocab_lines(const std::vector<uint8_t>& b) {
  std::vector<std::string> lines;
  std::string text(b.begin(), b.end());
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    while (!line.empty()) {  // trailing White_Space characters go
      size_t start = line.size() - 1;
      while (start > 0 && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) --start;
      const CodePoint c = utf8_decode(line.data(), line.size(), start);
      if (start + c.bytes != line.size() || c.cp == kInvalidCodePoint || !is_white_space(c.cp))
        break;
      line.resize(start);
    }
    lines.push_back(line);
  }
  return lines;
}

std::string config_token(const Json* config, const char* key, const char* def) {
  if (config == nullptr || !contains(*config, key)) return def;
  const Json& v = at(*config, key);
  if (v.type == Json::Type::string) return v.str;
  if (contains(v, "content")) return str(at(v, "content"), "\"content\"");
  return def;
}

}  // namespace

bool looks_like_wordpiece_vocab(const std::vector<uint8_t>& b) {
  for (uint8_t c : b)
    if (c == 0) return false;
  for (const std::string& line : vocab_lines(b))
    if (line == "[UNK]") return true;
  return false;
}

TokenizerSpec wordpiece_spec(const WordPieceVocab& v, const std::string& path) {
  Json j = object_json();
  Json model = object_json();
  model.members["type"] = string_json("WordPiece");
  model.members["unk_token"] = string_json(v.unk);
  model.members["continuing_subword_prefix"] = string_json("##");
  model.members["max_input_chars_per_word"] = number_json(100);
  Json vocab = object_json();
  for (size_t id = 0; id < v.lines.size(); ++id) {
    if (vocab.members.count(v.lines[id]))
      throw PackError(path + ": token \"" + v.lines[id] + "\" appears twice (lines " +
                      std::to_string(vocab.members[v.lines[id]].num + 1) + " and " +
                      std::to_string(id + 1) + ")");
    vocab.members[v.lines[id]] = number_json(static_cast<double>(id));
  }
  model.members["vocab"] = vocab;
  j.members["model"] = model;

  Json norm = object_json();
  norm.members["type"] = string_json("BertNormalizer");
  norm.members["clean_text"] = bool_json(true);
  norm.members["lowercase"] = bool_json(v.lowercase);
  norm.members["handle_chinese_chars"] = bool_json(v.chinese);
  norm.members["strip_accents"] = v.strip_accents;
  j.members["normalizer"] = norm;
  Json pre = object_json();
  pre.members["type"] = string_json("BertPreTokenizer");
  j.members["pre_tokenizer"] = pre;

  // The special tokens, matched in text like the converted tokenizer's added tokens.
  Json added;
  added.type = Json::Type::array;
  for (const std::string& token : {v.pad, v.unk, v.cls, v.sep, v.mask}) {
    const auto it = vocab.members.find(token);
    if (it == vocab.members.end()) continue;
    Json a = object_json();
    a.members["id"] = it->second;
    a.members["content"] = string_json(token);
    a.members["special"] = bool_json(true);
    added.items.push_back(a);
  }
  j.members["added_tokens"] = added;
  Json post = object_json();
  post.members["type"] = string_json("BertProcessing");
  Json cls, sep;
  cls.type = sep.type = Json::Type::array;
  cls.items = {string_json(v.cls)};
  sep.items = {string_json(v.sep)};
  post.members["cls"] = cls;
  post.members["sep"] = sep;
  j.members["post_processor"] = post;
  return tokenizer_spec_from_json(j, path);
}

TokenizerSpec read_wordpiece_vocab(const std::vector<uint8_t>& b, const std::string& path) {
  const std::filesystem::path config_path =
      std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  Json config_json;
  const Json* config = nullptr;
  if (std::filesystem::exists(config_path)) {
    const std::vector<uint8_t> c = read_file(config_path.string());
    config_json = parse_json(std::string(c.begin(), c.end()), config_path.string());
    if (config_json.type == Json::Type::object) config = &config_json;
  }
  WordPieceVocab v;
  v.lines = vocab_lines(b);
  v.lowercase = config == nullptr || bool_or(*config, "do_lower_case", true);
  v.chinese = config == nullptr || bool_or(*config, "tokenize_chinese_chars", true);
  if (config != nullptr && contains(*config, "strip_accents"))
    v.strip_accents = at(*config, "strip_accents");
  v.unk = config_token(config, "unk_token", "[UNK]");
  v.cls = config_token(config, "cls_token", "[CLS]");
  v.sep = config_token(config, "sep_token", "[SEP]");
  v.pad = config_token(config, "pad_token", "[PAD]");
  v.mask = config_token(config, "mask_token", "[MASK]");
  TokenizerSpec s;
  try {
    s = wordpiece_spec(v, path);
  } catch (const ShapeError& e) {
    throw PackError(path + ": tokenizer_config.json: " + e.what);
  }
  s.source = "WordPiece vocab.txt";
  return s;
}

}  // namespace einfer::pack
