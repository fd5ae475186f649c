// Zero heap calls while a sentence encoder (bert) runs: session creation with its WordPiece
// tokenizer, token ids and texts embedded (f32, q8 and f16 weights; a text long enough to be
// truncated), through the C API. The models (tests/data/bert, committed) are packed by the host
// writer, which allocates, before the watch starts.
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB

#include <cstdint>
#include <string>
#include <vector>

#include "models/einfer.h"
#include "tests/alloc/heap_counter.h"
#include "tests/session_fixtures.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

TEST_CASE("no heap: bert sessions embed ids and texts through the C API") {
  const std::string dir = std::string(EINFER_TEST_DATA_DIR) + "/bert/";
  pack::TokenizerSpec tok;
  REQUIRE(pack::read_folder_tokenizer(dir + "hf_bert_text", &tok));
  const pack::SourceModel text = pack::import_hf_bert(dir + "hf_bert_text");
  const pack::SourceModel gguf = pack::import_gguf(pack::read_file(dir + "gguf_bert.gguf"));
  struct Case {
    const pack::SourceModel* src;
    DType dtype;
  };
  std::string long_text;
  for (int i = 0; i < 30; ++i) long_text += "Once upon a time, there was a little girl. ";
  for (const Case c : {Case{&text, DType::f32}, Case{&text, DType::q8}, Case{&gguf, DType::f16}}) {
    pack::EinImage packed = pack::pack_source(*c.src, c.dtype, 8, nullptr);
    packed.tokenizer = pack::tokenizer_image_for_model(tok, c.src->config.vocab_size);
    pack::AlignedBuffer image(pack::write_ein(packed));
    einfer_options o;
    einfer_options_default(&o);
    o.with_tokenizer = 1;
    o.max_prompt_bytes = 2048;
    char err[160];
    const einfer_test::AlignedMemory mem = einfer_test::capi_memory(image.data, image.size, o);
    std::vector<float> out(static_cast<size_t>(c.src->config.dim) * 64);
    const int32_t ids[] = {2, 40, 41, 700, 3};  // [CLS] ... [SEP] of the fixture vocabulary
    size_t allocations = 0;
    int rc = 0;
    int32_t n_long = 0;
    {
      HeapWatch watch;
      einfer_session* s = nullptr;
      rc |= einfer_session_create(image.data, image.size, &o, mem.base, mem.bytes, &s, err,
                                  sizeof err);
      if (rc == 0) rc |= einfer_embed(s, ids, 5, out.data());
      if (rc == 0) rc |= einfer_embed_tokens(s, ids, 5, out.data());
      int32_t n = 0;
      if (rc == 0) rc |= einfer_embed_text(s, "Hello, world! How are you?", out.data(), &n);
      if (rc == 0) rc |= einfer_embed_text(s, long_text.c_str(), out.data(), &n_long);
      allocations = watch.allocations();
    }
    CAPTURE(dtype_name(c.dtype));
    CHECK(rc == 0);
    CHECK(n_long > c.src->config.context_length);  // the long text was truncated
    CHECK(allocations == 0);
  }
}

#endif  // EINFER_HAS_PACK_LIB
