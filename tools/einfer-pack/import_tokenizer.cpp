// Tokenizer importers: detection, llama2.c tokenizer.bin, SentencePiece tokenizer.model (a small
// protobuf reader of the fields einfer uses), and the EITK image writer.
#include "tools/einfer-pack/import_tokenizer.h"

#include <algorithm>

#include <cstring>
#include <filesystem>

#include "models/tokenizer_packed.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/tokenizer_json.h"

namespace einfer::pack {

TokenizerSpec read_tokenizer_json(const std::string& path);  // import_tokenizer_json.cpp
TokenizerSpec read_tokenizer_json_bytes(const std::vector<uint8_t>& bytes, const std::string& path);
TokenizerSpec gguf_tokenizer(const std::vector<uint8_t>& bytes, const std::string& path);

namespace {

uint32_t u32_at(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

bool is_byte_piece(const std::string& s) {
  auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
  };
  return s.size() == 6 && s.compare(0, 3, "<0x") == 0 && hex(s[3]) && hex(s[4]) && s[5] == '>';
}

// llama2.c tokenizer.bin. Current layout: int32 max_token_length, then per token f32 score, int32
// length, bytes. The first llama2.c layout: per token int32 length, bytes (no header, no scores;
// earlier ids are earlier merges, so score = -id reproduces its merge order). False with *why
// (the first thing wrong) when the bytes are not one; the caller reports it if no other kind fits.
bool parse_llama2c_bin(const std::vector<uint8_t>& b, bool with_scores, TokenizerSpec* out,
                       std::string* why) {
  size_t at = with_scores ? 4 : 0;
  auto refuse = [&](const std::string& reason) {
    *why = reason;
    return false;
  };
  if (b.size() < at + 4) return refuse("truncated in its header");
  constexpr int32_t kMaxPiece = 1 << 20;  // bounds the arena the tokenizer gets sized for
  int32_t max_len = with_scores ? static_cast<int32_t>(u32_at(b, 0)) : kMaxPiece;
  if (max_len <= 0 || max_len > kMaxPiece)
    return refuse("max_token_length " + std::to_string(max_len) + " outside 1.." +
                  std::to_string(kMaxPiece));
  TokenizerSpec s;
  while (at < b.size()) {
    const std::string record = "record " + std::to_string(s.pieces.size()) + ": ";
    float score = -static_cast<float>(s.pieces.size());
    if (with_scores) {
      if (b.size() - at < 4) return refuse(record + "file truncated");
      std::memcpy(&score, b.data() + at, 4);
      at += 4;
      if (score != score) return refuse(record + "score is NaN");
    }
    if (b.size() - at < 4) return refuse(record + "file truncated");
    const int32_t len = static_cast<int32_t>(u32_at(b, at));
    at += 4;
    if (len < 0 || len > max_len)
      return refuse(record + "piece length " + std::to_string(len) + " outside 0.." +
                    std::to_string(max_len));
    if (b.size() - at < static_cast<size_t>(len)) return refuse(record + "piece runs past the end");
    s.pieces.emplace_back(reinterpret_cast<const char*>(b.data() + at), len);
    s.scores.push_back(score);
    at += len;
  }
  if (s.pieces.size() < 3)  // <unk>, <s>, </s> at least
    return refuse(std::to_string(s.pieces.size()) + " tokens, fewer than <unk>, <s>, </s>");
  // llama2.c's convention: 0 <unk>, 1 <s>, 2 </s>, usually 3..258 <0x00>..<0xFF>; pieces hold
  // spaces already.
  s.types.assign(s.pieces.size(), static_cast<uint8_t>(TokenType::normal));
  s.types[0] = static_cast<uint8_t>(TokenType::unknown);
  s.types[1] = s.types[2] = static_cast<uint8_t>(TokenType::control);
  int byte_pieces = 0;
  for (size_t id = 3; id < s.pieces.size(); ++id) {
    if (is_byte_piece(s.pieces[id])) {
      s.types[id] = static_cast<uint8_t>(TokenType::byte);
      ++byte_pieces;
    }
  }
  s.unk = 0, s.bos = 1, s.eos = 2;
  s.eog = {2};
  s.flags = kTokFlagAddBos | kTokFlagDummyPrefix | kTokFlagSpaceEscape |
            (byte_pieces > 0 ? kTokFlagByteFallback : 0);
  s.source = with_scores ? "llama2.c tokenizer.bin" : "llama2.c tokenizer.bin (first layout)";
  *out = std::move(s);
  return true;
}

// ---- protobuf (SentencePiece ModelProto) ----
struct Proto {
  const uint8_t* p;
  const uint8_t* end;
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p >= end) throw PackError("tokenizer.model: truncated varint");
      const uint8_t c = *p++;
      v |= uint64_t(c & 0x7F) << shift;
      if (!(c & 0x80)) return v;
    }
    throw PackError("tokenizer.model: varint too long");
  }
  // Next field: number and wire type; for length-delimited fields *sub is the payload.
  bool next(uint32_t* field, uint32_t* wire, Proto* sub, uint64_t* value) {
    if (p >= end) return false;
    const uint64_t key = varint();
    *field = static_cast<uint32_t>(key >> 3);
    *wire = key & 7;
    switch (*wire) {
      case 0:
        *value = varint();
        break;
      case 1:
        if (end - p < 8) throw PackError("tokenizer.model: truncated field");
        std::memcpy(value, p, 8);
        p += 8;
        break;
      case 2: {
        const uint64_t n = varint();
        if (n > static_cast<uint64_t>(end - p)) throw PackError("tokenizer.model: truncated field");
        *sub = Proto{p, p + n};
        p += n;
        break;
      }
      case 5: {
        if (end - p < 4) throw PackError("tokenizer.model: truncated field");
        uint32_t v;
        std::memcpy(&v, p, 4);
        *value = v;
        p += 4;
        break;
      }
      default:
        throw PackError("tokenizer.model: bad protobuf wire type " + std::to_string(*wire));
    }
    return *field != 0;
  }
};

