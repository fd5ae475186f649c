// AMX prefill GEMMs of matmul_f32_quant for q8 and q4 weights (m > 1): 16 weight rows x 16
// activation rows per tile product, one TDPBSSD per scale group.
//
// A q8 group (32 or 64 elements) carries one weight scale and one activation scale, so the int8
// products of one group must be summed on their own before they are scaled. The tile product does
// exactly that: A = 16 weight rows x one group (int8, loaded in place from the weight rows), B =
// the same group of 16 activation rows in AMX's four-byte interleaved layout, C = the 16 x 16
// exact int32 group sums (q4 weights are first unpacked, per weight tile, to int8 u - 8). Each C
// row (one weight row, 16 activation rows) is then converted and added into a float accumulator
// with one FMA by sa(i) * sw(j). Per element the float expression, acc += float(sum_g) * (sa * sw)
// over the groups in order, does not depend on the tile an element falls in, so any cut of rows or
// columns gives the same bits; the order differs from the AVX2/VNNI kernels' (8 partial lanes, then
// a horizontal sum), as theirs differs from the scalar twin's.
//
// The activations are interleaved once per call, per group of activation tiles that fits a
// stack buffer, and reused by every weight tile. Compiled with a target pragma (GCC only, like
// the VNNI kernels); gemm_quant_dispatch.cpp calls it when the selection includes the amx extension
// (kernels/isa/isa.h: CPUID, the OS's tile state and, on Linux, the arch_prctl permission).
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)

#include <immintrin.h>

#include "kernels/simd/simd.h"

#include <cstring>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,amx-tile,amx-int8")
// GCC 12's 512-bit intrinsics pass _mm512_undefined_ps() as the unused merge operand, which
// -W(maybe-)uninitialized reports inside the header (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace einfer::quant_detail {
namespace {

constexpr int kTile = 16;                   // rows of A, B's columns, C's rows and columns
constexpr size_t kActBytes = 128 * 1024;    // interleaved activation tiles + their scales
constexpr size_t kWeightBytes = 64 * 1024;  // one weight tile as int8 (k <= 4096)

using TileConfig = AmxTileConfig;

// Bytes of one interleaved activation tile (every group) and its scales.
size_t act_tile_bytes(int64_t k, int64_t groups) {
  return static_cast<size_t>(k) * kTile + static_cast<size_t>(groups) * kTile * sizeof(float);
}

// Where group g's elements sit in a quantized activation row, as two runs of `group / 2` bytes:
// q8 rows are in natural order (one run after the other); q4 rows are, per 64 elements, the 32
// even then the 32 odd elements (permute_blocks_even_odd64), so a group of 32 is 16 even and 16
// odd elements, half a block apart. The weights are unpacked in the same order (unpack_q4).
inline void group_runs(bool q4, int64_t group, int64_t g, int64_t* first, int64_t* second) {
  if (!q4 || group == 64) {
    *first = g * group;
    *second = *first + group / 2;
  } else {
    *first = (g / 2) * 64 + (g % 2) * 16;
    *second = *first + 32;
  }
}

// Activation rows [i0, i0 + rows) (rows <= 16) into `dst`: per group g, group / 4 rows of 64
// bytes, row r holding the four bytes 4r..4r+3 of the group of each activation row (zeros for the
// missing rows); then per group the 16 activation scales.
void interleave_tile(const QuantGemm& p, bool q4, int64_t i0, int64_t rows, uint8_t* dst) {
  const int64_t group = p.group, quads = group / 4, half = quads / 2;
  // Row r of a group's block is one gather: the four bytes at the same offset of each of the
  // 16 activation rows (kpad bytes apart), missing rows masked to zero. (A byte-wise loop with
  // an index division per four bytes took ~40% of the AMX prefill GEMM.)
  const __m512i row_offsets =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(p.kpad)));
  const __mmask16 present = static_cast<__mmask16>((1u << rows) - 1u);
  const int8_t* base = p.qa + i0 * p.kpad;
  for (int64_t g = 0; g < p.groups; ++g) {
    int32_t* out = reinterpret_cast<int32_t*>(dst + g * group * kTile);
    int64_t runs[2];
    group_runs(q4, group, g, &runs[0], &runs[1]);
    for (int h = 0; h < 2; ++h)
      for (int64_t r = 0; r < half; ++r) {
        const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), present, row_offsets,
                                                      base + runs[h] + 4 * r, 1);
        _mm512_store_si512(out + (h * half + r) * kTile, v);
      }
  }
  float* scales = reinterpret_cast<float*>(dst + p.k * kTile);
  for (int64_t g = 0; g < p.groups; ++g)
    for (int64_t i = 0; i < kTile; ++i)
      scales[g * kTile + i] = i < rows ? p.sa[(i0 + i) * p.groups + g] : 0.f;
}

