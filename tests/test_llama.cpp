// End-to-end llama tests on the real checkpoints in ../shared/models (skipped when absent):
// greedy ids against the README's independent float64 reference, prefill vs token-by-token,
// windowed streaming against a from-scratch reference, quantized weights and KV against float.
// einfer-test: no-bare-metal
#include <doctest/doctest.h>

#if EINFER_HAS_PACK_LIB  // needs the host-side packer library

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "models/einfer.h"
#include "models/session.h"
#include "tests/reference_llama.h"
#include "tools/einfer-pack/importers.h"

using namespace einfer;

namespace {

std::string shared_path(const std::string& name) {
  return std::string(EINFER_SHARED_MODELS_DIR) + "/" + name;
}

bool have_shared(const std::string& name) {
  std::ifstream f(shared_path(name), std::ios::binary);
  if (!f) MESSAGE("skipped: " << shared_path(name) << " is absent (../shared/models not present)");
  return static_cast<bool>(f);
}

// The expected greedy ids listed in ../shared/models/README.md for `file` (empty if not found).
std::vector<int32_t> readme_ids(const std::string& file) {
  std::ifstream f(shared_path("README.md"));
  std::string line;
  bool in_section = false, in_block = false;
  while (std::getline(f, line)) {
    if (line.rfind(file + ", first", 0) == 0)
      in_section = true;
    else if (in_section && line.rfind("```", 0) == 0) {
      if (in_block) break;
      in_block = true;
    } else if (in_section && in_block) {
      std::vector<int32_t> ids;
      std::istringstream in(line);
      int32_t v;
      while (in >> v) ids.push_back(v);
      return ids;
    }
  }
  return {};
}

struct Packed {
  std::unique_ptr<pack::AlignedBuffer> image;
  Model model;
};

Packed pack_checkpoint(const std::string& file, DType dtype, int32_t group) {
  const pack::SourceModel src = pack::import_llama2c(pack::read_file(shared_path(file)));
  Packed p;
  p.image = std::make_unique<pack::AlignedBuffer>(
      pack::write_ein(pack::pack_source(src, dtype, group, nullptr)));
  REQUIRE(load_model(p.image->data, p.image->size, LoadOptions{}, &p.model).ok());
  return p;
}

struct Runner {
  std::vector<unsigned char, std::allocator<unsigned char>> storage;
  Session* session = nullptr;
  Arena arena;
  Runner(const Packed& p, const RunOptions& o) {
    size_t need = 0;
    REQUIRE(session_arena_bytes(p.model.config, o, &need).ok());
    storage.resize(need + 64);
    void* base = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
    arena = Arena(base, need);
    const Status s =
        session_create(p.image->data, p.image->size, LoadOptions{}, o, arena, &session);
    REQUIRE_MESSAGE(s.ok(), s.message);
    CHECK(arena.high_water() == need);  // the sizing function is exact
  }
  const float* eval(int32_t token) {
    const Status s = session_eval(session, &token, 1);
    REQUIRE_MESSAGE(s.ok(), s.message);
    return session_logits(*session);
  }
  int32_t vocab() const { return session->model.config.vocab_size; }
};

int32_t argmax(const float* x, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i) best = x[i] > x[best] ? i : best;
  return best;
}

// Greedy generation of n tokens from BOS; optionally records the logits of every step.
std::vector<int32_t> greedy(Runner& r, int n, std::vector<std::vector<float>>* logits = nullptr) {
  std::vector<int32_t> ids;
  int32_t token = 1;
  for (int i = 0; i < n; ++i) {
    const float* l = r.eval(token);
    if (logits) logits->emplace_back(l, l + r.vocab());
    token = argmax(l, r.vocab());
    ids.push_back(token);
  }
  return ids;
}

}  // namespace

TEST_CASE("llama: greedy ids of both checkpoints match the independent float64 reference") {
  for (const char* file : {"aidreams260K.bin", "stories260K.bin"}) {
    if (!have_shared(file)) return;
    const std::vector<int32_t> expected = readme_ids(file);
    REQUIRE_MESSAGE(expected.size() == 32, "could not read the expected ids from README.md");
    Packed p = pack_checkpoint(file, DType::f32, 0);
    Runner r(p, RunOptions{});
    CAPTURE(std::string(file));
    CHECK(greedy(r, 32) == expected);
  }
}