// Detected by its first field: ModelProto.pieces (field 1, length-delimited) whose first
// field is SentencePiece.piece (field 1, length-delimited).
bool looks_like_sentencepiece(const std::vector<uint8_t>& b) {
  return b.size() > 4 && b[0] == 0x0A && (b[2] == 0x0A || b[3] == 0x0A);
}

TokenizerSpec read_sentencepiece(const std::vector<uint8_t>& b) {
  TokenizerSpec s;
  Proto m{b.data(), b.data() + b.size()};
  uint32_t field, wire;
  Proto sub{};
  uint64_t v = 0;
  int model_type = 1;  // proto defaults
  bool byte_fallback = false, dummy_prefix = true, extra_ws = true, escape_ws = true;
  int32_t unk = 0, bos = 1, eos = 2, pad = -1;
  std::string norm_name;
  bool charsmap = false;
  while (m.next(&field, &wire, &sub, &v)) {
    if (field == 1 && wire == 2) {  // SentencePiece
      std::string piece;
      float score = 0;
      int type = 1;
      Proto q = sub;
      Proto qs{};
      uint64_t qv = 0;
      uint32_t f, w;
      while (q.next(&f, &w, &qs, &qv)) {
        if (f == 1 && w == 2)
          piece.assign(reinterpret_cast<const char*>(qs.p), qs.end - qs.p);
        else if (f == 2 && w == 5)
          std::memcpy(&score, &qv, 4);
        else if (f == 3 && w == 0)
          type = static_cast<int>(qv);
      }
      if (type < 1 || type > 6)
        throw PackError("tokenizer.model: piece " + std::to_string(s.pieces.size()) +
                        " has unknown type " + std::to_string(type));
      s.pieces.push_back(sentencepiece_to_spaces(piece));
      s.scores.push_back(score);
      s.types.push_back(static_cast<uint8_t>(type));
    } else if (field == 2 && wire == 2) {  // TrainerSpec
      Proto q = sub;
      Proto qs{};
      uint64_t qv = 0;
      uint32_t f, w;
      while (q.next(&f, &w, &qs, &qv)) {
        if (w != 0) continue;
        const int32_t iv = static_cast<int32_t>(qv);
        if (f == 3) model_type = iv;
        if (f == 35) byte_fallback = qv != 0;
        if (f == 40) unk = iv;
        if (f == 41) bos = iv;
        if (f == 42) eos = iv;
        if (f == 43) pad = iv;
      }
    } else if (field == 3 && wire == 2) {  // NormalizerSpec
      Proto q = sub;
      Proto qs{};
      uint64_t qv = 0;
      uint32_t f, w;
      while (q.next(&f, &w, &qs, &qv)) {
        if (f == 1 && w == 2) norm_name.assign(reinterpret_cast<const char*>(qs.p), qs.end - qs.p);
        if (f == 2 && w == 2) charsmap = qs.end != qs.p;
        if (f == 3 && w == 0) dummy_prefix = qv != 0;
        if (f == 4 && w == 0) extra_ws = qv != 0;
        if (f == 5 && w == 0) escape_ws = qv != 0;
      }
    }
  }
  if (s.pieces.empty()) throw PackError("tokenizer.model: no pieces");
  if (model_type != 2)
    throw PackError("tokenizer.model: model type " + std::to_string(model_type) +
                    " is not BPE (2); unigram/word/char SentencePiece models are not supported");
  if (charsmap && norm_name != "identity")
    throw PackError("tokenizer.model: normalization rule '" + norm_name +
                    "' is not supported (only identity)");
  if (!escape_ws) throw PackError("tokenizer.model: escape_whitespaces=false is not supported");
  const int32_t n = static_cast<int32_t>(s.pieces.size());
  auto check = [n](int32_t id, const char* what) {
    if (id >= n) throw PackError(std::string("tokenizer.model: ") + what + " id past the pieces");
    return id < 0 ? -1 : id;
  };
  s.unk = check(unk, "unk");
  s.bos = check(bos, "bos");
  s.eos = check(eos, "eos");
  s.pad = check(pad, "pad");
  if (s.eos >= 0) s.eog = {s.eos};
  s.flags = kTokFlagSpaceEscape | (s.bos >= 0 ? kTokFlagAddBos : 0) |
            (dummy_prefix ? kTokFlagDummyPrefix : 0) | (byte_fallback ? kTokFlagByteFallback : 0) |
            (extra_ws ? kTokFlagRemoveExtraSpaces : 0);
  for (int32_t id = 0; id < n; ++id) {
    if (s.types[id] == static_cast<uint8_t>(TokenType::byte) && !is_byte_piece(s.pieces[id]))
      throw PackError("tokenizer.model: byte piece " + std::to_string(id) + " is not <0xNN>");
    // sentencepiece matches user-defined symbols in the escaped text, where a space and a ▁
    // of the input are both ▁.
    if (s.types[id] == static_cast<uint8_t>(TokenType::user_defined) &&
        s.pieces[id].find(' ') != std::string::npos)
      s.flags |= kTokFlagMatchAnySpace;
  }
  s.source = "sentencepiece tokenizer.model";
  return s;
}

