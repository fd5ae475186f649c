// NEON (AArch64) dot kernels for GGUF blocks: q4_k, q5_k, q6_k against q8k activations, q8_0,
// q4_0, q4_1, q5_0 and q5_1 against q8a (q2_k and q3_k run their scalar twins). Twins of
// dot_gguf_q8_scalar.cpp: weights are unpacked to signed int8 (offsets subtracted), each
// sub-block's int8 dot summed exactly in int32 (SDOT with the dot-product extension, else widening
// multiplies: pair sums <= 2 * 128 * 127 fit int16), scaled by the sub-block's integer scale, and
// every block scaled with the scalar kernel's float expression, so results equal the scalar ones
// bit for bit.
#include "kernels/gguf_quant_internal.h"

#if defined(EINFER_GGUF_NEON)

#include <arm_neon.h>

namespace einfer::gguf_detail {

namespace {

// sum of a[e] * b[e] over 16 int8 lanes.
inline int32_t dot16(int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vaddvq_s32(vdotq_s32(vdupq_n_s32(0), a, b));
#else
  const int16x8_t p =
      vmlal_s8(vmull_s8(vget_low_s8(a), vget_low_s8(b)), vget_high_s8(a), vget_high_s8(b));
  return vaddvq_s32(vpaddlq_s16(p));
#endif
}

inline int8x16_t s8(uint8x16_t v) {
  return vreinterpretq_s8_u8(v);
}

template <bool kFive>
float dot_q45k(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8K* a = static_cast<const BlockQ8K*>(act);
  const size_t bytes = kFive ? 176 : 144;
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  const uint8x16_t bit5 = vdupq_n_u8(0x10);
  float acc = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * bytes;
    const float d = load_f16(b), dmin = load_f16(b + 2);
    int sc[8], mn[8];
    for (int s = 0; s < 8; ++s) kquant_scale_min(b + 4, s, &sc[s], &mn[s]);
    int32_t summ = 0;
    for (int s = 0; s < 8; ++s) summ += mn[s] * (a[i].bsums[2 * s] + a[i].bsums[2 * s + 1]);
    const uint8_t* qs = b + (kFive ? 48 : 16);
    uint8x16_t qh[2] = {vdupq_n_u8(0), vdupq_n_u8(0)};
    if (kFive) qh[0] = vld1q_u8(b + 16), qh[1] = vld1q_u8(b + 32);
    int32_t sumi = 0;
    for (int j = 0; j < 4; ++j) {
      int32_t lo_dot = 0, hi_dot = 0;
      for (int half = 0; half < 2; ++half) {
        const uint8x16_t v = vld1q_u8(qs + 32 * j + 16 * half);
        uint8x16_t lo = vandq_u8(v, m4), hi = vshrq_n_u8(v, 4);
        if (kFive) {
          lo = vorrq_u8(lo, vandq_u8(vtstq_u8(qh[half], vdupq_n_u8(1 << (2 * j))), bit5));
          hi = vorrq_u8(hi, vandq_u8(vtstq_u8(qh[half], vdupq_n_u8(1 << (2 * j + 1))), bit5));
        }
        lo_dot += dot16(s8(lo), vld1q_s8(a[i].qs + 64 * j + 16 * half));
        hi_dot += dot16(s8(hi), vld1q_s8(a[i].qs + 64 * j + 32 + 16 * half));
      }
      sumi += sc[2 * j] * lo_dot + sc[2 * j + 1] * hi_dot;
    }
    acc += a[i].d * (d * static_cast<float>(sumi) - dmin * static_cast<float>(summ));
  }
  return acc;
}

float dot_q6k(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8K* a = static_cast<const BlockQ8K*>(act);
  const uint8x16_t m4 = vdupq_n_u8(0x0F);
  const int8x16_t off = vdupq_n_s8(32);
  float acc = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * 210;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
    int32_t sumi = 0;
    for (int h = 0; h < 2; ++h) {
      for (int half = 0; half < 2; ++half) {
        const uint8x16_t q0 = vld1q_u8(b + 64 * h + 16 * half);
        const uint8x16_t q1 = vld1q_u8(b + 64 * h + 32 + 16 * half);
        const uint8x16_t qh = vld1q_u8(b + 128 + 32 * h + 16 * half);
        const uint8x16_t u[4] = {
            vorrq_u8(vandq_u8(q0, m4), vshlq_n_u8(vandq_u8(qh, vdupq_n_u8(0x03)), 4)),
            vorrq_u8(vandq_u8(q1, m4), vshlq_n_u8(vandq_u8(qh, vdupq_n_u8(0x0C)), 2)),
            vorrq_u8(vshrq_n_u8(q0, 4), vandq_u8(qh, vdupq_n_u8(0x30))),
            vorrq_u8(vshrq_n_u8(q1, 4), vshrq_n_u8(vandq_u8(qh, vdupq_n_u8(0xC0)), 2))};
        for (int g = 0; g < 4; ++g) {
          const int e = 128 * h + 32 * g + 16 * half;
          sumi += sc[e / 16] * dot16(vsubq_s8(s8(u[g]), off), vld1q_s8(a[i].qs + e));
        }
      }
    }
    acc += a[i].d * (load_f16(b + 208) * static_cast<float>(sumi));
  }
  return acc;
}

