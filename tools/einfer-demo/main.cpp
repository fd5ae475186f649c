// einfer-demo: one causal attention head computed with einfer's vector primitives inside a fixed
// arena. A demonstration of the building blocks (SIMD path, arena sizing), not a model: it says
// so in its output. The model runner replaces it in tools/scripts/run-demo.sh once it exists.
//
// It sizes the arena with a measuring pass, runs the same allocation sequence on a real static
// buffer, computes out = softmax(q kᵀ / sqrt(d), causal) v with the dispatching primitives and
// again with the scalar twins, and reports the largest difference between the two.
#include <cmath>
#include <cstdio>

#include "kernels/simd.h"
#include "kernels/vec.h"
#include "runtime/arena.h"
#include "runtime/status.h"

namespace {

constexpr int kQueries = 8;  // new tokens
constexpr int kKeys = 32;    // tokens in the cache, the queries are the last kQueries of them
constexpr int kHeadDim = 64;

struct Buffers {
  float* q = nullptr;        // [kQueries, kHeadDim]
  float* k = nullptr;        // [kKeys, kHeadDim]
  float* v = nullptr;        // [kKeys, kHeadDim]
  float* scores = nullptr;   // [kKeys], one query at a time
  float* out = nullptr;      // [kQueries, kHeadDim]
  float* out_ref = nullptr;  // same, via the scalar twins
};

einfer::Status take(einfer::Arena& arena, Buffers* b) {
  EINFER_TRY(arena.allocate_array(kQueries * kHeadDim, &b->q));
  EINFER_TRY(arena.allocate_array(kKeys * kHeadDim, &b->k));
  EINFER_TRY(arena.allocate_array(kKeys * kHeadDim, &b->v));
  EINFER_TRY(arena.allocate_array(kKeys, &b->scores));
  EINFER_TRY(arena.allocate_array(kQueries * kHeadDim, &b->out));
  EINFER_TRY(arena.allocate_array(kQueries * kHeadDim, &b->out_ref));
  return einfer::ok_status();
}

// Deterministic pseudo-random values in [-1, 1).
float next_value(unsigned* state) {
  *state = *state * 1664525u + 1013904223u;
  return static_cast<float>(*state >> 8) / static_cast<float>(1u << 23) - 1.0f;
}

template <bool kScalar>
void attention_head(const Buffers& b, float* out) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (int i = 0; i < kQueries; ++i) {
    const int visible = kKeys - kQueries + i + 1;  // causal: keys up to this token's position
    const float* q = b.q + i * kHeadDim;
    float* o = out + i * kHeadDim;
    for (int j = 0; j < visible; ++j) {
      b.scores[j] = (kScalar ? einfer::scalar::dot_f32(q, b.k + j * kHeadDim, kHeadDim)
                             : einfer::dot_f32(q, b.k + j * kHeadDim, kHeadDim)) *
                    scale;
    }
    if (kScalar) {
      einfer::scalar::softmax_f32(b.scores, visible);
    } else {
      einfer::softmax_f32(b.scores, visible);
    }
    for (int d = 0; d < kHeadDim; ++d) o[d] = 0.0f;
    for (int j = 0; j < visible; ++j) {
      if (kScalar) {
        einfer::scalar::axpy_f32(b.scores[j], b.v + j * kHeadDim, o, kHeadDim);
      } else {
        einfer::axpy_f32(b.scores[j], b.v + j * kHeadDim, o, kHeadDim);
      }
    }
  }
}

alignas(64) unsigned char g_arena_memory[64 * 1024];

}  // namespace

int main() {
  std::printf("einfer-demo: DEMO ONLY - one causal attention head (%d queries, %d keys, dim %d)\n",
              kQueries, kKeys, kHeadDim);
  std::printf("SIMD architecture: %s (%d float lanes)\n", einfer::simd_arch_name(),
              einfer::simd_float_lanes());

  Buffers b;
  einfer::Arena measure = einfer::Arena::measuring();
  einfer::Status s = take(measure, &b);
  const size_t needed = measure.used();

  einfer::Arena arena(g_arena_memory, sizeof g_arena_memory);
  s = take(arena, &b);
  if (!s.ok()) {
    char msg[160];
    einfer::format_status(s, msg, sizeof msg);
    std::fprintf(stderr, "einfer-demo: %s\n", msg);
    return 1;
  }

  unsigned state = 12345u;
  for (int i = 0; i < kQueries * kHeadDim; ++i) b.q[i] = next_value(&state);
  for (int i = 0; i < kKeys * kHeadDim; ++i) b.k[i] = next_value(&state);
  for (int i = 0; i < kKeys * kHeadDim; ++i) b.v[i] = next_value(&state);

  attention_head<false>(b, b.out);
  attention_head<true>(b, b.out_ref);

  float max_diff = 0.0f, checksum = 0.0f;
  for (int i = 0; i < kQueries * kHeadDim; ++i) {
    max_diff = std::fmax(max_diff, std::fabs(b.out[i] - b.out_ref[i]));
    checksum += b.out[i];
  }
  std::printf("arena: %zu bytes measured before allocating, %zu used of %zu, high water %zu\n",
              needed, arena.used(), arena.capacity(), arena.high_water());
  std::printf("output checksum %.6f, max |%s - scalar| = %.3g\n", checksum,
              einfer::simd_arch_name(), max_diff);
  if (!(max_diff < 1e-4f) || needed != arena.used()) {
    std::fprintf(stderr, "einfer-demo: SIMD and scalar results disagree or arena sizing is off\n");
    return 1;
  }
  return 0;
}