// q4 weight rows [j0, j0 + nr) of one 16-row tile as int8 values u - 8, per group g a 16 x group
// block at dst + g * 16 * group (rows past nr zero): a group's bytes hold its even elements in the
// low nibbles and its odd ones in the high nibbles, so the low nibbles come first, as the
// activations' runs (group_runs).
void unpack_q4(const QuantGemm& p, int64_t j0, int64_t nr, int8_t* dst) {
  const int64_t group = p.group, half = group / 2;
  const __m128i m4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  for (int64_t g = 0; g < p.groups; ++g) {
    int8_t* out = dst + g * kTile * group;
    for (int64_t j = 0; j < kTile; ++j, out += group) {
      if (j >= nr) {
        std::memset(out, 0, static_cast<size_t>(group));
        continue;
      }
      const uint8_t* w = p.w + (j0 + j) * p.w_row_bytes + g * half;
      for (int64_t b = 0; b < half; b += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + b));
        const __m128i lo = _mm_sub_epi8(_mm_and_si128(v, m4), eight);
        const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(v, 4), m4), eight);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + b), lo);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + half + b), hi);
      }
    }
  }
}

// r[j] = row j of a 16 x 16 float matrix -> r[i] = column i.
inline void transpose16(__m512* r) {
  __m512 t[16];
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 16; k += 4) {
    r[k] = _mm512_shuffle_ps(t[k], t[k + 2], 0x44);
    r[k + 1] = _mm512_shuffle_ps(t[k], t[k + 2], 0xEE);
    r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0x44);
    r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
  }
  for (int k = 0; k < 16; k += 8) {
    for (int c = 0; c < 4; ++c) {
      t[k + c] = _mm512_shuffle_f32x4(r[k + c], r[k + 4 + c], 0x88);
      t[k + 4 + c] = _mm512_shuffle_f32x4(r[k + c], r[k + 4 + c], 0xDD);
    }
  }
  for (int c = 0; c < 8; ++c) {
    r[c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(t[c], t[8 + c], 0xDD);
  }
}

// q8 weight rows [j0, j0 + nr) of a last, partial tile in unpack_q4's layout (rows past nr zero).
void copy_q8_partial(const QuantGemm& p, int64_t j0, int64_t nr, int8_t* dst) {
  const int64_t group = p.group;
  for (int64_t g = 0; g < p.groups; ++g) {
    int8_t* out = dst + g * kTile * group;
    for (int64_t j = 0; j < kTile; ++j, out += group) {
      if (j < nr) {
        std::memcpy(out, p.w + (j0 + j) * p.w_row_bytes + g * group, static_cast<size_t>(group));
      } else {
        std::memset(out, 0, static_cast<size_t>(group));
      }
    }
  }
}

constexpr int64_t kBatchGroups = 8;  // groups whose int32 sums are taken before they are scaled

// The int32 sums of one group into tile C, tiles A and B taking its weights and activations.
// GCC's tile intrinsics paste their tile numbers into the instruction text, so this is a macro.
#define EINFER_AMX_GROUP_PRODUCT(C, A, B, w, w_stride, a) \
  do {                                                    \
    _tile_loadd(A, (w), (w_stride));                      \
    _tile_loadd(B, (a), kTile * 4);                       \
    _tile_zero(C);                                        \
    _tile_dpbssd(C, A, B);                                \
  } while (0)

