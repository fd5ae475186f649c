// Typed access to a parsed Hugging Face tokenizer.json for the tokenizer importers: members of
// the right JSON type or a ShapeError (read_tokenizer_json turns it into "malformed
// tokenizer.json (...)"), and "unsupported <what>: <json>" for components einfer does not
// reproduce.
#pragma once

#include <string>
#include <vector>

#include "models/tokenizer_packed.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/json.h"

namespace einfer::pack::tokjson {

struct ShapeError {
  std::string what;
};

extern const Json kNull;        // a null value
extern const Json kEmptyArray;  // []

void expect_type(const Json& v, Json::Type t, const std::string& what);
// obj[key] or null when absent; obj must be an object.
const Json* find_in(const Json& obj, const std::string& key);
// obj[key], a null value when absent.
const Json& member(const Json& obj, const std::string& key);
// obj[key], which must be present.
const Json& at(const Json& obj, const std::string& key);
bool contains(const Json& obj, const std::string& key);
// nlohmann-style value(): the default when absent, the value when of the right type, else an error.
std::string str_or(const Json& obj, const std::string& key, const std::string& def);
bool bool_or(const Json& obj, const std::string& key, bool def);
const std::string& str(const Json& v, const std::string& what);
const std::vector<Json>& items(const Json& v, const std::string& what);
// Compact JSON text of a value, for messages.
std::string dump(const Json& v);
[[noreturn]] void unsupported(const std::string& what, const Json& j);

}  // namespace einfer::pack::tokjson

namespace einfer::pack {

// What a tokenizer.json normalizer asks for, in einfer's terms (import_tokenizer_steps.cpp).
struct NormalizerPlan {
  uint32_t steps = 0;    // kNorm* and a UnicodeForm (models/tokenizer_normalize.h)
  bool prepend = false;  // Prepend("▁"): a dummy-prefix space on every segment
  bool escape = false;  // Replace(" ", "▁"): spaces are the pieces' ▁, which are stored as spaces
};
// The normalizer (null, one, or a Sequence) mapped onto einfer's fixed order of steps; anything
// einfer cannot reproduce exactly (another component, an order that would give other text) is
// refused by name.
NormalizerPlan normalizer_plan(const Json& normalizer);
// The pre-tokenizer, given what the normalizer did; *byte_level when it is GPT-2's byte level.
Pretokenizer pretokenizer_plan(const Json& pre_tokenizer, const NormalizerPlan& normalizer,
                               bool* byte_level);

// The tokenizer of a parsed tokenizer.json (import_tokenizer_json.cpp); `path` names it in
// messages and locates tokenizer_config.json beside it. Throws ShapeError or PackError.
TokenizerSpec tokenizer_spec_from_json(const Json& tokenizer_json, const std::string& path);

// A BERT vocab.txt: text with a "[UNK]" line (import_tokenizer_wordpiece.cpp).
bool looks_like_wordpiece_vocab(const std::vector<uint8_t>& bytes);
TokenizerSpec read_wordpiece_vocab(const std::vector<uint8_t>& bytes, const std::string& path);

// A WordPiece vocabulary (vocab.txt spelling: word-initial pieces plain, continuations "##...")
// with its BertNormalizer settings and special tokens, as transformers' BertTokenizerFast builds
// it: BertPreTokenizer, "##" continuations, 100 characters per word, [CLS] text [SEP], the
// special tokens matched in text. vocab.txt folders and GGUF "bert" vocabularies read this.
struct WordPieceVocab {
  std::vector<std::string> lines;  // by id
  bool lowercase = true;
  bool chinese = true;  // tokenize_chinese_chars
  Json strip_accents;   // null: as lowercase
  std::string unk = "[UNK]", cls = "[CLS]", sep = "[SEP]", pad = "[PAD]", mask = "[MASK]";
};
TokenizerSpec wordpiece_spec(const WordPieceVocab& vocab, const std::string& path);

}  // namespace einfer::pack
