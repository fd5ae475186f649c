// Scalar GGUF block kernels: each block type's values unpacked to small integers in element order
// (written from the block layouts in docs/gguf-quant.md), the row dequantizer, the activation
// quantizers (q8k, q8a) and the dot products every SIMD kernel is a twin of.
#include <cmath>

#include "kernels/gguf/gguf.h"
#include "kernels/gguf/gguf_quant_internal.h"
#include "kernels/simd/simd.h"

namespace einfer::gguf_detail {

namespace {

// A block unpacked: integer values q (element order), the scale of each sub-block (sub elements
// each) and, for the types with an offset, the integer min of each sub-block; value =
// d * scale[e / sub] * q[e] - dmin * min[e / sub].
struct Unpacked {
  int8_t q[256];
  int scale[16];  // int, not int32_t: kquant_scale_min's type (int32_t is long on arm-none-eabi)
  int min[16];
  float d = 0.f, dmin = 0.f;
  int sub = 32;  // elements per sub-block
  int n = 32;    // elements per block
  bool has_min = false;
};

void unpack_legacy(DType t, const uint8_t* b, Unpacked* u) {
  u->n = 32;
  u->sub = 32;
  u->scale[0] = 1;
  u->d = load_f16(b);
  const bool offset = t == DType::q4_1 || t == DType::q5_1;
  u->has_min = offset;
  // Types with an offset store f16 m as the value of q = 0; einfer keeps it as dmin = -m, min 1.
  if (offset) {
    u->dmin = -load_f16(b + 2);
    u->min[0] = 1;
  }
  if (t == DType::q8_0) {
    for (int e = 0; e < 32; ++e) u->q[e] = static_cast<int8_t>(b[2 + e]);
    return;
  }
  const bool five = t == DType::q5_0 || t == DType::q5_1;
  const uint8_t* qh = b + (offset ? 4 : 2);
  const uint8_t* qs = qh + (five ? 4 : 0);
  uint32_t high = 0;
  if (five) std::memcpy(&high, qh, 4);
  const int bias = offset ? 0 : (five ? 16 : 8);
  for (int j = 0; j < 16; ++j) {
    int lo = qs[j] & 0x0F, hi = qs[j] >> 4;
    if (five) {
      lo |= static_cast<int>((high >> j) & 1) << 4;
      hi |= static_cast<int>((high >> (j + 16)) & 1) << 4;
    }
    u->q[j] = static_cast<int8_t>(lo - bias);
    u->q[j + 16] = static_cast<int8_t>(hi - bias);
  }
}

void unpack_kquant(DType t, const uint8_t* b, Unpacked* u) {
  u->n = 256;
  switch (t) {
    case DType::q2_k: {  // scales[16], qs[64], d, dmin
      u->sub = 16;
      u->has_min = true;
      u->d = load_f16(b + 80);
      u->dmin = load_f16(b + 82);
      for (int s = 0; s < 16; ++s) {
        u->scale[s] = b[s] & 0x0F;
        u->min[s] = b[s] >> 4;
      }
      for (int h = 0; h < 2; ++h)
        for (int s = 0; s < 4; ++s)
          for (int l = 0; l < 32; ++l)
            u->q[128 * h + 32 * s + l] = static_cast<int8_t>((b[16 + 32 * h + l] >> (2 * s)) & 3);
      break;
    }
    case DType::q3_k: {  // hmask[32], qs[64], scales[12], d
      u->sub = 16;
      u->d = load_f16(b + 108);
      int8_t sc[16];
      q3k_scales(b + 96, sc);
      for (int s = 0; s < 16; ++s) u->scale[s] = sc[s];
      for (int h = 0; h < 2; ++h)
        for (int s = 0; s < 4; ++s)
          for (int l = 0; l < 32; ++l) {
            const int low = (b[32 + 32 * h + l] >> (2 * s)) & 3;
            const bool high = (b[l] >> (4 * h + s)) & 1;
            u->q[128 * h + 32 * s + l] = static_cast<int8_t>(low - (high ? 0 : 4));
          }
      break;
    }
    case DType::q4_k:
    case DType::q5_k: {  // d, dmin, scales[12], (q5_k: qh[32]), qs[128]
      u->sub = 32;
      u->has_min = true;
      u->d = load_f16(b);
      u->dmin = load_f16(b + 2);
      for (int s = 0; s < 8; ++s) kquant_scale_min(b + 4, s, &u->scale[s], &u->min[s]);
      const bool five = t == DType::q5_k;
      const uint8_t* qh = b + 16;
      const uint8_t* qs = b + (five ? 48 : 16);
      for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 32; ++l) {
          int lo = qs[32 * j + l] & 0x0F, hi = qs[32 * j + l] >> 4;
          if (five) {
            lo |= ((qh[l] >> (2 * j)) & 1) << 4;
            hi |= ((qh[l] >> (2 * j + 1)) & 1) << 4;
          }
          u->q[64 * j + l] = static_cast<int8_t>(lo);
          u->q[64 * j + 32 + l] = static_cast<int8_t>(hi);
        }
      break;
    }
    default: {  // q6_k: ql[128], qh[64], scales[16] int8, d
      u->sub = 16;
      u->d = load_f16(b + 208);
      for (int s = 0; s < 16; ++s) u->scale[s] = static_cast<int8_t>(b[192 + s]);
      for (int h = 0; h < 2; ++h) {
        const uint8_t* ql = b + 64 * h;
        const uint8_t* qh = b + 128 + 32 * h;
        int8_t* q = u->q + 128 * h;
        for (int l = 0; l < 32; ++l) {
          q[l] = static_cast<int8_t>(((ql[l] & 0x0F) | ((qh[l] & 3) << 4)) - 32);
          q[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32);
          q[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
          q[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        }
      }
      break;
    }
  }
}

void unpack(DType t, const uint8_t* b, Unpacked* u) {
  if (gguf_block_elems(t) == 256) {
    unpack_kquant(t, b, u);
  } else {
    unpack_legacy(t, b, u);
  }
}

// K-quants against q8k: per block sumi = sum_s scale_s * dot_s, summ = sum_s min_s * asum_s.
template <DType T>
float dot_kquant(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8K* a = static_cast<const BlockQ8K*>(act);
  constexpr size_t bytes = gguf_block_bytes(T);
  float acc = 0.f;
  Unpacked u;
  for (int64_t i = 0; i < nb; ++i) {
    unpack_kquant(T, w + i * bytes, &u);
    int32_t sumi = 0, summ = 0;
    for (int s = 0; s < 256 / u.sub; ++s) {
      int32_t dot = 0;
      for (int l = 0; l < u.sub; ++l) dot += u.q[s * u.sub + l] * a[i].qs[s * u.sub + l];
      sumi += u.scale[s] * dot;
      if (u.has_min) {
        const int32_t asum =
            u.sub == 16 ? a[i].bsums[s] : a[i].bsums[2 * s] + a[i].bsums[2 * s + 1];
        summ += u.min[s] * asum;
      }
    }
    acc += u.has_min ? a[i].d * (u.d * static_cast<float>(sumi) - u.dmin * static_cast<float>(summ))
                     : a[i].d * (u.d * static_cast<float>(sumi));
  }
  return acc;
}

// 32-element types against q8a: q8_0/q4_0/q5_0 acc += da * (d * dot); q4_1/q5_1 add m * asum.
template <DType T>
float dot_legacy(const uint8_t* w, const void* act, int64_t nb) {
  const BlockQ8A* a = static_cast<const BlockQ8A*>(act);
  constexpr size_t bytes = gguf_block_bytes(T);
  float acc = 0.f;
  Unpacked u;
  for (int64_t i = 0; i < nb; ++i) {
    unpack_legacy(T, w + i * bytes, &u);
    int32_t dot = 0;
    for (int l = 0; l < 32; ++l) dot += u.q[l] * a[i].qs[l];
    acc += u.has_min
               ? a[i].d * (u.d * static_cast<float>(dot) - u.dmin * static_cast<float>(a[i].isum))
               : a[i].d * (u.d * static_cast<float>(dot));
  }
  return acc;
}

int8_t round_clamp(float x) {
  int32_t r = lrint_small(x);
  r = r > 127 ? 127 : (r < -127 ? -127 : r);
  return static_cast<int8_t>(r);
}

// absmax / 127 and its inverse (0 for an all-zero block).
float block_scale(const float* x, int n, float* inv) {
  float amax = 0.f;
  for (int e = 0; e < n; ++e) amax = std::fabs(x[e]) > amax ? std::fabs(x[e]) : amax;
  const float d = amax / 127.f;
  *inv = d > 0.f ? 1.f / d : 0.f;
  return d;
}

}  // namespace

void quantize_row_q8k(const float* x, int64_t k, BlockQ8K* out) {
  for (int64_t i = 0; i < k / 256; ++i) {
    const float* xb = x + i * 256;
    float inv = 0.f;
    out[i].d = block_scale(xb, 256, &inv);
    for (int s = 0; s < 16; ++s) {
      int32_t sum = 0;
      for (int l = 0; l < 16; ++l) {
        const int8_t q = round_clamp(xb[16 * s + l] * inv);
        out[i].qs[16 * s + l] = q;
        sum += q;
      }
      out[i].bsums[s] = static_cast<int16_t>(sum);
    }
  }
}

void quantize_row_q8a(const float* x, int64_t k, BlockQ8A* out) {
  for (int64_t i = 0; i < k / 32; ++i) {
    const float* xb = x + i * 32;
    float inv = 0.f;
    out[i].d = block_scale(xb, 32, &inv);
    int32_t sum = 0;
    for (int l = 0; l < 32; ++l) {
      out[i].qs[l] = round_clamp(xb[l] * inv);
      sum += out[i].qs[l];
    }
    out[i].isum = sum;
  }
}

namespace scalar {

DotFn dot_kernel(DType dtype) {
  switch (dtype) {
    case DType::q8_0:
      return dot_legacy<DType::q8_0>;
    case DType::q4_0:
      return dot_legacy<DType::q4_0>;
    case DType::q4_1:
      return dot_legacy<DType::q4_1>;
    case DType::q5_0:
      return dot_legacy<DType::q5_0>;
    case DType::q5_1:
      return dot_legacy<DType::q5_1>;
    case DType::q2_k:
      return dot_kquant<DType::q2_k>;
    case DType::q3_k:
      return dot_kquant<DType::q3_k>;
    case DType::q4_k:
      return dot_kquant<DType::q4_k>;
    case DType::q5_k:
      return dot_kquant<DType::q5_k>;
    case DType::q6_k:
      return dot_kquant<DType::q6_k>;
    default:
      return nullptr;
  }
}

}  // namespace scalar

}  // namespace einfer::gguf_detail

namespace einfer {

void dequantize_row_gguf(DType dtype, const void* row, int64_t k, float* out) {
  const int64_t n = gguf_block_elems(dtype);
  if (n == 0) return;
  const size_t bytes = gguf_block_bytes(dtype);
  gguf_detail::Unpacked u;
  for (int64_t i = 0; i < k / n; ++i) {
    gguf_detail::unpack(dtype, static_cast<const uint8_t*>(row) + i * bytes, &u);
    for (int e = 0; e < u.n; ++e) {
      const int s = e / u.sub;
      float v = u.d * static_cast<float>(u.scale[s] * u.q[e]);
      if (u.has_min) v -= u.dmin * static_cast<float>(u.min[s]);
      out[i * n + e] = v;
    }
  }
}

}  // namespace einfer