TEST_CASE("llama: a batched prefill equals feeding the prompt token by token") {
  if (!have_shared("stories260K.bin")) return;
  Packed p = pack_checkpoint("stories260K.bin", DType::f32, 0);
  const std::vector<int32_t> prompt = {1,   461, 401, 378, 455, 473, 456,
                                       435, 299, 362, 409, 283, 264};
  for (int32_t batch : {1, 4, 64}) {
    RunOptions o;
    o.max_batch = batch;
    Runner batched(p, o), single(p, RunOptions{});
    std::vector<float> all(prompt.size() * 512);
    REQUIRE(session_eval(batched.session, prompt.data(), static_cast<int32_t>(prompt.size()),
                         all.data())
                .ok());
    for (size_t i = 0; i < prompt.size(); ++i) {
      const float* l = single.eval(prompt[i]);
      float worst = 0;
      for (int32_t j = 0; j < 512; ++j)
        worst = std::fmax(worst, std::fabs(l[j] - all[i * 512 + j]));
      CAPTURE(batch);
      CAPTURE(i);
      CHECK(worst <= 1e-4f);  // GEMM and GEMV sum in different orders; nothing else differs
    }
    // And decoding continues identically after either.
    const float* a = batched.eval(300);
    const float* b = single.eval(300);
    for (int32_t j = 0; j < 512; ++j) CHECK(std::fabs(a[j] - b[j]) <= 1e-4f);
  }
}

TEST_CASE(
    "llama: window + sinks stream past the trained context and match a from-scratch reference") {
  if (!have_shared("aidreams260K.bin")) return;
  Packed p = pack_checkpoint("aidreams260K.bin", DType::f32, 0);
  for (int sinks : {0, 4}) {
    RunOptions o;
    o.window = 48;
    o.sinks = sinks;
    Runner r(p, o);
    testing::ReferenceLlama ref(p.model, 48, sinks);
    int32_t token = 1;
    int mismatched_argmax = 0;
    for (int step = 0; step < 400; ++step) {  // the model was trained on 128 positions
      const float* l = r.eval(token);
      const std::vector<float> want = ref.step(token);
      float worst = 0, scale = 1;
      for (int32_t j = 0; j < r.vocab(); ++j) {
        worst = std::fmax(worst, std::fabs(l[j] - want[j]));
        scale = std::fmax(scale, std::fabs(want[j]));
      }
      CAPTURE(step);
      CAPTURE(sinks);
      REQUIRE(worst <= 1e-3f * scale);  // float32 runtime vs float64 reference
      const int32_t next = argmax(l, r.vocab());
      mismatched_argmax += next != argmax(want.data(), r.vocab());
      token = next == 1 || next == 2 ? 1 : next;  // keep going through sequence delimiters
    }
    CHECK(mismatched_argmax == 0);
  }
}

TEST_CASE("llama: einfer_prefill_logits gives every position's logits, as token by token") {
  if (!have_shared("stories260K.bin")) return;
  Packed p = pack_checkpoint("stories260K.bin", DType::f32, 0);
  const std::vector<int32_t> prompt = {1, 461, 401, 378, 455, 473};
  einfer_options o;
  einfer_options_default(&o);
  char err[160] = {};
  size_t need = 0;
  REQUIRE(einfer_arena_bytes(p.image->data, p.image->size, &o, &need, err, sizeof err) == 0);
  std::vector<unsigned char> mem(need + 64);
  void* base = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
  einfer_session* s = nullptr;
  REQUIRE(einfer_session_create(p.image->data, p.image->size, &o, base, need, &s, err,
                                sizeof err) == 0);
  CHECK(einfer_architecture(s) == EINFER_ARCH_LLAMA);
  const int32_t vocab = einfer_vocab_size(s);
  std::vector<float> all(prompt.size() * static_cast<size_t>(vocab));
  REQUIRE(einfer_prefill_logits(s, prompt.data(), static_cast<int32_t>(prompt.size()),
                                all.data()) == 0);
  Runner single(p, RunOptions{});
  for (size_t i = 0; i < prompt.size(); ++i) {
    const float* l = single.eval(prompt[i]);
    float worst = 0;
    for (int32_t j = 0; j < vocab; ++j)
      worst = std::fmax(worst, std::fabs(l[j] - all[i * static_cast<size_t>(vocab) + j]));
    CAPTURE(i);
    CHECK(worst <= 1e-4f);  // GEMM and GEMV sum in different orders; nothing else differs
  }
  // The last row is what einfer_logits holds; an encoder entry point is refused.
  CHECK(std::memcmp(einfer_logits(s), all.data() + (prompt.size() - 1) * vocab,
                    static_cast<size_t>(vocab) * sizeof(float)) == 0);
  float v[8] = {};
  CHECK(einfer_encode(s, v, 1, v) == EINFER_E_INVALID_ARGUMENT);
}

