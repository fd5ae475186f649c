// Positional encodings: rotary (RoPE) in both pair layouts, and the sinusoidal absolute encoding.
//
// RoPE rotates pairs of a head vector by angle pos * inv_freq[i], inv_freq[i] =
// theta^(-2i/head_dim), i in [0, head_dim/2). Two layouts pick which elements form pair i:
//   interleaved (Meta / llama2.c):       (x[2i], x[2i+1])
//   half_split  (Hugging Face / NeoX):    (x[i],  x[i + head_dim/2])
// The cos/sin table for positions [0, n_positions) is computed once into caller memory (the arena),
// so decoding does no powf/cosf per step. Positions beyond the table (streaming past the trained
// context) are computed on the fly from the stored inverse frequencies; both paths evaluate the
// same double-precision formula, so they agree bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace einfer {

// Mirrors runtime/model.h RopeMode (interleaved = 1, half_split = 2); kernels do not include
// model headers, the runtime maps one to the other.
enum class RopeLayout : uint32_t { interleaved = 1, half_split = 2 };

// Frequency scaling applied to inv_freq before the table is built (mirrors runtime/model.h
// RopeScaling: none = 0, linear = 1, llama3 = 2, longrope = 3), as transformers'
// modeling_rope_utils.py does:
//   linear (_compute_linear_scaling_rope_parameters): inv_freq / factor;
//   llama3 (_compute_llama3_parameters): with wavelen = 2*pi / inv_freq, L = original_context:
//     wavelen < L / high_freq_factor: unchanged; wavelen > L / low_freq_factor: inv_freq / factor;
//     else (1 - s) * inv_freq / factor + s * inv_freq, s = (L / wavelen - low) / (high - low).
// Then, when freq_factors is set (llama.cpp's rope_freqs tensor, ggml_rope_ext freq_factors:
// theta_i = pos * base^(-2i/d) / freq_factors[i]), inv_freq[i] / freq_factors[i]; longrope
// (_compute_longrope_parameters) is exactly that with its short or long factors, and scales cos and
// sin by `mscale` (its attention factor; 1 otherwise).
struct RopeFrequencyScaling {
  uint32_t kind = 0;
  double factor = 1.0;
  double low_freq_factor = 0.0;
  double high_freq_factor = 0.0;
  double original_context = 0.0;
  const float* freq_factors = nullptr;  // [head_dim/2] divisors, finite and > 0, or null
  double mscale = 1.0;                  // cos and sin times this (finite, > 0)
};

struct RopeTable {
  int32_t head_dim = 0;
  int32_t n_positions = 0;
  const double* inv_freq = nullptr;  // [head_dim/2]
  double mscale = 1.0;               // cos and sin are cos(angle) * mscale, sin likewise
  const float* cos = nullptr;        // [n_positions][head_dim/2]
  const float* sin = nullptr;        // [n_positions][head_dim/2]
};

// Bytes rope_table_init needs in `mem` (8-byte aligned memory; arenas give 64).
size_t rope_table_bytes(int32_t head_dim, int32_t n_positions);

// head_dim must be even and > 0, n_positions >= 0, theta > 0; scaling as above (kind <= 3,
// factors > 0, every freq_factors entry finite and > 0, mscale finite and > 0).
Status rope_table_init(RopeTable* table, void* mem, size_t bytes, int32_t head_dim,
                       int32_t n_positions, float theta,
                       const RopeFrequencyScaling& scaling = RopeFrequencyScaling{});

// Rotates x [n_heads][head_dim] in place for absolute position pos (pos >= 0).
// SIMD in rope_f32_simd.cpp (half_split, within the table); scalar::rope_apply
// (rope_scalar.cpp) is its scalar twin and gives the same bits.
void rope_apply(const RopeTable& table, RopeLayout layout, float* x, int32_t n_heads, int64_t pos);

namespace scalar {
void rope_apply(const RopeTable& table, RopeLayout layout, float* x, int32_t n_heads, int64_t pos);
}  // namespace scalar

// Adds the Vaswani et al. encoding to x [n][d] for positions pos0 .. pos0+n-1:
// x[t][2i] += sin(p / 10000^(2i/d)), x[t][2i+1] += cos(p / 10000^(2i/d)).
void sinusoidal_encoding_add(float* x, int32_t n, int32_t d, int64_t pos0);

}  // namespace einfer
