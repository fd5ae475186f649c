// AVX2 prefill GEMMs of matmul_f32_quant (m > 1) with one ymm lane per weight row, in tiles of 3
// (q4) or 6 (q8) activation rows x 16 weight rows (two ymm), bit-identical to the scalar int twin
// (gemm_q8_q4_1x1_scalar.cpp): each output gets the exact int32 dot product of each group, then
// acc = acc + float(isum) * (sa * sw), one multiply and one add (compiled without floating-point
// contraction, kernels/CMakeLists.txt), groups in order. The AVX-512 VNNI twin is
// gemm_q8_q4_8x16_avx512vnni.cpp; packing and loops:
// kernels/gemm_quant/x86/gemm_quant_lanes_driver.h.
//
// What the loop costs on Zen 4 (measured, thread CPU time): maddubs, madd, sign, abs and the
// float multiplies issue on 2 pipes; integer adds may use all 4, but an add fed by a madd or
// maddubs takes some of those 2 pipes' slots (8 madds + 8 dependent vpaddd: 5 cycles, not 4; with
// independent adds 4). A float add (vaddps) fed by a madd does not: 8 madds + 8 vaddps in 6 x 16
// tiles run 4.2 cycles.
// - q4: maddubs of the nibbles u <= 15 by a broadcast of 4 activations gives int16 pairs <= 2 *
//   15 * 127 = 3810; a chunk's 8 quads (30480) are summed in int16 and widened once by madd: one
//   maddubs and one add per 32 products, the -8 sum(a) correction per group.
// - q8: w + 128 would saturate maddubs, and an exact int8 x int8 form without VNNI needs two
//   multiply-pipe operations per 32 products (the f32 GEMM: four FMAs). The tile holds u = w + 128
//   as int16, two per lane and quad; the activations come quantized as a + 128 in int16
//   (ActOrder::wide16): one madd per 16 products, every product non-negative. A group's sums
//   start from s0 = T - 128 sum(w) (packed) and end at S; S - (T + 128 sum(a + 128)) (the wide16
//   group sums) is the dot product. So S is a non-negative int32 below 2^24 (chunk_q8), and on AMD
//   (IsaTuning::x86_float_add_accumulate) the madd results are added as floats on their bit
//   patterns, which is exact there: denormals and the lowest binade add like integers. Elsewhere,
//   or with MXCSR flushing denormals, vpaddd. 6 x 16: 12 sums, 2 weight vectors, a broadcast and a
//   temporary fill the 16 registers; 4 x 16 left the float adds' latency exposed (5.1 cycles).
//   GEMM alone (m = 128, 15M shapes, one thread, Zen 4): 135-143 GFLOP/s with float adds against
//   ~105 for the f32 GEMM; before (w sign-extended, a widened per pass, vpaddd, 4 x 16) 132-141.
// Two vectors of weight rows share each activation broadcast (16 lanes measured ~1.35x faster
// than 8 for q4 on Zen 4).
//
// The same tiles read the 8x4 weight layout (gemm_q8_8x4l_6x16_avx2, gemm_q4_8x4l_3x16_avx2, equal
// to the interleaved scalar twin): a layout chunk of 8 rows x 4 bytes is one ymm of the tile, so a
// slice is packed without transposes (q8 widened to int16 pairs, q4 split into nibbles), and q4
// reads the activations in natural order.
#include "kernels/gemm_quant/gemm_quant_internal.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)

#include <immintrin.h>

#include <type_traits>

#include "kernels/gemm_quant/x86/gemm_quant_lanes_driver.h"
#include "kernels/isa/isa.h"