bool looks_like_json(const std::vector<uint8_t>& b) {
  for (uint8_t c : b) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{';
  }
  return false;
}

}  // namespace

std::string sentencepiece_to_spaces(const std::string& piece) {
  std::string out;
  for (size_t i = 0; i < piece.size(); ++i) {
    if (piece.compare(i, 3, "\xE2\x96\x81") == 0) {
      out.push_back(' ');
      i += 2;
    } else {
      out.push_back(piece[i]);
    }
  }
  return out;
}

TokenizerSpec read_tokenizer_file(const std::string& path) {
  if (std::filesystem::is_directory(path)) {
    TokenizerSpec s;
    if (!read_folder_tokenizer(path, &s))
      throw PackError(path + ": folder has no tokenizer.json, tokenizer.model or vocab.txt");
    return s;
  }
  return read_tokenizer_bytes(read_file(path), path);
}

TokenizerSpec read_tokenizer_bytes(const std::vector<uint8_t>& b, const std::string& path) {
  if (b.empty()) throw PackError(path + ": empty tokenizer file");
  if (b.size() >= 4 && u32_at(b, 0) == kTokenizerMagic)
    throw PackError(path + ": already a packed EITK image; give the original tokenizer file");
  if (looks_like_gguf(b)) return gguf_tokenizer(b, path);
  if (looks_like_json(b)) return read_tokenizer_json_bytes(b, path);
  TokenizerSpec s;
  std::string why, why_first_layout;
  if (parse_llama2c_bin(b, true, &s, &why) || parse_llama2c_bin(b, false, &s, &why_first_layout))
    return s;
  if (looks_like_sentencepiece(b)) return read_sentencepiece(b);
  if (looks_like_wordpiece_vocab(b)) return read_wordpiece_vocab(b, path);
  // Nothing fits: say what is wrong with it as the most common kind (the current llama2.c layout),
  // so a truncated or edited tokenizer.bin gets its specific reason.
  throw PackError(path +
                  ": not a tokenizer einfer knows (llama2.c tokenizer.bin, SentencePiece "
                  "tokenizer.model, Hugging Face tokenizer.json, BERT vocab.txt, GGUF); as a "
                  "llama2.c "
                  "tokenizer.bin: " +
                  why);
}

