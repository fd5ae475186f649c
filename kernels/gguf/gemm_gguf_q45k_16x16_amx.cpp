// AMX prefill GEMM for Q4_K and Q5_K weights (m > 1 activation rows in q8_K blocks): 16 weight
// rows x 16 activation rows per tile product, the same bits as the scalar twin
// (dot_gguf_q8_scalar.cpp).
//
// Per 256-element block the twin forms two exact integers, sumi = sum_j sc_j * dot_j over the 8
// sub-blocks of 32 and summ = sum_j m_j * asum_j, then acc += da * (d * sumi - dmin * summ). The
// scales are 6-bit, too large to fold into 8-bit weights (63 * 31), so each is split in two 3-bit
// halves, sc = 8 * hi + lo, and the weights are unpacked per block into two unsigned 8-bit
// matrices hi * q and lo * q (at most 7 * 31 = 217 for Q5_K's 5-bit q): then
// sumi = 8 * (A_hi . a) + (A_lo . a), each a plain dot over the whole block, four TDPBUSD of K = 64
// into one int32 tile apiece, exact. summ comes from vpdpwssd on the (min, min) pairs and the
// activation sub-block sums. The float expression runs per weight row on the 16 activation rows'
// lanes, multiplies and subtractions as the twin writes them (compiled with -ffp-contract=off).
// Weight rows are unpacked once per block for all activation tiles; each activation tile's bytes
// are interleaved once per call.
//
// GCC only, with a target pragma like the other AMX kernel (gemm_q8_q4_16x16_amx.cpp);
// gguf_dispatch.cpp calls it when the ISA selection includes amx.
#include "kernels/gguf/gguf_quant_internal.h"

#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)

#include <immintrin.h>

#include "kernels/simd/simd.h"

