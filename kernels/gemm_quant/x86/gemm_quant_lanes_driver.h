// Private to kernels/gemm_quant/: the parts of the x86 prefill GEMMs that keep one weight row per
// vector lane and equal the scalar int twins bit for bit (gemm_q8_q4_8x16_avx512vnni.cpp,
// gemm_q8_q4_3x16_avx2.cpp): the packed weight tile, the activation offsets, the packing of
// weight tiles from either layout they read, and the loops over weight tiles, K slices and
// activation tiles.
//
// A weight tile of K::kLanes rows is packed per K slice into [chunk * quads + quad][lane][4 bytes]
// of unsigned bytes: q4 the nibble u (8 quads per chunk); q8 w + 128 (Q8Pack::offset, 8 quads),
// or w + 128 widened to int16, two per quad (Q8Pack::pairs16, 16 quads: quad q meets activations
// 2q and 2q + 1 of the chunk), for AVX2's int16 madd. Each 32-element chunk's quads sit together
// in the order of the activations they meet. Where they come from is K::kSource:
// - LaneSource::rows, the rows layout (lanes_pack): K's transposes turn 16 or 32 bytes of each
//   row into quads. q8 meets the activations in natural order, q4 in the even/odd order of
//   permute_blocks_even_odd64 (the low nibbles of 4 weight bytes meet 4 consecutive activations
//   of a 64-block's first half, the high nibbles 4 of its second half).
// - LaneSource::i8x4, the 8x4 layout (lanes_pack_8x4): a layout chunk (8 rows x 4 bytes) is
//   already a quad of 8 lanes, so packing is a copy with the unsigned offset (or the int16
//   widening); q4 puts a group's low nibbles (its first half) before its high nibbles (its second
//   half), so every quad meets its 4 activations in natural order, q8 and q4 alike.
// The kernels start each group's int32 sums from the negated correction (q8: 128 sum(a) = 16 csum;
// q4: 8 sum(a) = csum, from the dispatcher's chunk sums, which do not depend on the order) and end
// at the exact dot products. The int16 pairs hold u = w + 128 and meet a + 128 (ActOrder::wide16),
// so every product is non-negative; a group's sums start from s0 = T - 128 sum(w) >= 0 (packed
// beside the scales, T = wide16_offset(G)) and end at S, and S - (T + 128 sum(a + 128)) (the
// wide16 group sums) is the dot product.
//
// The ISA file provides K: kLanes, kSource, kQ8Pack, Pack (LanePack<kLanes, quads per chunk>),
// rows(q4) (activation rows per tile), for LaneSource::rows transpose_q8(src, dst) (kLanes rows of
// 32 bytes -> a chunk's packed quads; Q8Pack::pairs16: transpose_q8(src, dst, usum), which also
// adds the chunk's sum(u) per lane to usum) and transpose_q4(src, dst) (kLanes rows of 16 bytes ->
// 8 packed quads of nibbles), and tile<Q4, MR>(p, t, i0, j0, nr, g0, g1, c_base, chunks), which
// reads the activations where the quantization left them (lanes_act_offset<K, Q4>, or AVX2 q8's
// ActOrder::wide16 rows). A K may implement only one of q4 / q8.
//
// Everything here has internal linkage: each including file compiles it for its own ISA (AVX2 at
// least).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {
namespace {

constexpr int64_t kSliceChunks = 32;  // 32-element chunks per packed K slice (groups <= 1024)

// How a q8 tile holds w, and which layout the tiles are packed from (see the top).
enum class Q8Pack { offset, pairs16 };
enum class LaneSource { rows, i8x4 };

template <int Lanes, int Quads = 8>
struct LanePack {
  static constexpr int kQuads = Quads;                    // packed quads per 32-element chunk
  alignas(64) uint8_t w[kSliceChunks * Quads][Lanes][4];  // [chunk * Quads + quad][lane][byte]
  alignas(64) float sw[kSliceChunks][Lanes];              // [group in slice][lane]
  // Q8Pack::pairs16: the group's starting sums T - 128 sum(w) of the lane's w (T =
  // wide16_offset(group)), [group in slice][lane].
  alignas(64) int32_t s0[Quads == 16 ? kSliceChunks : 1][Lanes];
};

inline bool lanes_supports(const QuantGemm& p) {
  return p.group % kChunk == 0 && p.group <= kSliceChunks * kChunk;
}

// Byte offset in an activation row of quad t (0..7) of 32-element chunk c: natural order, or
// the even/odd order of permute_blocks_even_odd64.
template <bool EvenOdd>
inline int64_t act_offset(int64_t c, int t) {
  if (!EvenOdd) return 32 * c + 4 * t;
  return 64 * (c >> 1) + 16 * (c & 1) + 4 * t + (t >= 4 ? 16 : 0);
}
// The same for the quads of kernel K: only q4 tiles packed from the rows layout read even/odd.
template <class K, bool Q4>
inline int64_t lanes_act_offset(int64_t c, int t) {
  return act_offset < Q4 && K::kSource == LaneSource::rows > (c, t);
}

inline int32_t load_i32(const int8_t* a) {
  int32_t v;
  std::memcpy(&v, a, 4);
  return v;
}

// The packed byte e (0..3) of quad q of chunk c of weight row `row` (row_bytes bytes, k
// elements): q4 and Q8Pack::offset the byte meeting activation act_offset(c, q) + e; for
// Q8Pack::pairs16 byte e of the two little-endian int16 w meeting activations 32 c + 2 q, + 1.
template <bool Q4, Q8Pack Q8>
inline uint8_t packed_byte(const uint8_t* row, size_t row_bytes, int64_t k, int64_t c, int q,
                           int e) {
  if (!Q4) {
    const int64_t pos =
        Q8 == Q8Pack::pairs16 ? 32 * c + 2 * q + e / 2 : act_offset<false>(c, q) + e;
    if (pos >= k) return 0;  // k padding: the activations are zero
    if (Q8 == Q8Pack::offset) return static_cast<uint8_t>(row[pos] ^ 0x80u);
    return e % 2 == 0 ? static_cast<uint8_t>(row[pos] ^ 0x80u) : 0;  // w + 128, little-endian
  }
  const int64_t pos = act_offset<true>(c, q) + e;
  const int64_t b = pos / 64, r = pos % 64;
  const int64_t byte = 32 * b + (r < 32 ? r : r - 32);
  if (static_cast<size_t>(byte) >= row_bytes) return 0;  // k padding: the activations are zero
  return static_cast<uint8_t>(r < 32 ? row[byte] & 0x0F : row[byte] >> 4);
}

// Chunks [c0, c1) of group g (the last group may end early, with k).
inline void lanes_group_chunks(const QuantGemm& p, int64_t g, int64_t chunks, int64_t* c0,
                               int64_t* c1) {
  *c0 = g * p.group / kChunk;
  const int64_t end = (g + 1) * p.group / kChunk;
  *c1 = end < chunks ? end : chunks;
}

// Q8Pack::pairs16: a group's starting sums T - 128 sum(w) of 8 lanes from their sum(w) (see the
// top).
inline __m256i lanes_s0(int32_t group, __m256i wsum) {
  return _mm256_sub_epi32(_mm256_set1_epi32(wide16_offset(group)), _mm256_slli_epi32(wsum, 7));
}

// Q8Pack::pairs16 from the rows layout: usum (per 8 lanes) += the sums of the int16 pairs u = w +
// 128 of a chunk's 16 packed quads, just written and still in L1 (added as int16: 16 x 255 per
// slot, then one madd), so that the group's starting sums need no second pass over the tile. For
// the row's last, partial chunk; K::transpose_q8 sums whole chunks from its registers.
template <int kLanes>
inline void lanes_chunk_usum(const uint8_t (*quads)[kLanes][4], __m256i* usum) {
  for (int v = 0; v < kLanes / 8; ++v) {
    __m256i s16 = _mm256_load_si256(reinterpret_cast<const __m256i*>(quads[0][8 * v]));
#pragma GCC unroll 16
    for (int q = 1; q < 16; ++q) {
      s16 = _mm256_add_epi16(s16,
                             _mm256_load_si256(reinterpret_cast<const __m256i*>(quads[q][8 * v])));
    }
    usum[v] = _mm256_add_epi32(usum[v], _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
  }
}

// Packs weight rows j0 .. j0 + nr (the rest of the tile zero) over chunks [c0, c1) and the scales
// of groups [g0, g1).
template <class K, bool Q4>
void lanes_pack(const QuantGemm& p, int64_t j0, int nr, int64_t c0, int64_t c1, int64_t g0,
                int64_t g1, typename K::Pack* t) {
  constexpr int kLanes = K::kLanes;
  constexpr int kQuads = Q4 ? 8 : K::Pack::kQuads;
  const size_t rb = p.w_row_bytes;
  constexpr bool kPairs = !Q4 && K::kQ8Pack == Q8Pack::pairs16;
  alignas(64) static constexpr uint8_t kZeros[32] = {};  // the rows past n
  const uint8_t* base = p.w + static_cast<size_t>(j0) * rb;
  __m256i usum[kLanes / 8];  // pairs16: the current group's sum(u) per lane
  for (int v = 0; v < kLanes / 8; ++v) usum[v] = _mm256_setzero_si256();
  // pairs16: after chunk c, the group's starting sums if c ends it (T - 128 sum(w) per lane, sum(w)
  // = sum(u) - 128 * the positions before k: the packing leaves u = 0 past k).
  auto end_chunk = [&](int64_t c, bool summed) {
    if constexpr (kPairs) {
      if (!summed) lanes_chunk_usum<kLanes>(t->w + (c - c0) * kQuads, usum);
      const int64_t g = c * kChunk / p.group;
      if ((c + 1) * kChunk != (g + 1) * p.group && c + 1 != c1) return;
      const int64_t end = (g + 1) * p.group < p.k ? (g + 1) * p.group : p.k;
      const __m256i off = _mm256_set1_epi32(static_cast<int32_t>(128 * (end - g * p.group)));
      for (int v = 0; v < kLanes / 8; ++v) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(t->s0[g - g0] + 8 * v),
                           lanes_s0(p.group, _mm256_sub_epi32(usum[v], off)));
        usum[v] = _mm256_setzero_si256();
      }
    }
  };
  for (int64_t c = c0; c < c1; ++c) {
    uint8_t(*dst)[kLanes][4] = t->w + (c - c0) * kQuads;
    // Bytes of row data the chunk reads: q8 32 from 32c, q4 16 from 32 (c / 2) + 16 (c % 2).
    const size_t off =
        Q4 ? static_cast<size_t>(32 * (c >> 1) + 16 * (c & 1)) : static_cast<size_t>(32 * c);
    if (off + (Q4 ? 16 : 32) <= rb) {
      const uint8_t* src[kLanes];
      if (nr == kLanes) {  // every tile but the last: no test per row
        for (int r = 0; r < kLanes; ++r) src[r] = base + r * rb + off;
      } else {
        for (int r = 0; r < kLanes; ++r) src[r] = r < nr ? base + r * rb + off : kZeros;
      }
      if constexpr (Q4) {
        K::transpose_q4(src, dst);
      } else if constexpr (kPairs) {
        K::transpose_q8(src, dst, usum);  // adds the chunk's sum(u) itself
      } else {
        K::transpose_q8(src, dst);
      }
      end_chunk(c, true);
      continue;
    }
    for (int q = 0; q < kQuads; ++q) {  // the row's last, partial chunk
      for (int r = 0; r < kLanes; ++r) {
        for (int e = 0; e < 4; ++e) {
          dst[q][r][e] = r < nr ? packed_byte<Q4, K::kQ8Pack>(base + r * rb, rb, p.k, c, q, e) : 0;
        }
      }
    }
    end_chunk(c, false);
  }
  // The scales, row by row (contiguous in the rows layout), without a test per scale.
  for (int r = 0; r < kLanes; ++r) {
    const float* sw = p.sw + (j0 + r) * p.groups;
    if (r < nr) {
      for (int64_t g = g0; g < g1; ++g) t->sw[g - g0][r] = sw[g];
    } else {
      for (int64_t g = g0; g < g1; ++g) t->sw[g - g0][r] = 0.f;
    }
  }
}