TEST_CASE("llama: int8 KV cache follows the float cache closely") {
  if (!have_shared("aidreams260K.bin")) return;
  Packed p = pack_checkpoint("aidreams260K.bin", DType::f32, 0);
  RunOptions f32, i8;
  i8.kv_dtype = DType::i8;
  Runner a(p, f32), b(p, i8);
  std::vector<std::vector<float>> la, lb;
  const std::vector<int32_t> ids = greedy(a, 64, &la);
  int32_t token = 1;
  int agree = 0;
  for (int i = 0; i < 64; ++i) {  // teacher-forced along the float path
    const float* l = b.eval(token);
    agree += argmax(l, b.vocab()) == ids[i];
    token = ids[i];
  }
  MESSAGE("int8 KV top-1 agreement with float KV: " << agree << "/64");
  CHECK(agree >= 60);  // int8 per-(slot, head) scales keep ~2 significant digits per key
}

TEST_CASE("llama: q8 and q4 weights agree with float along the float greedy path") {
  for (const char* file : {"aidreams260K.bin", "stories260K.bin"}) {
    if (!have_shared(file)) return;
    Packed pf = pack_checkpoint(file, DType::f32, 0);
    Runner rf(pf, RunOptions{});
    const int n = 96;
    std::vector<std::vector<float>> lf;
    const std::vector<int32_t> path = greedy(rf, n, &lf);
    for (DType dt : {DType::q8, DType::q4}) {
      Packed pq = pack_checkpoint(file, dt, 32);
      Runner rq(pq, RunOptions{});
      int agree = 0;
      int32_t token = 1;
      for (int i = 0; i < n; ++i) {
        agree += argmax(rq.eval(token), rq.vocab()) == path[i];
        token = path[i];
      }
      const double rate = static_cast<double>(agree) / n;
      MESSAGE(std::string(file) << " " << dtype_name(dt) << ": top-1 agreement with f32 " << agree
                                << "/" << n);
      // Floors from tests/gen/quant_agreement.py, an independent numpy forward pass with the same
      // weight quantization (activations in float): stories260K q8 88/96, q4 23/96 (this tiny
      // checkpoint's logits sit close together, so 4-bit weights leave its greedy path early);
      // aidreams260K q8 95/96, q4 91/96. einfer also quantizes activations per group to int8, so
      // the floors leave a few tokens of margin below those figures.
      const bool stories = std::string(file) == "stories260K.bin";
      const double floor = dt == DType::q8 ? (stories ? 0.80 : 0.90) : (stories ? 0.15 : 0.85);
      CHECK(rate >= floor);
    }
  }
}

TEST_CASE("llama: bad input gives a clear error, never a crash") {
  if (!have_shared("aidreams260K.bin")) return;
  Packed p = pack_checkpoint("aidreams260K.bin", DType::f32, 0);
  RunOptions o;
  o.context = 8;
  Runner r(p, o);
  int32_t bad = 512;
  Status s = session_eval(r.session, &bad, 1);
  CHECK(s.code == StatusCode::out_of_range);
  std::vector<int32_t> many(9, 5);
  s = session_eval(r.session, many.data(), 9);
  CHECK(s.code == StatusCode::out_of_range);
  CHECK(std::strstr(s.message, "context full") != nullptr);

  // An arena one byte short is refused with the exact figure.
  size_t need = 0;
  REQUIRE(session_arena_bytes(p.model.config, RunOptions{}, &need).ok());
  std::vector<unsigned char> small(need + 64);
  void* base = small.data() + (64 - reinterpret_cast<uintptr_t>(small.data()) % 64) % 64;
  Arena arena(base, need - 1);
  Session* session = nullptr;
  s = session_create(p.image->data, p.image->size, LoadOptions{}, RunOptions{}, arena, &session);
  CHECK(s.code == StatusCode::out_of_memory);
  CHECK(s.need == static_cast<int64_t>(need));

  RunOptions bad_opts;
  bad_opts.window = 8;
  bad_opts.sinks = 8;
  CHECK(session_arena_bytes(p.model.config, bad_opts, &need).code == StatusCode::invalid_argument);
}

#endif  // EINFER_HAS_PACK_LIB
