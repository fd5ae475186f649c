// libFuzzer target for the tokenizer image parser, encoder and decoder: the input's first 4 bytes
// give the image length, the image follows, the rest is text. A valid image (the seed corpus
// holds real ones) is set up in an arena of exactly text_tokenizer_arena_bytes, the text is
// encoded, and every id decodes; anything else must be refused with a status, never a crash or a
// read outside the buffers (ASan/UBSan).   tools/scripts/fuzz-tokenizer.sh [SECONDS]
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "models/tokenizer_text.h"

using namespace einfer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t image_len;
  std::memcpy(&image_len, data, 4);
  if (image_len > size - 4) return 0;
  // Exact-size copies so ASan sees any read past either buffer.
  std::vector<uint8_t> image(data + 4, data + 4 + image_len);
  std::vector<char> text(data + 4 + image_len, data + size);
  PackedTokenizer packed;
  if (!tokenizer_parse(image.data(), image.size(), &packed).ok()) return 0;
  std::vector<unsigned char> arena_memory(text_tokenizer_arena_bytes(packed) + kDefaultAlignment);
  const uintptr_t base = reinterpret_cast<uintptr_t>(arena_memory.data());
  Arena arena(
      arena_memory.data() + (kDefaultAlignment - base % kDefaultAlignment) % kDefaultAlignment,
      text_tokenizer_arena_bytes(packed));
  TextTokenizer tok;
  if (!text_tokenizer_init(&tok, image.data(), image.size(), false, arena).ok()) __builtin_trap();
  std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(tok.packed, text.size()));
  std::vector<int32_t> ids(text_tokenizer_max_ids(tok.packed, text.size()));
  int32_t n = 0;
  const Status s =
      text_tokenizer_encode(tok, text.data(), text.size(), true, ids.data(),
                            static_cast<int32_t>(ids.size()), &n, scratch.data(), scratch.size());
  if (!s.ok()) __builtin_trap();  // text_tokenizer_max_ids always suffices
  int32_t prev = -1;
  for (int32_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= text_tokenizer_vocab(tok)) __builtin_trap();
    const TextPiece p = text_tokenizer_decode(tok, prev, ids[i], true);
    volatile char sink = 0;
    for (size_t k = 0; k < p.size; ++k) sink = sink + p.data[k];
    prev = ids[i];
  }
  return 0;
}
