// Zero heap calls while the tokenizer kinds of issue 32 set up, encode and decode: NFC and NFKC
// byte-level BPE (Qwen), ▁-escaped character BPE with added whitespace runs (Gemma), the space
// split with NFD + StripAccents + Lowercase and fused unknowns, WordPiece with BertNormalizer
// (BERT) and a SentencePiece .model with Gemma's settings. Images are packed by the host reader
// (which allocates) before the watch starts.
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB

#include <cstdint>
#include <string>
#include <vector>

#include "models/tokenizer_text.h"
#include "tests/alloc/heap_counter.h"
#include "tools/einfer-pack/import_tokenizer.h"

using namespace einfer;

TEST_CASE("no heap: normalizers, WordPiece and the Gemma tokenizers encode and decode") {
  const std::string dir = EINFER_TEST_DATA_DIR "/tokenizer/fixtures/";
  const char* const texts[] = {
      "Hello  world, caf\xC3\xA9 na\xC3\xAFve \xEF\xAC\x81 \xEF\xBC\xA1 e\xCC\x81",
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80 x\xE2\x96\x81\xE2\x96\x81y a\n\n\tb",
      "<start_of_turn>user\n<|im_start|>[CLS] 12345 \xFF\xFE supercalifragilistic"};
  for (const char* file :
       {"qwen3-mini.json", "nfkc-mini.json", "gemma-mini.json", "split-mini.json", "bert-mini.json",
        "bert-cased-mini.json", "bert-vocab", "gemma-like.model"}) {
    CAPTURE(file);
    const std::vector<uint8_t> image =
        pack::write_tokenizer_image(pack::read_tokenizer_file(dir + file));
    PackedTokenizer packed;
    REQUIRE(tokenizer_parse(image.data(), image.size(), &packed).ok());
    std::vector<unsigned char> arena_memory(text_tokenizer_arena_bytes(packed) + 64);
    const size_t max_len = 256;
    std::vector<unsigned char> scratch(text_tokenizer_scratch_bytes(packed, max_len));
    std::vector<int32_t> ids(text_tokenizer_max_ids(packed, max_len));
    size_t allocations = 0, total_ids = 0, text_bytes = 0;
    bool ok = true;
    {
      HeapWatch watch;
      const uintptr_t base = reinterpret_cast<uintptr_t>(arena_memory.data());
      Arena arena(arena_memory.data() + (64 - base % 64) % 64, text_tokenizer_arena_bytes(packed));
      TextTokenizer tok;
      ok = text_tokenizer_init(&tok, image.data(), image.size(), false, arena).ok();
      for (const char* text : texts) {
        int32_t n = 0;
        size_t len = 0;
        while (text[len] != '\0') ++len;
        ok = ok && text_tokenizer_encode(tok, text, len, true, ids.data(),
                                         static_cast<int32_t>(ids.size()), &n, scratch.data(),
                                         scratch.size())
                       .ok();
        int32_t prev = -1;
        for (int32_t i = 0; i < n; ++i) {
          text_bytes += text_tokenizer_decode(tok, prev, ids[i], true).size;
          prev = ids[i];
        }
        total_ids += static_cast<size_t>(n);
      }
      allocations = watch.allocations();
    }
    CHECK(ok);
    CHECK(total_ids > 20);
    CHECK(text_bytes > 0);
    CHECK(allocations == 0);
  }
}

#endif  // EINFER_HAS_PACK_LIB