template <bool kQ4>
void gemm_16x16_amx(const QuantGemm& p) {
  const int64_t group = p.group;
  const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 6; t += 3) {  // two sets, so two groups' products are in flight at once
    cfg.rows[t] = kTile, cfg.colsb[t] = kTile * 4;                             // C: int32 sums
    cfg.rows[t + 1] = kTile, cfg.colsb[t + 1] = static_cast<uint16_t>(group);  // A: weights
    cfg.rows[t + 2] = static_cast<uint8_t>(group / 4), cfg.colsb[t + 2] = kTile * 4;  // B: acts
  }
  _tile_loadconfig(&cfg);

  alignas(64) uint8_t act[kActBytes];
  alignas(64) int32_t sums[kBatchGroups][kTile][kTile];
  // A last, partial q8 weight tile, or a q4 tile, as int8 in unpack_q4's layout.
  alignas(64) int8_t wbuf[kWeightBytes];
  const size_t tile_bytes = (act_tile_bytes(p.k, p.groups) + 63) & ~size_t{63};
  const int64_t per_pass = static_cast<int64_t>(kActBytes / tile_bytes) * kTile;
  for (int64_t ia = 0; ia < p.m; ia += per_pass) {
    const int64_t rows_in_pass = p.m - ia < per_pass ? p.m - ia : per_pass;
    const int64_t tiles = (rows_in_pass + kTile - 1) / kTile;
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t i0 = ia + t * kTile;
      interleave_tile(p, kQ4, i0, p.m - i0 < kTile ? p.m - i0 : kTile, act + t * tile_bytes);
    }
    for (int64_t j0 = 0; j0 < p.n; j0 += kTile) {
      const int64_t nr = p.n - j0 < kTile ? p.n - j0 : kTile;
      // The next weight tile is requested into L2 a few lines per group batch while this one is
      // multiplied: a tile's first loads otherwise wait on L3 (prefill weights do not fit L2),
      // which cost 32-row blocks (2-thread prefill of 64-token chunks) 5-8% of their GEMM time.
      const int64_t ahead_rows = p.n - j0 - kTile < kTile ? p.n - j0 - kTile : kTile;
      int64_t ahead_bytes = ahead_rows > 0 ? ahead_rows * rb : 0;
      const char* ahead =
          ahead_bytes > 0 ? reinterpret_cast<const char*>(p.w + (j0 + kTile) * rb) : nullptr;
      const int64_t batches = tiles * ((p.groups + kBatchGroups - 1) / kBatchGroups);
      const int64_t ahead_step = (ahead_bytes / 64 + batches - 1) / batches * 64;
      const float* sw[kTile];
      for (int j = 0; j < kTile; ++j) sw[j] = p.sw + (j0 + (j < nr ? j : nr - 1)) * p.groups;
      // Group g's weights: in place (whole q8 tiles) or from wbuf.
      const bool in_place = !kQ4 && nr == kTile;
      if (kQ4) {
        unpack_q4(p, j0, nr, wbuf);
      } else if (!in_place) {
        copy_q8_partial(p, j0, nr, wbuf);
      }
      const int64_t w_stride = in_place ? rb : group;
      auto weights = [&](int64_t g) -> const uint8_t* {
        return in_place ? p.w + j0 * rb + g * group
                        : reinterpret_cast<const uint8_t*>(wbuf) + g * kTile * group;
      };
      for (int64_t t = 0; t < tiles; ++t) {
        const uint8_t* at = act + t * tile_bytes;
        const float* sa = reinterpret_cast<const float*>(at + p.k * kTile);
        __m512 acc[kTile];
        for (__m512& v : acc) v = _mm512_setzero_ps();
        for (int64_t g0 = 0; g0 < p.groups; g0 += kBatchGroups) {
          const int64_t gn = p.groups - g0 < kBatchGroups ? p.groups - g0 : kBatchGroups;
          for (int64_t q = 0; q < ahead_step && ahead_bytes > 0; q += 64) {
            _mm_prefetch(ahead, _MM_HINT_T1);
            ahead += 64;
            ahead_bytes -= 64;
          }
          int64_t b = 0;
          for (; b + 1 < gn; b += 2) {
            EINFER_AMX_GROUP_PRODUCT(0, 1, 2, weights(g0 + b), w_stride,
                                     at + (g0 + b) * group * kTile);
            EINFER_AMX_GROUP_PRODUCT(3, 4, 5, weights(g0 + b + 1), w_stride,
                                     at + (g0 + b + 1) * group * kTile);
            _tile_stored(0, sums[b], kTile * 4);
            _tile_stored(3, sums[b + 1], kTile * 4);
          }
          if (b < gn) {
            EINFER_AMX_GROUP_PRODUCT(0, 1, 2, weights(g0 + b), w_stride,
                                     at + (g0 + b) * group * kTile);
            _tile_stored(0, sums[b], kTile * 4);
          }
          for (b = 0; b < gn; ++b) {
            const int64_t g = g0 + b;
            const __m512 sav = _mm512_load_ps(sa + g * kTile);
            for (int j = 0; j < kTile; ++j) {
              const __m512 s = _mm512_cvtepi32_ps(_mm512_load_si512(sums[b][j]));
              acc[j] = _mm512_fmadd_ps(s, _mm512_mul_ps(sav, _mm512_set1_ps(sw[j][g])), acc[j]);
            }
          }
        }
        transpose16(acc);  // acc[i]: activation row i0 + i, weight rows j0..j0+15
        const int64_t i0 = ia + t * kTile;
        const int64_t rows = p.m - i0 < kTile ? p.m - i0 : kTile;
        const __mmask16 mask = static_cast<__mmask16>((1u << nr) - 1u);
        for (int64_t i = 0; i < rows; ++i)
          _mm512_mask_storeu_ps(p.c + (i0 + i) * p.ldc + j0, mask, acc[i]);
      }
    }
  }
  _tile_release();
}

#undef EINFER_AMX_GROUP_PRODUCT

}  // namespace

bool gemm_amx_supports(const QuantGemm& p, bool q4) {
  (void)q4;  // both need k <= 4096: a q4 tile, or a last partial q8 tile, is copied whole
  return (p.group == 32 || p.group == 64) && p.k % p.group == 0 &&
         act_tile_bytes(p.k, p.groups) <= kActBytes &&
         static_cast<size_t>(p.k) * kTile <= kWeightBytes;
}

void gemm_q8_16x16_amx(const QuantGemm& p) {
  gemm_16x16_amx<false>(p);
}
void gemm_q4_16x16_amx(const QuantGemm& p) {
  gemm_16x16_amx<true>(p);
}

}  // namespace einfer::quant_detail

#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif
