// TextTokenizer encoding: added tokens matched in the text, then each segment normalized,
// pre-tokenized and merged (SentencePiece scores, BPE ranks) or split by WordPiece, all in the
// caller's scratch. Tables and set-up: tokenizer_text.cpp.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "models/tokenizer_normalize.h"
#include "models/tokenizer_pretokenize.h"
#include "models/tokenizer_text.h"
#include "models/tokenizer_text_internal.h"

namespace einfer {

using namespace text_tokenizer_detail;

namespace {

bool is_u2581(const char* s, size_t left) {
  return left >= 3 && s[0] == '\xE2' && s[1] == '\x96' && s[2] == '\x81';
}

// Text bytes a matched token's piece covers at text[i], or 0: its spaces stand for spaces, for
// U+2581 (kTokFlagMatchEscapedSpace) or for either (kTokFlagMatchAnySpace).
size_t match_length(const char* piece, uint32_t l, const char* text, size_t len, size_t i,
                    uint32_t flags) {
  const bool escaped = flags & kTokFlagMatchEscapedSpace;
  const bool any = flags & kTokFlagMatchAnySpace;
  size_t at = i;
  for (uint32_t k = 0; k < l; ++k) {
    if (piece[k] == ' ' && (escaped || any) && is_u2581(text + at, len - at)) {
      at += 3;
    } else if (at < len && text[at] == piece[k] && !(piece[k] == ' ' && escaped)) {
      ++at;
    } else {
      return 0;
    }
  }
  return at - i;
}

struct Symbol {
  int32_t prev, next, id;
  uint32_t start, len;  // bytes in the segment buffer; len 0: merged away
};

struct Candidate {
  float score;    // sentencepiece: the merged piece's score (higher first)
  int32_t rank;   // bpe: the merge rank (lower first)
  int32_t left;   // symbol index (leftmost first on ties)
  uint32_t size;  // sentencepiece: bytes of the merged piece; bpe: the result id
};

// Where the parts of an encode scratch lie: the normalized segment (cap bytes), then one work
// region used first by the Unicode normalizer (code points) and then by the merges (symbols and
// their candidate heap).
struct ScratchLayout {
  size_t cap = 0, sym_at = 0, heap_at = 0, total = SIZE_MAX;
};

size_t align_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

ScratchLayout scratch_layout(const TokenizerHeader& h, size_t text_len) {
  ScratchLayout l;
  if (text_len > (size_t(1) << 28)) return l;  // symbol indices stay far inside int32
  // Without a Unicode normalizer: an invalid byte becomes U+FFFD (3 bytes), plus a dummy-prefix
  // space per segment (at most one per byte, plus one). Sizes in 64 bits, then checked against
  // the address space (32-bit targets).
  uint64_t cap = 4 * uint64_t(text_len) + 4;
  if (h.normalizer != 0) {
    const size_t c = normalize_capacity(h.normalizer, text_len);
    if (c == SIZE_MAX) return l;
    if (c > cap) cap = c;
  }
  const uint64_t a = alignof(Candidate);
  const uint64_t work_at = (cap + a - 1) / a * a;
  uint64_t sym_at = 0, heap_at = 0, work = 0;
  if (static_cast<TokenizerAlgorithm>(h.algorithm) != TokenizerAlgorithm::wordpiece) {
    sym_at = work_at;
    heap_at = (work_at + cap * sizeof(Symbol) + a - 1) / a * a;
    work = heap_at + 3 * cap * sizeof(Candidate) - work_at;
  }
  if (h.normalizer != 0) {  // the normalizer's code points, before the merges use the region
    const uint64_t codes = normalize_work_count(static_cast<size_t>(cap)) * uint64_t{4};
    if (codes > work) work = codes;
  }
  const uint64_t total = work_at + work + a;  // the caller's pointer may need aligning
  if (total >= SIZE_MAX || cap > (uint64_t(1) << 31)) return l;
  l.cap = static_cast<size_t>(cap);
  l.sym_at = static_cast<size_t>(sym_at);
  l.heap_at = static_cast<size_t>(heap_at);
  l.total = static_cast<size_t>(total);
  return l;
}

struct Encoder {
  const TextTokenizer& t;
  const PackedTokenizer& p;
  char* norm;      // normalized segment
  size_t cap;      // its capacity
  uint32_t* work;  // the Unicode normalizer's code points (overlaps sym and heap)
  Symbol* sym;
  Candidate* heap;
  size_t heap_n = 0;
  int32_t* ids;
  int32_t max_ids;
  int32_t count = 0;

