// TextTokenizer: encodes text to ids and decodes ids to bytes with the tokenizer image packed
// into a model (models/tokenizer_packed.h), exactly as the reference implementation of its
// family does:
//   - SentencePiece BPE (Llama 1/2, TinyLlama, Mistral, llama2.c's tok512 ...): matches the
//     sentencepiece library: the text's spaces are pieces' "▁", a dummy-prefix space, the
//     best-scoring adjacent pair merges first (leftmost on ties; only normal, user-defined and
//     unused pieces are merge results), leftover characters become <0xNN> byte tokens (byte
//     fallback) or <unk>; invalid UTF-8 counts as U+FFFD, one byte at a time.
//   - BPE by merge rank (Hugging Face tokenizers' BPE model): byte-level symbols (GPT-2, Llama 3,
//     Qwen2/2.5/3, SmolLM) after the family's pre-tokenizer, or characters with byte fallback
//     (Llama 2's and Gemma 3's tokenizer.json); the lowest-ranked pair merges first, leftmost on
//     ties.
//   - WordPiece (BERT): greedy longest match per word after the BERT pre-tokenizer, "##"
//     continuations, the unknown token for a word it cannot cover.
//   - Normalizers (models/tokenizer_normalize.h): NFC/NFD/NFKC/NFKD, BertNormalizer,
//     StripAccents, Lowercase, run on each text segment between matched tokens as Hugging Face
//     does.
//   - Added tokens: user-defined pieces always, control tokens when the image says so (Hugging
//     Face matches special tokens in text; sentencepiece does not), leftmost-longest, never
//     produced by merges.
//
// Cost: encoding is O(N log N) in the text length (a heap of merge candidates over a linked list
// of symbols; hash tables for pieces and merges), never quadratic. Memory: no heap. The hash
// tables live in the caller's arena, sized exactly by text_tokenizer_arena_bytes from the image;
// encoding takes a scratch of text_tokenizer_scratch_bytes(image, text_len). Decode-only mode
// takes no arena (decoding needs only the image).
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/tokenizer_packed.h"
#include "runtime/arena.h"
#include "runtime/status.h"

namespace einfer {

// A run of bytes; not NUL-terminated.
struct TextPiece {
  const char* data = nullptr;
  size_t size = 0;
};

struct TextTokenizer {
  PackedTokenizer packed;
  // Encoding tables (null in decode-only mode), open addressing, capacities powers of two.
  const int32_t* piece_slots = nullptr;  // token id or -1, by hash of the piece bytes
  uint32_t piece_mask = 0;
  const int32_t* merge_slots = nullptr;  // merge rank or -1, by hash of (left, right)
  uint32_t merge_mask = 0;
  const int32_t* matched = nullptr;  // ids of tokens matched in text, by first byte, longest first
  int32_t n_matched = 0;
  uint32_t matched_first[8] = {};  // bitmap of the first bytes of `matched`
  int32_t byte_ids[256] = {};      // id of each byte's symbol (byte-level piece or <0xNN>), or -1
  bool can_encode = false;
};

// Exact arena bytes text_tokenizer_init takes for this image (0 for decode-only use).
size_t text_tokenizer_arena_bytes(const PackedTokenizer& packed);

// Validates the image (tokenizer_parse) and builds the encoding tables in `arena`; with
// decode_only, takes nothing from the arena and encoding is unavailable. On failure the arena
// is rewound.
Status text_tokenizer_init(TextTokenizer* tokenizer, const void* image, size_t bytes,
                           bool decode_only, Arena& arena);

// Id of an exact piece (as stored: raw bytes; spaces for SentencePiece's "▁"), or -1.
int32_t text_tokenizer_lookup(const TextTokenizer& tokenizer, const char* piece, size_t length);

// Scratch bytes encoding a text of text_len bytes needs with this image (a bound that depends on
// how much its normalizer can grow a text: 4 bytes per byte and less without one, 11 with NFKC);
// SIZE_MAX for a text too long to encode.
size_t text_tokenizer_scratch_bytes(const PackedTokenizer& packed, size_t text_len);

// The most ids a text of text_len bytes can encode to (BOS/EOS included).
size_t text_tokenizer_max_ids(const PackedTokenizer& packed, size_t text_len);

// Encodes text into ids[0..*n_ids). add_special: the special tokens the tokenizer adds to a
// prompt (BOS/EOS as its add_bos/add_eos flags say; BERT's [CLS] ... [SEP]); a single text's
// token type ids are all 0. out_of_memory with need = ids required when max_ids is too small
// (*n_ids 0, ids holds a prefix), or when the scratch is short.
Status text_tokenizer_encode(const TextTokenizer& tokenizer, const char* text, size_t len,
                             bool add_special, int32_t* ids, int32_t max_ids, int32_t* n_ids,
                             void* scratch, size_t scratch_bytes);

// Bytes of `token` when it follows `prev` (-1: first token). The dummy-prefix space of the first
// word (after BOS or at the start) is dropped; <0xNN> gives the byte; control and unknown tokens
// give their piece only when show_special, else nothing. An id outside the vocabulary gives an
// empty piece.
TextPiece text_tokenizer_decode(const TextTokenizer& tokenizer, int32_t prev, int32_t token,
                                bool show_special);

// llama2.c's safe_printf: false for pieces a terminal should not get, i.e. empty pieces and single
// bytes that are neither printable ASCII nor whitespace (stray UTF-8 bytes, control codes).
bool text_piece_is_printable(TextPiece piece);

// Special ids and end-of-generation test.
int32_t text_tokenizer_bos(const TextTokenizer& tokenizer);
int32_t text_tokenizer_eos(const TextTokenizer& tokenizer);
bool text_tokenizer_is_eog(const TextTokenizer& tokenizer, int32_t id);
int32_t text_tokenizer_vocab(const TextTokenizer& tokenizer);

}  // namespace einfer
