// Test helpers: a session over an imported model, and its teacher-forced logits against a float64
// reference (<path>.i32 token ids, <path>.f32 logits [n, vocab], written by tests/gen/*.py), as a
// batched prefill and token by token. Used by test_import_forward.cpp and test_families.cpp.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "models/session.h"
#include "tools/einfer-pack/importers.h"

namespace einfer_test {

template <typename T>
std::vector<T> read_raw(const std::string& path) {
  const std::vector<uint8_t> b = einfer::pack::read_file(path);
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// A session over `source` packed as dtype/group, owning the image and the arena (sized by
// session_arena_bytes, which the session must fill exactly).
struct Run {
  std::unique_ptr<einfer::pack::AlignedBuffer> image;
  std::vector<unsigned char> storage;
  einfer::Arena arena;
  einfer::Session* session = nullptr;

  Run(const einfer::pack::SourceModel& source, einfer::DType dtype, int32_t group,
      einfer::RunOptions options) {
    using namespace einfer;
    image = std::make_unique<pack::AlignedBuffer>(
        pack::write_ein(pack::pack_source(source, dtype, group, nullptr)));
    Model packed;  // the packed model's own config (its weight dtype sizes the scratch)
    REQUIRE(load_model(image->data, image->size, LoadOptions{}, &packed).ok());
    size_t need = 0;
    REQUIRE(session_arena_bytes(packed.config, options, &need).ok());
    storage.resize(need + 64);
    void* base = storage.data() + (64 - reinterpret_cast<uintptr_t>(storage.data()) % 64) % 64;
    arena = Arena(base, need);
    const Status s =
        session_create(image->data, image->size, LoadOptions{}, options, arena, &session);
    REQUIRE_MESSAGE(s.ok(), pack::status_text(s));
    CHECK(arena.high_water() == need);
  }
  Run(const einfer::pack::SourceModel& source, einfer::DType dtype, int32_t group,
      int32_t max_batch = 0, einfer_threads threads = {})
      : Run(source, dtype, group, options_for(max_batch, threads)) {}
  int32_t vocab() const { return session->model.config.vocab_size; }

  static einfer::RunOptions options_for(int32_t max_batch, einfer_threads threads) {
    einfer::RunOptions o;
    o.max_batch = max_batch;
    o.threads = threads;
    return o;
  }
};

inline int32_t argmax(const float* x, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i) best = x[i] > x[best] ? i : best;
  return best;
}

// How far a run is from a reference: the largest |error| / max(1, max |ref logit|) of any position,
// and the share of positions whose argmax agrees, over both the batched and the token-by-token run.
struct ReferenceAgreement {
  double worst_rel = 0;
  double top1 = 0;
  int32_t positions = 0;
};

// Runs reference `path` through `r` twice (batched prefill, then token by token from a reset) and
// measures the agreement; with rel_tol > 0 also CHECKs every position within it and every argmax.
inline ReferenceAgreement compare_to_reference(const Run& r, const std::string& path,
                                               double rel_tol) {
  using namespace einfer;
  const std::vector<int32_t> tokens = read_raw<int32_t>(path + ".i32");
  const std::vector<float> want = read_raw<float>(path + ".f32");
  const int32_t n = static_cast<int32_t>(tokens.size()), vocab = r.vocab();
  REQUIRE(n > 1);
  REQUIRE(tokens[0] == 1);  // sequences start with BOS
  REQUIRE(want.size() == static_cast<size_t>(n) * vocab);

  std::vector<float> batched(want.size()), single(want.size());
  session_reset(r.session);
  REQUIRE(session_eval(r.session, tokens.data(), n, batched.data()).ok());
  session_reset(r.session);
  for (int32_t i = 0; i < n; ++i) {
    REQUIRE(session_eval(r.session, &tokens[i], 1).ok());
    std::memcpy(&single[i * vocab], session_logits(*r.session), vocab * sizeof(float));
  }
  ReferenceAgreement a;
  int agree = 0;
  for (const std::vector<float>* got : {&batched, &single}) {
    for (int32_t i = 0; i < n; ++i) {
      const float* ref = &want[i * vocab];
      const float* out = &(*got)[i * vocab];
      double scale = 1, worst = 0;
      // Plain comparisons, not std::fmax: GCC 12 for aarch64 crashes vectorising an fmax
      // reduction of doubles (internal compiler error in vect_transform_reduction).
      for (int32_t j = 0; j < vocab; ++j) {
        const double m = std::fabs(ref[j]), e = std::fabs(static_cast<double>(out[j]) - ref[j]);
        if (m > scale) scale = m;
        if (e > worst) worst = e;
      }
      const bool same_top = argmax(out, vocab) == argmax(ref, vocab);
      agree += same_top ? 1 : 0;
      if (rel_tol > 0) {
        CAPTURE(path);
        CAPTURE(i);
        CAPTURE(got == &batched ? "batched prefill" : "token by token");
        CHECK(worst <= rel_tol * scale);
        CHECK(same_top);
      }
      if (worst / scale > a.worst_rel) a.worst_rel = worst / scale;
    }
  }
  a.positions = 2 * n;
  a.top1 = static_cast<double>(agree) / a.positions;
  return a;
}

// compare_to_reference with the checks; returns the largest relative error.
inline double check_against_reference(const Run& r, const std::string& path, double rel_tol) {
  return compare_to_reference(r, path, rel_tol).worst_rel;
}

}  // namespace einfer_test