namespace einfer::quant_detail {
namespace {

// 8 rows of 16 words (a ymm each) -> out[d]: word d of rows 0..7 in the low 128-bit lane, word
// d + 8 in the high one. Three rounds of unpacks inside the 128-bit lanes, no lane crossing.
inline void transpose8x16_epi16(const __m256i (&x)[8], __m256i (&out)[8]) {
  __m256i a[8], b[8];
  for (int r = 0; r < 8; r += 2) {
    a[r] = _mm256_unpacklo_epi16(x[r], x[r + 1]);      // words 0-3 (8-11) of rows r, r + 1
    a[r + 1] = _mm256_unpackhi_epi16(x[r], x[r + 1]);  // words 4-7 (12-15)
  }
  for (int h = 0; h < 2; ++h) {  // h: words 0-3 or 4-7 of each lane
    for (int r = 0; r < 8; r += 4) {
      b[4 * h + r / 2] = _mm256_unpacklo_epi32(a[r + h], a[r + 2 + h]);      // 2 words, 4 rows
      b[4 * h + r / 2 + 1] = _mm256_unpackhi_epi32(a[r + h], a[r + 2 + h]);  // the next 2
    }
  }
  for (int h = 0; h < 2; ++h) {
    for (int w = 0; w < 2; ++w) {
      out[4 * h + 2 * w] = _mm256_unpacklo_epi64(b[4 * h + w], b[4 * h + 2 + w]);
      out[4 * h + 2 * w + 1] = _mm256_unpackhi_epi64(b[4 * h + w], b[4 * h + 2 + w]);
    }
  }
}

// V vectors of 8 weight rows, MR activation rows per tile; Quads packed quads per chunk (q4 8, q8
// 16 int16 pairs). Each instance serves one of q4 / q8.
template <int V, int MRows, int Quads, LaneSource S, bool Fadd = false>
struct Avx2Lanes {
  static constexpr bool kFadd = Fadd;                       // q8: float adds of the madd results
  static constexpr int kLanes = 8 * V;                      // weight rows per tile
  static constexpr LaneSource kSource = S;                  // rows (transposed) or 8x4 blocks
  static constexpr Q8Pack kQ8Pack = Q8Pack::pairs16;        // q8 as int16 pairs
  static constexpr int rows(bool /*q4*/) { return MRows; }  // activation rows per tile
  using Pack = LanePack<kLanes, Quads>;

