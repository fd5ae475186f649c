// einfer-test: no-bare-metal (std::thread workers)
// Threads: logits are bit-identical for 1, 2 and 3 workers (f32, q8 and q4 weights, float and int8
// KV caches, batched prefill in chunks then decode), and the work really runs on the workers.
// Also built into einfer_tsan_tests (the tsan preset).
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "kernels/gemm_quant/gemm_quant.h"
#include "models/einfer.h"
#include "models/session.h"
#include "tests/isa_levels.h"
#include "tests/session_fixtures.h"
#include "tests/test_pool.h"
#include "tools/einfer-pack/ein_writer.h"
#include "tools/einfer-pack/importers.h"
#include "tools/einfer-pack/layouts.h"

using namespace einfer;

namespace {

// Big enough that every projection, the classifier and attention split into several column or
// head blocks, with tails (vocab 1003 and hidden 200 are not multiples of the 16-column blocks).
pack::AlignedBuffer synthetic(DType dtype, int32_t kv_heads,
                              ArchFamily family = ArchFamily::unspecified, int32_t layers = 2,
                              WeightLayout layout = WeightLayout::rows) {
  pack::SyntheticSpec spec;
  spec.family = family;
  spec.dim = 96;
  spec.hidden = 200;
  spec.layers = layers;
  spec.heads = 6;
  spec.kv_heads = kv_heads;
  spec.vocab = 1003;
  spec.seq = 160;
  spec.tied = 0;
  spec.dtype = dtype;
  spec.seed = 7;
  pack::EinImage image = pack::make_synthetic_image(spec);
  pack::apply_layout(&image, layout, true, nullptr);
  return pack::AlignedBuffer(pack::write_ein(image));
}

// Logits of a prompt in chunks of max_batch (so prefill meets the cache) then 6 greedy decode
// steps, all concatenated. Chunks of 8 cut every projection by columns; chunks of 30 give each of
// up to 3 tasks 8+ token rows, so quantized weights take project_group's row-block form (30 is no
// multiple of 4: the last block ends off the 4-row grid), and the 15-token rest the column form.
// A window of 16 (chunks clamp to it) wraps the ring from the second chunk on, with each chunk's
// keys and values stored by the tasks of the output projection (or, head-parted, of attention).
// Chunks of 130 take the row-block form in blocks of about 64 rows (weights this small stay in L2):
// two blocks on one thread, one per worker on 2, three on 3.
struct Prompt {
  int32_t max_batch, tokens, window = 0;
};
std::vector<float> run(const pack::AlignedBuffer& image, DType kv, einfer_threads threads,
                       Prompt p) {
  RunOptions o;
  o.kv_dtype = kv;
  o.max_batch = p.max_batch;
  o.window = p.window;
  o.threads = threads;
  Model m;
  einfer_test::AlignedMemory mem = einfer_test::session_memory(image.data, image.size, o, &m);
  Arena arena(mem.base, mem.bytes);
  Session* s = nullptr;
  REQUIRE(session_create(image.data, image.size, LoadOptions{}, o, arena, &s).ok());
  CHECK(arena.high_water() == mem.bytes);
  const int32_t V = m.config.vocab_size;
  std::vector<int32_t> prompt;
  for (int32_t i = 0; i < p.tokens; ++i) prompt.push_back((i * 37 + 1) % V);
  std::vector<float> all(static_cast<size_t>(p.tokens) * V);
  const Status st = session_eval(s, prompt.data(), p.tokens, all.data());
  REQUIRE_MESSAGE(st.ok(), st.message);
  einfer_test::append_greedy_logits(s, V, 6, &all);
  return all;
}

}  // namespace

namespace {

// Every prompt of `prompts` with each cache dtype of `caches` on 1, 2 and 3 workers: the same bits,
// and the other workers take part.
void check_worker_counts(const pack::AlignedBuffer& image, const std::string& what,
                         std::initializer_list<Prompt> prompts,
                         std::initializer_list<DType> caches = {DType::f32, DType::i8}) {
  for (DType kv : caches) {
    for (Prompt prompt : prompts) {
      const std::string names = what + ", " + dtype_name(kv) + " cache, chunks of " +
                                std::to_string(prompt.max_batch) + ", window " +
                                std::to_string(prompt.window);
      CAPTURE(names);
      const std::vector<float> one = run(image, kv, einfer_threads{nullptr, 1, nullptr}, prompt);
      for (int n : {2, 3}) {
        CAPTURE(n);
        einfer_test::TestPool pool(n);
        const std::vector<float> many = run(image, kv, pool.threads(), prompt);
        REQUIRE(many.size() == one.size());
        CHECK(std::memcmp(many.data(), one.data(), one.size() * sizeof(float)) == 0);
        CHECK(pool.remote_tasks() > 0);
      }
    }
  }
}

}  // namespace

