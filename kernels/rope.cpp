// RoPE tables and rotation, sinusoidal encoding. Angles are evaluated in double so positions far
// beyond the table (streaming decode) keep full precision.
#include "kernels/rope.h"

#include "runtime/checked.h"

#include <cmath>

namespace einfer {

namespace {
size_t align_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

// One pair rotation; both the table and the beyond-table path call this so they round alike.
inline void rotate_pair(float* a, float* b, float c, float s) {
  const float x0 = *a, x1 = *b;
  *a = x0 * c - x1 * s;
  *b = x0 * s + x1 * c;
}

// Element indices of pair i in the given layout.
inline int32_t pair_first(RopeLayout layout, int32_t i) {
  return layout == RopeLayout::interleaved ? 2 * i : i;
}
inline int32_t pair_second(RopeLayout layout, int32_t i, int32_t half) {
  return layout == RopeLayout::interleaved ? 2 * i + 1 : i + half;
}
}  // namespace

size_t rope_table_bytes(int32_t head_dim, int32_t n_positions) {
  if (head_dim <= 0 || n_positions < 0) return 0;
  // Checked: half x positions wraps a 32-bit size_t for long contexts; SIZE_MAX then, which no
  // arena can provide (0 would let rope_table_init accept any buffer).
  const CheckedSize half = static_cast<size_t>(head_dim / 2);
  const CheckedSize angles = half * n_positions * sizeof(float) + 7;
  const CheckedSize total = half * sizeof(double) + 7 + angles + angles;
  if (!total.valid()) return SIZE_MAX;
  return align_up(half.value() * sizeof(double), 8) + 2 * align_up(angles.value() - 7, 8);
}

Status rope_table_init(RopeTable* table, void* mem, size_t bytes, int32_t head_dim,
                       int32_t n_positions, float theta) {
  if (table == nullptr) return make_status(StatusCode::invalid_argument, "rope: null table");
  if (head_dim <= 0 || head_dim % 2 != 0) {
    return make_status(StatusCode::invalid_argument, "rope: head_dim must be even and positive",
                       head_dim);
  }
  if (n_positions < 0) return make_status(StatusCode::invalid_argument, "rope: n_positions < 0");
  if (!(theta > 0.f)) return make_status(StatusCode::invalid_argument, "rope: theta must be > 0");
  const size_t need = rope_table_bytes(head_dim, n_positions);
  if (mem == nullptr || bytes < need) {
    return make_status(StatusCode::out_of_memory, "rope: table memory too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(mem ? bytes : 0));
  }
  if (reinterpret_cast<uintptr_t>(mem) % alignof(double) != 0) {
    return make_status(StatusCode::invalid_argument, "rope: table memory must be 8-byte aligned");
  }
  const int32_t half = head_dim / 2;
  unsigned char* p = static_cast<unsigned char*>(mem);
  double* inv_freq = reinterpret_cast<double*>(p);
  p += align_up(static_cast<size_t>(half) * sizeof(double), 8);
  float* cs = reinterpret_cast<float*>(p);
  p += align_up(static_cast<size_t>(half) * static_cast<size_t>(n_positions) * sizeof(float), 8);
  float* sn = reinterpret_cast<float*>(p);
  for (int32_t i = 0; i < half; ++i) {
    inv_freq[i] = 1.0 / std::pow(static_cast<double>(theta), (2.0 * i) / head_dim);
  }
  for (int32_t t = 0; t < n_positions; ++t) {
    for (int32_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(t) * inv_freq[i];
      cs[static_cast<size_t>(t) * half + i] = static_cast<float>(std::cos(angle));
      sn[static_cast<size_t>(t) * half + i] = static_cast<float>(std::sin(angle));
    }
  }
  table->head_dim = head_dim;
  table->n_positions = n_positions;
  table->inv_freq = inv_freq;
  table->cos = cs;
  table->sin = sn;
  return ok_status();
}

void rope_apply(const RopeTable& table, RopeLayout layout, float* x, int32_t n_heads, int64_t pos) {
  const int32_t half = table.head_dim / 2;
  if (pos >= 0 && pos < table.n_positions) {
    const float* c = table.cos + static_cast<size_t>(pos) * half;
    const float* s = table.sin + static_cast<size_t>(pos) * half;
    for (int32_t h = 0; h < n_heads; ++h) {
      float* xh = x + static_cast<size_t>(h) * table.head_dim;
      for (int32_t i = 0; i < half; ++i) {
        rotate_pair(xh + pair_first(layout, i), xh + pair_second(layout, i, half), c[i], s[i]);
      }
    }
    return;
  }
  // Beyond the table: the same formula per pair, no scratch needed (at most 2 floats at a time).
  for (int32_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * table.inv_freq[i];
    const float c = static_cast<float>(std::cos(angle));
    const float s = static_cast<float>(std::sin(angle));
    for (int32_t h = 0; h < n_heads; ++h) {
      float* xh = x + static_cast<size_t>(h) * table.head_dim;
      rotate_pair(xh + pair_first(layout, i), xh + pair_second(layout, i, half), c, s);
    }
  }
}

void sinusoidal_encoding_add(float* x, int32_t n, int32_t d, int64_t pos0) {
  for (int32_t t = 0; t < n; ++t) {
    const double p = static_cast<double>(pos0 + t);
    float* row = x + static_cast<size_t>(t) * d;
    for (int32_t i = 0; 2 * i < d; ++i) {
      const double angle = p * std::pow(10000.0, -(2.0 * i) / d);
      row[2 * i] += static_cast<float>(std::sin(angle));
      if (2 * i + 1 < d) row[2 * i + 1] += static_cast<float>(std::cos(angle));
    }
  }
}

}  // namespace einfer
