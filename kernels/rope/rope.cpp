// RoPE tables and the sinusoidal encoding. Angles are evaluated in double so positions far beyond
// the table (streaming decode) keep full precision. The rotation itself: rope_f32_simd.cpp, and its
// scalar twin rope_scalar.cpp.
#include "kernels/rope/rope.h"

#include "runtime/checked.h"

#include <cmath>

namespace einfer {

namespace {
size_t align_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

constexpr double kPi = 3.14159265358979323846;

double scaled_inv_freq(double inv_freq, const RopeFrequencyScaling& s) {
  if (s.kind == 1) return inv_freq / s.factor;
  if (s.kind != 2) return inv_freq;
  const double wavelen = 2.0 * kPi / inv_freq;
  if (wavelen < s.original_context / s.high_freq_factor) return inv_freq;
  if (wavelen > s.original_context / s.low_freq_factor) return inv_freq / s.factor;
  const double smooth =
      (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1.0 - smooth) * inv_freq / s.factor + smooth * inv_freq;
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
                       int32_t n_positions, float theta, const RopeFrequencyScaling& scaling) {
  if (table == nullptr) return make_status(StatusCode::invalid_argument, "rope: null table");
  if (head_dim <= 0 || head_dim % 2 != 0) {
    return make_status(StatusCode::invalid_argument, "rope: head_dim must be even and positive",
                       head_dim);
  }
  if (n_positions < 0) return make_status(StatusCode::invalid_argument, "rope: n_positions < 0");
  if (!(theta > 0.f)) return make_status(StatusCode::invalid_argument, "rope: theta must be > 0");
  if (scaling.kind > 3 || ((scaling.kind == 1 || scaling.kind == 2) && !(scaling.factor > 0.0)) ||
      !(std::isfinite(scaling.mscale) && scaling.mscale > 0.0) ||
      (scaling.kind == 2 &&
       !(scaling.low_freq_factor > 0.0 && scaling.high_freq_factor > scaling.low_freq_factor &&
         scaling.original_context > 0.0)))
    return make_status(StatusCode::invalid_argument, "rope: bad frequency scaling");
  for (int32_t i = 0; scaling.freq_factors != nullptr && i < head_dim / 2; ++i) {
    const float f = scaling.freq_factors[i];
    if (!(std::isfinite(f) && f > 0.f))
      return make_status(StatusCode::invalid_argument,
                         "rope: frequency factors must be finite and > 0", -1, -1, i);
  }
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
    inv_freq[i] =
        scaled_inv_freq(1.0 / std::pow(static_cast<double>(theta), (2.0 * i) / head_dim), scaling);
    if (scaling.freq_factors != nullptr)
      inv_freq[i] /= static_cast<double>(scaling.freq_factors[i]);
  }
  for (int32_t t = 0; t < n_positions; ++t) {
    for (int32_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(t) * inv_freq[i];
      cs[static_cast<size_t>(t) * half + i] = static_cast<float>(std::cos(angle) * scaling.mscale);
      sn[static_cast<size_t>(t) * half + i] = static_cast<float>(std::sin(angle) * scaling.mscale);
    }
  }
  table->head_dim = head_dim;
  table->n_positions = n_positions;
  table->inv_freq = inv_freq;
  table->mscale = scaling.mscale;
  table->cos = cs;
  table->sin = sn;
  return ok_status();
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
