// Zero heap calls while a real model runs: session creation, batched prefill, decode steps,
// sampling and tokenizer encode/decode, through both the C++ session and the C API. The model is
// packed (by the host writer, which allocates) before the watch starts.
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "models/einfer.h"
#include "models/sampler.h"
#include "models/session.h"
#include "tests/alloc/heap_counter.h"
#include "tests/session_fixtures.h"
#include "tests/test_pool.h"
#include "tools/einfer-pack/import_tokenizer.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

namespace {

std::string shared_path(const char* name) {
  return std::string(EINFER_SHARED_MODELS_DIR) + "/" + name;
}

bool have_shared() {
  std::ifstream f(shared_path("aidreams260K.bin"));
  if (!f) MESSAGE("skipped: ../shared/models is absent");
  return static_cast<bool>(f);
}

std::vector<uint8_t> pack_aidreams(DType dtype) {
  pack::SourceModel src = pack::import_llama2c(pack::read_file(shared_path("aidreams260K.bin")));
  pack::EinImage image = pack::pack_source(src, dtype, 32, nullptr);
  image.tokenizer = pack::tokenizer_image_for_model(
      pack::read_tokenizer_file(shared_path("tok512-aidreams.bin")), src.config.vocab_size);
  return pack::write_ein(image);
}

}  // namespace

TEST_CASE("no heap: session create, prefill, decode, sampling (f32 and q4 weights, int8 KV)") {
  if (!have_shared()) return;
  for (DType dtype : {DType::f32, DType::q4}) {
    pack::AlignedBuffer image(pack_aidreams(dtype));
    RunOptions o;
    o.kv_dtype = DType::i8;
    o.max_batch = 8;
    Model m;
    einfer_test::AlignedMemory mem = einfer_test::session_memory(image.data, image.size, o, &m);
    std::vector<unsigned char> sampler_mem(sampler_scratch_bytes(m.config.vocab_size));
    const int32_t prompt[] = {1, 319, 459, 355, 260, 275, 429, 339, 315, 374, 327, 446};
    size_t allocations = 0;
    bool ok = true;
    {
      HeapWatch watch;
      Arena arena(mem.base, mem.bytes);
      Session* s = nullptr;
      ok = ok && session_create(image.data, image.size, LoadOptions{}, o, arena, &s).ok();
      Sampler sampler;
      SamplerConfig sc;
      sc.temperature = 0.8f;
      sc.top_p = 0.9f;
      sc.seed = 42;
      ok = ok &&
           sampler_init(&sampler, sc, m.config.vocab_size, sampler_mem.data(), sampler_mem.size())
               .ok();
      ok = ok && session_eval(s, prompt, 12).ok();  // batched prefill (two chunks of <= 8)
      for (int i = 0; i < 40 && ok; ++i) {
        int32_t next = sampler_sample(&sampler, const_cast<float*>(session_logits(*s)));
        ok = session_eval(s, &next, 1).ok();
      }
      allocations = watch.allocations();
    }
    CHECK(ok);
    CAPTURE(dtype_name(dtype));
    CHECK(allocations == 0);
  }
}

namespace {

// Heap calls (of every thread) while a session on `image` is created, prefills `prompt` and decodes
// 20 tokens; -1 if any step failed. The arena is sized before the watch starts.
long session_allocations(const pack::AlignedBuffer& image, const RunOptions& o,
                         const std::vector<int32_t>& prompt) {
  Model m;
  einfer_test::AlignedMemory mem = einfer_test::session_memory(image.data, image.size, o, &m);
  size_t allocations = 0;
  bool ok = true;
  {
    HeapWatch watch;  // counts every thread's allocations
    Arena arena(mem.base, mem.bytes);
    Session* s = nullptr;
    ok = ok && session_create(image.data, image.size, LoadOptions{}, o, arena, &s).ok();
    ok = ok && session_eval(s, prompt.data(), static_cast<int32_t>(prompt.size())).ok();
    for (int i = 0; i < 20 && ok; ++i) {
      int32_t next = (i * 31 + 7) % m.config.vocab_size;
      ok = session_eval(s, &next, 1).ok();
    }
    allocations = watch.allocations();
  }
  return ok ? static_cast<long>(allocations) : -1;
}

}  // namespace

TEST_CASE("no heap: a session on 2 workers (pool started before the watch), q8 weights") {
  if (!have_shared()) return;
  pack::AlignedBuffer image(pack_aidreams(DType::q8));
  einfer_test::TestPool pool(2);
  RunOptions o;
  o.max_batch = 8;
  o.threads = pool.threads();
  CHECK(session_allocations(image, o, {1, 319, 459, 355, 260, 275, 429, 339, 315, 374, 327, 446}) ==
        0);
  CHECK(pool.remote_tasks() > 0);
}

TEST_CASE("no heap: the families' features (Qwen3, Gemma 2/3, Phi-3), prefill and decode") {
  // Synthetic models with every feature (q/k norm, post-norms, GeGLU, soft-capping, periodic
  // windows and the local RoPE table, longrope), on one thread and on 2 workers.
  for (ArchFamily family :
       {ArchFamily::qwen3, ArchFamily::gemma2, ArchFamily::gemma3, ArchFamily::phi3}) {
    pack::SyntheticSpec spec;
    spec.family = family;
    spec.layers = 6;
    spec.dtype = DType::q8;
    pack::AlignedBuffer image(pack::write_ein(pack::make_synthetic_image(spec)));
    std::vector<int32_t> prompt;
    for (int32_t i = 0; i < 40; ++i) prompt.push_back((i * 37 + 1) % spec.vocab);
    for (int threads : {1, 2}) {
      einfer_test::TestPool pool(threads);
      RunOptions o;
      o.max_batch = 8;
      if (threads > 1) o.threads = pool.threads();
      CAPTURE(arch_family_name(family));
      CAPTURE(threads);
      CHECK(session_allocations(image, o, prompt) == 0);
    }
  }
}

TEST_CASE("no heap: the C API with its tokenizer, from create to generated text") {
  if (!have_shared()) return;
  pack::AlignedBuffer image(pack_aidreams(DType::q8));
  einfer_options o;
  einfer_options_default(&o);
  o.with_tokenizer = 1;
  o.kv_int8 = 1;
  char err[160];
  einfer_test::AlignedMemory mem = einfer_test::capi_memory(image.data, image.size, o);
  int32_t ids[64];
  size_t allocations = 0, text_bytes = 0;
  int rc = 0;
  {
    HeapWatch watch;
    einfer_session* s = nullptr;
    rc |=
        einfer_session_create(image.data, image.size, &o, mem.base, mem.bytes, &s, err, sizeof err);
    int32_t n = 0;
    if (rc == 0) rc |= einfer_tokenize(s, "Echoes of vectors", 1, ids, 64, &n);
    if (rc == 0) rc |= einfer_prefill(s, ids, n);
    int32_t prev = n ? ids[n - 1] : 1;
    for (int i = 0; i < 24 && rc == 0; ++i) {
      const int32_t next = einfer_next_token(s);
      size_t len = 0;
      einfer_token_text(s, prev, next, &len);
      text_bytes += len;
      rc |= einfer_decode(s, next);
      prev = next;
    }
    allocations = watch.allocations();
  }
  CHECK(rc == 0);
  CHECK(text_bytes > 0);
  CHECK(allocations == 0);
}

#endif  // EINFER_HAS_PACK_LIB
