// Tokenizer (llama2.c tokenizer.bin): in-place parsing, sorted lookup, BPE merge encode, decode.
#include "models/tokenizer.h"

#include <algorithm>
#include <cstring>

namespace einfer {
namespace {

constexpr int32_t kReservedIds = 3 + 256;  // <unk>, BOS, EOS, then the 256 byte pieces
constexpr float kNoMergeScore = -1e10f;    // llama2.c's starting best score: never merged below

// Byte b decodes to kByteTable.bytes + b. Constant-initialised: no static constructor.
struct ByteTable {
  char bytes[256];
};
constexpr ByteTable make_byte_table() {
  ByteTable t{};
  for (int i = 0; i < 256; ++i) t.bytes[i] = static_cast<char>(i);
  return t;
}
constexpr ByteTable kByteTable = make_byte_table();

// The file is little-endian; assemble values byte by byte (the buffer need not be aligned).
uint32_t read_u32_le(const unsigned char* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
int32_t read_i32_le(const unsigned char* p) {
  return static_cast<int32_t>(read_u32_le(p));
}
float read_f32_le(const unsigned char* p) {
  const uint32_t bits = read_u32_le(p);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Byte-wise (unsigned) lexicographic order; a proper prefix sorts first.
int compare_bytes(const char* a, size_t na, const char* b, size_t nb) {
  const int c = std::memcmp(a, b, na < nb ? na : nb);
  if (c != 0) return c;
  return na < nb ? -1 : (na > nb ? 1 : 0);
}

Status allocate_tables(Arena& arena, int32_t vocab_size, TokenEntry** entries, int32_t** sorted) {
  EINFER_TRY(arena.allocate_array(static_cast<size_t>(vocab_size), entries));
  return arena.allocate_array(static_cast<size_t>(vocab_size), sorted);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "<0xNN>" -> NN, else -1.
int byte_piece_value(const char* p, size_t n) {
  if (n != 6 || p[0] != '<' || p[1] != '0' || p[2] != 'x' || p[5] != '>') return -1;
  const int hi = hex_value(p[3]);
  const int lo = hex_value(p[4]);
  if (hi < 0 || lo < 0) return -1;
  return hi * 16 + lo;
}

// Id of the concatenation of the pieces of ids a and b, or -1. buf holds max_token_length bytes.
int32_t lookup_pair(const Tokenizer& t, int32_t a, int32_t b, char* buf) {
  const TokenEntry& ea = t.entries[a];
  const TokenEntry& eb = t.entries[b];
  const int32_t n = ea.length + eb.length;
  if (n > t.max_token_length) return -1;  // longer than every piece: cannot be in the vocabulary
  std::memcpy(buf, ea.piece, static_cast<size_t>(ea.length));
  std::memcpy(buf + ea.length, eb.piece, static_cast<size_t>(eb.length));
  return tokenizer_lookup(t, buf, static_cast<size_t>(n));
}

// Work buffers of one encode call, carved from the caller's scratch.
struct EncodeScratch {
  int32_t* tokens;    // capacity: the text's bytes + BOS + dummy prefix
  int32_t* pair_ids;  // pair_ids[i]: id of tokens[i] + tokens[i + 1], or -1
  char* concat;       // max_token_length bytes
};

size_t encode_capacity(size_t text_len) {
  return text_len + 2;
}

}  // namespace

size_t tokenizer_arena_bytes(int32_t vocab_size) {
  if (vocab_size <= 0) return 0;
  Arena measure = Arena::measuring();
  TokenEntry* entries = nullptr;
  int32_t* sorted = nullptr;
  if (!allocate_tables(measure, vocab_size, &entries, &sorted).ok()) return 0;
  return measure.used();
}

namespace {
// Checks the header and every token record; fills entries (when non-null) by id.
Status parse_file(Tokenizer* tokenizer, const void* tokenizer_bin, size_t bytes, int32_t vocab_size,
                  TokenEntry* entries, int32_t* max_length, bool header_only = false) {
  if (tokenizer == nullptr || (tokenizer_bin == nullptr && bytes > 0)) {
    return make_status(StatusCode::invalid_argument, "tokenizer_init: null tokenizer or buffer");
  }
  *tokenizer = Tokenizer{};
  if (vocab_size < kReservedIds) {
    return make_status(StatusCode::invalid_argument,
                       "tokenizer vocab_size below the 259 reserved and byte ids", kReservedIds,
                       vocab_size);
  }
  const unsigned char* file = static_cast<const unsigned char*>(tokenizer_bin);
  if (bytes < 4) {
    return make_status(StatusCode::bad_format, "tokenizer file truncated in its header: bytes", 4,
                       static_cast<int64_t>(bytes));
  }
  const int32_t max_token_length = read_i32_le(file);
  if (max_token_length <= 0) {
    return make_status(StatusCode::bad_format, "tokenizer max_token_length must be positive",
                       max_token_length);
  }

  *max_length = max_token_length;
  if (header_only) return ok_status();
  if (static_cast<uint64_t>(max_token_length) > bytes) {
    // No piece can be longer than the file; an absurd header value would size encode scratch.
    return make_status(StatusCode::bad_format,
                       "tokenizer max_token_length exceeds the file size: bytes", max_token_length,
                       static_cast<int64_t>(bytes));
  }
  int32_t longest = 1;  // what encode really needs, however large the header's figure
  size_t offset = 4;
  for (int32_t id = 0; id < vocab_size; ++id) {
    Status bad;
    if (bytes - offset < 8) {
      bad = make_status(StatusCode::bad_format, "tokenizer file truncated in a token header: bytes",
                        static_cast<int64_t>(offset + 8), static_cast<int64_t>(bytes), id);
    } else {
      const float score = read_f32_le(file + offset);
      const int32_t length = read_i32_le(file + offset + 4);
      offset += 8;
      if (score != score) {
        bad = make_status(StatusCode::bad_format, "tokenizer score is NaN", -1, -1, id);
      } else if (length < 0) {
        bad = make_status(StatusCode::bad_format, "tokenizer piece length is negative", length, -1,
                          id);
      } else if (length > max_token_length) {
        bad = make_status(StatusCode::bad_format,
                          "tokenizer piece longer than max_token_length: bytes", length,
                          max_token_length, id);
      } else if (bytes - offset < static_cast<size_t>(length)) {
        bad = make_status(StatusCode::bad_format, "tokenizer file truncated in a piece: bytes",
                          static_cast<int64_t>(offset) + length, static_cast<int64_t>(bytes), id);
      } else {
        if (entries)
          entries[id] = TokenEntry{reinterpret_cast<const char*>(file + offset), length, score};
        offset += static_cast<size_t>(length);
        if (length > longest) longest = length;
        continue;
      }
    }
    return bad;
  }
  if (offset != bytes) {
    return make_status(StatusCode::bad_format,
                       "tokenizer file has bytes after vocab_size tokens (vocabulary mismatch)",
                       static_cast<int64_t>(offset), static_cast<int64_t>(bytes), vocab_size);
  }
  *max_length = longest;
  return ok_status();
}

}  // namespace

Status tokenizer_init(Tokenizer* tokenizer, const void* tokenizer_bin, size_t bytes,
                      int32_t vocab_size, Arena& arena) {
  int32_t max_token_length = 0;
  const size_t mark = arena.mark();
  TokenEntry* entries = nullptr;
  int32_t* sorted = nullptr;
  // Header checks first (a measuring arena stops after the tables are sized).
  Status s = parse_file(tokenizer, tokenizer_bin, bytes < 4 ? bytes : 4, vocab_size, nullptr,
                        &max_token_length, /*header_only=*/true);
  if (s.ok()) s = allocate_tables(arena, vocab_size, &entries, &sorted);
  if (s.ok() && arena.is_measuring()) return ok_status();  // sizing only: nothing to fill
  if (s.ok())
    s = parse_file(tokenizer, tokenizer_bin, bytes, vocab_size, entries, &max_token_length);
  if (!s.ok()) {
    arena.rewind(mark);
    return s;
  }

  // Sorted index for binary search: by piece bytes, then id, so the lowest id of a repeated
  // piece comes first. std::sort is an in-place introsort: no allocation.
  for (int32_t id = 0; id < vocab_size; ++id) sorted[id] = id;
  std::sort(sorted, sorted + vocab_size, [entries](int32_t a, int32_t b) {
    const int c = compare_bytes(entries[a].piece, static_cast<size_t>(entries[a].length),
                                entries[b].piece, static_cast<size_t>(entries[b].length));
    return c != 0 ? c < 0 : a < b;
  });

  tokenizer->entries = entries;
  tokenizer->sorted_ids = sorted;
  tokenizer->vocab_size = vocab_size;
  tokenizer->max_token_length = max_token_length;
  tokenizer->space_id = tokenizer_lookup(*tokenizer, " ", 1);
  return ok_status();
}

int32_t tokenizer_lookup(const Tokenizer& t, const char* piece, size_t length) {
  if (t.sorted_ids == nullptr) return -1;  // decode-only or not initialised
  // Lower bound: first sorted entry not below the key, i.e. the lowest id holding it.
  int32_t lo = 0;
  int32_t hi = t.vocab_size;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    const TokenEntry& e = t.entries[t.sorted_ids[mid]];
    if (compare_bytes(e.piece, static_cast<size_t>(e.length), piece, length) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == t.vocab_size) return -1;
  const int32_t id = t.sorted_ids[lo];
  const TokenEntry& e = t.entries[id];
  return compare_bytes(e.piece, static_cast<size_t>(e.length), piece, length) == 0 ? id : -1;
}

size_t tokenizer_encode_scratch_bytes(const Tokenizer& t, size_t text_len) {
  const size_t capacity = encode_capacity(text_len);
  // Two int32 arrays, the concatenation buffer, and slack to align the start.
  return 2 * capacity * sizeof(int32_t) + static_cast<size_t>(t.max_token_length) +
         alignof(int32_t);
}

Status tokenizer_encode(const Tokenizer& t, const char* text, size_t len, bool bos, bool eos,
                        int32_t* ids, int32_t max_ids, int32_t* n_ids, void* scratch,
                        size_t scratch_bytes) {
  if (n_ids != nullptr) *n_ids = 0;
  if (t.entries == nullptr || n_ids == nullptr || (text == nullptr && len > 0) ||
      (ids == nullptr && max_ids > 0) || max_ids < 0) {
    return make_status(StatusCode::invalid_argument, "tokenizer_encode: null or negative argument");
  }
  if (len > static_cast<size_t>(INT32_MAX) - 3) {
    return make_status(StatusCode::invalid_argument, "tokenizer_encode: text too long: bytes",
                       INT32_MAX - 3, static_cast<int64_t>(len));
  }
  const size_t need = tokenizer_encode_scratch_bytes(t, len);
  if (scratch == nullptr || scratch_bytes < need) {
    return make_status(StatusCode::out_of_memory, "tokenizer_encode scratch too small: bytes",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
  const uintptr_t aligned = (base + alignof(int32_t) - 1) & ~uintptr_t(alignof(int32_t) - 1);
  const size_t capacity = encode_capacity(len);
  EncodeScratch w;
  w.tokens = reinterpret_cast<int32_t*>(aligned);
  w.pair_ids = w.tokens + capacity;
  w.concat = reinterpret_cast<char*>(w.pair_ids + capacity);

  int32_t n = 0;
  if (bos) w.tokens[n++] = kTokenBos;
  // SentencePiece's add_dummy_prefix: a space before non-empty text. A vocabulary without " "
  // gets the space as its byte token (llama2.c would emit id -1 here).
  if (len > 0) w.tokens[n++] = t.space_id >= 0 ? t.space_id : kTokenFirstByte + ' ';

  // One token per UTF-8 code point: a byte plus following continuation bytes, at most 4 bytes
  // (llama2.c's grouping, including for stray continuation bytes).
  size_t i = 0;
  while (i < len) {
    size_t n_bytes = 1;
    while (i + n_bytes < len && n_bytes < 4 &&
           (static_cast<unsigned char>(text[i + n_bytes]) & 0xC0) == 0x80) {
      ++n_bytes;
    }
    const int32_t id = tokenizer_lookup(t, text + i, n_bytes);
    if (id >= 0) {
      w.tokens[n++] = id;
    } else {
      for (size_t k = 0; k < n_bytes; ++k) {
        w.tokens[n++] = kTokenFirstByte + static_cast<unsigned char>(text[i + k]);
      }
    }
    i += n_bytes;
  }

  // BPE merges: the best-scoring pair merges first, leftmost on ties. Pair lookups are cached and
  // only the two pairs next to a merge are looked up again.
  for (int32_t p = 0; p + 1 < n; ++p)
    w.pair_ids[p] = lookup_pair(t, w.tokens[p], w.tokens[p + 1], w.concat);
  for (;;) {
    float best_score = kNoMergeScore;
    int32_t best = -1;
    for (int32_t p = 0; p + 1 < n; ++p) {
      const int32_t id = w.pair_ids[p];
      if (id >= 0 && t.entries[id].score > best_score) {
        best_score = t.entries[id].score;
        best = p;
      }
    }
    if (best < 0) break;
    w.tokens[best] = w.pair_ids[best];
    for (int32_t p = best + 1; p + 1 < n; ++p) {
      w.tokens[p] = w.tokens[p + 1];
      if (p + 2 < n) w.pair_ids[p] = w.pair_ids[p + 1];
    }
    --n;
    if (best > 0)
      w.pair_ids[best - 1] = lookup_pair(t, w.tokens[best - 1], w.tokens[best], w.concat);
    if (best + 1 < n)
      w.pair_ids[best] = lookup_pair(t, w.tokens[best], w.tokens[best + 1], w.concat);
  }

  const int32_t total = n + (eos ? 1 : 0);
  if (total > max_ids) {
    return make_status(StatusCode::out_of_memory, "tokenizer_encode: ids buffer too small: ids",
                       total, max_ids);
  }
  std::memcpy(ids, w.tokens, static_cast<size_t>(n) * sizeof(int32_t));
  if (eos) ids[n] = kTokenEos;
  *n_ids = total;
  return ok_status();
}

Status tokenizer_init_decode_only(Tokenizer* tokenizer, const void* tokenizer_bin, size_t bytes,
                                  int32_t vocab_size) {
  int32_t max_token_length = 0;
  EINFER_TRY(parse_file(tokenizer, tokenizer_bin, bytes, vocab_size, nullptr, &max_token_length));
  tokenizer->file = static_cast<const unsigned char*>(tokenizer_bin);
  tokenizer->vocab_size = vocab_size;
  tokenizer->max_token_length = max_token_length;
  return ok_status();
}

TokenPiece tokenizer_decode(const Tokenizer& t, int32_t prev, int32_t token) {
  if (token < 0 || token >= t.vocab_size || (t.entries == nullptr && t.file == nullptr)) {
    return TokenPiece{};
  }
  TokenPiece piece;
  if (t.entries) {
    piece = TokenPiece{t.entries[token].piece, static_cast<size_t>(t.entries[token].length)};
  } else {
    // Decode-only: walk the (validated) records up to the token, 8 + length bytes each.
    const unsigned char* rec = t.file + 4;
    for (int32_t id = 0; id < token; ++id) rec += 8 + static_cast<size_t>(read_i32_le(rec + 4));
    piece = TokenPiece{reinterpret_cast<const char*>(rec + 8),
                       static_cast<size_t>(read_i32_le(rec + 4))};
  }
  // SentencePiece drops the dummy-prefix space of the first word after BOS.
  if (prev == kTokenBos && piece.size > 0 && piece.data[0] == ' ') {
    ++piece.data;
    --piece.size;
  }
  const int byte = byte_piece_value(piece.data, piece.size);
  if (byte >= 0) piece = TokenPiece{kByteTable.bytes + byte, 1};
  return piece;
}

bool token_piece_is_printable(TokenPiece piece) {
  if (piece.data == nullptr || piece.size == 0) return false;
  if (piece.size == 1) {
    // isprint || isspace in the C locale, spelled out so the locale cannot change it.
    const unsigned char c = static_cast<unsigned char>(piece.data[0]);
    const bool printable = c >= 0x20 && c <= 0x7E;
    const bool space = c == ' ' || (c >= '\t' && c <= '\r');
    return printable || space;
  }
  return true;
}

}  // namespace einfer