  void emit(int32_t id) {
    if (count < max_ids) ids[count] = id;
    ++count;
  }

  bool better(const Candidate& a, const Candidate& b) const {
    if (p.scores) {
      if (a.score != b.score) return a.score > b.score;
    } else if (a.rank != b.rank) {
      return a.rank < b.rank;
    }
    return a.left < b.left;
  }
  void push(const Candidate& c) {
    size_t i = heap_n++;
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!better(c, heap[parent])) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = c;
  }
  Candidate pop() {
    const Candidate top = heap[0];
    const Candidate last = heap[--heap_n];
    size_t i = 0;
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= heap_n) break;
      if (child + 1 < heap_n && better(heap[child + 1], heap[child])) ++child;
      if (!better(heap[child], last)) break;
      heap[i] = heap[child];
      i = child;
    }
    if (heap_n > 0) heap[i] = last;
    return top;
  }

  // SentencePiece: a candidate when the two symbols' bytes form a mergeable piece.
  void spm_candidate(const char* buf, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = sym[left].len + sym[right].len;
    if (size > p.header.max_piece_bytes) return;
    const int32_t id = text_tokenizer_lookup(t, buf + sym[left].start, size);
    if (id < 0) return;
    const auto type = static_cast<TokenType>(p.types[id]);
    if (type != TokenType::normal && type != TokenType::user_defined && type != TokenType::unused)
      return;
    push(Candidate{packed_score(p, id), 0, left, size});
  }

  void bpe_candidate(int32_t left) {
    const int32_t right = sym[left].next;
    if (right < 0) return;
    int32_t result;
    const int32_t rank = merge_rank(t, sym[left].id, sym[right].id, &result);
    if (rank >= 0) push(Candidate{0.0f, rank, left, static_cast<uint32_t>(result)});
  }

  void link(int32_t n) {
    for (int32_t i = 0; i < n; ++i) {
      sym[i].prev = i - 1;
      sym[i].next = i + 1 < n ? i + 1 : -1;
    }
  }

  void emit_unknown_bytes(const char* s, uint32_t n) {
    if (p.header.flags & kTokFlagByteFallback) {
      bool all = true;
      for (uint32_t k = 0; k < n; ++k)
        all = all && t.byte_ids[static_cast<unsigned char>(s[k])] >= 0;
      if (all) {
        for (uint32_t k = 0; k < n; ++k) emit(t.byte_ids[static_cast<unsigned char>(s[k])]);
        return;
      }
    }
    if (p.header.unk_id >= 0) emit(p.header.unk_id);
  }

  // SentencePiece BPE over one normalized segment.
  void spm_segment(const char* buf, uint32_t n) {
    int32_t count_sym = 0;
    for (uint32_t i = 0; i < n;) {
      const uint32_t len = utf8_decode(buf, n, i).bytes;
      sym[count_sym++] = Symbol{0, 0, -1, i, len};
      i += len;
    }
    link(count_sym);
    heap_n = 0;
    for (int32_t i = 0; i + 1 < count_sym; ++i) spm_candidate(buf, i, i + 1);
    while (heap_n > 0) {
      const Candidate c = pop();
      Symbol& l = sym[c.left];
      if (l.len == 0 || l.next < 0) continue;
      Symbol& r = sym[l.next];
      if (r.len == 0 || l.len + r.len != c.size) continue;
      l.len += r.len;
      r.len = 0;
      l.next = r.next;
      if (l.next >= 0) sym[l.next].prev = c.left;
      spm_candidate(buf, l.prev, c.left);
      spm_candidate(buf, c.left, l.next);
    }
    for (int32_t i = 0; i >= 0 && count_sym > 0; i = sym[i].next) {
      const int32_t id = text_tokenizer_lookup(t, buf + sym[i].start, sym[i].len);
      if (id >= 0 && static_cast<TokenType>(p.types[id]) != TokenType::unknown)
        emit(id);
      else
        emit_unknown_bytes(buf + sym[i].start, sym[i].len);
    }
  }

  // Rank BPE over one word: byte-level symbols, or characters with byte fallback.
  void bpe_word(const char* w, uint32_t n) {
    if (p.header.flags & kTokFlagIgnoreMerges) {
      const int32_t id = text_tokenizer_lookup(t, w, n);
      if (id >= 0) return emit(id);
    }
    const bool byte_level = p.header.flags & kTokFlagByteLevel;
    const bool fuse_unk = p.header.flags & kTokFlagFuseUnk;
    int32_t count_sym = 0;
    bool last_unknown = false;  // the last symbol is an unk standing for unknown characters
    for (uint32_t i = 0; i < n;) {
      const uint32_t len = byte_level ? 1 : utf8_decode(w, n, i).bytes;
      int32_t id = byte_level ? t.byte_ids[static_cast<unsigned char>(w[i])]
                              : text_tokenizer_lookup(t, w + i, len);
      const bool was_unknown = last_unknown;
      last_unknown = false;
      if (id >= 0) {
        sym[count_sym++] = Symbol{0, 0, id, i, len};
      } else {
        bool all = (p.header.flags & kTokFlagByteFallback) != 0;
        for (uint32_t k = 0; k < len && all; ++k)
          all = t.byte_ids[static_cast<unsigned char>(w[i + k])] >= 0;
        if (all) {
          for (uint32_t k = 0; k < len; ++k)
            sym[count_sym++] =
                Symbol{0, 0, t.byte_ids[static_cast<unsigned char>(w[i + k])], i + k, 1};
        } else if (p.header.unk_id >= 0) {
          if (fuse_unk && was_unknown)
            sym[count_sym - 1].len += len;
          else
            sym[count_sym++] = Symbol{0, 0, p.header.unk_id, i, len};
          last_unknown = true;
        }
      }
      i += len;
    }
    link(count_sym);
    heap_n = 0;
    for (int32_t i = 0; i + 1 < count_sym; ++i) bpe_candidate(i);
    while (heap_n > 0) {
      const Candidate c = pop();
      Symbol& l = sym[c.left];
      if (l.len == 0 || l.next < 0) continue;
      Symbol& r = sym[l.next];
      int32_t result;
      if (merge_rank(t, l.id, r.id, &result) != c.rank) continue;
      l.id = result;
      l.len += r.len;
      r.len = 0;
      l.next = r.next;
      if (l.next >= 0) sym[l.next].prev = c.left;
      if (l.prev >= 0) bpe_candidate(l.prev);
      bpe_candidate(c.left);
    }
    for (int32_t i = 0; i >= 0 && count_sym > 0; i = sym[i].next) emit(sym[i].id);
  }

  // Normalization of the character-symbol families: the dummy prefix, extra spaces, U+2581 as
  // a space, invalid UTF-8 as U+FFFD. Returns the bytes written to norm.
  uint32_t normalize(const char* s, size_t n, bool prefix) {
    const uint32_t flags = p.header.flags;
    const bool squeeze = flags & kTokFlagRemoveExtraSpaces;
    uint32_t m = 0;
    size_t i = 0;
    if (squeeze)
      while (i < n && s[i] == ' ') ++i;
    if (prefix && i < n) norm[m++] = ' ';
    if (prefix && i == n && !(flags & kTokFlagPrefixEachSegment) && !squeeze) norm[m++] = ' ';
    while (i < n) {
      const CodePoint c = utf8_decode(s, n, i);
      if (squeeze && c.cp == ' ') {
        size_t j = i;
        while (j < n && s[j] == ' ') ++j;
        if (j == n) break;  // trailing spaces go
        norm[m++] = ' ';
        i = j;
        continue;
      }
      if (c.cp == kInvalidCodePoint) {
        std::memcpy(norm + m, "\xEF\xBF\xBD", 3);
        m += 3;
      } else if (c.cp == 0x2581 && (flags & kTokFlagSpaceEscape)) {
        norm[m++] = ' ';
      } else {
        std::memcpy(norm + m, s + i, c.bytes);
        m += c.bytes;
      }
      i += c.bytes;
    }
    return m;
  }

  // WordPiece over one word: the longest piece at each position ("##" continuations after the
  // first, stored without the prefix; word-initial pieces are stored after a space); the whole
  // word is the unknown token when a position has none or the word is too long.
  void wordpiece_word(const char* w, uint32_t n) {
    uint32_t chars = 0;
    for (uint32_t i = 0; i < n && chars <= p.header.max_word_chars; ++chars)
      i += utf8_decode(w, n, i).bytes;
    if (chars > p.header.max_word_chars) return emit(p.header.unk_id);
    const int32_t first = count;
    for (uint32_t start = 0; start < n;) {
      // Candidates grow a character at a time (the text is valid UTF-8 here: invalid bytes
      // became U+FFFD) with the hash carried along, up to the longest piece; the longest that is
      // a piece wins. A word-initial candidate is looked up after a space.
      const uint32_t lead = start == 0 ? 1 : 0;
      const uint32_t most = p.header.max_piece_bytes;
      const uint32_t limit = most > lead ? most - lead : 0;
      uint32_t h = lead ? fnv_step(kFnvBasis, ' ') : kFnvBasis;
      int32_t best = -1;
      uint32_t best_end = start;
      for (uint32_t end = start; end < n;) {
        const uint32_t bytes = utf8_decode(w, n, end).bytes;
        if (end + bytes - start > limit) break;
        for (uint32_t k = 0; k < bytes; ++k)
          h = fnv_step(h, static_cast<unsigned char>(w[end + k]));
        end += bytes;
        const int32_t id = find_piece_hashed(t, fnv_final(h), " ", lead, w + start, end - start);
        if (id >= 0) best = id, best_end = end;
      }
      if (best < 0) {
        count = first;  // the whole word is unknown
        return emit(p.header.unk_id);
      }
      emit(best);
      start = best_end;
    }
  }

  void word(const char* w, size_t n) {
    if (static_cast<TokenizerAlgorithm>(p.header.algorithm) == TokenizerAlgorithm::wordpiece)
      wordpiece_word(w, static_cast<uint32_t>(n));
    else
      bpe_word(w, static_cast<uint32_t>(n));
  }

  void segment(const char* s, size_t n, bool prefix) {
    const uint32_t flags = p.header.flags;
    const bool byte_level = flags & kTokFlagByteLevel;
    const char* text = norm;
    size_t m;
    if (p.header.normalizer != 0) {
      const NormalizeInput in{
          s, n, p.header.normalizer, byte_level, (flags & kTokFlagSpaceEscape) != 0, prefix};
      m = normalize_text(in, norm, cap, work);
    } else if (byte_level) {
      text = s;
      m = n;
    } else {
      m = normalize(s, n, prefix);
    }
    if (m == 0) return;
    if (p.scores) return spm_segment(text, static_cast<uint32_t>(m));
    const auto kind = static_cast<Pretokenizer>(p.header.pretokenizer);
    for (size_t i = 0; i < m;) {
      if (kind == Pretokenizer::bert) {  // whitespace goes
        const CodePoint c = utf8_decode(text, m, i);
        if (is_white_space(c.cp)) {
          i += c.bytes;
          continue;
        }
      }
      const size_t end = kind == Pretokenizer::none ? m : pretokenize_next(kind, text, m, i);
      word(text + i, end - i);
      i = end;
    }
  }

  // Id of the longest matched-in-text token at text[i] and the text bytes it covers, or -1.
  int32_t match_at(const char* text, size_t len, size_t i, size_t* covered) const {
    const uint32_t flags = p.header.flags;
    unsigned char c = static_cast<unsigned char>(text[i]);
    // A U+2581 in the text stands for a piece's space when matched spaces are escaped.
    if ((flags & (kTokFlagMatchEscapedSpace | kTokFlagMatchAnySpace)) &&
        is_u2581(text + i, len - i))
      c = ' ';
    if (!(t.matched_first[c >> 5] & (1u << (c & 31)))) return -1;
    // matched is sorted by first byte, then longest first: the first hit is the longest.
    int32_t lo = 0, hi = t.n_matched;
    while (lo < hi) {
      const int32_t mid = (lo + hi) / 2;
      uint32_t l;
      const char* s = packed_piece(p, t.matched[mid], &l);
      if (static_cast<unsigned char>(s[0]) < c)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (int32_t k = lo; k < t.n_matched; ++k) {
      uint32_t l;
      const char* s = packed_piece(p, t.matched[k], &l);
      if (static_cast<unsigned char>(s[0]) != c) break;
      if (const size_t n = match_length(s, l, text, len, i, flags)) {
        *covered = n;
        return t.matched[k];
      }
    }
    return -1;
  }
};

}  // namespace

