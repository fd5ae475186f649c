// Tokenizer: llama2.c's tokenizer.bin (SentencePiece BPE vocabulary with scores), encode and
// decode.
//
// File format (little-endian): int32 max_token_length, then for each of vocab_size tokens:
// float32 score, int32 length, `length` bytes of piece (no terminator). Ids 0, 1, 2 are
// <unk>, BOS and EOS; ids 3..258 are the byte-fallback pieces "<0x00>".."<0xFF>".
//
// Semantics follow llama2.c exactly:
//   encode: [BOS] + (text non-empty ? id(" ") : nothing) + one id per UTF-8 code point (up to 4
//           bytes; a code point missing from the vocabulary becomes one byte token per byte,
//           id = byte + 3), then repeatedly merge the adjacent pair whose concatenation is a
//           vocabulary piece with the highest score (leftmost pair on ties), + [EOS].
//   decode: after BOS a leading space is dropped; "<0xNN>" pieces decode to the raw byte.
// One difference, on purpose: pieces are compared as (pointer, length) byte strings, so
// embedded NUL bytes neither truncate nor end the text. When several ids share one piece the
// lowest id wins (llama2.c leaves that to qsort/bsearch).
//
// Memory: no heap. tokenizer_init parses the file in place (pieces point into the caller's
// buffer, which must outlive the Tokenizer) and takes its tables, sized by
// tokenizer_arena_bytes(vocab_size), from the caller's arena. Encoding takes a scratch buffer
// of tokenizer_encode_scratch_bytes(tokenizer, text_len) bytes. tokenizer_init_decode_only takes
// no memory at all (decode scans the file).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/arena.h"
#include "runtime/status.h"

namespace einfer {

inline constexpr int32_t kTokenUnk = 0;
inline constexpr int32_t kTokenBos = 1;
inline constexpr int32_t kTokenEos = 2;
inline constexpr int32_t kTokenFirstByte = 3;  // id of "<0x00>"; byte b has id b + 3

// A run of bytes; not NUL-terminated.
struct TokenPiece {
  const char* data = nullptr;
  size_t size = 0;
};

struct TokenEntry {
  const char* piece;  // into the caller's tokenizer.bin buffer
  int32_t length;
  float score;
};

struct Tokenizer {
  const TokenEntry* entries = nullptr;  // vocab_size entries, by id
  const int32_t* sorted_ids = nullptr;  // ids ordered by piece bytes (then id), for lookup
  int32_t vocab_size = 0;
  int32_t max_token_length = 0;
  int32_t space_id = -1;  // id of " " (the dummy prefix), -1 if the vocabulary has none
  const unsigned char* file = nullptr;  // decode-only: the tokenizer.bin records, scanned
};

// Arena bytes tokenizer_init takes for a vocabulary of vocab_size tokens (from an arena whose
// buffer is kDefaultAlignment-aligned).
size_t tokenizer_arena_bytes(int32_t vocab_size);

// Parses and validates tokenizer.bin (bytes long) holding exactly vocab_size tokens.
// bad_format for truncation, negative or over-long lengths, max_token_length <= 0, a file
// holding more tokens than vocab_size, or NaN scores; invalid_argument for vocab_size < 259
// (the reserved and byte ids); out_of_memory if the arena is short. On failure the arena is
// rewound to where it was.
Status tokenizer_init(Tokenizer* tokenizer, const void* tokenizer_bin, size_t bytes,
                      int32_t vocab_size, Arena& arena);

// Decode-only (no arena, no tables: for firmware that never encodes): validates the file like
// tokenizer_init and keeps a pointer to it; tokenizer_decode then walks the records up to the id
// (O(id) per call, a few thousand cycles for a 512-token vocabulary). Encoding and lookup are not
// available (tokenizer_encode reports invalid_argument, tokenizer_lookup returns -1).
Status tokenizer_init_decode_only(Tokenizer* tokenizer, const void* tokenizer_bin, size_t bytes,
                                  int32_t vocab_size);

// Id of an exact piece, or -1.
int32_t tokenizer_lookup(const Tokenizer& tokenizer, const char* piece, size_t length);

// Scratch bytes tokenizer_encode needs for a text of text_len bytes.
size_t tokenizer_encode_scratch_bytes(const Tokenizer& tokenizer, size_t text_len);

// Encodes text[0..len) into ids[0..*n_ids). out_of_memory (need = ids required) when max_ids
// is too small or the scratch is short; ids then holds nothing useful.
Status tokenizer_encode(const Tokenizer& tokenizer, const char* text, size_t len, bool bos,
                        bool eos, int32_t* ids, int32_t max_ids, int32_t* n_ids, void* scratch,
                        size_t scratch_bytes);

// Bytes of `token` when it follows `prev` (llama2.c decode). Byte tokens point into a static
// 256-byte table. An id outside the vocabulary gives an empty piece.
TokenPiece tokenizer_decode(const Tokenizer& tokenizer, int32_t prev, int32_t token);

// llama2.c safe_printf: false for pieces a terminal should not get, i.e. empty pieces and single
// bytes that are neither printable ASCII nor whitespace (stray UTF-8 bytes, control codes).
bool token_piece_is_printable(TokenPiece piece);

}  // namespace einfer
