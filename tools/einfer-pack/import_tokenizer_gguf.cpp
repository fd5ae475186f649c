// The tokenizer.ggml.* vocabulary of a GGUF file (llama.cpp's keys): "llama" vocabularies are
// SentencePiece BPE (pieces with "▁", scores, token types), "gpt2" ones byte-level BPE (pieces in
// GPT-2's byte alphabet, "a b" merges, the pre-tokenizer named by tokenizer.ggml.pre), "bert" ones
// WordPiece (gguf_wordpiece below).
#include <algorithm>
#include <cstring>
#include <map>

#include "tools/einfer-pack/gguf_meta.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/tokenizer_json.h"

namespace einfer::pack {
namespace {

std::map<std::string, GgufValue> read_kvs(const std::vector<uint8_t>& b) {
  GgufCursor c{b};
  c.get<uint32_t>();  // magic, checked by the caller
  const uint32_t version = c.get<uint32_t>();
  if (version != 2 && version != 3)
    throw PackError("gguf: version " + std::to_string(version) + " unsupported (2 or 3)");
  c.get<uint64_t>();  // tensor count
  return gguf_read_metadata(c, c.get<uint64_t>(), "tokenizer.ggml.");
}

// llama.cpp's WordPiece ("bert") vocabulary, which convert_hf_to_gguf.py BertModel.set_vocab
// spells with a phantom space: "▁word" for word-initial pieces, continuations without their "##",
// bracketed tokens ([CLS], [unused0]) as they are. Read back into vocab.txt spelling and set up as
// the BERT uncased tokenizer (BertNormalizer lowercasing, stripping accents, spacing CJK;
// llama.cpp's WPM always lowercases). [CLS] and [SEP] are the cls / bos and separator / eos ids
// when the file names them (the converter writes no cls id), else the tokens spelled so.
TokenizerSpec gguf_wordpiece(const std::map<std::string, GgufValue>& kv,
                             const std::vector<std::string>& tokens, const std::string& path) {
  static const std::string kPhantom = "\xe2\x96\x81";
  WordPieceVocab v;
  for (const std::string& t : tokens) {
    if (t.compare(0, kPhantom.size(), kPhantom) == 0)
      v.lines.push_back(t.substr(kPhantom.size()));
    else if (t.size() >= 2 && t.front() == '[' && t.back() == ']')
      v.lines.push_back(t);
    else
      v.lines.push_back("##" + t);
  }
  auto named = [&](std::initializer_list<const char*> keys, std::string* token) {
    for (const char* k : keys) {
      auto it = kv.find(k);
      if (it == kv.end() || it->second.num == 4294967295.0) continue;  // u32 -1: none
      if (!(it->second.num >= 0 && it->second.num < static_cast<double>(tokens.size())))
        throw PackError(path + ": GGUF " + k + " past the tokens");
      *token = v.lines[static_cast<size_t>(it->second.num)];
      return;
    }
  };
  named({"tokenizer.ggml.cls_token_id", "tokenizer.ggml.bos_token_id"}, &v.cls);
  named({"tokenizer.ggml.seperator_token_id", "tokenizer.ggml.eos_token_id"}, &v.sep);
  named({"tokenizer.ggml.unknown_token_id"}, &v.unk);
  named({"tokenizer.ggml.padding_token_id"}, &v.pad);
  named({"tokenizer.ggml.mask_token_id"}, &v.mask);
  for (const std::string* special : {&v.cls, &v.sep, &v.unk})
    if (std::find(v.lines.begin(), v.lines.end(), *special) == v.lines.end())
      throw PackError(path + ": GGUF bert vocabulary without its " + *special + " token");
  TokenizerSpec s = wordpiece_spec(v, path);
  s.source = "gguf bert vocabulary";
  return s;
}

}  // namespace

TokenizerSpec gguf_tokenizer(const std::vector<uint8_t>& b, const std::string& path) {
  const std::map<std::string, GgufValue> kv = read_kvs(b);
  auto has = [&](const char* k) { return kv.count(k) > 0; };
  auto num = [&](const char* k, double fallback) { return has(k) ? kv.at(k).num : fallback; };
  if (!has("tokenizer.ggml.model") || !has("tokenizer.ggml.tokens"))
    throw PackError(path + ": GGUF file carries no tokenizer (tokenizer.ggml.model/tokens)");
  const std::string model = kv.at("tokenizer.ggml.model").str;
  const std::vector<std::string>& tokens = kv.at("tokenizer.ggml.tokens").strs;
  const size_t n = tokens.size();
  if (n == 0) throw PackError(path + ": GGUF tokenizer.ggml.tokens is empty");
  TokenizerSpec s;
  s.pieces.resize(n);
  s.types.assign(n, static_cast<uint8_t>(TokenType::normal));
  if (has("tokenizer.ggml.token_type")) {
    const auto& t = kv.at("tokenizer.ggml.token_type").nums;
    if (t.size() != n) throw PackError(path + ": GGUF token_type count differs from tokens");
    for (size_t i = 0; i < n; ++i) {
      if (t[i] < 1 || t[i] > 6)
        throw PackError(path + ": GGUF token " + std::to_string(i) + " has unknown type");
      s.types[i] = static_cast<uint8_t>(t[i]);
    }
  }
  auto id = [&](const char* k) {
    const double v = num(k, -1);
    if (v == 4294967295.0) return -1;  // u32 -1: llama.cpp's "none"
    if (v >= static_cast<double>(n)) throw PackError(path + ": GGUF " + k + " past the tokens");
    return v < 0 ? -1 : static_cast<int32_t>(v);
  };
  s.bos = id("tokenizer.ggml.bos_token_id");
  s.eos = id("tokenizer.ggml.eos_token_id");
  s.unk = id("tokenizer.ggml.unknown_token_id");
  s.pad = id("tokenizer.ggml.padding_token_id");
  if (model == "llama") {
    s.algorithm = TokenizerAlgorithm::sentencepiece_bpe;
    const auto& scores = kv.count("tokenizer.ggml.scores") ? kv.at("tokenizer.ggml.scores").nums
                                                           : std::vector<double>();
    if (scores.size() != n) throw PackError(path + ": GGUF scores missing or of the wrong count");
    bool bytes = false;
    for (size_t i = 0; i < n; ++i) {
      const std::string p = sentencepiece_to_spaces(tokens[i]);
      s.pieces[i] = p;
      s.scores.push_back(static_cast<float>(scores[i]));
      if (s.types[i] == static_cast<uint8_t>(TokenType::byte)) {
        bytes = true;
        if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>')
          throw PackError(path + ": GGUF byte token " + std::to_string(i) + " is not <0xNN>");
      }
    }
    s.flags = kTokFlagSpaceEscape | (bytes ? kTokFlagByteFallback : 0);
    if (num("tokenizer.ggml.add_space_prefix", 1) != 0) s.flags |= kTokFlagDummyPrefix;
    if (num("tokenizer.ggml.remove_extra_whitespaces", 0) != 0)
      s.flags |= kTokFlagRemoveExtraSpaces;
    if (num("tokenizer.ggml.add_bos_token", 1) != 0 && s.bos >= 0) s.flags |= kTokFlagAddBos;
  } else if (model == "gpt2") {
    s.algorithm = TokenizerAlgorithm::bpe;
    s.flags = kTokFlagByteLevel | kTokFlagMatchControl;
    const std::string pre = has("tokenizer.ggml.pre") ? kv.at("tokenizer.ggml.pre").str : "default";
    if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3" || pre == "smaug-bpe") {
      s.pretokenizer = Pretokenizer::llama3;
      s.flags |= kTokFlagIgnoreMerges;
    } else if (pre == "qwen2") {
      s.pretokenizer = Pretokenizer::qwen2;
    } else if (pre == "gpt-2" || pre == "default" || pre == "phi-2") {
      s.pretokenizer = Pretokenizer::gpt2;
    } else if (pre == "starcoder" || pre == "refact" || pre == "smollm") {
      s.pretokenizer = Pretokenizer::digits_gpt2;
    } else {
      throw PackError(path + ": GGUF pre-tokenizer '" + pre + "' is not supported");
    }
    std::map<std::string, int32_t> by_piece;
    for (size_t i = 0; i < n; ++i) {
      const bool special = s.types[i] == static_cast<uint8_t>(TokenType::control) ||
                           s.types[i] == static_cast<uint8_t>(TokenType::user_defined);
      if (special || !byte_level_decode(tokens[i], &s.pieces[i])) s.pieces[i] = tokens[i];
      by_piece.emplace(tokens[i], static_cast<int32_t>(i));
    }
    if (!has("tokenizer.ggml.merges")) throw PackError(path + ": GGUF gpt2 vocab without merges");
    for (const std::string& m : kv.at("tokenizer.ggml.merges").strs) {
      const size_t sp = m.find(' ', 1);
      if (sp == std::string::npos) throw PackError(path + ": GGUF malformed merge '" + m + "'");
      const std::string left(m, 0, sp), right(m, sp + 1);
      std::string joined = left;
      joined.append(right);
      const auto a = by_piece.find(left), b2 = by_piece.find(right), c = by_piece.find(joined);
      if (a == by_piece.end() || b2 == by_piece.end() || c == by_piece.end())
        throw PackError(path + ": GGUF merge '" + m + "' refers to a piece not in the vocab");
      s.merges.push_back({a->second, b2->second, c->second});
    }
    if (num("tokenizer.ggml.add_bos_token", 0) != 0 && s.bos >= 0) s.flags |= kTokFlagAddBos;
  } else if (model == "bert") {
    return gguf_wordpiece(kv, tokens, path);
  } else {
    throw PackError(path + ": GGUF tokenizer model '" + model +
                    "' is not supported (llama, gpt2 or bert)");
  }
  if (num("tokenizer.ggml.add_eos_token", 0) != 0 && s.eos >= 0) s.flags |= kTokFlagAddEos;
  if (s.eos >= 0) s.eog.push_back(s.eos);
  for (const char* k : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    const int32_t e = id(k);
    if (e >= 0 && e != s.eos) s.eog.push_back(e);
  }
  add_conventional_eog(s);
  s.source = "gguf " + model + " vocabulary";
  return s;
}

bool gguf_tokenizer_if_any(const std::vector<uint8_t>& b, const std::string& path,
                           TokenizerSpec* out) {
  if (read_kvs(b).count("tokenizer.ggml.model") == 0) return false;
  *out = gguf_tokenizer(b, path);
  return true;
}

TokenizerSpec read_gguf_tokenizer(const std::string& path) {
  return gguf_tokenizer(read_file(path), path);
}

}  // namespace einfer::pack
