// NEON (AArch64) GGUF block kernels, 4 weight rows x 1-4 activation rows per pass (decode: 4x1,
// prefill: 4x4), for all ten block types; the twin of gemm_gguf_q8_4x4_avx2.cpp and of the scalar
// kernels (dot_gguf_q8_scalar.cpp), bit for bit. Weights are unpacked to int8 (signed where the
// type has an offset that is not folded into the activation sums), each sub-block's int8 dot is
// summed exactly in int32 (SDOT with the dot-product extension, else widening multiplies: pair
// sums <= 2 * 128 * 127 fit int16) and scaled by its integer scale (vmla by a scalar), the four
// rows' block sums are reduced by one pairwise-add tree, and the scalar kernel's per-block float
// expression, acc += da * (d * sumi - dmin * summ), runs with the four rows in one float32x4.
#include "kernels/gguf/gguf_quant_internal.h"
#include "kernels/gguf/gguf_rows_table.h"

#if defined(EINFER_GGUF_NEON)

#include <arm_neon.h>

#include <cstring>

namespace einfer::gguf_detail {

namespace {

inline int8x16_t s8(uint8x16_t v) {
  return vreinterpretq_s8_u8(v);
}

// acc + the int8 products of a and b, summed in groups of four into the int32 lanes.
inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(acc, a, b);
#else
  const int16x8_t p =
      vmlal_s8(vmull_s8(vget_low_s8(a), vget_low_s8(b)), vget_high_s8(a), vget_high_s8(b));
  return vpadalq_s16(acc, p);
#endif
}

// [sum(v0), sum(v1), sum(v2), sum(v3)]: one pairwise-add tree for the four weight rows.
inline int32x4_t reduce4(int32x4_t v0, int32x4_t v1, int32x4_t v2, int32x4_t v3) {
  return vpaddq_s32(vpaddq_s32(v0, v1), vpaddq_s32(v2, v3));
}

// The f16 at byte `at` of each row's block, converted by FCVTL: exact, as f16_to_f32 is (every
// finite value, infinities; a NaN stays a NaN), at a fraction of the four calls' instructions.
inline float32x4_t f16x4(const uint8_t* const* b, size_t at) {
  uint16x4_t h = vdup_n_u16(0);
  uint16_t v;
  std::memcpy(&v, b[0] + at, 2);
  h = vset_lane_u16(v, h, 0);
  std::memcpy(&v, b[1] + at, 2);
  h = vset_lane_u16(v, h, 1);
  std::memcpy(&v, b[2] + at, 2);
  h = vset_lane_u16(v, h, 2);
  std::memcpy(&v, b[3] + at, 2);
  h = vset_lane_u16(v, h, 3);
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// ---- per-type block sums: s[ia] = the four rows' sumi, m[ia] = their summ (types with mins) ----

// q4_k / q5_k: 8 sub-blocks of 32; the 6-bit scales and mins unpacked on 32-bit words.
template <bool kFive>
struct Q45K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = kFive ? 176 : 144;
  static constexpr bool kMin = true;
  static void scales(const uint8_t* const* b, float32x4_t* d, float32x4_t* dmin) {
    *d = f16x4(b, 0);
    *dmin = f16x4(b, 2);
  }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, int32x4_t* s, int32x4_t* m) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    int16x8_t pair_sums[NA];  // activation sums of each 32-element sub-block
    for (int ia = 0; ia < NA; ++ia)
      pair_sums[ia] = vpaddq_s16(vld1q_s16(a[ia]->bsums), vld1q_s16(a[ia]->bsums + 8));
    int32x4_t acc[NA][4], mins[NA][4];
    for (int r = 0; r < 4; ++r) {
      const uint32_t u0 = load_u32(b[r] + 4), u1 = load_u32(b[r] + 8), u2 = load_u32(b[r] + 12);
      const uint32_t words[4] = {u0 & 0x3F3F3F3F, (u2 & 0x0F0F0F0F) | ((u0 >> 2) & 0x30303030),
                                 u1 & 0x3F3F3F3F,
                                 ((u2 >> 4) & 0x0F0F0F0F) | ((u1 >> 2) & 0x30303030)};
      uint8_t sc[16];  // scales 0-7, mins 0-7
      std::memcpy(sc, words, 16);
      const int16x8_t mn = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(sc + 8)));
      for (int ia = 0; ia < NA; ++ia)
        mins[ia][r] = vmlal_s16(vmull_s16(vget_low_s16(mn), vget_low_s16(pair_sums[ia])),
                                vget_high_s16(mn), vget_high_s16(pair_sums[ia]));
      const uint8_t* qs = b[r] + (kFive ? 48 : 16);
      uint8x16_t qh[2] = {vdupq_n_u8(0), vdupq_n_u8(0)};
      if (kFive) qh[0] = vld1q_u8(b[r] + 16), qh[1] = vld1q_u8(b[r] + 32);
      for (int ia = 0; ia < NA; ++ia) acc[ia][r] = vdupq_n_s32(0);
      for (int j = 0; j < 4; ++j) {
        int8x16_t lo[2], hi[2];
        for (int half = 0; half < 2; ++half) {
          const uint8x16_t v = vld1q_u8(qs + 32 * j + 16 * half);
          uint8x16_t l = vandq_u8(v, m4), h = vshrq_n_u8(v, 4);
          if (kFive) {  // bit 2j of qh is l's fifth bit, bit 2j + 1 h's
            l = vorrq_u8(l, vshlq_n_u8(vandq_u8(qh[half], vdupq_n_u8(1)), 4));
            h = vorrq_u8(h, vshlq_n_u8(vandq_u8(qh[half], vdupq_n_u8(2)), 3));
            qh[half] = vshrq_n_u8(qh[half], 2);
          }
          lo[half] = s8(l);
          hi[half] = s8(h);
        }
        for (int ia = 0; ia < NA; ++ia) {
          const int8_t* q = a[ia]->qs + 64 * j;
          const int32x4_t dl =
              dot16(dot16(vdupq_n_s32(0), lo[0], vld1q_s8(q)), lo[1], vld1q_s8(q + 16));
          const int32x4_t dh =
              dot16(dot16(vdupq_n_s32(0), hi[0], vld1q_s8(q + 32)), hi[1], vld1q_s8(q + 48));
          acc[ia][r] = vmlaq_n_s32(vmlaq_n_s32(acc[ia][r], dl, sc[2 * j]), dh, sc[2 * j + 1]);
        }
      }
    }
    for (int ia = 0; ia < NA; ++ia) {
      s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
      m[ia] = reduce4(mins[ia][0], mins[ia][1], mins[ia][2], mins[ia][3]);
    }
  }
};