  // kLanes rows of 32 bytes -> 16 quads of two int16 u = w + 128 (quad q: elements 2q, 2q + 1):
  // per 8 rows a transpose of the byte pairs, then each quad widened. usum[v] (8 lanes) += the
  // sums of the quads' int16 pairs (16 x 255 per slot, one madd), for the group's starting sums
  // (lanes_pack), from the registers the stores come from.
  static void transpose_q8(const uint8_t* const* src, uint8_t (*dst)[kLanes][4], __m256i* usum) {
    const __m256i flip = _mm256_set1_epi8(-128);
#pragma GCC unroll 1  // unrolled, GCC interleaved the vectors' transposes and spilled
    for (int v = 0; v < V; ++v) {
      __m256i x[8], y[8];
      for (int r = 0; r < 8; ++r) {  // w + 128
        x[r] = _mm256_xor_si256(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src[8 * v + r])), flip);
      }
      transpose8x16_epi16(x, y);
      __m256i s16 = _mm256_setzero_si256();
      for (int d = 0; d < 8; ++d) {
        const __m256i lo = _mm256_cvtepu8_epi16(_mm256_castsi256_si128(y[d]));       // quad d
        const __m256i hi = _mm256_cvtepu8_epi16(_mm256_extracti128_si256(y[d], 1));  // d + 8
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d][8 * v]), lo);
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d + 8][8 * v]), hi);
        s16 = _mm256_add_epi16(s16, _mm256_add_epi16(lo, hi));
      }
      usum[v] = _mm256_add_epi32(usum[v], _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
    }
  }

  // kLanes rows of 16 bytes -> low nibbles in quads 0-3, high nibbles in quads 4-7: per 8 rows,
  // rows r and r + 4 share a register, a 4 x 4 dword transpose in each 128-bit lane.
  static void transpose_q4(const uint8_t* const* src, uint8_t (*dst)[kLanes][4]) {
    const __m256i m = _mm256_set1_epi8(0x0F);
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      const uint8_t* const* s8 = src + 8 * v;
      __m256i z[4];
      for (int r = 0; r < 4; ++r) {
        z[r] = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s8[r]))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(s8[r + 4])), 1);
      }
      const __m256i t0 = _mm256_unpacklo_epi32(z[0], z[1]), t1 = _mm256_unpackhi_epi32(z[0], z[1]);
      const __m256i t2 = _mm256_unpacklo_epi32(z[2], z[3]), t3 = _mm256_unpackhi_epi32(z[2], z[3]);
      const __m256i q[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                            _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
      for (int d = 0; d < 4; ++d) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d][8 * v]), _mm256_and_si256(q[d], m));
        _mm256_store_si256(reinterpret_cast<__m256i*>(dst[d + 4][8 * v]),
                           _mm256_and_si256(_mm256_srli_epi16(q[d], 4), m));
      }
    }
  }

  // q4: the int32 sums of chunk c (8 packed quads wq) of rows a[0..MR) before the correction: one
  // maddubs per quad on the nibbles, summed in int16 over the chunk (<= 8 * 3810 = 30480, exact),
  // widened once by madd.
  template <int MR>
  static inline __attribute__((always_inline)) void chunk_q4(const uint8_t (*wq)[kLanes][4],
                                                             const int8_t* const* a, int64_t c,
                                                             __m256i (*out)[V]) {
    __m256i lo[MR][V];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) lo[i][v] = _mm256_setzero_si256();
    }
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      __m256i w[V];
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        w[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(wq[q][8 * v]));
      }
      const int64_t off = lanes_act_offset<Avx2Lanes, true>(c, q);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m256i av = _mm256_set1_epi32(load_i32(a[i] + off));
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          lo[i][v] = _mm256_add_epi16(lo[i][v], _mm256_maddubs_epi16(w[v], av));
          // Keep one running sum per row: GCC would otherwise reassociate the adds into a tree
          // over all 8 quads and spill the 8 x MR products to the stack.
          asm("" : "+x"(lo[i][v]));
        }
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) out[i][v] = _mm256_madd_epi16(lo[i][v], _mm256_set1_epi16(1));
    }
  }

  // q8: adds one chunk (16 packed quads of int16 pairs u = w + 128, wq) of the activation rows a +
  // 128 (a[0..MR), at the chunk) to the sums S: one madd per pair of elements, each non-negative.
  // From the group's start T - 128 sum(w) (T = 16384 G), each element adds at most 16384 - 128 w
  // + (w + 128) 255 <= 65153 (w = 127), so S < 2^24 for groups <= 256 and the partial sums only
  // grow: exact in int32, and as floats. kFadd adds the madd results as floats, vaddps on their
  // bit patterns (see IsaTuning::x86_float_add_accumulate).
  template <int MR>
  static inline __attribute__((always_inline)) void chunk_q8(const uint8_t (*wq)[kLanes][4],
                                                             const int16_t* const* a,
                                                             __m256i (*sum)[V]) {
#pragma GCC unroll 16
    for (int q = 0; q < 16; ++q) {
      __m256i w[V];
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        w[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(wq[q][8 * v]));
        asm("" : "+x"(w[v]));  // one load per weight vector, not one per row
      }
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        int32_t pair;
        std::memcpy(&pair, a[i] + 2 * q, 4);
        const __m256i av = _mm256_set1_epi32(pair);
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          const __m256i prod = _mm256_madd_epi16(w[v], av);
          if constexpr (kFadd) {
            sum[i][v] = _mm256_castps_si256(
                _mm256_add_ps(_mm256_castsi256_ps(sum[i][v]), _mm256_castsi256_ps(prod)));
          } else {
            sum[i][v] = _mm256_add_epi32(sum[i][v], prod);
          }
          asm("" : "+x"(sum[i][v]));  // one running sum per row, as in chunk_q4
        }
      }
    }
  }

  // The tile's float sums: zero for the first K slice, else C's (masked to the nr live rows).
  template <int MR>
  static inline __attribute__((always_inline)) void load_acc(const QuantGemm& p, int64_t i0,
                                                             int64_t j0, int64_t g0,
                                                             const __m256i (&cols)[V],
                                                             __m256 (&acc)[MR][V]) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        acc[i][v] = g0 == 0 ? _mm256_setzero_ps()
                            : _mm256_maskload_ps(p.c + (i0 + i) * p.ldc + j0 + 8 * v, cols[v]);
      }
    }
  }
  // C's rows i0 .. i0 + MR, columns j0 .. j0 + nr, from the float sums.
  template <int MR>
  static inline __attribute__((always_inline)) void store_acc(const QuantGemm& p, int64_t i0,
                                                              int64_t j0, int nr,
                                                              const __m256i (&cols)[V],
                                                              const __m256 (&acc)[MR][V]) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {
        float* out = p.c + (i0 + i) * p.ldc + j0 + 8 * v;
        if (nr >= 8 * (v + 1)) {
          _mm256_storeu_ps(out, acc[i][v]);
        } else {
          _mm256_maskstore_ps(out, cols[v], acc[i][v]);
        }
      }
    }
  }
  // cols[v]: all ones in the lanes of live weight rows (< nr).
  static inline void live_lanes(int nr, __m256i (&cols)[V]) {
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      cols[v] = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8 * v),
                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
  }

  // q8: rows i0 .. i0 + MR of the wide16 activations against the packed tile over groups
  // [g0, g1) (chunks from c_base): per group the sums S of chunk_q8 from the packed starts s0, then
  // S - (T + 128 sum(a + 128)) (the wide16 group sums) is the exact dot product, and the float
  // step is the twin's.
  template <int MR>
  static __attribute__((noinline)) void tile_q8(const QuantGemm& p, const Pack& t, int64_t i0,
                                                int64_t j0, int nr, int64_t g0, int64_t g1,
                                                int64_t c_base, int64_t chunks) {
    __m256i cols[V];
    live_lanes(nr, cols);
    __m256 acc[MR][V];
    load_acc<MR>(p, i0, j0, g0, cols, acc);
    const int64_t stride16 = wide16_stride(p.kpad), gstride = p.kpad / kChunk;
    const int16_t* a = reinterpret_cast<const int16_t*>(p.qa) + i0 * stride16 + c_base * kChunk;
    const int32_t* gsum = p.csum + i0 * gstride;
    const float* sa = p.sa + i0 * p.groups;
    const uint8_t(*w)[kLanes][4] = t.w;
    for (int64_t g = g0; g < g1; ++g) {
      int64_t c0 = 0, c1 = 0;
      lanes_group_chunks(p, g, chunks, &c0, &c1);
      const int64_t gi = g - g0;
      __m256i sum[MR][V];
#pragma GCC unroll 8
      for (int v = 0; v < V; ++v) {  // T - 128 sum(w) (see the top)
        const __m256i s0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.s0[gi] + 8 * v));
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) sum[i][v] = s0;
      }
      for (int64_t c = c0; c < c1; ++c) {
        const int16_t* ar[MR];
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) ar[i] = a + i * stride16;
        chunk_q8<MR>(w, ar, sum);
        w += Quads;
        a += kChunk;
      }
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m256i ca = _mm256_set1_epi32(gsum[i * gstride + g]);  // T + 128 sum(a + 128)
        const __m256 sai = _mm256_set1_ps(sa[i * p.groups + g]);
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          const __m256 d = _mm256_cvtepi32_ps(_mm256_sub_epi32(sum[i][v], ca));
          const __m256 prod = _mm256_mul_ps(sai, _mm256_load_ps(t.sw[gi] + 8 * v));
          acc[i][v] = _mm256_add_ps(acc[i][v], _mm256_mul_ps(d, prod));
        }
      }
    }
    store_acc<MR>(p, i0, j0, nr, cols, acc);
  }

  // Rows i0 .. i0 + MR against the packed tile over groups [g0, g1) (chunks from c_base).
  template <bool Q4, int MR>
  static __attribute__((noinline)) void tile(const QuantGemm& p, const Pack& t, int64_t i0,
                                             int64_t j0, int nr, int64_t g0, int64_t g1,
                                             int64_t c_base, int64_t chunks) {
    if constexpr (!Q4) {
      tile_q8<MR>(p, t, i0, j0, nr, g0, g1, c_base, chunks);
    } else {
      tile_q4<MR>(p, t, i0, j0, nr, g0, g1, c_base, chunks);
    }
  }

  // q4: rows i0 .. i0 + MR (int8, in place) against the packed tile over groups [g0, g1).
  template <int MR>
  static __attribute__((noinline)) void tile_q4(const QuantGemm& p, const Pack& t, int64_t i0,
                                                int64_t j0, int nr, int64_t g0, int64_t g1,
                                                int64_t c_base, int64_t chunks) {
    __m256i cols[V];
    live_lanes(nr, cols);
    __m256 acc[MR][V];
    load_acc<MR>(p, i0, j0, g0, cols, acc);
    const int8_t* a[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) a[i] = p.qa + (i0 + i) * p.kpad;
    for (int64_t g = g0; g < g1; ++g) {
      int64_t c0 = 0, c1 = 0;
      lanes_group_chunks(p, g, chunks, &c0, &c1);
      __m256i isum[MR][V];
      chunk_q4<MR>(t.w + (c0 - c_base) * Quads, a, c0, isum);
      for (int64_t c = c0 + 1; c < c1; ++c) {  // groups of more than 32
        __m256i part[MR][V];
        chunk_q4<MR>(t.w + (c - c_base) * Quads, a, c, part);
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
          for (int v = 0; v < V; ++v) isum[i][v] = _mm256_add_epi32(isum[i][v], part[i][v]);
        }
      }
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m256i corr =
            _mm256_set1_epi32(lanes_correction<true>(p, i0 + i, c0, c1));  // -8 sum(a)
        const __m256 sa = _mm256_set1_ps(p.sa[(i0 + i) * p.groups + g]);
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
          const __m256 prod = _mm256_mul_ps(sa, _mm256_load_ps(t.sw[g - g0] + 8 * v));
          const __m256 d = _mm256_cvtepi32_ps(_mm256_add_epi32(isum[i][v], corr));
          acc[i][v] = _mm256_add_ps(acc[i][v], _mm256_mul_ps(d, prod));
        }
      }
    }
    store_acc<MR>(p, i0, j0, nr, cols, acc);
  }
};

