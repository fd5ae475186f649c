// The packed tokenizer image ("EITK"): the vocabulary, merges and special ids of a SentencePiece,
// BPE or WordPiece tokenizer in one flat little-endian image that the device uses in place
// (mmap or flash). einfer-pack writes it (from tokenizer.bin, tokenizer.model, tokenizer.json,
// vocab.txt or a GGUF vocabulary) into the tokenizer region of a .ein file; docs/format.md
// ("Tokenizer image") is the normative description. Everything an importer had to interpret is
// resolved at pack time: byte-level pieces are stored as their raw bytes, SentencePiece's "▁" as
// a space, WordPiece's word-initial pieces with a leading space and its "##" continuations
// without the prefix, merges as (left id, right id, result id) triples in rank order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace einfer {

inline constexpr uint32_t kTokenizerMagic = 0x4B544945;  // the bytes "EITK"
// Version 2 adds the normalizer and max_word_chars fields, the WordPiece algorithm, the BERT and
// space-split pre-tokenizers and flags 10..12; an image using none of them is written as version 1,
// which every einfer reads.
inline constexpr uint32_t kTokenizerVersion = 2;
inline constexpr uint32_t kTokenizerHeaderBytes = 128;
inline constexpr int kTokenizerMaxEog = 8;
inline constexpr uint32_t kTokenizerMaxWordChars = 1024;  // WordPiece max_input_chars_per_word

// How text becomes symbols and symbols merge.
enum class TokenizerAlgorithm : uint32_t {
  sentencepiece_bpe = 1,  // symbols are UTF-8 characters; the best-scoring pair merges first
  bpe = 2,                // merges by rank (Hugging Face BPE); byte-level or character symbols
  wordpiece = 3,          // greedy longest match per word (BERT); continuations stored unprefixed
};

// Pre-tokenizer splitting text into words before BPE (byte-level BPE families).
enum class Pretokenizer : uint32_t {
  none = 0,
  gpt2 = 1,         // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  llama3 = 2,       // (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|...
  qwen2 = 3,        // llama3's with \p{N} one digit at a time
  digits_gpt2 = 4,  // every \p{N} character alone, then gpt2 on the rest (SmolLM, StarCoder)
  bert = 5,         // whitespace removed, each punctuation character alone (BertPreTokenizer)
  split_space = 6,  // after each space (Split " " MergedWithPrevious)
};
inline constexpr uint32_t kPretokenizerCount = 7;
inline constexpr uint32_t kPretokenizerCountV1 = 5;

// Header flags.
inline constexpr uint32_t kTokFlagAddBos = 1u << 0;  // the model's prompts start with bos_id
inline constexpr uint32_t kTokFlagAddEos = 1u << 1;  // ... and end with eos_id
inline constexpr uint32_t kTokFlagDummyPrefix =
    1u << 2;  // a space before the text (SentencePiece add_dummy_prefix)
inline constexpr uint32_t kTokFlagByteFallback =
    1u << 3;  // unknown characters become <0xNN> byte tokens
inline constexpr uint32_t kTokFlagRemoveExtraSpaces =
    1u << 4;  // SentencePiece remove_extra_whitespaces
inline constexpr uint32_t kTokFlagIgnoreMerges =
    1u << 5;  // a word that is a vocabulary piece is taken whole
inline constexpr uint32_t kTokFlagMatchControl =
    1u << 6;  // control and unknown tokens are matched in text (Hugging Face)
inline constexpr uint32_t kTokFlagPrefixEachSegment =
    1u << 7;  // the dummy prefix starts every text segment between
              // matched special tokens (HF Prepend normalizer)
inline constexpr uint32_t kTokFlagByteLevel =
    1u << 8;  // symbols start as single bytes (GPT-2 byte-level BPE)
inline constexpr uint32_t kTokFlagSpaceEscape = 1u
                                                << 9;  // a literal U+2581 in text counts as a space
inline constexpr uint32_t kTokFlagMatchEscapedSpace =
    1u << 10;  // a space in a matched token's piece matches U+2581 in the text, not a space
               // (HF added tokens spelled with ▁ in a tokenizer that stores ▁ as a space)
inline constexpr uint32_t kTokFlagMatchAnySpace =
    1u << 11;  // ... matches a space or U+2581 (SentencePiece user-defined symbols)
inline constexpr uint32_t kTokFlagFuseUnk = 1u << 12;  // consecutive unknown characters: one unk
inline constexpr uint32_t kTokFlagsKnownV1 = (1u << 10) - 1;
inline constexpr uint32_t kTokFlagsKnown = (1u << 13) - 1;

// Token types: SentencePiece's (and GGUF's) numbering.
enum class TokenType : uint8_t {
  normal = 1,
  unknown = 2,
  control = 3,       // <s>, </s>, <|eot_id|>: never produced by merges, hidden when printed
  user_defined = 4,  // always matched in text as a whole
  unused = 5,
  byte = 6,  // <0xNN>
};

// The 128-byte header, as stored (little-endian, read with memcpy).
struct TokenizerHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t algorithm;     // TokenizerAlgorithm
  uint32_t flags;         // kTokFlag*
  uint32_t pretokenizer;  // Pretokenizer
  uint32_t n_tokens;
  uint32_t n_merges;      // bpe: merge triples; sentencepiece_bpe: 0
  uint32_t pieces_bytes;  // bytes of the concatenated pieces
  uint32_t max_piece_bytes;
  int32_t bos_id;  // -1: none
  int32_t eos_id;  // -1: none
  int32_t unk_id;  // -1: none
  int32_t pad_id;  // -1: none
  uint32_t n_eog;  // end-of-generation ids that follow (eos_id among them when present)
  int32_t eog_ids[kTokenizerMaxEog];
  uint32_t normalizer;      // version 2: normalization steps (models/tokenizer_normalize.h)
  uint32_t max_word_chars;  // version 2, WordPiece: longer words are unk; else 0
  uint32_t reserved[8];
};
static_assert(sizeof(TokenizerHeader) == kTokenizerHeaderBytes);

// A validated image: views into the caller's bytes (which must outlive it).
struct PackedTokenizer {
  TokenizerHeader header{};
  const unsigned char* image = nullptr;
  const unsigned char* piece_offsets = nullptr;  // u32 × (n_tokens + 1), into pieces
  const unsigned char* scores = nullptr;         // f32 × n_tokens (sentencepiece_bpe), else null
  const uint8_t* types = nullptr;                // TokenType × n_tokens
  const unsigned char* merges = nullptr;         // u32 × 3 × n_merges (bpe)
  const char* pieces = nullptr;
};

// Bytes of each part of an image with these counts, in order; the total is the image size.
struct TokenizerLayout {
  size_t offsets_at, scores_at, types_at, merges_at, pieces_at, total;
};
TokenizerLayout tokenizer_layout(TokenizerAlgorithm algorithm, uint32_t n_tokens, uint32_t n_merges,
                                 uint32_t pieces_bytes);

// Checks an image completely (header fields, sizes, monotone piece offsets, ids in range,
// byte pieces well formed (<0xNN> with hex digits), merges referring to existing tokens whose
// pieces concatenate to the result) and fills *out. bad_format with a message naming the problem.
Status tokenizer_parse(const void* image, size_t bytes, PackedTokenizer* out);

// Piece bytes of a token of a parsed image (no check of id).
const char* packed_piece(const PackedTokenizer& p, int32_t id, uint32_t* length);
float packed_score(const PackedTokenizer& p, int32_t id);
void packed_merge(const PackedTokenizer& p, uint32_t rank, int32_t* left, int32_t* right,
                  int32_t* result);

}  // namespace einfer