// q6_k: u - 32 in [-32, 31] (low nibble | two high bits << 4), 16 sub-blocks of 16, int8 scales.
struct Q6K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = 210;
  static constexpr bool kMin = false;
  static void scales(const uint8_t* const* b, float32x4_t* d, float32x4_t*) { *d = f16x4(b, 208); }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, int32x4_t* s, int32x4_t*) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F), top2 = vdupq_n_u8(0x30);
    const int8x16_t off = vdupq_n_s8(32);
    int32x4_t acc[NA][4];
    for (int r = 0; r < 4; ++r) {
      const int8_t* sc = reinterpret_cast<const int8_t*>(b[r] + 192);
      for (int ia = 0; ia < NA; ++ia) acc[ia][r] = vdupq_n_s32(0);
      for (int h = 0; h < 2; ++h) {
        for (int half = 0; half < 2; ++half) {
          const uint8x16_t q0 = vld1q_u8(b[r] + 64 * h + 16 * half);
          const uint8x16_t q1 = vld1q_u8(b[r] + 64 * h + 32 + 16 * half);
          const uint8x16_t qh = vld1q_u8(b[r] + 128 + 32 * h + 16 * half);
          const int8x16_t u[4] = {
              vsubq_s8(s8(vorrq_u8(vandq_u8(q0, m4), vandq_u8(vshlq_n_u8(qh, 4), top2))), off),
              vsubq_s8(s8(vorrq_u8(vandq_u8(q1, m4), vandq_u8(vshlq_n_u8(qh, 2), top2))), off),
              vsubq_s8(s8(vorrq_u8(vshrq_n_u8(q0, 4), vandq_u8(qh, top2))), off),
              vsubq_s8(s8(vorrq_u8(vshrq_n_u8(q1, 4), vandq_u8(vshrq_n_u8(qh, 2), top2))), off)};
          for (int g = 0; g < 4; ++g) {
            const int e = 128 * h + 32 * g + 16 * half;
            for (int ia = 0; ia < NA; ++ia)
              acc[ia][r] = vmlaq_n_s32(
                  acc[ia][r], dot16(vdupq_n_s32(0), u[g], vld1q_s8(a[ia]->qs + e)), sc[e / 16]);
          }
        }
      }
    }
    for (int ia = 0; ia < NA; ++ia) s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
  }
};