// Packs the 8x4 layout's tiles of weight rows j0 .. j0 + nr (K::kLanes / 8 layout tiles; a tile
// past n zero) over groups [g0, g1) (see the top). A block is 8 scales, then the group's chunks of
// 8 rows x 4 bytes: one 256-bit load each, no transposes. Rows past n inside the last tile are the
// layout's zero rows.
template <class K, bool Q4>
void lanes_pack_8x4(const QuantGemm& p, int64_t j0, int nr, int64_t g0, int64_t g1,
                    typename K::Pack* t) {
  constexpr int kLanes = K::kLanes;
  constexpr bool kPairs = !Q4 && K::kQ8Pack == Q8Pack::pairs16;
  const int64_t chunks = p.group / (Q4 ? 8 : 4);             // layout chunks per block
  const int64_t quads = Q4 || kPairs ? 2 * chunks : chunks;  // packed quads per group
  const size_t block = 32 + static_cast<size_t>(chunks) * 32;
  const __m256i low4 = _mm256_set1_epi8(0x0F), flip = _mm256_set1_epi8(-128);
  // int16 pairs of 4 rows [r0 (e0 e1) r0 (e2 e3) r1 ..] -> [r0 (e0 e1) .. r3 (e0 e1) | r0 (e2 e3)
  // ..]
  const __m256i pairs = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  for (int lane = 0; lane < kLanes; lane += 8) {
    if (nr <= lane) {  // no layout tile here
      for (int64_t g = g0; g < g1; ++g) {
        std::memset(t->sw[g - g0] + lane, 0, 32);
        if constexpr (kPairs) std::memset(t->s0[g - g0] + lane, 0, 32);
        for (int64_t q = 0; q < quads; ++q) std::memset(t->w[(g - g0) * quads + q][lane], 0, 32);
      }
      continue;
    }
    const uint8_t* tile = p.w + static_cast<size_t>((j0 + lane) / 8) * p.w_tile_bytes;
    for (int64_t g = g0; g < g1; ++g) {
      const uint8_t* b = tile + static_cast<size_t>(g) * block;
      std::memcpy(t->sw[g - g0] + lane, b, 32);
      uint8_t(*dst)[kLanes][4] = t->w + (g - g0) * quads;
      __m256i wsum = _mm256_setzero_si256();  // pairs16: sum(w) per row (lane), padding w = 0
      for (int64_t c = 0; c < chunks; ++c) {
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 + 32 * c));
        if constexpr (kPairs) {
          wsum =
              _mm256_add_epi32(wsum, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), x),
                                                       _mm256_set1_epi16(1)));
        }
        if constexpr (Q4) {
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst[c][lane]), _mm256_and_si256(x, low4));
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst[chunks + c][lane]),
                             _mm256_and_si256(_mm256_srli_epi16(x, 4), low4));
        } else if constexpr (kPairs) {
          const __m256i u = _mm256_xor_si256(x, flip);  // w + 128
          const __m256i lo = _mm256_permutevar8x32_epi32(
              _mm256_cvtepu8_epi16(_mm256_castsi256_si128(u)), pairs);  // rows 0-3
          const __m256i hi = _mm256_permutevar8x32_epi32(
              _mm256_cvtepu8_epi16(_mm256_extracti128_si256(u, 1)), pairs);  // rows 4-7
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst[2 * c][lane]),
                             _mm256_permute2x128_si256(lo, hi, 0x20));
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst[2 * c + 1][lane]),
                             _mm256_permute2x128_si256(lo, hi, 0x31));
        } else {
          _mm256_store_si256(reinterpret_cast<__m256i*>(dst[c][lane]), _mm256_xor_si256(x, flip));
        }
      }
      if constexpr (kPairs) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(t->s0[g - g0] + lane),
                           lanes_s0(p.group, wsum));
      }
    }
  }
}