TEST_CASE("threads: logits are bit-identical for 1, 2 and 3 workers") {
  // 3 kv heads: prefill chunks on 3 workers lay each task's heads out apart (models/mha_parts.h),
  // on 2 they cannot (3 kv heads); 2 kv heads: the other way round.
  for (auto [dtype, kv_heads] :
       {std::pair{DType::f32, 3}, {DType::q8, 3}, {DType::q4, 3}, {DType::q8, 2}, {DType::q4, 2}}) {
    CAPTURE(kv_heads);
    check_worker_counts(synthetic(dtype, kv_heads), std::string(dtype_name(dtype)) + " weights",
                        {Prompt{8, 21}, Prompt{30, 45}, Prompt{30, 45, 16}, Prompt{130, 140}});
  }
  // Interleaved weight layouts (hidden 200: a last group of 8; vocab 1003: a last tile of 3), with
  // the f32 cache (the cache is not theirs).
  struct Case {
    DType dtype;
    int32_t kv_heads;
    WeightLayout layout;
  };
  for (auto [dtype, kv_heads, layout] :
       {Case{DType::q8, 3, WeightLayout::i4x4}, Case{DType::q4, 2, WeightLayout::i4x4},
        Case{DType::q8, 2, WeightLayout::i4x8}, Case{DType::q4, 3, WeightLayout::i4x8},
        Case{DType::q8, 2, WeightLayout::i8x4}, Case{DType::q4, 3, WeightLayout::i8x4}}) {
    CAPTURE(kv_heads);
    check_worker_counts(
        synthetic(dtype, kv_heads, ArchFamily::unspecified, 2, layout),
        std::string(dtype_name(dtype)) + " weights in layout " + layout_name(layout),
        {Prompt{8, 21}, Prompt{30, 45}, Prompt{30, 45, 16}, Prompt{130, 140}}, {DType::f32});
  }
}

TEST_CASE("threads: quantized logits are bit-identical for 1, 2 and 3 workers on every ISA") {
  // Each selection picks its own quantized prefill tiles (AVX2 or AVX-512 VNNI weight lanes, AMX,
  // NEON), whose bits must not depend on how the threads split rows and columns.
  einfer_test::for_each_isa([&](const std::string& isa) {
    CAPTURE(isa);
    for (DType dtype : {DType::q8, DType::q4}) {
      check_worker_counts(synthetic(dtype, 3), std::string(dtype_name(dtype)) + " weights",
                          {Prompt{30, 45}, Prompt{130, 140}});
    }
  });
}

TEST_CASE("threads: the families' features give the same bits for 1, 2 and 3 workers") {
  // Qwen3 / Gemma 3 q/k norm in the column, row-block and head-parted forms, Gemma's post-norm
  // row passes, GeGLU in the gate/up hooks, soft-capping, periodic windows with two RoPE tables
  // (6 Gemma 3 layers: 5 sliding, 1 full), Phi-3's longrope and window on every layer.
  struct Case {
    ArchFamily family;
    DType dtype;
    int32_t kv_heads, layers;
  };
  const Case cases[] = {{ArchFamily::qwen3, DType::q8, 3, 2},
                        {ArchFamily::gemma2, DType::q4, 2, 2},
                        {ArchFamily::gemma3, DType::q8, 3, 6},
                        {ArchFamily::phi3, DType::f32, 3, 2}};
  for (const Case& c : cases)
    check_worker_counts(
        synthetic(c.dtype, c.kv_heads, c.family, c.layers),
        std::string(arch_family_name(c.family)) + " " + dtype_name(c.dtype) + " weights",
        {Prompt{8, 21}, Prompt{30, 45, 16}, Prompt{130, 140}});
}

TEST_CASE("threads: the arena holds one scratch slot per worker, sized exactly") {
  const pack::AlignedBuffer image = synthetic(DType::q8, 3);
  Model m;
  REQUIRE(load_model(image.data, image.size, LoadOptions{}, &m).ok());
  size_t one = 0, four = 0;
  RunOptions o;
  REQUIRE(session_arena_bytes(m.config, o, &one).ok());
  o.threads.n = 4;  // sizing only: no pool attached
  REQUIRE(session_arena_bytes(m.config, o, &four).ok());
  CHECK(four > one);
  o.threads.n = -1;
  CHECK(session_arena_bytes(m.config, o, &four).code == StatusCode::invalid_argument);
}

TEST_CASE("threads: the C API takes the caller's workers") {
  const pack::AlignedBuffer image = synthetic(DType::q4, 3);
  einfer_test::TestPool pool(2);
  std::vector<float> logits[2];
  for (int with_pool = 0; with_pool < 2; ++with_pool) {
    einfer_options o;
    einfer_options_default(&o);
    if (with_pool) o.threads = pool.threads();
    einfer_test::CapiSession session(image.data, image.size, o);
    einfer_session* s = session.s;
    const int32_t prompt[] = {1, 5, 9, 200, 17, 3};
    REQUIRE(einfer_prefill(s, prompt, 6) == EINFER_OK);
    REQUIRE(einfer_decode(s, einfer_next_token(s)) == EINFER_OK);
    logits[with_pool].assign(einfer_logits(s), einfer_logits(s) + einfer_vocab_size(s));
  }
  CHECK(logits[0] == logits[1]);
  CHECK(pool.remote_tasks() > 0);
}

#endif  // EINFER_HAS_PACK_LIB
