// tokenizer.json normalizers and pre-tokenizers onto what the device runs: the normalization
// steps in their fixed order (models/tokenizer_normalize.h), SentencePiece-style space escaping,
// and the pre-tokenizer families (models/tokenizer_pretokenize.h).
#include <string>
#include <vector>

#include "models/tokenizer_normalize.h"
#include "tools/einfer-pack/tokenizer_json.h"

namespace einfer::pack {
namespace {

using namespace tokjson;

const char* const kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char* const kSpm = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// The device runs the steps in this order; a sequence must list them so (ranks not decreasing).
enum Rank { kClean = 1, kChinese, kForm, kStripNonspacing, kStripMarks, kLowercase };

struct Step {
  int rank;
  uint32_t bits;
};

void flatten(const Json& n, std::vector<const Json*>* out) {
  if (str_or(n, "type", "") == "Sequence") {
    for (const Json& m : items(at(n, "normalizers"), "\"normalizers\"")) flatten(m, out);
  } else {
    out->push_back(&n);
  }
}

bool is_byte_level(const Json& pt) {
  return pt.type == Json::Type::object && str_or(pt, "type", "") == "ByteLevel";
}

}  // namespace

NormalizerPlan normalizer_plan(const Json& norm) {
  NormalizerPlan plan;
  if (norm.type == Json::Type::null) return plan;
  std::vector<const Json*> list;
  flatten(norm, &list);
  int last_rank = 0;
  bool spaces_made = false;  // a step so far can turn other characters into spaces
  for (const Json* n : list) {
    const std::string type = str_or(*n, "type", "");
    std::vector<Step> steps;
    if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
      const UnicodeForm f = type == "NFC"    ? UnicodeForm::nfc
                            : type == "NFD"  ? UnicodeForm::nfd
                            : type == "NFKC" ? UnicodeForm::nfkc
                                             : UnicodeForm::nfkd;
      steps.push_back({kForm, static_cast<uint32_t>(f)});
      if (f == UnicodeForm::nfkc || f == UnicodeForm::nfkd) spaces_made = true;  // NBSP -> ' '
    } else if (type == "Lowercase") {
      steps.push_back({kLowercase, kNormLowercase});
    } else if (type == "StripAccents") {
      steps.push_back({kStripMarks, kNormStripMarks});
    } else if (type == "BertNormalizer") {
      const bool lower = bool_or(*n, "lowercase", true);
      // strip_accents null follows lowercase (transformers' BertTokenizer convention).
      const Json& strip_json = member(*n, "strip_accents");
      const bool strip =
          strip_json.type == Json::Type::null ? lower : bool_or(*n, "strip_accents", false);
      if (bool_or(*n, "clean_text", true)) steps.push_back({kClean, kNormBertClean});
      if (bool_or(*n, "handle_chinese_chars", true)) steps.push_back({kChinese, kNormBertChinese});
      if (strip) {
        steps.push_back({kForm, static_cast<uint32_t>(UnicodeForm::nfd)});
        steps.push_back({kStripNonspacing, kNormStripNonspacing});
      }
      if (lower) steps.push_back({kLowercase, kNormLowercase});
      spaces_made = spaces_made || bool_or(*n, "clean_text", true) ||
                    bool_or(*n, "handle_chinese_chars", true);
    } else if (type == "Prepend" && str_or(*n, "prepend", "") == kSpm) {
      plan.prepend = true;
      continue;
    } else if (type == "Replace" && str_or(at(*n, "pattern"), "String", "") == " " &&
               str_or(*n, "content", "") == kSpm) {
      // Spaces become ▁, which pieces store as spaces: a space made by a later step would then
      // be a piece's ▁ on the device but a plain space in the reference.
      plan.escape = true;
      spaces_made = false;
      continue;
    } else {
      unsupported("normalizer", *n);
    }
    for (const Step& st : steps) {
      const bool form_twice = st.rank == kForm && (plan.steps & kNormFormMask) != 0;
      if (st.rank < last_rank || (st.rank == last_rank && st.rank != kForm) || form_twice)
        unsupported(
            "normalizer order (einfer runs BERT clean, Chinese spacing, one Unicode form, "
            "strip accents, lowercase, in this order)",
            norm);
      plan.steps |= st.bits;
      last_rank = st.rank;
    }
    if (plan.escape && spaces_made)
      unsupported("normalizer making spaces after Replace(\" \", \"\xE2\x96\x81\")", norm);
  }
  if (plan.prepend && !plan.escape)
    unsupported("normalizer Prepend(\"\xE2\x96\x81\") without Replace(\" \", \"\xE2\x96\x81\")",
                norm);
  return plan;
}

Pretokenizer pretokenizer_plan(const Json& pt, const NormalizerPlan& norm, bool* byte_level) {
  *byte_level = false;
  if (pt.type == Json::Type::null) return Pretokenizer::none;
  const std::string type = str_or(pt, "type", "");
  if (is_byte_level(pt)) {
    if (bool_or(pt, "add_prefix_space", false)) unsupported("ByteLevel add_prefix_space", pt);
    *byte_level = true;
    return bool_or(pt, "use_regex", true) ? Pretokenizer::gpt2 : Pretokenizer::none;
  }
  if (type == "BertPreTokenizer") return Pretokenizer::bert;
  if (type == "Split" && str_or(at(pt, "pattern"), "String", "") == " " &&
      str_or(pt, "behavior", "") == "MergedWithPrevious" && !bool_or(pt, "invert", false)) {
    // After Replace(" ", "▁") the text has no space left to split at (Gemma).
    return norm.escape ? Pretokenizer::none : Pretokenizer::split_space;
  }
  if (type == "Sequence") {
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
    if (list.size() == 1) return pretokenizer_plan(list[0], norm, byte_level);
  }
  unsupported("pre_tokenizer", pt);
}

}  // namespace einfer::pack
