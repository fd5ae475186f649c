// Packed tokenizer image: layout arithmetic and full validation.
#include "models/tokenizer_packed.h"

#include <cstring>

#include "models/tokenizer_normalize.h"

namespace einfer {
namespace {

uint32_t load_u32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

size_t align4(size_t n) {
  return (n + 3) & ~size_t(3);
}

Status bad(const char* what, int64_t need = -1, int64_t have = -1, int64_t index = -1) {
  return make_status(StatusCode::bad_format, what, need, have, index);
}

bool id_ok(int32_t id, uint32_t n) {
  return id >= -1 && (id < 0 || static_cast<uint32_t>(id) < n);
}

}  // namespace

TokenizerLayout tokenizer_layout(TokenizerAlgorithm algorithm, uint32_t n_tokens, uint32_t n_merges,
                                 uint32_t pieces_bytes) {
  TokenizerLayout l{};
  size_t at = kTokenizerHeaderBytes;
  l.offsets_at = at;
  at += (size_t(n_tokens) + 1) * 4;
  l.scores_at = at;
  if (algorithm == TokenizerAlgorithm::sentencepiece_bpe) at += size_t(n_tokens) * 4;
  l.types_at = at;
  at = align4(at + n_tokens);
  l.merges_at = at;
  if (algorithm == TokenizerAlgorithm::bpe) at += size_t(n_merges) * 12;
  l.pieces_at = at;
  l.total = at + pieces_bytes;
  return l;
}

const char* packed_piece(const PackedTokenizer& p, int32_t id, uint32_t* length) {
  const uint32_t begin = load_u32(p.piece_offsets + size_t(id) * 4);
  const uint32_t end = load_u32(p.piece_offsets + size_t(id) * 4 + 4);
  *length = end - begin;
  return p.pieces + begin;
}

float packed_score(const PackedTokenizer& p, int32_t id) {
  if (p.scores == nullptr) return 0.0f;
  float f;
  std::memcpy(&f, p.scores + size_t(id) * 4, sizeof f);
  return f;
}

void packed_merge(const PackedTokenizer& p, uint32_t rank, int32_t* left, int32_t* right,
                  int32_t* result) {
  const unsigned char* m = p.merges + size_t(rank) * 12;
  *left = static_cast<int32_t>(load_u32(m));
  *right = static_cast<int32_t>(load_u32(m + 4));
  *result = static_cast<int32_t>(load_u32(m + 8));
}

Status tokenizer_parse(const void* image, size_t bytes, PackedTokenizer* out) {
  if (out == nullptr || (image == nullptr && bytes > 0))
    return make_status(StatusCode::invalid_argument, "tokenizer_parse: null argument");
  *out = PackedTokenizer{};
  if (bytes < kTokenizerHeaderBytes)
    return bad("tokenizer image truncated in its header: bytes", kTokenizerHeaderBytes,
               static_cast<int64_t>(bytes));
  TokenizerHeader h;
  std::memcpy(&h, image, sizeof h);
  if (h.magic != kTokenizerMagic)
    return bad("tokenizer image has no EITK magic (repack the model with this einfer-pack)");
  if (h.version < 1 || h.version > kTokenizerVersion)
    return make_status(StatusCode::unsupported, "unsupported tokenizer image version",
                       kTokenizerVersion, h.version);
  const bool v1 = h.version == 1;  // version 1 knows fewer of each; its new fields are reserved
  const auto algorithm = static_cast<TokenizerAlgorithm>(h.algorithm);
  if (algorithm != TokenizerAlgorithm::sentencepiece_bpe && algorithm != TokenizerAlgorithm::bpe &&
      (v1 || algorithm != TokenizerAlgorithm::wordpiece))
    return bad("tokenizer algorithm unknown", -1, h.algorithm);
  if ((h.flags & ~(v1 ? kTokFlagsKnownV1 : kTokFlagsKnown)) != 0)
    return bad("tokenizer flags has unknown bits", -1, h.flags);
  if (h.pretokenizer >= (v1 ? kPretokenizerCountV1 : kPretokenizerCount))
    return bad("tokenizer pre-tokenizer unknown", -1, h.pretokenizer);
  if ((h.normalizer & ~kNormKnown) != 0 || (h.normalizer & kNormFormMask) > 4 ||
      (v1 && h.normalizer != 0))
    return bad("tokenizer normalizer unknown", -1, h.normalizer);
  if (algorithm == TokenizerAlgorithm::sentencepiece_bpe &&
      (h.n_merges != 0 || h.pretokenizer != 0 || (h.flags & kTokFlagByteLevel)))
    return bad("sentencepiece tokenizer with merges, a pre-tokenizer or byte-level symbols");
  if (h.normalizer != 0 && (h.flags & kTokFlagRemoveExtraSpaces))
    return bad("tokenizer normalizer with remove-extra-spaces");
  if ((h.flags & kTokFlagMatchEscapedSpace) && (h.flags & kTokFlagMatchAnySpace))
    return bad("tokenizer matches spaces both as U+2581 only and as either");
  if (algorithm == TokenizerAlgorithm::wordpiece) {
    if (h.n_merges != 0 || (h.flags & (kTokFlagByteLevel | kTokFlagByteFallback)))
      return bad("wordpiece tokenizer with merges, byte-level symbols or byte fallback");
    if (h.unk_id < 0) return bad("wordpiece tokenizer without an unknown token");
    // Bounded so a word's work stays bounded however long the image's pieces are.
    if (h.max_word_chars == 0 || h.max_word_chars > kTokenizerMaxWordChars)
      return bad("wordpiece max_word_chars out of range", kTokenizerMaxWordChars, h.max_word_chars);
  } else if (h.max_word_chars != 0) {
    return bad("tokenizer max_word_chars set for a model other than wordpiece");
  }
  if (h.n_tokens == 0 || h.n_tokens > (1u << 24))
    return bad("tokenizer token count out of range", 1 << 24, h.n_tokens);
  if (h.n_merges > (1u << 24))
    return bad("tokenizer merge count out of range", 1 << 24, h.n_merges);
  if (h.n_eog > static_cast<uint32_t>(kTokenizerMaxEog))
    return bad("tokenizer end-of-generation count out of range", kTokenizerMaxEog, h.n_eog);
  for (uint32_t r : h.reserved)
    if (r != 0) return bad("tokenizer reserved header field not zero");
  const uint32_t n = h.n_tokens;
  if (!id_ok(h.bos_id, n) || !id_ok(h.eos_id, n) || !id_ok(h.unk_id, n) || !id_ok(h.pad_id, n))
    return bad("tokenizer special id outside the vocabulary", n);
  for (uint32_t i = 0; i < kTokenizerMaxEog; ++i) {
    const int32_t id = h.eog_ids[i];
    if (i < h.n_eog ? (id < 0 || static_cast<uint32_t>(id) >= n) : id != 0)
      return bad("tokenizer end-of-generation id invalid", n, id, i);
  }
  if ((h.flags & kTokFlagAddBos) && h.bos_id < 0) return bad("tokenizer adds BOS but has none");
  if ((h.flags & kTokFlagAddEos) && h.eos_id < 0) return bad("tokenizer adds EOS but has none");

  const TokenizerLayout l = tokenizer_layout(algorithm, n, h.n_merges, h.pieces_bytes);
  if (l.total != bytes)
    return bad("tokenizer image size does not match its counts: bytes",
               static_cast<int64_t>(l.total), static_cast<int64_t>(bytes));
  const unsigned char* base = static_cast<const unsigned char*>(image);
  PackedTokenizer p;
  p.header = h;
  p.image = base;
  p.piece_offsets = base + l.offsets_at;
  p.scores = algorithm == TokenizerAlgorithm::sentencepiece_bpe ? base + l.scores_at : nullptr;
  p.types = base + l.types_at;
  p.merges = algorithm == TokenizerAlgorithm::bpe ? base + l.merges_at : nullptr;
  p.pieces = reinterpret_cast<const char*>(base + l.pieces_at);

  for (size_t i = l.types_at + n; i < l.merges_at; ++i)
    if (base[i] != 0) return bad("tokenizer padding after the token types not zero");
  uint32_t prev = load_u32(p.piece_offsets);
  if (prev != 0) return bad("tokenizer first piece offset not zero", 0, prev);
  uint32_t max_len = 0;
  for (uint32_t id = 0; id < n; ++id) {
    const uint32_t next = load_u32(p.piece_offsets + size_t(id + 1) * 4);
    if (next < prev || next > h.pieces_bytes)
      return bad("tokenizer piece offsets not increasing or past the pieces", h.pieces_bytes, next,
                 id);
    if (next - prev > max_len) max_len = next - prev;
    prev = next;
    const uint8_t type = p.types[id];
    if (type < 1 || type > 6) return bad("tokenizer token type unknown", -1, type, id);
    if (p.scores) {
      const float s = packed_score(p, id);
      if (s != s) return bad("tokenizer score is NaN", -1, -1, id);
    }
    if (type == static_cast<uint8_t>(TokenType::byte)) {
      uint32_t len;
      const char* s = packed_piece(p, static_cast<int32_t>(id), &len);
      auto hex = [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
      };
      if (len != 6 || std::memcmp(s, "<0x", 3) != 0 || !hex(s[3]) || !hex(s[4]) || s[5] != '>')
        return bad("tokenizer byte token is not <0xNN>", -1, -1, id);
    }
  }
  if (prev != h.pieces_bytes)
    return bad("tokenizer pieces bytes not all used", h.pieces_bytes, prev);
  if (max_len != h.max_piece_bytes)
    return bad("tokenizer max_piece_bytes wrong", max_len, h.max_piece_bytes);
  for (uint32_t r = 0; r < h.n_merges; ++r) {
    int32_t a, b, c;
    packed_merge(p, r, &a, &b, &c);
    if (a < 0 || b < 0 || c < 0 || uint32_t(a) >= n || uint32_t(b) >= n || uint32_t(c) >= n)
      return bad("tokenizer merge refers to a token outside the vocabulary", n, -1, r);
    uint32_t la, lb, lc;
    const char* pa = packed_piece(p, a, &la);
    const char* pb = packed_piece(p, b, &lb);
    const char* pc = packed_piece(p, c, &lc);
    if (la + lb != lc || std::memcmp(pa, pc, la) != 0 || std::memcmp(pb, pc + la, lb) != 0)
      return bad("tokenizer merge result is not the concatenation of its parts", -1, -1, r);
  }
  *out = p;
  return ok_status();
}

}  // namespace einfer