// q2_k: 2-bit values, 16 sub-blocks of 16 with 4-bit scales (low nibble) and mins (high nibble).
struct Q2K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = 84;
  static constexpr bool kMin = true;
  static void scales(const uint8_t* const* b, float32x4_t* d, float32x4_t* dmin) {
    *d = f16x4(b, 80);
    *dmin = f16x4(b, 82);
  }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, int32x4_t* s, int32x4_t* m) {
    const uint8x16_t m2 = vdupq_n_u8(0x03);
    int32x4_t acc[NA][4], mins[NA][4];
    for (int r = 0; r < 4; ++r) {
      const uint8x16_t sm = vld1q_u8(b[r]);
      uint8_t sc[16];
      vst1q_u8(sc, vandq_u8(sm, vdupq_n_u8(0x0F)));
      const uint8x16_t mn = vshrq_n_u8(sm, 4);
      const int16x8_t mn_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mn)));
      const int16x8_t mn_hi = vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(mn)));
      for (int ia = 0; ia < NA; ++ia) {
        const int16x8_t s_lo = vld1q_s16(a[ia]->bsums), s_hi = vld1q_s16(a[ia]->bsums + 8);
        int32x4_t t = vmull_s16(vget_low_s16(mn_lo), vget_low_s16(s_lo));
        t = vmlal_s16(t, vget_high_s16(mn_lo), vget_high_s16(s_lo));
        t = vmlal_s16(t, vget_low_s16(mn_hi), vget_low_s16(s_hi));
        mins[ia][r] = vmlal_s16(t, vget_high_s16(mn_hi), vget_high_s16(s_hi));
        acc[ia][r] = vdupq_n_s32(0);
      }
      for (int h = 0; h < 2; ++h)
        for (int half = 0; half < 2; ++half) {
          uint8x16_t q = vld1q_u8(b[r] + 16 + 32 * h + 16 * half);
          for (int g = 0; g < 4; ++g) {
            const int8x16_t u = s8(vandq_u8(q, m2));
            q = vshrq_n_u8(q, 2);
            const int e = 128 * h + 32 * g + 16 * half;
            for (int ia = 0; ia < NA; ++ia)
              acc[ia][r] = vmlaq_n_s32(
                  acc[ia][r], dot16(vdupq_n_s32(0), u, vld1q_s8(a[ia]->qs + e)), sc[e / 16]);
          }
        }
    }
    for (int ia = 0; ia < NA; ++ia) {
      s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
      m[ia] = reduce4(mins[ia][0], mins[ia][1], mins[ia][2], mins[ia][3]);
    }
  }
};

// q3_k: low 2 bits | high bit << 2, minus 4: [-4, 3]; sixteen signed 6-bit scales.
struct Q3K {
  using Act = BlockQ8K;
  static constexpr size_t kBytes = 110;
  static constexpr bool kMin = false;
  static void scales(const uint8_t* const* b, float32x4_t* d, float32x4_t*) { *d = f16x4(b, 108); }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, int32x4_t* s, int32x4_t*) {
    const uint8x16_t m2 = vdupq_n_u8(0x03), bit3 = vdupq_n_u8(0x04);
    const int8x16_t four = vdupq_n_s8(4);
    int32x4_t acc[NA][4];
    for (int r = 0; r < 4; ++r) {
      int8_t sc[16];
      q3k_scales(b[r] + 96, sc);
      for (int ia = 0; ia < NA; ++ia) acc[ia][r] = vdupq_n_s32(0);
      for (int half = 0; half < 2; ++half) {
        uint8x16_t hm = vld1q_u8(b[r] + 16 * half);
        for (int h = 0; h < 2; ++h) {
          uint8x16_t q = vld1q_u8(b[r] + 32 + 32 * h + 16 * half);
          for (int g = 0; g < 4; ++g) {  // hmask bit 4h + g is the high bit of chunk (h, g)
            const int8x16_t u =
                vsubq_s8(s8(vorrq_u8(vandq_u8(q, m2), vandq_u8(vshlq_n_u8(hm, 2), bit3))), four);
            q = vshrq_n_u8(q, 2);
            hm = vshrq_n_u8(hm, 1);
            const int e = 128 * h + 32 * g + 16 * half;
            for (int ia = 0; ia < NA; ++ia)
              acc[ia][r] = vmlaq_n_s32(
                  acc[ia][r], dot16(vdupq_n_s32(0), u, vld1q_s8(a[ia]->qs + e)), sc[e / 16]);
          }
        }
      }
    }
    for (int ia = 0; ia < NA; ++ia) s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
  }
};