size_t text_tokenizer_scratch_bytes(const PackedTokenizer& packed, size_t text_len) {
  return scratch_layout(packed.header, text_len).total;
}

size_t text_tokenizer_max_ids(const PackedTokenizer& packed, size_t text_len) {
  // Every id covers at least one byte of the normalized text, or is BOS/EOS.
  const ScratchLayout l = scratch_layout(packed.header, text_len);
  return l.total == SIZE_MAX ? SIZE_MAX : l.cap + 2;
}

Status text_tokenizer_encode(const TextTokenizer& t, const char* text, size_t len, bool add_special,
                             int32_t* ids, int32_t max_ids, int32_t* n_ids, void* scratch,
                             size_t scratch_bytes) {
  if (n_ids != nullptr) *n_ids = 0;
  if (n_ids == nullptr || (text == nullptr && len > 0) || (ids == nullptr && max_ids > 0) ||
      max_ids < 0)
    return make_status(StatusCode::invalid_argument, "tokenize: null or negative argument");
  if (!t.can_encode)
    return make_status(StatusCode::invalid_argument,
                       "tokenize: the tokenizer was set up for decoding only");
  const TokenizerHeader& h = t.packed.header;
  const ScratchLayout layout = scratch_layout(h, len);
  if (layout.total == SIZE_MAX)
    return make_status(StatusCode::invalid_argument, "tokenize: text too long: bytes", 1 << 28,
                       static_cast<int64_t>(len));
  if (scratch == nullptr || scratch_bytes < layout.total)
    return make_status(StatusCode::out_of_memory, "tokenize: scratch too small: bytes",
                       static_cast<int64_t>(layout.total), static_cast<int64_t>(scratch_bytes));
  const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
  const uintptr_t aligned = (base + alignof(Candidate) - 1) & ~uintptr_t(alignof(Candidate) - 1);
  char* norm = reinterpret_cast<char*>(aligned);
  uint32_t* work = reinterpret_cast<uint32_t*>(norm + align_up(layout.cap, alignof(Candidate)));
  Encoder e{t,
            t.packed,
            norm,
            layout.cap,
            work,
            reinterpret_cast<Symbol*>(norm + layout.sym_at),
            reinterpret_cast<Candidate*>(norm + layout.heap_at),
            0,
            ids,
            max_ids,
            0};
  if (add_special && (h.flags & kTokFlagAddBos)) e.emit(h.bos_id);
  const bool each = h.flags & kTokFlagPrefixEachSegment;
  const bool prefix = h.flags & kTokFlagDummyPrefix;
  size_t seg = 0;
  bool first = true;
  if (t.n_matched > 0) {
    for (size_t i = 0; i < len;) {
      size_t covered = 0;
      const int32_t id = e.match_at(text, len, i, &covered);
      if (id < 0) {
        ++i;
        continue;
      }
      e.segment(text + seg, i - seg, prefix && (each || (first && len > 0)));
      e.emit(id);
      i += covered;
      seg = i;
      first = false;
    }
  }
  e.segment(text + seg, len - seg, prefix && (each || (first && len > 0)));
  if (add_special && (h.flags & kTokFlagAddEos)) e.emit(h.eos_id);
  if (e.count > max_ids)
    return make_status(StatusCode::out_of_memory, "tokenize: ids buffer too small: ids", e.count,
                       max_ids);
  *n_ids = e.count;
  return ok_status();
}

}  // namespace einfer