std::vector<uint8_t> tokenizer_image_for_model(const TokenizerSpec& spec, int32_t model_vocab) {
  if (model_vocab <= 0)
    throw PackError("a tokenizer was given for a model without a vocabulary (encoder)");
  const size_t rows = static_cast<size_t>(model_vocab);
  if (spec.pieces.size() <= rows) return write_tokenizer_image(spec);
  // Added tokens past the embedding rows (Gemma 3's <image_soft_token>, which only the
  // multimodal model feeds) can never reach this model: they are left out. Anything else past
  // the rows means another model's tokenizer.
  bool only_added = true;
  for (size_t id = rows; id < spec.pieces.size(); ++id)
    only_added = only_added && (spec.types[id] == static_cast<uint8_t>(TokenType::control) ||
                                spec.types[id] == static_cast<uint8_t>(TokenType::user_defined));
  for (const auto& m : spec.merges) only_added = only_added && static_cast<size_t>(m[2]) < rows;
  for (int32_t id : {spec.bos, spec.eos, spec.unk, spec.pad})
    only_added = only_added && (id < 0 || static_cast<size_t>(id) < rows);
  if (!only_added)
    throw PackError("the tokenizer (" + spec.source + ") has " +
                    std::to_string(spec.pieces.size()) + " tokens, more than the model's " +
                    std::to_string(model_vocab) + " embedding rows: not this model's tokenizer");
  TokenizerSpec cut = spec;
  cut.pieces.resize(rows);
  cut.types.resize(rows);
  if (!cut.scores.empty()) cut.scores.resize(rows);
  cut.eog.clear();
  for (int32_t id : spec.eog)
    if (static_cast<size_t>(id) < rows) cut.eog.push_back(id);
  return write_tokenizer_image(cut);
}

bool read_folder_tokenizer(const std::string& dir, TokenizerSpec* out) {
  namespace fs = std::filesystem;
  if (fs::exists(fs::path(dir) / "tokenizer.json")) {
    *out = read_tokenizer_json((fs::path(dir) / "tokenizer.json").string());
    return true;
  }
  if (fs::exists(fs::path(dir) / "tokenizer.model")) {
    *out = read_sentencepiece(read_file((fs::path(dir) / "tokenizer.model").string()));
    return true;
  }
  if (fs::exists(fs::path(dir) / "vocab.txt")) {  // a BERT folder without tokenizer.json
    const std::string path = (fs::path(dir) / "vocab.txt").string();
    *out = read_wordpiece_vocab(read_file(path), path);
    return true;
  }
  return false;
}

void add_model_special_ids(TokenizerSpec& s, int32_t bos, const std::vector<int32_t>& eos) {
  if (s.bos < 0 && bos >= 0) s.bos = bos;
  for (int32_t id : eos) {
    if (std::find(s.eog.begin(), s.eog.end(), id) == s.eog.end()) s.eog.push_back(id);
    if (s.eos < 0) s.eos = id;
  }
}