// q4: 3 rows x 16 weight rows: 2 x 3 int16 sums, 2 x 3 float sums, 2 weight vectors, 1 broadcast.
template <LaneSource S>
using Avx2TileQ4 = Avx2Lanes<2, 3, 8, S>;
// q8: 6 rows x 16 weight rows of int16 pairs: 2 x 6 sums in registers, the float sums in memory
// (see the top).
template <LaneSource S, bool Fadd>
using Avx2TileQ8 = Avx2Lanes<2, 6, 16, S, Fadd>;

// q8 adds its madd results as floats when the tuning says so, the group's sums stay below 2^24
// (<= 256, chunk_q8) and MXCSR keeps denormals (neither DAZ nor FTZ); else as integers.
template <LaneSource S>
void run_q8(const QuantGemm& p) {
  if (p.group <= 256 && (_mm_getcsr() & 0x8040u) == 0 &&
      isa_tuning_enabled(IsaTuning::x86_float_add_accumulate)) {
    lanes_run<Avx2TileQ8<S, true>, false>(p);
  } else {
    lanes_run<Avx2TileQ8<S, false>, false>(p);
  }
}
}  // namespace

bool gemm_3x16_avx2_supports(const QuantGemm& p) {
  return lanes_supports(p);
}
void gemm_q8_6x16_avx2(const QuantGemm& p) {
  run_q8<LaneSource::rows>(p);
}
void gemm_q4_3x16_avx2(const QuantGemm& p) {
  lanes_run<Avx2TileQ4<LaneSource::rows>, true>(p);
}
void gemm_q8_8x4l_6x16_avx2(const QuantGemm& p) {
  run_q8<LaneSource::i8x4>(p);
}
void gemm_q4_8x4l_3x16_avx2(const QuantGemm& p) {
  lanes_run<Avx2TileQ4<LaneSource::i8x4>, true>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_SIMD && __AVX2__
