// Host-side tokenizer importers: every supported tokenizer file becomes one TokenizerSpec, which
// write_tokenizer_image turns into the packed "EITK" image (models/tokenizer_packed.h,
// docs/format.md). The device then needs no parsing of JSON, protobuf or GGUF.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "models/tokenizer_packed.h"

namespace einfer::pack {

struct TokenizerSpec {
  TokenizerAlgorithm algorithm = TokenizerAlgorithm::sentencepiece_bpe;
  uint32_t flags = 0;
  Pretokenizer pretokenizer = Pretokenizer::none;
  std::vector<std::string> pieces;  // as stored: raw bytes (byte-level decoded, "▁" as ' ')
  std::vector<float> scores;        // sentencepiece_bpe only
  std::vector<uint8_t> types;       // TokenType
  std::vector<std::array<int32_t, 3>> merges;  // bpe: left, right, result in rank order
  uint32_t normalizer = 0;                     // kNorm* steps (models/tokenizer_normalize.h)
  uint32_t max_word_chars = 0;                 // wordpiece: max_input_chars_per_word
  int32_t bos = -1, eos = -1, unk = -1, pad = -1;
  std::vector<int32_t> eog;  // end-of-generation ids (EOS first when present)
  std::string source;        // what was read, for messages and --inspect
};

// Reads a tokenizer file, detected from its content: llama2.c tokenizer.bin (with or without the
// max_token_length/score header), SentencePiece tokenizer.model (BPE), Hugging Face
// tokenizer.json (tokenizer_config.json beside it is read when present), a BERT vocab.txt
// (WordPiece; tokenizer_config.json's do_lower_case beside it), or an already packed EITK image.
// Throws PackError naming what is wrong.
TokenizerSpec read_tokenizer_file(const std::string& path);
// The same for bytes already in memory; `name` is used in messages.
TokenizerSpec read_tokenizer_bytes(const std::vector<uint8_t>& bytes, const std::string& name);

// The model's own special ids (config.json bos_token_id / eos_token_id) onto its tokenizer: bos
// when the tokenizer names none; every eos id an end of generation (eos the first one when the
// tokenizer names none).
void add_model_special_ids(TokenizerSpec& spec, int32_t bos, const std::vector<int32_t>& eos);

// The vocabulary of a GGUF file's tokenizer.ggml.* keys (model "llama" or "gpt2"); throws when the
// file has none or it is malformed.
TokenizerSpec read_gguf_tokenizer(const std::string& path);
// A GGUF file's vocabulary when it carries one (tokenizer.ggml.model); false when it has none.
bool gguf_tokenizer_if_any(const std::vector<uint8_t>& gguf, const std::string& path,
                           TokenizerSpec* out);

// A Hugging Face folder's tokenizer (tokenizer.json, else tokenizer.model, else vocab.txt); false
// when none.
bool read_folder_tokenizer(const std::string& dir, TokenizerSpec* out);

// The EITK image (validated by the device parser before it is returned).
std::vector<uint8_t> write_tokenizer_image(const TokenizerSpec& spec);
// The image for a model with `model_vocab` embedding rows: fewer tokens than rows is fine (padded
// embeddings), more is an error, as is a model without a vocabulary (encoders).
std::vector<uint8_t> tokenizer_image_for_model(const TokenizerSpec& spec, int32_t model_vocab);

// Adds the end-of-generation ids a family conventionally ends a turn with (by piece text, as
// llama.cpp does) to spec.eog.
void add_conventional_eog(TokenizerSpec& spec);

// A SentencePiece piece as stored: every "▁" (U+2581) becomes a space.
std::string sentencepiece_to_spaces(const std::string& piece);

// GPT-2's byte-to-unicode alphabet, inverted: UTF-8 of a byte-level piece -> raw bytes; false
// when a character is outside the alphabet.
bool byte_level_decode(const std::string& piece, std::string* raw);

}  // namespace einfer::pack