void add_conventional_eog(TokenizerSpec& s) {
  static const char* const kNames[] = {"<|end_of_text|>", "<|endoftext|>", "</s>",
                                       "<|eot_id|>",      "<|im_end|>",    "<|eom_id|>",
                                       "<end_of_turn>",   "<|end|>",       "<eos>"};
  for (const char* name : kNames) {
    for (size_t id = 0; id < s.pieces.size(); ++id) {
      if (s.pieces[id] != name || s.types[id] != static_cast<uint8_t>(TokenType::control)) continue;
      bool have = false;
      for (int32_t e : s.eog) have = have || e == static_cast<int32_t>(id);
      if (!have && s.eog.size() < static_cast<size_t>(kTokenizerMaxEog))
        s.eog.push_back(static_cast<int32_t>(id));
    }
  }
}

std::vector<uint8_t> write_tokenizer_image(const TokenizerSpec& s) {
  const uint32_t n = static_cast<uint32_t>(s.pieces.size());
  if (s.types.size() != n ||
      (s.algorithm == TokenizerAlgorithm::sentencepiece_bpe && s.scores.size() != n))
    throw PackError("tokenizer: pieces, types and scores differ in count");
  std::string blob;
  std::vector<uint32_t> offsets{0};
  uint32_t max_len = 0;
  for (const std::string& p : s.pieces) {
    blob += p;
    offsets.push_back(static_cast<uint32_t>(blob.size()));
    max_len = std::max<uint32_t>(max_len, static_cast<uint32_t>(p.size()));
  }
  const uint32_t n_merges =
      s.algorithm == TokenizerAlgorithm::bpe ? static_cast<uint32_t>(s.merges.size()) : 0;
  const TokenizerLayout l =
      tokenizer_layout(s.algorithm, n, n_merges, static_cast<uint32_t>(blob.size()));
  std::vector<uint8_t> out(l.total, 0);
  TokenizerHeader h{};
  h.magic = kTokenizerMagic;
  // Version 1 when the image needs nothing newer, so every einfer reads it.
  const bool v1 = s.normalizer == 0 && s.max_word_chars == 0 &&
                  s.algorithm != TokenizerAlgorithm::wordpiece &&
                  static_cast<uint32_t>(s.pretokenizer) < kPretokenizerCountV1 &&
                  (s.flags & ~kTokFlagsKnownV1) == 0;
  h.version = v1 ? 1 : kTokenizerVersion;
  h.normalizer = s.normalizer;
  h.max_word_chars = s.max_word_chars;
  h.algorithm = static_cast<uint32_t>(s.algorithm);
  h.flags = s.flags;
  h.pretokenizer = static_cast<uint32_t>(s.pretokenizer);
  h.n_tokens = n;
  h.n_merges = n_merges;
  h.pieces_bytes = static_cast<uint32_t>(blob.size());
  h.max_piece_bytes = max_len;
  h.bos_id = s.bos, h.eos_id = s.eos, h.unk_id = s.unk, h.pad_id = s.pad;
  if (s.eog.size() > static_cast<size_t>(kTokenizerMaxEog))
    throw PackError("tokenizer: more than 8 end-of-generation ids");
  h.n_eog = static_cast<uint32_t>(s.eog.size());
  for (size_t i = 0; i < s.eog.size(); ++i) h.eog_ids[i] = s.eog[i];
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + l.offsets_at, offsets.data(), offsets.size() * 4);
  if (s.algorithm == TokenizerAlgorithm::sentencepiece_bpe)
    std::memcpy(out.data() + l.scores_at, s.scores.data(), n * 4);
  std::memcpy(out.data() + l.types_at, s.types.data(), n);
  for (uint32_t r = 0; r < n_merges; ++r)
    std::memcpy(out.data() + l.merges_at + size_t(r) * 12, s.merges[r].data(), 12);
  std::memcpy(out.data() + l.pieces_at, blob.data(), blob.size());
  PackedTokenizer check;
  const Status st = tokenizer_parse(out.data(), out.size(), &check);
  if (!st.ok()) throw PackError(std::string("tokenizer image invalid: ") + st.message);
  return out;
}

}  // namespace einfer::pack