#include <cstring>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512vnni,amx-tile,amx-int8")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace einfer::gguf_detail {
namespace {

constexpr int kTile = 16;
constexpr int64_t kBlock = 256;
constexpr size_t kQ4KBytes = 144;
constexpr size_t kQ5KBytes = 176;   // as Q4_K plus 32 bytes of fifth bits (qh) before the nibbles
constexpr int64_t kMaxBlocks = 32;  // K <= 8192
constexpr int kMaxActTiles = 4;     // up to 64 activation rows per pass
constexpr int kActBlocks = 36;      // interleaved (tile, block) pairs on the stack (~160 KB)
static_assert(kActBlocks >= kMaxBlocks, "a pass must hold at least one tile's blocks");

using TileConfig = AmxTileConfig;

// One activation tile's data for one block: the 4 chunks of 64 elements in AMX's B layout (16
// rows of 4 bytes per activation row), the rows' scales, and per pair of sub-blocks p the int16
// pairs (asum_2p, asum_2p+1) of each row.
struct alignas(64) ActBlock {
  int8_t b[4][kTile][64];
  float da[kTile];
  int32_t asum_pairs[4][kTile];
};

void interleave_act(const uint8_t* act, size_t act_bytes, int64_t i0, int64_t rows, int64_t blk,
                    ActBlock* out) {
  for (int64_t i = 0; i < kTile; ++i) {
    if (i >= rows) {
      for (int c = 0; c < 4; ++c)
        for (int q = 0; q < kTile; ++q) std::memset(&out->b[c][q][4 * i], 0, 4);
      out->da[i] = 0.f;
      for (auto& p : out->asum_pairs) p[i] = 0;
      continue;
    }
    const BlockQ8K* a = reinterpret_cast<const BlockQ8K*>(act + (i0 + i) * act_bytes) + blk;
    for (int c = 0; c < 4; ++c)
      for (int q = 0; q < kTile; ++q) std::memcpy(&out->b[c][q][4 * i], a->qs + 64 * c + 4 * q, 4);
    out->da[i] = a->d;
    for (int p = 0; p < 4; ++p) {
      const int32_t s0 = a->bsums[4 * p] + a->bsums[4 * p + 1];
      const int32_t s1 = a->bsums[4 * p + 2] + a->bsums[4 * p + 3];
      out->asum_pairs[p][i] = static_cast<int32_t>((static_cast<uint32_t>(s1) << 16) |
                                                   (static_cast<uint32_t>(s0) & 0xFFFFu));
    }
  }
}

// One block of 16 weight rows: A_hi/A_lo as 4 chunks of 16 rows x 64 unsigned bytes (hi * q,
// lo * q), the rows' d and dmin, and the (min_2p, min_2p+1) int16 pairs.
struct alignas(64) WeightBlock {
  uint8_t hi[4][kTile][64];
  uint8_t lo[4][kTile][64];
  float d[kTile], dmin[kTile];
  int32_t min_pairs[kTile][4];
};

template <bool kFive>
void unpack_weights(const uint8_t* w, size_t w_row, int64_t rows, int64_t blk, WeightBlock* out) {
  constexpr size_t kBytes = kFive ? kQ5KBytes : kQ4KBytes;
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m256i bit = _mm256_set1_epi8(0x01);
  for (int64_t r = 0; r < kTile; ++r) {
    if (r >= rows) {
      for (int c = 0; c < 4; ++c) {
        std::memset(out->hi[c][r], 0, 64);
        std::memset(out->lo[c][r], 0, 64);
      }
      out->d[r] = out->dmin[r] = 0.f;
      for (int p = 0; p < 4; ++p) out->min_pairs[r][p] = 0;
      continue;
    }
    const uint8_t* b = w + r * w_row + blk * kBytes;
    out->d[r] = load_f16(b);
    out->dmin[r] = load_f16(b + 2);
    int sc[8], mn[8];
    for (int j = 0; j < 8; ++j) kquant_scale_min(b + 4, j, &sc[j], &mn[j]);
    for (int p = 0; p < 4; ++p) out->min_pairs[r][p] = mn[2 * p] | (mn[2 * p + 1] << 16);
    // Chunk c holds sub-blocks 2c (low nibbles of qs[32c..32c+31]) and 2c+1 (their high ones),
    // in element order. Products s * q (s <= 7, q <= 31) by 16-bit multiplies, narrowed to bytes.
    const __m256i qh = kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16))
                             : _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i v =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + (kFive ? 48 : 16) + 32 * c));
      __m512i q = _mm512_and_si512(
          _mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1),
          m4);      // bytes 0-31: low nibbles, 32-63: high nibbles
      if (kFive) {  // bit 2c of qh[l] is the low nibble's fifth bit, bit 2c + 1 the high one's
        const __m256i b_lo =
            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), bit), 4);
        const __m256i b_hi =
            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), bit), 4);
        q = _mm512_or_si512(q, _mm512_inserti64x4(_mm512_castsi256_si512(b_lo), b_hi, 1));
      }
      const __m512i q_lo16 = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(q));
      const __m512i q_hi16 = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(q, 1));
      const int s0 = sc[2 * c], s1 = sc[2 * c + 1];
      const __m512i h0 = _mm512_mullo_epi16(q_lo16, _mm512_set1_epi16(static_cast<short>(s0 >> 3)));
      const __m512i h1 = _mm512_mullo_epi16(q_hi16, _mm512_set1_epi16(static_cast<short>(s1 >> 3)));
      const __m512i l0 = _mm512_mullo_epi16(q_lo16, _mm512_set1_epi16(static_cast<short>(s0 & 7)));
      const __m512i l1 = _mm512_mullo_epi16(q_hi16, _mm512_set1_epi16(static_cast<short>(s1 & 7)));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out->hi[c][r]), _mm512_cvtepi16_epi8(h0));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out->hi[c][r] + 32), _mm512_cvtepi16_epi8(h1));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out->lo[c][r]), _mm512_cvtepi16_epi8(l0));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out->lo[c][r] + 32), _mm512_cvtepi16_epi8(l1));
    }
  }
}

}  // namespace

bool gemm_q45k_amx_supports(int64_t m, int64_t k) {
  return m > 1 && k % kBlock == 0 && k / kBlock <= kMaxBlocks;
}

namespace {
template <bool kFive>
void gemm_k45_amx(const uint8_t* w, size_t w_row, int64_t j0, int64_t j1, const uint8_t* act,
                  size_t act_bytes, int64_t m, int64_t nb, float* c, int64_t ldc) {
  TileConfig cfg;
  std::memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int t = 0; t < 5; ++t) {
    cfg.rows[t] = kTile;
    cfg.colsb[t] = 64;
  }
  _tile_loadconfig(&cfg);

