// AMX prefill GEMM of matmul_f32_quant for q8 weights (m > 1): 16 weight rows x 16 activation rows
// per tile product, one TDPBSSD per scale group.
//
// A q8 group (32 or 64 elements) carries one weight scale and one activation scale, so the int8
// products of one group must be summed on their own before they are scaled. The tile product does
// exactly that: A = 16 weight rows x one group (int8, loaded in place from the weight rows), B =
// the same group of 16 activation rows in AMX's four-byte interleaved layout, C = the 16 x 16
// exact int32 group sums. Each C row (one weight row, 16 activation rows) is then converted and
// added into a float accumulator with one FMA by sa(i) * sw(j). Per element the float expression,
// acc += float(sum_g) * (sa * sw) over the groups in order, does not depend on the tile an
// element falls in, so any cut of rows or columns gives the same bits; the order differs from
// the AVX2/VNNI kernels' (8 partial lanes, then a horizontal sum), as theirs differs from the
// scalar twin's.
//
// The activations are interleaved once per call, per group of activation tiles that fits a
// stack buffer, and reused by every weight tile. Compiled with a target pragma (GCC only, like
// the VNNI kernels); matmul_quant.cpp calls it when the selection includes the amx extension
// (kernels/isa.h: CPUID, the OS's tile state and, on Linux, the arch_prctl permission).
#include "kernels/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)

#include <immintrin.h>

#include <cstring>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,amx-tile,amx-int8")
// GCC 12's 512-bit intrinsics pass _mm512_undefined_ps() as the unused merge operand, which
// -Wmaybe-uninitialized reports inside the header (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace einfer::quant_detail {
namespace {

constexpr int kTile = 16;                 // rows of A, B's columns, C's rows and columns
constexpr size_t kActBytes = 128 * 1024;  // interleaved activation tiles + their scales

// The ldtilecfg operand: palette 1, then bytes per row and rows of tiles 0-15.
struct alignas(64) TileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

// Bytes of one interleaved activation tile (every group) and its scales.
size_t act_tile_bytes(int64_t k, int64_t groups) {
  return static_cast<size_t>(k) * kTile + static_cast<size_t>(groups) * kTile * sizeof(float);
}

// Activation rows [i0, i0 + rows) (rows <= 16) into `dst`: per group g, group / 4 rows of 64
// bytes, row r holding the four bytes 4r..4r+3 of the group of each activation row (zeros for the
// missing rows); then per group the 16 activation scales.
void interleave_tile(const QuantGemm& p, int64_t i0, int64_t rows, uint8_t* dst) {
  const int64_t group = p.group, quads = group / 4;
  for (int64_t g = 0; g < p.groups; ++g) {
    uint32_t* out = reinterpret_cast<uint32_t*>(dst + g * group * kTile);
    for (int64_t i = 0; i < kTile; ++i) {
      const int8_t* a = p.qa + (i0 + i) * p.kpad + g * group;
      for (int64_t r = 0; r < quads; ++r) {
        uint32_t v = 0;
        if (i < rows) std::memcpy(&v, a + 4 * r, 4);
        out[r * kTile + i] = v;
      }
    }
  }
  float* scales = reinterpret_cast<float*>(dst + p.k * kTile);
  for (int64_t g = 0; g < p.groups; ++g)
    for (int64_t i = 0; i < kTile; ++i)
      scales[g * kTile + i] = i < rows ? p.sa[(i0 + i) * p.groups + g] : 0.f;
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

}  // namespace

bool gemm_q8_amx_supports(const QuantGemm& p) {
  return (p.group == 32 || p.group == 64) && p.k % p.group == 0 &&
         act_tile_bytes(p.k, p.groups) <= kActBytes;
}

void gemm_q8_16x16_amx(const QuantGemm& p) {
  const int64_t group = p.group;
  const int64_t rb = static_cast<int64_t>(p.w_row_bytes);
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  cfg.rows[0] = kTile, cfg.colsb[0] = kTile * 4;                            // C: int32 sums
  cfg.rows[1] = kTile, cfg.colsb[1] = static_cast<uint16_t>(group);         // A: weight rows
  cfg.rows[2] = static_cast<uint8_t>(group / 4), cfg.colsb[2] = kTile * 4;  // B: activations
  _tile_loadconfig(&cfg);

  alignas(64) uint8_t act[kActBytes];
  alignas(64) int32_t sums[kTile][kTile];
  alignas(64) int8_t wpad[kTile][64];  // a last, partial weight tile's group, zero rows below
  const size_t tile_bytes = (act_tile_bytes(p.k, p.groups) + 63) & ~size_t{63};
  const int64_t per_pass = static_cast<int64_t>(kActBytes / tile_bytes) * kTile;
  for (int64_t ia = 0; ia < p.m; ia += per_pass) {
    const int64_t rows_in_pass = p.m - ia < per_pass ? p.m - ia : per_pass;
    const int64_t tiles = (rows_in_pass + kTile - 1) / kTile;
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t i0 = ia + t * kTile;
      interleave_tile(p, i0, p.m - i0 < kTile ? p.m - i0 : kTile, act + t * tile_bytes);
    }
    for (int64_t j0 = 0; j0 < p.n; j0 += kTile) {
      const int64_t nr = p.n - j0 < kTile ? p.n - j0 : kTile;
      const float* sw[kTile];
      for (int j = 0; j < kTile; ++j) sw[j] = p.sw + (j0 + (j < nr ? j : nr - 1)) * p.groups;
      if (nr < kTile) std::memset(wpad, 0, sizeof wpad);
      for (int64_t t = 0; t < tiles; ++t) {
        const uint8_t* at = act + t * tile_bytes;
        const float* sa = reinterpret_cast<const float*>(at + p.k * kTile);
        __m512 acc[kTile];
        for (__m512& v : acc) v = _mm512_setzero_ps();
        for (int64_t g = 0; g < p.groups; ++g) {
          const uint8_t* w = p.w + j0 * rb + g * group;
          if (nr == kTile) {
            _tile_loadd(1, w, rb);
          } else {
            for (int64_t j = 0; j < nr; ++j) std::memcpy(wpad[j], w + j * rb, group);
            _tile_loadd(1, wpad, 64);
          }
          _tile_loadd(2, at + g * group * kTile, kTile * 4);
          _tile_zero(0);
          _tile_dpbssd(0, 1, 2);
          _tile_stored(0, sums, kTile * 4);
          const __m512 sav = _mm512_load_ps(sa + g * kTile);
          for (int j = 0; j < kTile; ++j) {
            const __m512 s = _mm512_cvtepi32_ps(_mm512_load_si512(sums[j]));
            acc[j] = _mm512_fmadd_ps(s, _mm512_mul_ps(sav, _mm512_set1_ps(sw[j][g])), acc[j]);
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

}  // namespace einfer::quant_detail

#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif
