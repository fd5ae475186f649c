#include "kernels/quant/quant.h"

#include <cmath>
#include <cstring>

#include "kernels/simd/simd.h"

namespace einfer {

namespace {
float absmax(const float* x, int32_t n) {
  float m = 0.f;
  for (int32_t i = 0; i < n; ++i) m = std::fabs(x[i]) > m ? std::fabs(x[i]) : m;
  return m;
}
int clamp_round(float v, int lo, int hi) {
  const int r = static_cast<int>(lrint_small(v));
  return r < lo ? lo : (r > hi ? hi : r);
}
}  // namespace

void quantize_row_q8(const float* x, int64_t k, int32_t group, int8_t* q, float* scales) {
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    // int32 counts within a group: the int8 KV cache quantizes every new row on 32-bit MCUs.
    const int32_t n = static_cast<int32_t>(k - g0 < group ? k - g0 : group);
    const float* xg = x + g0;
    int8_t* qg = q + g0;
    const float scale = absmax(xg, n) / 127.f;
    const float inv = scale > 0.f ? 1.f / scale : 0.f;
    scales[gi] = scale;
    for (int32_t i = 0; i < n; ++i)
      qg[i] = static_cast<int8_t>(clamp_round(xg[i] * inv, -127, 127));
  }
}

void quantize_row_q4(const float* x, int64_t k, int32_t group, uint8_t* q, float* scales) {
  std::memset(q, 0x88, static_cast<size_t>((k + 1) / 2));  // zero value everywhere, incl. padding
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    const int64_t n = k - g0 < group ? k - g0 : group;
    const float scale = absmax(x + g0, static_cast<int32_t>(n)) / 7.f;
    const float inv = scale > 0.f ? 1.f / scale : 0.f;
    scales[gi] = scale;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t e = g0 + i;
      const uint8_t u = static_cast<uint8_t>(clamp_round(x[e] * inv, -8, 7) + 8);
      uint8_t& byte = q[e / 2];
      byte = (e & 1) ? static_cast<uint8_t>((byte & 0x0F) | (u << 4))
                     : static_cast<uint8_t>((byte & 0xF0) | u);
    }
  }
}

// Group by group, so the inner loops vectorize and no element divides (a 64-bit division per
// element made the q8 token-embedding rows 0.7% of a 15M prefill on x86; on 32-bit Arm it was a
// library call). size_t indices keep the Cortex-M code as small as the per-element form was.
void dequantize_row_q8(const int8_t* q, const float* scales, int64_t k, int32_t group, float* y) {
  const size_t n = static_cast<size_t>(k), gs = static_cast<size_t>(group);
  for (size_t g0 = 0; g0 < n; g0 += gs) {
    const float s = *scales++;
    const size_t end = n - g0 < gs ? n : g0 + gs;
    for (size_t i = g0; i < end; ++i) y[i] = static_cast<float>(q[i]) * s;
  }
}

void dequantize_row_q4(const uint8_t* q, const float* scales, int64_t k, int32_t group, float* y) {
  const size_t n = static_cast<size_t>(k), gs = static_cast<size_t>(group);
  for (size_t g0 = 0; g0 < n; g0 += gs) {
    const float s = *scales++;
    const size_t end = n - g0 < gs ? n : g0 + gs;
    for (size_t i = g0; i < end; ++i) {
      const int u = (i & 1) ? (q[i / 2] >> 4) : (q[i / 2] & 0x0F);
      y[i] = static_cast<float>(u - 8) * s;
    }
  }
}

uint16_t f32_to_f16(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  const uint32_t sign = (b >> 16) & 0x8000u;
  const uint32_t absb = b & 0x7FFFFFFFu;
  if (absb >= 0x7F800000u)
    return static_cast<uint16_t>(sign | (absb > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (absb >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow -> inf
  if (absb < 0x38800000u) {                                               // subnormal or zero
    if (absb < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t mant = (absb & 0x007FFFFFu) | 0x00800000u;
    const int shift = 126 - static_cast<int>(absb >> 23);  // 14..24
    const uint32_t half = mant >> (shift - 1 + 1);
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    uint32_t r = half;
    if (rem > mid || (rem == mid && (half & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = ((absb - 0x38000000u) >> 13);
  const uint32_t rem = absb & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t b;
  if (exp == 0) {
    if (mant == 0) {
      b = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      b = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3FFu) << 13);
    }
  } else if (exp == 31) {
    b = sign | 0x7F800000u | (mant << 13);
  } else {
    b = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint16_t f32_to_bf16(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((b >> 16) | 0x40u);  // NaN
  b += 0x7FFFu + ((b >> 16) & 1u);  // round to nearest even (overflow rounds to infinity)
  return static_cast<uint16_t>(b >> 16);
}

float bf16_to_f32(uint16_t h) {
  const uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace einfer