  // Every (activation tile, block) of a pass interleaved once, then reused by all weight tiles.
  alignas(64) ActBlock acts[kActBlocks];
  alignas(64) WeightBlock wb;
  alignas(64) int32_t hi_sums[kTile][kTile], lo_sums[kTile][kTile];
  alignas(64) float acc[kMaxActTiles][kTile][kTile];  // [tile][weight row][activation row]
  const int64_t per_pass = kActBlocks / nb < kMaxActTiles ? kActBlocks / nb : kMaxActTiles;
  for (int64_t ia = 0; ia < m; ia += per_pass * kTile) {
    const int64_t rows_in_pass = m - ia < per_pass * kTile ? m - ia : per_pass * kTile;
    const int tiles = static_cast<int>((rows_in_pass + kTile - 1) / kTile);
    for (int t = 0; t < tiles; ++t) {
      const int64_t i0 = ia + t * kTile;
      for (int64_t blk = 0; blk < nb; ++blk)
        interleave_act(act, act_bytes, i0, m - i0 < kTile ? m - i0 : kTile, blk,
                       &acts[t * nb + blk]);
    }
    for (int64_t jt = j0; jt < j1; jt += kTile) {
      const int64_t nr = j1 - jt < kTile ? j1 - jt : kTile;
      std::memset(acc, 0, sizeof(float) * kTile * kTile * static_cast<size_t>(tiles));
      // The next weight tile's block is requested into L2 while this one is unpacked and
      // multiplied (as in the q8/q4 AMX kernel: prefill weights stream from L3).
      const int64_t next_rows = j1 - jt - kTile < kTile ? j1 - jt - kTile : kTile;
      constexpr size_t kBytes = kFive ? kQ5KBytes : kQ4KBytes;
      for (int64_t blk = 0; blk < nb; ++blk) {
        for (int64_t r = 0; r < next_rows; ++r) {
          const char* b =
              reinterpret_cast<const char*>(w + (jt + kTile + r) * w_row + blk * kBytes);
          for (size_t o = 0; o < kBytes; o += 64) _mm_prefetch(b + o, _MM_HINT_T1);
        }
        unpack_weights<kFive>(w + jt * w_row, w_row, nr, blk, &wb);
        for (int t = 0; t < tiles; ++t) {
          const ActBlock& ab = acts[t * nb + blk];
          _tile_zero(0);
          _tile_zero(1);
          for (int ch = 0; ch < 4; ++ch) {
            _tile_loadd(3, ab.b[ch], 64);
            _tile_loadd(2, wb.hi[ch], 64);
            _tile_loadd(4, wb.lo[ch], 64);
            _tile_dpbusd(0, 2, 3);  // weights unsigned (<= 217), activations signed
            _tile_dpbusd(1, 4, 3);
          }
          _tile_stored(0, hi_sums, 64);
          _tile_stored(1, lo_sums, 64);
          const __m512 da = _mm512_load_ps(ab.da);
          for (int r = 0; r < kTile; ++r) {
            const __m512i sumi = _mm512_add_epi32(
                _mm512_slli_epi32(_mm512_load_si512(hi_sums[r]), 3), _mm512_load_si512(lo_sums[r]));
            __m512i summ = _mm512_setzero_si512();
            for (int p = 0; p < 4; ++p)
              summ = _mm512_dpwssd_epi32(summ, _mm512_load_si512(ab.asum_pairs[p]),
                                         _mm512_set1_epi32(wb.min_pairs[r][p]));
            const __m512 t1 = _mm512_mul_ps(_mm512_set1_ps(wb.d[r]), _mm512_cvtepi32_ps(sumi));
            const __m512 t2 = _mm512_mul_ps(_mm512_set1_ps(wb.dmin[r]), _mm512_cvtepi32_ps(summ));
            float* a = acc[t][r];
            _mm512_store_ps(
                a, _mm512_add_ps(_mm512_load_ps(a), _mm512_mul_ps(da, _mm512_sub_ps(t1, t2))));
          }
        }
      }
      for (int t = 0; t < tiles; ++t) {
        const int64_t i0 = ia + t * kTile;
        const int64_t rows = m - i0 < kTile ? m - i0 : kTile;
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t r = 0; r < nr; ++r) c[(i0 + i) * ldc + jt + r] = acc[t][r][i];
      }
    }
  }
  _tile_release();
}
}  // namespace

void gemm_q45k_16x16_amx(bool five, const uint8_t* w, size_t w_row, int64_t j0, int64_t j1,
                         const uint8_t* act, size_t act_bytes, int64_t m, int64_t nb, float* c,
                         int64_t ldc) {
  if (five) {
    gemm_k45_amx<true>(w, w_row, j0, j1, act, act_bytes, m, nb, c, ldc);
  } else {
    gemm_k45_amx<false>(w, w_row, j0, j1, act, act_bytes, m, nb, c, ldc);
  }
}

}  // namespace einfer::gguf_detail

#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif
