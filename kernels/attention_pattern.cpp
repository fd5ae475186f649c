#include "kernels/attention_pattern.h"

#include <cmath>
#include <cstring>

#include "kernels/vec.h"

namespace einfer {

namespace {
constexpr int32_t kPatternTile = 64;  // attended keys scored together per online-softmax step

int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
}  // namespace

int64_t attention_pattern_next(const AttentionPattern& p, int64_t n, int64_t i, int64_t j) {
  const int64_t end = p.causal ? min64(n, i + 1) : n;
  if (j < 0) j = 0;
  if (j >= end) return n;
  const bool dense = p.window == 0 && p.global == 0 && p.stride == 0 && p.block == 0;
  if (dense) return j;
  int64_t best = end;
  if (p.window > 0 && j < i + p.window) best = min64(best, max64(j, i - p.window + 1));
  if (p.global > 0 && (i < p.global || j < p.global)) best = min64(best, j);
  if (p.stride > 0) {
    const int64_t s = p.stride;
    best = min64(best, j + (((i - j) % s) + s) % s);  // next j' >= j with j' = i (mod S)
  }
  if (p.block > 0) {
    const int64_t L = p.block, b0 = (i / L) * L;
    if (j < b0 + L) best = min64(best, max64(j, b0));
    if (p.block_summary > 0) {
      const int64_t jm = j % L, first = L - p.block_summary;
      best = min64(best, jm >= first ? j : j - jm + first);
    }
  }
  return best < end ? best : n;
}

int64_t attention_pattern_pairs(const AttentionPattern& p, int64_t n) {
  int64_t pairs = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = attention_pattern_next(p, n, i, 0); j < n;
         j = attention_pattern_next(p, n, i, j + 1))
      ++pairs;
  }
  return pairs;
}

size_t attention_pattern_scratch_bytes(int32_t n_heads) {
  // key indices and scores of one tile, running max and sum per head
  return kPatternTile * (sizeof(int64_t) + sizeof(float)) +
         2 * static_cast<size_t>(n_heads) * sizeof(float);
}

Status attention_pattern_f32(const AttentionPattern& p, int32_t n_heads, int32_t head_dim,
                             float scale, const float* q, const float* k, const float* v, int32_t n,
                             float* out, void* scratch, size_t scratch_bytes) {
  if (n_heads <= 0 || head_dim <= 0 || n < 0)
    return make_status(StatusCode::invalid_argument, "attention pattern: bad shape");
  if (scratch_bytes < attention_pattern_scratch_bytes(n_heads) || scratch == nullptr)
    return make_status(StatusCode::out_of_memory, "attention pattern: scratch too small",
                       static_cast<int64_t>(attention_pattern_scratch_bytes(n_heads)),
                       static_cast<int64_t>(scratch_bytes));
  int64_t* idx = static_cast<int64_t*>(scratch);
  float* scores = reinterpret_cast<float*>(idx + kPatternTile);
  float* run_max = scores + kPatternTile;
  float* run_sum = run_max + n_heads;
  const size_t hk = static_cast<size_t>(head_dim);
  const size_t row = static_cast<size_t>(n_heads) * hk;
  for (int32_t i = 0; i < n; ++i) {
    float* o = out + i * row;
    std::memset(o, 0, row * sizeof(float));
    for (int32_t h = 0; h < n_heads; ++h) {
      run_max[h] = -INFINITY;
      run_sum[h] = 0.f;
    }
    int64_t j = attention_pattern_next(p, n, i, 0);
    while (j < n) {
      int32_t t = 0;
      for (; t < kPatternTile && j < n; ++t, j = attention_pattern_next(p, n, i, j + 1)) idx[t] = j;
      for (int32_t h = 0; h < n_heads; ++h) {
        const float* qh = q + i * row + h * hk;
        for (int32_t a = 0; a < t; ++a)
          scores[a] = dot_f32(qh, k + idx[a] * row + h * hk, hk) * scale;
        const float tile_max = max_f32(scores, static_cast<size_t>(t));
        float* oh = o + h * hk;
        if (tile_max > run_max[h]) {  // rescale what was gathered under the old maximum
          const float r = std::exp(run_max[h] - tile_max);
          scale_f32(oh, r, hk);
          run_sum[h] *= r;
          run_max[h] = tile_max;
        }
        for (int32_t a = 0; a < t; ++a) {
          const float w = std::exp(scores[a] - run_max[h]);
          run_sum[h] += w;
          axpy_f32(w, v + idx[a] * row + h * hk, oh, hk);
        }
      }
    }
    for (int32_t h = 0; h < n_heads; ++h) {
      if (run_sum[h] > 0.f) scale_f32(o + h * hk, 1.f / run_sum[h], hk);
    }
  }
  return ok_status();
}

}  // namespace einfer
