// The scalar twin of the x86 decode GEMVs on the rows layout (gemv_q8_1x4_avx2,
// gemv_q8_1x4_avx512vnni, gemv_q4_1x4_avx2, gemv_q4_1x4_avx512vnni; the row loops of
// x86/gemm_quant_gemv_driver.h): the same float operations in the same order, in plain C++, so
// those kernels are tested bit for bit (tests/test_matmul_quant.cpp). Only tests call it.
//
// The GEMVs keep one float accumulator of 8 lanes per weight row and sum the lanes at the end, so
// their bits differ from the sequential rows twin (gemm_q8_q4_1x1_scalar.cpp) but are fixed:
//   q8, per step s (one group of 32 bytes): lane l += fma(float(d_l), sw(s) * sa(s)), where d_l is
//      the exact int32 dot of bytes 4l .. 4l+3 of the step (a 4-byte lane of vpdpbusd, or of
//      maddubs + madd);
//   q4, 4-row passes (the kernels' 8-row passes at K < 512 are two of them, the same bits): per
//   block of 4 steps (8 groups) lane i += fma(float(isum(8b + i)),
//      sw * sa); per step past the blocks (2 groups, lanes 0-3 the first, 4-7 the second) the
//      4-byte lane dots as q8, the group's -8 sum(a) correction in its first lane; a last half
//      step (16 bytes: one group) added after the lane sum as float(isum) * (sw * sa);
//   q4, rows past the last 4-row pass: every step as a per-step one;
//   lane sums: 4-row q8 passes ((0+1)+(2+3)) + ((4+5)+(6+7)), 4-row q4 passes
//      ((0+2)+(1+3)) + ((4+6)+(5+7)), single rows ((0+4)+(2+6)) + ((1+5)+(3+7)).
// It reads the activations in natural order (p.qa, zero-padded to kpad) and forms the q4
// corrections itself (the kernels read them from p.csum and even/odd-permuted activations: the
// same integers).
#include <cmath>
#include <cstdint>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {
namespace {

using Lanes = float[8];

// The exact int32 dot of row bytes [b0, b1) (clipped to the row) with the activations: q8 one
// element per byte; q4 byte t holds elements 2t (low nibble) and 2t + 1 (high), unsigned.
int32_t byte_dot(const QuantGemm& p, const uint8_t* row, int64_t b0, int64_t b1, bool q4) {
  const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
  int32_t d = 0;
  for (int64_t t = b0; t < b1 && t < rb; ++t) {
    if (q4) {
      d += (row[t] & 0x0F) * p.qa[2 * t] + (row[t] >> 4) * p.qa[2 * t + 1];
    } else {
      d += static_cast<int8_t>(row[t]) * p.qa[t];
    }
  }
  return d;
}

// 8 sum(a) over group g (zero-padded activations).
int32_t corr8(const QuantGemm& p, int64_t g) {
  int32_t s = 0;
  for (int64_t e = g * 32; e < (g + 1) * 32 && e < p.kpad; ++e) s += p.qa[e];
  return 8 * s;
}

float scale(const QuantGemm& p, const float* sw, int64_t g) {
  return g < p.groups ? sw[g] * p.sa[g] : 0.f;  // a q4 step's missing second group: zero
}

// One per-step update of a row's lanes: q8 step s = group s, q4 step s = groups 2s and 2s + 1.
void step(const QuantGemm& p, const uint8_t* row, const float* sw, int64_t s, bool q4, Lanes acc) {
  for (int l = 0; l < 8; ++l) {
    int32_t d = byte_dot(p, row, 32 * s + 4 * l, 32 * s + 4 * l + 4, q4);
    const int64_t g = q4 ? 2 * s + l / 4 : s;
    if (q4 && l % 4 == 0) d -= corr8(p, g);
    acc[l] = std::fma(static_cast<float>(d), scale(p, sw, g), acc[l]);
  }
}

// A q4 group's exact int32 sum (its 16 bytes less the correction).
int32_t q4_group(const QuantGemm& p, const uint8_t* row, int64_t g) {
  return byte_dot(p, row, 16 * g, 16 * g + 16, true) - corr8(p, g);
}

float sum_pass_q8(const Lanes a) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}
float sum_pass_q4(const Lanes a) {
  return ((a[0] + a[2]) + (a[1] + a[3])) + ((a[4] + a[6]) + (a[5] + a[7]));
}
float sum_single(const Lanes a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

void gemv_lanes(const QuantGemm& p, bool q4) {
  const int64_t step_elems = q4 ? 64 : 32;
  const int64_t steps = (p.k + step_elems - 1) / step_elems;
  const int64_t full_steps = p.k / step_elems;
  const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
  const bool half_tail = q4 && full_steps < steps && rb - full_steps * 32 == 16;
  const int64_t blocks = q4 ? full_steps / 4 : 0;
  const int64_t pass_rows = p.n / 4 * 4;
  for (int64_t j = 0; j < p.n; ++j) {
    const uint8_t* const row = p.w + j * rb;
    const float* const sw = p.sw + j * p.groups;
    Lanes acc = {};
    if (j >= pass_rows) {  // the 1-row path: every step, the partial one included
      for (int64_t s = 0; s < steps; ++s) step(p, row, sw, s, q4, acc);
      p.c[j] = sum_single(acc);
      continue;
    }
    for (int64_t b = 0; b < blocks; ++b) {
      for (int i = 0; i < 8; ++i) {
        const int64_t g = 8 * b + i;
        acc[i] = std::fma(static_cast<float>(q4_group(p, row, g)), sw[g] * p.sa[g], acc[i]);
      }
    }
    for (int64_t s = blocks * 4; s < full_steps; ++s) step(p, row, sw, s, q4, acc);
    float tail = 0.f;
    if (half_tail) {
      const int64_t g = 2 * full_steps;
      tail = static_cast<float>(q4_group(p, row, g)) * (sw[g] * p.sa[g]);
    } else if (full_steps < steps) {
      step(p, row, sw, full_steps, q4, acc);
    }
    p.c[j] = q4 ? sum_pass_q4(acc) + tail : sum_pass_q8(acc);
  }
}

}  // namespace

void gemv_q8_1x4_lanes_scalar(const QuantGemm& p) {
  gemv_lanes(p, false);
}
void gemv_q4_1x4_lanes_scalar(const QuantGemm& p) {
  gemv_lanes(p, true);
}

}  // namespace einfer::quant_detail