// Lanes 0xFF where bit e of (lo | hi << 8) is set, element e in lane e (16 elements).
inline uint8x16_t bytes_from_bits16(uint8_t lo, uint8_t hi) {
  static const uint8_t kBits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  return vtstq_u8(vcombine_u8(vdup_n_u8(lo), vdup_n_u8(hi)), vld1q_u8(kBits));
}

// The 32-element types against q8a: values made signed (q4_0 - 8, q5_0 - 16; q8_0 as stored);
// q4_1 / q5_1 keep unsigned u with dmin = -m and summ = isum, as the scalar twin does.
template <DType T>
struct Legacy {
  using Act = BlockQ8A;
  static constexpr bool kFive = T == DType::q5_0 || T == DType::q5_1;
  static constexpr bool kMin = T == DType::q4_1 || T == DType::q5_1;
  static constexpr size_t kBytes = gguf_block_bytes(T);
  static constexpr int kBias = T == DType::q4_0 ? 8 : (T == DType::q5_0 ? 16 : 0);
  static void scales(const uint8_t* const* b, float32x4_t* d, float32x4_t* dmin) {
    *d = f16x4(b, 0);
    if (kMin) *dmin = vnegq_f32(f16x4(b, 2));
  }
  static void unpack(const uint8_t* b, int8x16_t* lo, int8x16_t* hi) {
    if (T == DType::q8_0) {
      *lo = vld1q_s8(reinterpret_cast<const int8_t*>(b + 2));
      *hi = vld1q_s8(reinterpret_cast<const int8_t*>(b + 18));
      return;
    }
    const uint8_t* qh = b + (kMin ? 4 : 2);
    const uint8x16_t x = vld1q_u8(qh + (kFive ? 4 : 0));
    if (T == DType::q5_0) {
      // u - 16 made directly: where an element's fifth bit is clear, its value is the nibble
      // minus 16, the nibble under four set bits (0xF0 | n as int8); where set, the nibble. The
      // inverted fifth bits go to their elements' bytes (a table lookup per half) and are tested
      // into 0xFF / 0 masks; a bit select puts each low nibble under a mask's high nibble (BIT
      // writes the mask's register, x stays) and shift-and-insert each high nibble (SRI). About 12
      // instructions a row where the masks, ORs and subtractions took 27 (Cortex-A76); the same
      // values.
      static const uint8_t kSpread[2][16] = {{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
                                             {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3}};
      static const uint8_t kBits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
      const uint8x16_t clear = vmvnq_u8(vld1q_u8(qh));  // bytes 0-3: the fifth bits, inverted
      const uint8x16_t bits = vld1q_u8(kBits);
      const uint8x16_t lo_clear = vtstq_u8(vqtbl1q_u8(clear, vld1q_u8(kSpread[0])), bits);
      const uint8x16_t hi_clear = vtstq_u8(vqtbl1q_u8(clear, vld1q_u8(kSpread[1])), bits);
      *lo = s8(vbslq_u8(vdupq_n_u8(0x0F), x, lo_clear));
      *hi = s8(vsriq_n_u8(hi_clear, x, 4));
      return;
    }
    uint8x16_t l = vandq_u8(x, vdupq_n_u8(0x0F)), h = vshrq_n_u8(x, 4);
    if (kFive) {
      const uint8x16_t bit5 = vdupq_n_u8(0x10);
      l = vorrq_u8(l, vandq_u8(bytes_from_bits16(qh[0], qh[1]), bit5));
      h = vorrq_u8(h, vandq_u8(bytes_from_bits16(qh[2], qh[3]), bit5));
    }
    *lo = vsubq_s8(s8(l), vdupq_n_s8(static_cast<int8_t>(kBias)));
    *hi = vsubq_s8(s8(h), vdupq_n_s8(static_cast<int8_t>(kBias)));
  }
  template <int NA>
  static void sums(const uint8_t* const* b, const Act* const* a, int32x4_t* s, int32x4_t* m) {
    int32x4_t acc[NA][4];
    for (int r = 0; r < 4; ++r) {
      int8x16_t lo, hi;
      unpack(b[r], &lo, &hi);
      for (int ia = 0; ia < NA; ++ia)
        acc[ia][r] =
            dot16(dot16(vdupq_n_s32(0), lo, vld1q_s8(a[ia]->qs)), hi, vld1q_s8(a[ia]->qs + 16));
    }
    for (int ia = 0; ia < NA; ++ia) {
      s[ia] = reduce4(acc[ia][0], acc[ia][1], acc[ia][2], acc[ia][3]);
      if (kMin) m[ia] = vdupq_n_s32(a[ia]->isum);
    }
  }
};

// out[ia * 4 + r] = dot(weight row w[r], activation row ia) over nb blocks; per block
// acc += da * (d * sumi - dmin * summ) (or da * (d * sumi)), the scalar twin's expression.
template <class T, int NA>
void rows_kernel(const uint8_t* const* w, const void* act, size_t act_bytes, int64_t nb,
                 float* out) {
  using Act = typename T::Act;
  const Act* arow[NA];
  for (int ia = 0; ia < NA; ++ia)
    arow[ia] = reinterpret_cast<const Act*>(static_cast<const uint8_t*>(act) + ia * act_bytes);
  float32x4_t acc[NA];
  for (int ia = 0; ia < NA; ++ia) acc[ia] = vdupq_n_f32(0.f);
  for (int64_t i = 0; i < nb; ++i) {
    const uint8_t* b[4];
    for (int r = 0; r < 4; ++r) b[r] = w[r] + i * T::kBytes;
    const Act* a[NA];
    for (int ia = 0; ia < NA; ++ia) a[ia] = arow[ia] + i;
    int32x4_t s[NA], m[NA];
    for (int ia = 0; ia < NA; ++ia) m[ia] = vdupq_n_s32(0);
    T::template sums<NA>(b, a, s, m);
    float32x4_t d, dmin = vdupq_n_f32(0.f);
    T::scales(b, &d, &dmin);
    for (int ia = 0; ia < NA; ++ia) {
      float32x4_t t = vmulq_f32(d, vcvtq_f32_s32(s[ia]));
      if (T::kMin) t = vsubq_f32(t, vmulq_f32(dmin, vcvtq_f32_s32(m[ia])));
      acc[ia] = vaddq_f32(acc[ia], vmulq_f32(vdupq_n_f32(a[ia]->d), t));
    }
  }
  for (int ia = 0; ia < NA; ++ia) vst1q_f32(out + 4 * ia, acc[ia]);
}

// The names gguf_rows_table.h builds the entry points from.
struct Isa {
  using K2 = Q2K;
  using K3 = Q3K;
  template <bool kFive>
  using K45 = Q45K<kFive>;
  using K6 = Q6K;
  template <DType T>
  using Legacy32 = Legacy<T>;
  template <class T, int NA>
  static void kernel(const uint8_t* const* w, const void* act, size_t act_bytes, int64_t nb,
                     float* out) {
    rows_kernel<T, NA>(w, act, act_bytes, nb, out);
  }
};

}  // namespace

RowsFn rows_kernel_simd(DType dtype) {
  return RowsTable<Isa>::for_type(dtype).rows;
}

DotFn dot_kernel_simd(DType dtype) {
  return RowsTable<Isa>::for_type(dtype).dot;
}

}  // namespace einfer::gguf_detail

#endif  // EINFER_GGUF_NEON