// The negated correction of activation row i over chunks [c0, c1) (see the top).
template <bool Q4>
inline int32_t lanes_correction(const QuantGemm& p, int64_t i, int64_t c0, int64_t c1) {
  const int32_t* cs = p.csum + i * (p.kpad / kChunk);
  int32_t corr = 0;
  for (int64_t c = c0; c < c1; ++c) corr += cs[c];
  return Q4 ? -corr : -16 * corr;
}

template <class K, bool Q4, int MR>
void lanes_tile_rows(const QuantGemm& p, const typename K::Pack& t, int64_t i0, int64_t j0, int nr,
                     int64_t g0, int64_t g1, int64_t c_base, int64_t chunks, int64_t rows) {
  if constexpr (MR > 1) {
    if (rows < MR) {
      lanes_tile_rows<K, Q4, MR - 1>(p, t, i0, j0, nr, g0, g1, c_base, chunks, rows);
      return;
    }
  }
  K::template tile<Q4, MR>(p, t, i0, j0, nr, g0, g1, c_base, chunks);
}

// Weight tiles outside (one packed slice stays in L1 for every activation tile; 3 tiles a pass,
// sharing each activation tile, measured 2% slower for AVX2 q8 in the 15M model), K slices, then
// activation tiles; a slice after the first continues the sums stored in C.
template <class K, bool Q4>
void lanes_run(const QuantGemm& p) {
  constexpr int kLanes = K::kLanes, kMR = K::rows(Q4);
  typename K::Pack t;
  const int64_t chunks = (p.k + kChunk - 1) / kChunk;
  const int64_t slice_groups = kSliceChunks * kChunk / p.group;
  for (int64_t j0 = 0; j0 < p.n; j0 += kLanes) {
    const int nr = static_cast<int>(p.n - j0 < kLanes ? p.n - j0 : kLanes);
    for (int64_t g0 = 0; g0 < p.groups; g0 += slice_groups) {
      const int64_t g1 = g0 + slice_groups < p.groups ? g0 + slice_groups : p.groups;
      const int64_t c0 = g0 * p.group / kChunk;
      const int64_t c1 = g1 * p.group / kChunk < chunks ? g1 * p.group / kChunk : chunks;
      if constexpr (K::kSource == LaneSource::rows) {
        lanes_pack<K, Q4>(p, j0, nr, c0, c1, g0, g1, &t);
      } else {
        lanes_pack_8x4<K, Q4>(p, j0, nr, g0, g1, &t);
      }
      // The next tile's weights, a few lines per activation tile, so that its packing reads them
      // from L1/L2 (the model's weights come from L3 or DRAM once per prefill).
      const char* next = nullptr;
      int64_t next_lines = 0, per_tile = 0;
      if (g0 == 0 && j0 + kLanes < p.n) {
        const int64_t rows_next = p.n - j0 - kLanes < kLanes ? p.n - j0 - kLanes : kLanes;
        if constexpr (K::kSource == LaneSource::rows) {
          next = reinterpret_cast<const char*>(p.w + (j0 + kLanes) * p.w_row_bytes);
          next_lines = static_cast<int64_t>(rows_next * p.w_row_bytes + 63) / 64;
          // The rows layout keeps the scales apart from the weights: request the next tile's
          // now, so that its packing does not wait for them one line at a time.
          const char* sw = reinterpret_cast<const char*>(p.sw + (j0 + kLanes) * p.groups);
          const char* sw_end = sw + rows_next * p.groups * static_cast<int64_t>(sizeof(float));
          for (; sw < sw_end + 63; sw += 64) _mm_prefetch(sw, _MM_HINT_T0);
        } else {
          next = reinterpret_cast<const char*>(p.w + (j0 + kLanes) / 8 * p.w_tile_bytes);
          next_lines = static_cast<int64_t>((rows_next + 7) / 8 * p.w_tile_bytes + 63) / 64;
        }
        const int64_t tiles = (p.m + kMR - 1) / kMR;
        per_tile = (next_lines + tiles - 1) / tiles;
      }
      for (int64_t i0 = 0, rows = 0; i0 < p.m; i0 += rows) {
        for (int64_t l = 0; l < per_tile && next_lines > 0; ++l, --next_lines, next += 64)
          _mm_prefetch(next, _MM_HINT_T0);
        // The last kMR + r rows with r < kMR / 2 go in two tiles of half that: a tile of r rows
        // leaves most of its registers idle (AVX2 q8: 128 rows = 20 x 6 + 2 x 4, not 21 x 6 + 2).
        const int64_t left = p.m - i0;
        rows = left > kMR && left - kMR < kMR / 2 ? left / 2 : left < kMR ? left : kMR;
        lanes_tile_rows<K, Q4, kMR>(p, t, i0, j0, nr, g0, g1, c0, chunks, rows);
      }
    }
  }
}

}  // namespace
}  // namespace einfer::quant_detail
