// TextTokenizer: hash tables in the arena, set-up, decoding and the tokenizer's facts. Encoding
// (added-token matching, SentencePiece score merges, rank merges, WordPiece) is
// tokenizer_encode.cpp.
#include "models/tokenizer_text.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "models/tokenizer_text_internal.h"

namespace einfer {

using namespace text_tokenizer_detail;

namespace {

struct ByteTable {
  char bytes[256];
};
constexpr ByteTable make_byte_table() {
  ByteTable t{};
  for (int i = 0; i < 256; ++i) t.bytes[i] = static_cast<char>(i);
  return t;
}
constexpr ByteTable kByteTable = make_byte_table();

int32_t find_piece(const TextTokenizer& t, const char* a, size_t na, const char* b, size_t nb) {
  return find_piece_hashed(t, hash_bytes(a, na, b, nb), a, na, b, nb);
}

uint32_t table_capacity(uint32_t n) {
  uint32_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  return cap;
}

bool is_matched_in_text(const PackedTokenizer& p, uint32_t id) {
  const auto type = static_cast<TokenType>(p.types[id]);
  return type == TokenType::user_defined ||
         ((type == TokenType::control || type == TokenType::unknown) &&
          (p.header.flags & kTokFlagMatchControl));
}

struct Tables {
  int32_t* pieces = nullptr;
  int32_t* merges = nullptr;
  int32_t* matched = nullptr;
  uint32_t piece_cap = 0, merge_cap = 0, n_matched = 0;
};

Status allocate_tables(const PackedTokenizer& p, Arena& arena, Tables* t) {
  t->piece_cap = table_capacity(p.header.n_tokens);
  t->merge_cap = p.header.n_merges ? table_capacity(p.header.n_merges) : 0;
  t->n_matched = 0;
  for (uint32_t id = 0; id < p.header.n_tokens; ++id) t->n_matched += is_matched_in_text(p, id);
  EINFER_TRY(arena.allocate_array(t->piece_cap, &t->pieces));
  if (t->merge_cap) EINFER_TRY(arena.allocate_array(t->merge_cap, &t->merges));
  if (t->n_matched) EINFER_TRY(arena.allocate_array(t->n_matched, &t->matched));
  return ok_status();
}

int byte_piece_value(const char* p) {  // "<0xNN>", validated by tokenizer_parse
  auto hex = [](char c) { return c <= '9' ? c - '0' : (c >= 'a' ? c - 'a' + 10 : c - 'A' + 10); };
  return hex(p[3]) * 16 + hex(p[4]);
}

}  // namespace

size_t text_tokenizer_arena_bytes(const PackedTokenizer& packed) {
  Arena measure = Arena::measuring();
  Tables t;
  if (!allocate_tables(packed, measure, &t).ok()) return 0;
  return measure.used();
}

int32_t text_tokenizer_lookup(const TextTokenizer& t, const char* piece, size_t length) {
  return find_piece(t, piece, length, nullptr, 0);
}

Status text_tokenizer_init(TextTokenizer* tokenizer, const void* image, size_t bytes,
                           bool decode_only, Arena& arena) {
  if (tokenizer == nullptr)
    return make_status(StatusCode::invalid_argument, "text_tokenizer_init: null tokenizer");
  *tokenizer = TextTokenizer{};
  PackedTokenizer p;
  EINFER_TRY(tokenizer_parse(image, bytes, &p));
  tokenizer->packed = p;
  if (decode_only) return ok_status();
  const size_t mark = arena.mark();
  Tables tables;
  if (const Status s = allocate_tables(p, arena, &tables); !s.ok()) {
    arena.rewind(mark);
    *tokenizer = TextTokenizer{};
    return s;
  }
  if (arena.is_measuring()) return ok_status();
  TextTokenizer& t = *tokenizer;
  const uint32_t n = p.header.n_tokens;
  std::fill(tables.pieces, tables.pieces + tables.piece_cap, -1);
  t.piece_slots = tables.pieces;
  t.piece_mask = tables.piece_cap - 1;
  for (uint32_t id = 0; id < n; ++id) {
    uint32_t l;
    const char* s = packed_piece(p, static_cast<int32_t>(id), &l);
    if (text_tokenizer_lookup(t, s, l) >= 0) continue;  // a repeated piece: the lowest id wins
    uint32_t slot = hash_bytes(s, l) & t.piece_mask;
    while (tables.pieces[slot] >= 0) slot = (slot + 1) & t.piece_mask;
    tables.pieces[slot] = static_cast<int32_t>(id);
  }
  if (tables.merge_cap) {
    std::fill(tables.merges, tables.merges + tables.merge_cap, -1);
    t.merge_slots = tables.merges;
    t.merge_mask = tables.merge_cap - 1;
    for (uint32_t r = 0; r < p.header.n_merges; ++r) {
      int32_t a, b, c;
      packed_merge(p, r, &a, &b, &c);
      if (merge_rank(t, a, b, &c) >= 0) continue;  // a repeated merge: the first rank counts
      uint32_t slot = hash_pair(a, b) & t.merge_mask;
      while (tables.merges[slot] >= 0) slot = (slot + 1) & t.merge_mask;
      tables.merges[slot] = static_cast<int32_t>(r);
    }
  }
  for (int32_t& id : t.byte_ids) id = -1;
  const bool byte_level = p.header.flags & kTokFlagByteLevel;
  for (uint32_t id = 0; id < n; ++id) {
    uint32_t l;
    const char* s = packed_piece(p, static_cast<int32_t>(id), &l);
    const auto type = static_cast<TokenType>(p.types[id]);
    if (byte_level && l == 1 && type == TokenType::normal) {
      int32_t& slot = t.byte_ids[static_cast<unsigned char>(s[0])];
      if (slot < 0) slot = static_cast<int32_t>(id);
    } else if (!byte_level && type == TokenType::byte) {
      int32_t& slot = t.byte_ids[byte_piece_value(s)];
      if (slot < 0) slot = static_cast<int32_t>(id);
    }
  }
  int32_t k = 0;
  for (uint32_t id = 0; id < n; ++id) {
    uint32_t l;
    packed_piece(p, static_cast<int32_t>(id), &l);
    if (is_matched_in_text(p, id) && l > 0) tables.matched[k++] = static_cast<int32_t>(id);
  }
  // Sorted by first byte, then longest first (a longer piece covers more text in every
  // space-matching mode: both match the same text, so the shorter is a prefix of the longer).
  std::sort(tables.matched, tables.matched + k, [&p](int32_t a, int32_t b) {
    uint32_t la, lb;
    const auto* sa = reinterpret_cast<const unsigned char*>(packed_piece(p, a, &la));
    const auto* sb = reinterpret_cast<const unsigned char*>(packed_piece(p, b, &lb));
    if (sa[0] != sb[0]) return sa[0] < sb[0];
    return la != lb ? la > lb : a < b;
  });
  for (int32_t i = 0; i < k; ++i) {
    uint32_t l;
    const unsigned char c = static_cast<unsigned char>(packed_piece(p, tables.matched[i], &l)[0]);
    t.matched_first[c >> 5] |= 1u << (c & 31);
  }
  t.matched = tables.matched;
  t.n_matched = k;
  t.can_encode = true;
  return ok_status();
}

TextPiece text_tokenizer_decode(const TextTokenizer& t, int32_t prev, int32_t token,
                                bool show_special) {
  const PackedTokenizer& p = t.packed;
  if (p.image == nullptr || token < 0 || static_cast<uint32_t>(token) >= p.header.n_tokens)
    return TextPiece{};
  uint32_t l;
  const char* s = packed_piece(p, token, &l);
  const auto type = static_cast<TokenType>(p.types[token]);
  if (type == TokenType::byte) return TextPiece{kByteTable.bytes + byte_piece_value(s), 1};
  if ((type == TokenType::control || type == TokenType::unknown) && !show_special)
    return TextPiece{};
  // The dummy prefix's space is not part of the text (sentencepiece drops it when decoding).
  // WordPiece stores word-initial pieces after a space: the first word has none either.
  const bool drops_space =
      (p.header.flags & kTokFlagDummyPrefix) ||
      static_cast<TokenizerAlgorithm>(p.header.algorithm) == TokenizerAlgorithm::wordpiece;
  if (drops_space && (prev < 0 || prev == p.header.bos_id) && l > 0 && s[0] == ' ') {
    ++s;
    --l;
  }
  return TextPiece{s, l};
}

bool text_piece_is_printable(TextPiece piece) {
  if (piece.data == nullptr || piece.size == 0) return false;
  if (piece.size > 1) return true;
  // isprint || isspace in the C locale, spelled out so the locale cannot change it.
  const unsigned char c = static_cast<unsigned char>(piece.data[0]);
  return (c >= 0x20 && c <= 0x7E) || c == ' ' || (c >= '\t' && c <= '\r');
}

int32_t text_tokenizer_bos(const TextTokenizer& t) {
  return t.packed.header.bos_id;
}
int32_t text_tokenizer_eos(const TextTokenizer& t) {
  return t.packed.header.eos_id;
}
int32_t text_tokenizer_vocab(const TextTokenizer& t) {
  return static_cast<int32_t>(t.packed.header.n_tokens);
}
bool text_tokenizer_is_eog(const TextTokenizer& t, int32_t id) {
  const TokenizerHeader& h = t.packed.header;
  if (id >= 0 && id == h.eos_id) return true;
  for (uint32_t i = 0; i < h.n_eog; ++i)
    if (h.eog_ids[i] == id) return true;
  return false;
}

}  // namespace einfer