float dot_q8_0(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8A* a = static_cast<const BlockQ8A*>(act);
  float acc = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * 34;
    const int8_t* q = reinterpret_cast<const int8_t*>(b + 2);
    const int32_t dot =
        dot16(vld1q_s8(q), vld1q_s8(a[i].qs)) + dot16(vld1q_s8(q + 16), vld1q_s8(a[i].qs + 16));
    acc += a[i].d * (load_f16(b) * static_cast<float>(dot));
  }
  return acc;
}

float dot_q4_0(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8A* a = static_cast<const BlockQ8A*>(act);
  const int8x16_t off = vdupq_n_s8(8);
  float acc = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * 18;
    const uint8x16_t x = vld1q_u8(b + 2);
    const int8x16_t lo = vsubq_s8(s8(vandq_u8(x, vdupq_n_u8(0x0F))), off);
    const int8x16_t hi = vsubq_s8(s8(vshrq_n_u8(x, 4)), off);
    const int32_t dot = dot16(lo, vld1q_s8(a[i].qs)) + dot16(hi, vld1q_s8(a[i].qs + 16));
    acc += a[i].d * (load_f16(b) * static_cast<float>(dot));
  }
  return acc;
}

// Lanes 0xFF where bit e of (lo | hi << 8) is set, element e in lane e (16 elements).
inline uint8x16_t bytes_from_bits16(uint8_t lo, uint8_t hi) {
  static const uint8_t kBits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  return vtstq_u8(vcombine_u8(vdup_n_u8(lo), vdup_n_u8(hi)), vld1q_u8(kBits));
}

// q4_1 (kFive false) and q5_0 / q5_1 (see the AVX2 twin): q5_0 goes signed (u - 16) directly.
template <bool kFive, bool kMin>
float dot_q45_legacy(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8A* a = static_cast<const BlockQ8A*>(act);
  constexpr size_t bytes = kFive ? (kMin ? 24 : 22) : 20;
  const uint8x16_t bit5 = vdupq_n_u8(0x10);
  float acc = 0.f;
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b = w + i * bytes;
    const uint8_t* qh = b + (kMin ? 4 : 2);
    const uint8_t* qs = qh + (kFive ? 4 : 0);
    const uint8x16_t x = vld1q_u8(qs);
    uint8x16_t lo = vandq_u8(x, vdupq_n_u8(0x0F)), hi = vshrq_n_u8(x, 4);
    if (kFive) {
      lo = vorrq_u8(lo, vandq_u8(bytes_from_bits16(qh[0], qh[1]), bit5));
      hi = vorrq_u8(hi, vandq_u8(bytes_from_bits16(qh[2], qh[3]), bit5));
    }
    int8x16_t slo = s8(lo), shi = s8(hi);
    if (kFive && !kMin) {
      slo = vsubq_s8(slo, vdupq_n_s8(16));
      shi = vsubq_s8(shi, vdupq_n_s8(16));
    }
    const int32_t dot = dot16(slo, vld1q_s8(a[i].qs)) + dot16(shi, vld1q_s8(a[i].qs + 16));
    const float d = load_f16(b);
    if (kMin) {
      const float dmin = -load_f16(b + 2);
      acc += a[i].d * (d * static_cast<float>(dot) - dmin * static_cast<float>(a[i].isum));
    } else {
      acc += a[i].d * (d * static_cast<float>(dot));
    }
  }
  return acc;
}

}  // namespace

DotFn dot_kernel_simd(DType dtype) {
  switch (dtype) {
    case DType::q4_k:
      return dot_q45k<false>;
    case DType::q5_k:
      return dot_q45k<true>;
    case DType::q6_k:
      return dot_q6k;
    case DType::q8_0:
      return dot_q8_0;
    case DType::q4_0:
      return dot_q4_0;
    case DType::q4_1:
      return dot_q45_legacy<false, true>;
    case DType::q5_0:
      return dot_q45_legacy<true, false>;
    case DType::q5_1:
      return dot_q45_legacy<true, true>;
    default:
      return nullptr;
  }
}

}  // namespace einfer::gguf_detail

#endif  // EINFER_GGUF_NEON
