// Fused attention: per query and kv head, an online softmax over key tiles aligned to absolute
// positions, with the kv head's H/G query heads processed together (see kernels/attention.h).
#include "kernels/attention.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <atomic>
#include <cmath>
#include <cstring>

#include "kernels/attention_i8_rows.h"
#include "kernels/simd.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)
#include <immintrin.h>
#endif

namespace einfer {

namespace {

constexpr int32_t kTile = kAttentionKeyTile;
constexpr int kHeadBlock = 4;  // query heads whose scores / accumulators are computed together
// A kv head's rows sit one after another in the cache, so while a row is used the bytes this far
// past it are requested (into all cache levels): decode is bound by how fast K/V arrive, and at
// tile boundaries, where the kernel switches between the K and V streams, the hardware
// prefetchers alone fall behind. 8 KB measured best of 1-32 KB on the AMD EPYC dev host
// (override with -DEINFER_ATTN_PREFETCH_BYTES=...; 0 disables).
#ifndef EINFER_ATTN_PREFETCH_BYTES
#define EINFER_ATTN_PREFETCH_BYTES 8192
#endif
constexpr size_t kPrefetchBytes = EINFER_ATTN_PREFETCH_BYTES;

inline void prefetch_ahead(const void* row, size_t row_bytes) {
  if constexpr (kPrefetchBytes > 0) {
    const char* p = static_cast<const char*>(row) + kPrefetchBytes;
    for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b, 0, 3);
  }
}

size_t align64(size_t n) {
  return (n + 63) & ~size_t(63);
}

// Carves the scratch buffer; the same function sizes it (base == nullptr) and lays it out.
// Cache rows are read in place (row pointers only): no staging copy costs bandwidth.
struct ScratchLayout {
  float* acc = nullptr;            // [r][k] running numerators
  float* run_max = nullptr;        // [r]
  float* run_sum = nullptr;        // [r]
  float* scores = nullptr;         // [r][kTile] scores, then probabilities of the current tile
  const float** krow = nullptr;    // [kTile] f32 rows (the block's keys, or an f32 cache)
  const float** vrow = nullptr;    // [kTile]
  const int8_t** k8row = nullptr;  // [kTile] i8 cache rows (always a prefix of the tile)
  const int8_t** v8row = nullptr;  // [kTile]
  float* kscale = nullptr;         // [kTile] i8 row scales (1 for f32 rows)
  float* vscale = nullptr;         // [kTile]
  int16_t* q16 = nullptr;          // [r][k] the query quantized for integer dots with i8 keys
  float* q16_scale = nullptr;      // [r]
  int32_t* p16 = nullptr;          // [r][kTile/2] int16 weight pairs for int8 V rows
  float* p16_scale = nullptr;      // [r]
  bool vnni = false;               // int8 integer dots via AVX-VNNI (chosen per call)
  size_t bytes = 0;

  ScratchLayout(void* base, int32_t r, int32_t k) {
    unsigned char* b = static_cast<unsigned char*>(base);
    size_t off = 0;
    auto take = [&](size_t n) -> void* {
      void* p = b ? b + off : nullptr;
      off += align64(n);
      return p;
    };
    const size_t rs = static_cast<size_t>(r), ks = static_cast<size_t>(k), ts = kTile;
    acc = static_cast<float*>(take(rs * ks * sizeof(float)));
    run_max = static_cast<float*>(take(rs * sizeof(float)));
    run_sum = static_cast<float*>(take(rs * sizeof(float)));
    scores = static_cast<float*>(take(rs * ts * sizeof(float)));
    krow = static_cast<const float**>(take(ts * sizeof(float*)));
    vrow = static_cast<const float**>(take(ts * sizeof(float*)));
    k8row = static_cast<const int8_t**>(take(ts * sizeof(int8_t*)));
    v8row = static_cast<const int8_t**>(take(ts * sizeof(int8_t*)));
    kscale = static_cast<float*>(take(ts * sizeof(float)));
    vscale = static_cast<float*>(take(ts * sizeof(float)));
    q16 = static_cast<int16_t*>(take(rs * ks * sizeof(int16_t)));
    q16_scale = static_cast<float*>(take(rs * sizeof(float)));
    p16 = static_cast<int32_t*>(take(rs * (ts / 2) * sizeof(int32_t)));
    p16_scale = static_cast<float*>(take(rs * sizeof(float)));
    bytes = off + 64;  // + room to align an unaligned scratch pointer
  }
};

// ---- microkernels -------------------------------------------------------------------------------
// Bit-exactness contract: every (head, key) score and every (head, element) accumulator sees the
// same sequence of float operations whatever the blocking (which heads or keys share a call), so
// results do not depend on where a key sits in a block. Hence: SIMD lanes are reduced by one fixed
// pairwise tree, and scalar tails go through single non-inlined helpers (one contraction choice).

__attribute__((noinline)) float dot_tail_f32(const float* a, const float* b, int32_t d0, int32_t n,
                                             float acc) {
  for (int32_t d = d0; d < n; ++d) acc += a[d] * b[d];
  return acc;
}

// y[d] += w * x[d] for d in [d0, n).
__attribute__((noinline)) void axpy_tail_f32(float w, const float* x, int32_t d0, int32_t n,
                                             float* y) {
  for (int32_t d = d0; d < n; ++d) y[d] += w * x[d];
}

// The int8 row kernels (attention_i8_rows.h: scalar, or Helium / SIMD32 on Cortex-M).
[[maybe_unused]] inline void axpy_tail_i8(float w, const int8_t* x, int32_t d0, int32_t n,
                                          float* y) {
  attention_detail::attention_axpy_f32_i8(w, x + d0, n - d0, y + d0);
}

inline int32_t dot_tail_i16_i8(const int16_t* a, const int8_t* b, int32_t d0, int32_t n,
                               int32_t acc) {
  return attention_detail::attention_dot_i16_i8(a + d0, b + d0, n - d0, acc);
}

#if EINFER_HAS_SIMD
using Batch = xsimd::batch<float>;
constexpr int32_t kLanes = static_cast<int32_t>(Batch::size);

// Sum of the lanes by the fixed pairwise tree ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
inline float hsum_tree(const Batch& v) {
  alignas(64) float l[kLanes];
  v.store_aligned(l);
  for (int32_t w = 1; w < kLanes; w *= 2)
    for (int32_t i = 0; i < kLanes; i += 2 * w) l[i] = l[i] + l[i + w];
  return l[0];
}

// out[i] = hsum_tree(v_i) for 8 vectors; on AVX2 a transpose-reduce with the same tree.
inline void hsum_tree8(Batch v0, Batch v1, Batch v2, Batch v3, Batch v4, Batch v5, Batch v6,
                       Batch v7, float* out) {
#if defined(__AVX2__)
  if constexpr (kLanes == 8) {
    const __m256 ab = _mm256_hadd_ps(v0, v1), cd = _mm256_hadd_ps(v2, v3);
    const __m256 ef = _mm256_hadd_ps(v4, v5), gh = _mm256_hadd_ps(v6, v7);
    const __m256 abcd = _mm256_hadd_ps(ab, cd), efgh = _mm256_hadd_ps(ef, gh);
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_permute2f128_ps(abcd, efgh, 0x20),
                                        _mm256_permute2f128_ps(abcd, efgh, 0x31)));
    return;
  }
#endif
  const Batch v[8] = {v0, v1, v2, v3, v4, v5, v6, v7};
  for (int i = 0; i < 8; ++i) out[i] = hsum_tree(v[i]);
}
#endif

// out[h * out_stride + j] = dot(q + h*k, krow[j]) for RB heads and KB keys; q and K are read once
// per block, the RB*KB products accumulate in registers.
template <int RB, int KB>
inline void f32_dots_RBxKB(const float* q, const float* const* krow, int32_t k, float* out,
                           int32_t out_stride) {
  float acc[RB * KB];
  int32_t d = 0;
  for (int j = 0; j < KB; ++j) prefetch_ahead(krow[j], static_cast<size_t>(k) * sizeof(float));
#if EINFER_HAS_SIMD
  Batch a[RB * KB];
#pragma GCC unroll 8
  for (int i = 0; i < RB * KB; ++i) a[i] = Batch(0.f);
  for (; d + kLanes <= k; d += kLanes) {
    Batch kv[KB];
#pragma GCC unroll 8
    for (int j = 0; j < KB; ++j) kv[j] = Batch::load_unaligned(krow[j] + d);
#pragma GCC unroll 8
    for (int h = 0; h < RB; ++h) {
      const Batch qv = Batch::load_unaligned(q + h * k + d);
#pragma GCC unroll 8
      for (int j = 0; j < KB; ++j) a[h * KB + j] = xsimd::fma(qv, kv[j], a[h * KB + j]);
    }
  }
  if constexpr (RB * KB == 8) {
    hsum_tree8(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], acc);
  } else {
    for (int i = 0; i < RB * KB; ++i) acc[i] = hsum_tree(a[i]);
  }
#else
  for (int i = 0; i < RB * KB; ++i) acc[i] = 0.f;
#endif
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) {
      const float s =
          d < k ? dot_tail_f32(q + h * k, krow[j], d, k, acc[h * KB + j]) : acc[h * KB + j];
      out[h * out_stride + j] = s;
    }
}

#if EINFER_HAS_SIMD && defined(__AVX2__)
// acc + madd(a, b): int16 pairs multiplied and summed into int32 lanes. With AVX-VNNI one
// vpdpwssd (non-saturating, so the same exact int32 sums as vpmaddwd + vpaddd: both paths give
// bit-identical results). Inline asm, not the intrinsic: the build targets x86-64-v3, and this
// keeps the rest of the code free of VNNI; only called when the CPU reports AVX-VNNI.
template <bool kVnni>
inline __m256i madd_acc(__m256i acc, __m256i a, __m256i b) {
  if constexpr (kVnni) {
    asm("%{vex%} vpdpwssd %2, %1, %0" : "+x"(acc) : "x"(a), "x"(b));
    return acc;
  } else {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
  }
}
#endif

// Integer dots of the int16 query against int8 keys (exact, so any order): out = isum * q_scale.
template <int RB, int KB, bool kVnni>
inline void i8_dots_RBxKB(const int16_t* q16, const float* q_scale, const int8_t* const* krow,
                          int32_t k, float* out, int32_t out_stride) {
  int32_t acc[RB * KB];
  int32_t d = 0;
  for (int j = 0; j < KB; ++j) prefetch_ahead(krow[j], static_cast<size_t>(k));
#if EINFER_HAS_SIMD && defined(__AVX2__)
  __m256i a[RB * KB];
#pragma GCC unroll 8
  for (int i = 0; i < RB * KB; ++i) a[i] = _mm256_setzero_si256();
  for (; d + 16 <= k; d += 16) {
    __m256i kv[KB];
#pragma GCC unroll 8
    for (int j = 0; j < KB; ++j)
      kv[j] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(krow[j] + d)));
#pragma GCC unroll 8
    for (int h = 0; h < RB; ++h) {
      const __m256i qv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q16 + h * k + d));
#pragma GCC unroll 8
      for (int j = 0; j < KB; ++j) a[h * KB + j] = madd_acc<kVnni>(a[h * KB + j], qv, kv[j]);
    }
  }
  if constexpr (RB * KB == 8) {
    const __m256i ab = _mm256_hadd_epi32(a[0], a[1]), cd = _mm256_hadd_epi32(a[2], a[3]);
    const __m256i ef = _mm256_hadd_epi32(a[4], a[5]), gh = _mm256_hadd_epi32(a[6], a[7]);
    const __m256i abcd = _mm256_hadd_epi32(ab, cd), efgh = _mm256_hadd_epi32(ef, gh);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc),
                        _mm256_add_epi32(_mm256_permute2x128_si256(abcd, efgh, 0x20),
                                         _mm256_permute2x128_si256(abcd, efgh, 0x31)));
  } else {
    for (int i = 0; i < RB * KB; ++i) {
      alignas(32) int32_t l[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(l), a[i]);
      acc[i] = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    }
  }
#else
  for (int i = 0; i < RB * KB; ++i) acc[i] = 0;
#endif
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) {
      const int32_t s =
          d < k ? dot_tail_i16_i8(q16 + h * k, krow[j], d, k, acc[h * KB + j]) : acc[h * KB + j];
      out[h * out_stride + j] = static_cast<float>(s) * q_scale[h];
    }
}

// acc[h][:] += p[h * p_stride + j] * vrow[j][:] for RB heads over keys [j0, j1), one V row pair
// at a time: the rows are read in order (sequential memory), the 2*RB weights stay in registers
// and the accumulators (r*k floats, L1-resident) are loaded and stored once per pair.
template <int RB>
inline void f32_accumulate_v_RB(const float* p, int32_t p_stride, const float* const* vrow,
                                int32_t j0, int32_t j1, int32_t k, float* acc) {
  int32_t kv = 0;
#if EINFER_HAS_SIMD
  kv = k - k % kLanes;
  int32_t j = j0;
  for (; j + 2 <= j1; j += 2) {
    Batch w0[RB], w1[RB];
    for (int h = 0; h < RB; ++h) {
      w0[h] = Batch(p[h * p_stride + j]);
      w1[h] = Batch(p[h * p_stride + j + 1]);
    }
    const float* v0 = vrow[j];
    const float* v1 = vrow[j + 1];
    prefetch_ahead(v0, static_cast<size_t>(k) * sizeof(float));
    prefetch_ahead(v1, static_cast<size_t>(k) * sizeof(float));
    for (int32_t d = 0; d < kv; d += kLanes) {
      const Batch x0 = Batch::load_unaligned(v0 + d), x1 = Batch::load_unaligned(v1 + d);
      for (int h = 0; h < RB; ++h) {
        Batch a = Batch::load_unaligned(acc + h * k + d);
        a = xsimd::fma(w0[h], x0, a);
        a = xsimd::fma(w1[h], x1, a);
        a.store_unaligned(acc + h * k + d);
      }
    }
  }
  for (; j < j1; ++j) {
    const float* v0 = vrow[j];
    for (int32_t d = 0; d < kv; d += kLanes) {
      const Batch x0 = Batch::load_unaligned(v0 + d);
      for (int h = 0; h < RB; ++h) {
        Batch a = Batch::load_unaligned(acc + h * k + d);
        xsimd::fma(Batch(p[h * p_stride + j]), x0, a).store_unaligned(acc + h * k + d);
      }
    }
  }
#endif
  if (kv < k) {
    for (int32_t j = j0; j < j1; ++j)
      for (int h = 0; h < RB; ++h) axpy_tail_f32(p[h * p_stride + j], vrow[j], kv, k, acc + h * k);
  }
}

// The same for int8 rows on targets without the AVX2 integer path (NEON, scalar): each row is
// widened to float element by element (the row scale is folded into p).
template <int RB>
inline void i8_accumulate_v_RB(const float* p, int32_t p_stride, const int8_t* const* vrow,
                               int32_t j0, int32_t j1, int32_t k, float* acc) {
  for (int32_t j = j0; j < j1; ++j)
    for (int h = 0; h < RB; ++h) axpy_tail_i8(p[h * p_stride + j], vrow[j], 0, k, acc + h * k);
}

// ---- one tile -----------------------------------------------------------------------------------

// A tile's rows: i8 cache rows [0, n8) (k8row/v8row), then f32 rows [n8, cnt) (krow/vrow).
struct TileRows {
  int32_t n8 = 0;
  int32_t cnt = 0;
};

template <int RB, bool kVnni>
void i8_tile_scores(const ScratchLayout& s, int32_t h0, int32_t k, int32_t n8, float* sc) {
  int32_t j = 0;
  for (; j + 2 <= n8; j += 2)
    i8_dots_RBxKB<RB, 2, kVnni>(s.q16 + h0 * k, s.q16_scale + h0, s.k8row + j, k, sc + j, kTile);
  for (; j < n8; ++j)
    i8_dots_RBxKB<RB, 1, kVnni>(s.q16 + h0 * k, s.q16_scale + h0, s.k8row + j, k, sc + j, kTile);
}

template <int RB>
void tile_scores(const float* q, const ScratchLayout& s, int32_t h0, int32_t k, TileRows t) {
  float* sc = s.scores + h0 * kTile;
  if (s.vnni) {
    i8_tile_scores<RB, true>(s, h0, k, t.n8, sc);
  } else {
    i8_tile_scores<RB, false>(s, h0, k, t.n8, sc);
  }
  int32_t j = t.n8;
  for (; j + 2 <= t.cnt; j += 2) f32_dots_RBxKB<RB, 2>(q + h0 * k, s.krow + j, k, sc + j, kTile);
  for (; j < t.cnt; ++j) f32_dots_RBxKB<RB, 1>(q + h0 * k, s.krow + j, k, sc + j, kTile);
}

#if EINFER_HAS_SIMD && defined(__AVX2__)
// Integer V mixing for int8 rows: each head's weights p (row scales folded in) over the tile's
// int8 rows [0, n) are quantized to int16 with one scale per (tile, head) and packed in pairs,
// so one madd multiplies two rows at once; int32 sums cannot overflow (|p16| <= 32767,
// |v| <= 128, at most kTile rows). Exact integer sums, so the order of rows is free.
static_assert(int64_t(kTile) * 32767 * 128 < (int64_t(1) << 31), "int8 V sums overflow");

template <int RB>
void i8_quantize_weights_RB(const float* p, int32_t p_stride, int32_t n, int32_t* p16,
                            float* p16_scale) {
  for (int h = 0; h < RB; ++h) {
    const float* ph = p + h * p_stride;
    int32_t* out = p16 + h * (kTile / 2);
    __m256 vm = _mm256_setzero_ps();  // weights are >= 0
    int32_t j = 0;
    for (; j + 8 <= n; j += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(ph + j));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, vm);
    float m = 0.f;
    for (int l = 0; l < 8; ++l) m = lanes[l] > m ? lanes[l] : m;
    for (; j < n; ++j) m = ph[j] > m ? ph[j] : m;
    const float inv = m > 0.f ? 32767.f / m : 0.f;
    p16_scale[h] = m / 32767.f;
    const __m256 vinv = _mm256_set1_ps(inv);
    j = 0;
    for (; j + 16 <= n; j += 16) {  // packs gives (j, j+1) int16 pairs as int32 words
      const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(ph + j), vinv));
      const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(ph + j + 8), vinv));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j / 2),
                          _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8));
    }
    for (; j < n; j += 2) {
      const int32_t lo = static_cast<int32_t>(ph[j] * inv + 0.5f);
      const int32_t hi = j + 1 < n ? static_cast<int32_t>(ph[j + 1] * inv + 0.5f) : 0;
      out[j / 2] = (lo & 0xFFFF) | (hi << 16);
    }
  }
}

// acc[h][:] += p16_scale[h] * sum_j p16[h][j] * vrow[j][:] over rows [0, n), 16 columns at a
// time with the 2*RB int32 accumulators in registers across all rows (the int8 tile is small
// enough to stay in L1 between column blocks; the first column block prefetches ahead).
template <int RB, bool kVnni>
void i8_accumulate_v_int_RB(const int32_t* p16, const float* p16_scale, const int8_t* const* vrow,
                            int32_t n, int32_t k, float* acc) {
  int32_t d = 0;
  const int32_t n_even = n & ~1;
  for (; d + 16 <= k; d += 16) {
    __m256i alo[RB], ahi[RB];
    for (int h = 0; h < RB; ++h) alo[h] = ahi[h] = _mm256_setzero_si256();
    auto mix_pair = [&](__m256i a, __m256i b, int32_t pair) {
      // Interleaved (row j, row j+1) pairs: columns 0-3, 8-11 (lo) and 4-7, 12-15 (hi).
      const __m256i lo = _mm256_unpacklo_epi16(a, b), hi = _mm256_unpackhi_epi16(a, b);
#pragma GCC unroll 4
      for (int h = 0; h < RB; ++h) {
        const __m256i w = _mm256_set1_epi32(p16[h * (kTile / 2) + pair]);
        alo[h] = madd_acc<kVnni>(alo[h], lo, w);
        ahi[h] = madd_acc<kVnni>(ahi[h], hi, w);
      }
    };
    auto load16 = [&](int32_t j) {
      return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(vrow[j] + d)));
    };
    if (d == 0) {
      for (int32_t j = 0; j < n; ++j) prefetch_ahead(vrow[j], static_cast<size_t>(k));
    }
    for (int32_t j = 0; j < n_even; j += 2) mix_pair(load16(j), load16(j + 1), j / 2);
    if (n_even < n) {
      const __m256i a = load16(n_even);
      mix_pair(a, a, n_even / 2);  // the odd row's partner weight is 0
    }
    for (int h = 0; h < RB; ++h) {
      const __m256 flo = _mm256_cvtepi32_ps(alo[h]), fhi = _mm256_cvtepi32_ps(ahi[h]);
      const __m256 sc = _mm256_set1_ps(p16_scale[h]);
      float* ah = acc + h * k + d;
      _mm256_storeu_ps(
          ah, _mm256_fmadd_ps(sc, _mm256_permute2f128_ps(flo, fhi, 0x20), _mm256_loadu_ps(ah)));
      _mm256_storeu_ps(ah + 8, _mm256_fmadd_ps(sc, _mm256_permute2f128_ps(flo, fhi, 0x31),
                                               _mm256_loadu_ps(ah + 8)));
    }
  }
  for (; d < k; ++d) {
    for (int h = 0; h < RB; ++h) {
      int32_t sum = 0;
      for (int32_t j = 0; j < n; ++j) {
        const int32_t pair = p16[h * (kTile / 2) + j / 2];
        const int32_t w = (j & 1) ? (pair >> 16) : static_cast<int16_t>(pair & 0xFFFF);
        sum += w * vrow[j][d];
      }
      acc[h * k + d] += p16_scale[h] * static_cast<float>(sum);
    }
  }
}
#endif

template <int RB>
void tile_accumulate(const ScratchLayout& s, int32_t h0, int32_t k, TileRows t) {
  const float* p = s.scores + h0 * kTile;
  float* acc = s.acc + h0 * k;
  if (t.n8 > 0) {
#if EINFER_HAS_SIMD && defined(__AVX2__)
    i8_quantize_weights_RB<RB>(p, kTile, t.n8, s.p16 + h0 * (kTile / 2), s.p16_scale + h0);
    if (s.vnni) {
      i8_accumulate_v_int_RB<RB, true>(s.p16 + h0 * (kTile / 2), s.p16_scale + h0, s.v8row, t.n8, k,
                                       acc);
    } else {
      i8_accumulate_v_int_RB<RB, false>(s.p16 + h0 * (kTile / 2), s.p16_scale + h0, s.v8row, t.n8,
                                        k, acc);
    }
#else
    i8_accumulate_v_RB<RB>(p, kTile, s.v8row, 0, t.n8, k, acc);
#endif
  }
  if (t.cnt > t.n8) f32_accumulate_v_RB<RB>(p, kTile, s.vrow, t.n8, t.cnt, k, acc);
}

template <int RB>
void tile_heads(const float* q, const ScratchLayout& s, int32_t h0, int32_t k, TileRows t,
                bool scores) {
  if (scores) {
    tile_scores<RB>(q, s, h0, k, t);
  } else {
    tile_accumulate<RB>(s, h0, k, t);
  }
}

// Turns head h's scores into probabilities (times the V row scales) and updates its running max,
// sum and accumulator. Fixed operation order for a given cnt.
void tile_softmax(const ScratchLayout& s, int32_t h, int32_t k, float scale, int32_t cnt) {
  float* sh = s.scores + h * kTile;
  float tile_max = -INFINITY;
  int32_t i = 0;
#if EINFER_HAS_SIMD
  const Batch sv(scale);
  Batch vmax(-INFINITY);
  for (; i + kLanes <= cnt; i += kLanes) {
    const Batch x = Batch::load_unaligned(sh + i) * Batch::load_unaligned(s.kscale + i) * sv;
    x.store_unaligned(sh + i);
    vmax = xsimd::max(vmax, x);
  }
  alignas(64) float lanes[kLanes];
  vmax.store_aligned(lanes);
  for (int32_t l = 0; l < kLanes; ++l) tile_max = lanes[l] > tile_max ? lanes[l] : tile_max;
#endif
  for (; i < cnt; ++i) {
    sh[i] = sh[i] * s.kscale[i] * scale;
    tile_max = sh[i] > tile_max ? sh[i] : tile_max;
  }
  const float new_max = tile_max > s.run_max[h] ? tile_max : s.run_max[h];
  i = 0;
  float tile_sum = 0.f;
#if EINFER_HAS_SIMD
  const Batch mv(new_max);
  Batch sum(0.f);
  for (; i + kLanes <= cnt; i += kLanes) {
    const Batch e = xsimd::exp(Batch::load_unaligned(sh + i) - mv);
    sum += e;
    (e * Batch::load_unaligned(s.vscale + i)).store_unaligned(sh + i);  // V row scales folded in
  }
  tile_sum = hsum_tree(sum);
#endif
  for (; i < cnt; ++i) {
    const float e = std::exp(sh[i] - new_max);
    tile_sum += e;
    sh[i] = e * s.vscale[i];
  }
  if (new_max != s.run_max[h]) {
    const float alpha = std::exp(s.run_max[h] - new_max);  // 0 on the first tile (max was -inf)
    s.run_sum[h] *= alpha;
    float* ah = s.acc + h * k;
    for (int32_t d = 0; d < k; ++d) ah[d] *= alpha;
    s.run_max[h] = new_max;
  }
  s.run_sum[h] += tile_sum;
}

void for_head_blocks(const float* q, const ScratchLayout& s, int32_t r, int32_t k, TileRows t,
                     bool scores) {
  int32_t h = 0;
  for (; h + kHeadBlock <= r; h += kHeadBlock) tile_heads<kHeadBlock>(q, s, h, k, t, scores);
  const int32_t rest = r - h;
  if (rest == 3) tile_heads<3>(q, s, h, k, t, scores);
  if (rest == 2) tile_heads<2>(q, s, h, k, t, scores);
  if (rest == 1) tile_heads<1>(q, s, h, k, t, scores);
}

void attend_tile(const float* q, int32_t r, int32_t k, float scale, const ScratchLayout& s,
                 TileRows t) {
  for_head_blocks(q, s, r, k, t, true);
  for (int32_t h = 0; h < r; ++h) tile_softmax(s, h, k, scale, t.cnt);
  for_head_blocks(q, s, r, k, t, false);
}

// ---- small heads (head_dim a multiple of the SIMD width, at most 16) ----------------------------
// With 8-16 floats per row the general tile's per-call costs (pointer-block microkernels, scalar
// reductions, accumulators reloaded per key pair) outweigh the arithmetic. Here a key row is one
// or two vectors: 8 keys' scores come from one transpose-reduce, and each head's accumulator
// stays in registers for the whole tile. Only f32 rows (an int8 cache takes the general path).
// Operation order per (head, key) and per tile is fixed by the tile's row list, as above.
#if EINFER_HAS_SIMD
constexpr int32_t kSmallMaxHeadDim = 16;

bool small_head_path(int32_t k, const KVLayerView* cache, int64_t pos0) {
  const bool i8_rows = cache != nullptr && cache->dtype == DType::i8 && pos0 > 0;
  // Exactly the vector counts small_attend_tile is instantiated for (1, 2, 4): the rows are
  // gathered differently for this path, so the predicate and the dispatch must agree (head_dim 12
  // on 4-lane NEON is 3 vectors and takes the general path).
  const int32_t vectors = k / kLanes;
  return !i8_rows && k % kLanes == 0 && k <= kSmallMaxHeadDim &&
         (vectors == 1 || vectors == 2 || vectors == 4);
}

// score = hsum_tree(sum over vectors v of q_v * k_v), vectors accumulated in index order.
template <int KV>
inline Batch small_products(const float* q, const float* krow) {
  Batch a = Batch::load_unaligned(q) * Batch::load_unaligned(krow);
#pragma GCC unroll 4
  for (int v = 1; v < KV; ++v)
    a = xsimd::fma(Batch::load_unaligned(q + v * kLanes), Batch::load_unaligned(krow + v * kLanes),
                   a);
  return a;
}

template <int KV>
void small_tile_scores(const float* qh, const float* const* krow, int32_t cnt, float* sh) {
  int32_t j = 0;
  for (; j + 8 <= cnt; j += 8) {
    hsum_tree8(small_products<KV>(qh, krow[j]), small_products<KV>(qh, krow[j + 1]),
               small_products<KV>(qh, krow[j + 2]), small_products<KV>(qh, krow[j + 3]),
               small_products<KV>(qh, krow[j + 4]), small_products<KV>(qh, krow[j + 5]),
               small_products<KV>(qh, krow[j + 6]), small_products<KV>(qh, krow[j + 7]), sh + j);
  }
  for (; j < cnt; ++j) sh[j] = hsum_tree(small_products<KV>(qh, krow[j]));
}

// Scores of head h (in sh) become probabilities; returns the factor for the old accumulator.
float small_tile_softmax(float* sh, int32_t cnt, float scale, float* run_max, float* run_sum) {
  const Batch sv(scale);
  Batch vmax(-INFINITY);
  int32_t i = 0;
  for (; i + kLanes <= cnt; i += kLanes) {
    const Batch x = Batch::load_unaligned(sh + i) * sv;
    x.store_unaligned(sh + i);
    vmax = xsimd::max(vmax, x);
  }
  alignas(64) float lanes[kLanes];
  vmax.store_aligned(lanes);
  float tile_max = -INFINITY;
  for (int32_t l = 0; l < kLanes; ++l) tile_max = lanes[l] > tile_max ? lanes[l] : tile_max;
  for (; i < cnt; ++i) {
    sh[i] = sh[i] * scale;
    tile_max = sh[i] > tile_max ? sh[i] : tile_max;
  }
  const float new_max = tile_max > *run_max ? tile_max : *run_max;
  const Batch mv(new_max);
  Batch sum(0.f);
  i = 0;
  for (; i + kLanes <= cnt; i += kLanes) {
    const Batch e = xsimd::exp(Batch::load_unaligned(sh + i) - mv);
    sum += e;
    e.store_unaligned(sh + i);
  }
  float tile_sum = hsum_tree(sum);
  for (; i < cnt; ++i) {
    const float e = std::exp(sh[i] - new_max);
    tile_sum += e;
    sh[i] = e;
  }
  float alpha = 1.f;
  if (new_max != *run_max) {
    alpha = std::exp(*run_max - new_max);  // 0 on the first tile (max was -inf)
    *run_sum *= alpha;
    *run_max = new_max;
  }
  *run_sum += tile_sum;
  return alpha;
}

// acc = alpha * acc + sum_j p[j] * vrow[j], with even and odd keys in two register chains.
template <int KV>
void small_tile_accumulate(const float* p, const float* const* vrow, int32_t cnt, float alpha,
                           float* acc) {
  Batch a0[KV], a1[KV];
  const Batch al(alpha);
#pragma GCC unroll 4
  for (int v = 0; v < KV; ++v) {
    a0[v] = Batch::load_unaligned(acc + v * kLanes) * al;
    a1[v] = Batch(0.f);
  }
  int32_t j = 0;
  for (; j + 2 <= cnt; j += 2) {
    const Batch w0(p[j]), w1(p[j + 1]);
    const float* x0 = vrow[j];
    const float* x1 = vrow[j + 1];
#pragma GCC unroll 4
    for (int v = 0; v < KV; ++v) {
      a0[v] = xsimd::fma(w0, Batch::load_unaligned(x0 + v * kLanes), a0[v]);
      a1[v] = xsimd::fma(w1, Batch::load_unaligned(x1 + v * kLanes), a1[v]);
    }
  }
  if (j < cnt) {
    const Batch w0(p[j]);
#pragma GCC unroll 4
    for (int v = 0; v < KV; ++v)
      a0[v] = xsimd::fma(w0, Batch::load_unaligned(vrow[j] + v * kLanes), a0[v]);
  }
#pragma GCC unroll 4
  for (int v = 0; v < KV; ++v) (a0[v] + a1[v]).store_unaligned(acc + v * kLanes);
}

template <int KV>
void small_attend_tile(const float* q, int32_t r, float scale, const ScratchLayout& s,
                       int32_t cnt) {
  constexpr int32_t k = KV * kLanes;
  for (int32_t h = 0; h < r; ++h) {
    float* sh = s.scores + h * kTile;
    small_tile_scores<KV>(q + h * k, s.krow, cnt, sh);
    const float alpha = small_tile_softmax(sh, cnt, scale, s.run_max + h, s.run_sum + h);
    small_tile_accumulate<KV>(sh, s.vrow, cnt, alpha, s.acc + h * k);
  }
}
#endif

// Where the keys of one kv head come from.
struct KeySource {
  const float* k_new = nullptr;  // rows for positions >= pos0, stride G*k
  const float* v_new = nullptr;
  int64_t pos0 = 0;
  int64_t new_stride = 0;
  const KVLayerView* cache = nullptr;
  int32_t g = 0;
  int32_t k = 0;
};

inline int64_t cache_slot(const KVLayerView& c, int64_t p) {
  return p < c.sinks ? p : c.sinks + (p - c.sinks) % (c.capacity - c.sinks);
}

// Appends positions [a, b) to the tile's row lists (pointers into the cache or the block).
void gather(const KeySource& src, int64_t a, int64_t b, const ScratchLayout& s, TileRows* t) {
  const int64_t cached_end = b < src.pos0 ? b : src.pos0;
  if (a < cached_end) {
    const KVLayerView& c = *src.cache;
    int64_t slot = cache_slot(c, a);  // then advanced without a division per position
    for (int64_t p = a; p < cached_end; ++p) {
      const int32_t j = t->cnt++;
      const int64_t off = src.g * c.head_stride + slot * c.row_stride;
      if (c.dtype == DType::f32) {
        s.krow[j] = static_cast<const float*>(c.k) + off;
        s.vrow[j] = static_cast<const float*>(c.v) + off;
        s.kscale[j] = 1.f;
        s.vscale[j] = 1.f;
      } else {  // i8: cached positions precede the block's, so these rows form the tile's prefix
        s.k8row[j] = static_cast<const int8_t*>(c.k) + off;
        s.v8row[j] = static_cast<const int8_t*>(c.v) + off;
        s.kscale[j] = c.k_scales[src.g * c.capacity + slot];
        s.vscale[j] = c.v_scales[src.g * c.capacity + slot];
        t->n8 = j + 1;
      }
      if (++slot == c.capacity) slot = c.sinks;  // the ring's rotating part wraps to its start
    }
    a = cached_end;
  }
  for (int64_t p = a; p < b; ++p) {
    const int32_t j = t->cnt++;
    const int64_t off = (p - src.pos0) * src.new_stride;
    s.krow[j] = src.k_new + off;
    s.vrow[j] = src.v_new + off;
    s.kscale[j] = 1.f;
    s.vscale[j] = 1.f;
  }
}

// gather() for the small-head path: f32 rows only, and no row scales (they would all be 1).
void gather_f32(const KeySource& src, int64_t a, int64_t b, const ScratchLayout& s, TileRows* t) {
  const int64_t cached_end = b < src.pos0 ? b : src.pos0;
  int32_t j = t->cnt;
  if (a < cached_end) {
    const KVLayerView& c = *src.cache;
    int64_t slot = cache_slot(c, a);
    const float* kbase = static_cast<const float*>(c.k) + src.g * c.head_stride;
    const float* vbase = static_cast<const float*>(c.v) + src.g * c.head_stride;
    for (int64_t p = a; p < cached_end; ++p, ++j) {
      s.krow[j] = kbase + slot * c.row_stride;
      s.vrow[j] = vbase + slot * c.row_stride;
      if (++slot == c.capacity) slot = c.sinks;
    }
    a = cached_end;
  }
  const float* kp = src.k_new + (a - src.pos0) * src.new_stride;
  const float* vp = src.v_new + (a - src.pos0) * src.new_stride;
  for (int64_t p = a; p < b; ++p, ++j, kp += src.new_stride, vp += src.new_stride) {
    s.krow[j] = kp;
    s.vrow[j] = vp;
  }
  t->cnt = j;
}

// Quantizes each head's query to int16 with one scale per head, small enough that a dot with
// int8 keys (|key| <= 128) cannot overflow int32.
void quantize_query_i16(const float* q, int32_t r, int32_t k, const ScratchLayout& s) {
  const float qmax_k = 2147483647.f / (128.f * static_cast<float>(k));
  const float qmax = qmax_k < 32767.f ? qmax_k : 32767.f;
  for (int32_t h = 0; h < r; ++h) {
    const float* qh = q + h * k;
    float amax = 0.f;
    for (int32_t d = 0; d < k; ++d) amax = std::fabs(qh[d]) > amax ? std::fabs(qh[d]) : amax;
    const float inv = amax > 0.f ? std::floor(qmax) / amax : 0.f;
    s.q16_scale[h] = amax > 0.f ? amax / std::floor(qmax) : 0.f;
    for (int32_t d = 0; d < k; ++d) {  // round half away from zero (vectorizes, no libm call)
      const float x = qh[d] * inv;
      s.q16[h * k + d] = static_cast<int16_t>(x + (x < 0.f ? -0.5f : 0.5f));
    }
  }
}

// One query (r heads sharing kv head src.g) over the attended intervals [a1,b1) and [a2,b2)
// (sorted, disjoint, the second possibly empty), tile by tile on the absolute-position grid.
// small_vectors > 0: the small-head path with rows of that many SIMD vectors.
void attend_query(const float* q, int32_t r, int32_t k, float scale, const KeySource& src,
                  int64_t a1, int64_t b1, int64_t a2, int64_t b2, const ScratchLayout& s,
                  int32_t small_vectors, float* out) {
  for (int32_t i = 0; i < r * k; ++i) s.acc[i] = 0.f;
  for (int32_t h = 0; h < r; ++h) {
    s.run_max[h] = -INFINITY;
    s.run_sum[h] = 0.f;
  }
  if (src.cache != nullptr && src.cache->dtype == DType::i8 && src.pos0 > 0) {
    quantize_query_i16(q, r, k, s);
  }
  if (a1 >= b1) {  // no sinks: only the recent interval
    a1 = a2;
    b1 = b2;
    a2 = b2 = 0;
  }
  const int64_t end = a2 < b2 ? b2 : b1;
  int64_t tile = a1 / kTile;
  while (tile * kTile < end) {
    const int64_t t0 = tile * kTile, t1 = t0 + kTile;
    TileRows rows;
    if (small_vectors > 0) {
      gather_f32(src, t0 > a1 ? t0 : a1, t1 < b1 ? t1 : b1, s, &rows);
      if (a2 < b2) gather_f32(src, t0 > a2 ? t0 : a2, t1 < b2 ? t1 : b2, s, &rows);
    } else {
      gather(src, t0 > a1 ? t0 : a1, t1 < b1 ? t1 : b1, s, &rows);
      if (a2 < b2) gather(src, t0 > a2 ? t0 : a2, t1 < b2 ? t1 : b2, s, &rows);
    }
    if (rows.cnt > 0) {
#if EINFER_HAS_SIMD
      if (small_vectors == 1) {
        small_attend_tile<1>(q, r, scale, s, rows.cnt);
      } else if (small_vectors == 2) {
        small_attend_tile<2>(q, r, scale, s, rows.cnt);
      } else if (small_vectors == 4) {
        small_attend_tile<4>(q, r, scale, s, rows.cnt);
      } else {
        attend_tile(q, r, k, scale, s, rows);
      }
#else
      attend_tile(q, r, k, scale, s, rows);
#endif
    }
    ++tile;
    if (a2 < b2 && tile * kTile >= b1 && tile * kTile < a2) tile = a2 / kTile;
  }
  for (int32_t h = 0; h < r; ++h) {
    const float inv = 1.f / s.run_sum[h];
    for (int32_t d = 0; d < k; ++d) out[h * k + d] = s.acc[h * k + d] * inv;
  }
}

// Which integer dot the int8 cache path uses: AVX-VNNI where the CPU has it (one vpdpwssd per
// 16 int16 products instead of vpmaddwd + vpaddd), else AVX2. Tests force either path.
int g_i8_dot_path = -1;  // -1: by CPU, 0: AVX2, 1: AVX-VNNI (if the CPU has it)

#if EINFER_HAS_SIMD && defined(__AVX2__)
// CPUID leaf 7, sub-leaf 1, EAX bit 4: AVX-VNNI (VEX-encoded). The OS already saves the AVX state
// (the build requires AVX2). Asked once; constant-initialised atomic, no static constructor.
std::atomic<int> g_cpu_has_vnni{-1};

bool cpu_has_avx_vnni() {
  int v = g_cpu_has_vnni.load(std::memory_order_relaxed);
  if (v < 0) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    v = __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 4) & 1u) ? 1 : 0;
    g_cpu_has_vnni.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}
#endif

bool use_vnni_i8_dots() {
#if EINFER_HAS_SIMD && defined(__AVX2__)
  if (g_i8_dot_path == 0) return false;
  return cpu_has_avx_vnni();
#else
  return false;
#endif
}

}  // namespace

// Test hook (declared by the tests, not in the public header): selects the int8 dot path.
// Returns whether AVX-VNNI will be used.
bool attention_select_i8_dot_path_for_tests(int path) {
  g_i8_dot_path = path;
  return use_vnni_i8_dots();
}

float attention_default_scale(int32_t head_dim) {
  return head_dim > 0 ? 1.f / std::sqrt(static_cast<float>(head_dim)) : 0.f;
}

Status attention_validate_shape(const AttentionShape& sh) {
  if (sh.n_heads <= 0 || sh.n_kv_heads <= 0 || sh.head_dim <= 0) {
    return make_status(StatusCode::invalid_argument,
                       "attention: head counts and head_dim must be > 0");
  }
  if (sh.n_heads % sh.n_kv_heads != 0) {
    return make_status(StatusCode::shape_mismatch,
                       "attention: n_heads must be a multiple of n_kv_heads", sh.n_heads,
                       sh.n_kv_heads);
  }
  if (sh.window < 0 || sh.sinks < 0) {
    return make_status(StatusCode::invalid_argument, "attention: window and sinks must be >= 0");
  }
  if (sh.window > 0 && sh.sinks >= sh.window) {
    return make_status(StatusCode::invalid_argument, "attention: sinks must be fewer than window",
                       sh.sinks, sh.window);
  }
  if (!sh.causal && sh.window != 0) {
    return make_status(StatusCode::unsupported, "attention: a window needs causal attention");
  }
  if (!std::isfinite(sh.scale)) {
    return make_status(StatusCode::invalid_argument, "attention: scale must be finite");
  }
  return ok_status();
}

size_t attention_scratch_bytes(const AttentionShape& shape, int32_t n_queries, DType kv_dtype) {
  (void)n_queries;
  if (!attention_validate_shape(shape).ok()) return 0;
  const int32_t r = shape.n_heads / shape.n_kv_heads;
  (void)kv_dtype;  // rows are read in place, so every cache dtype needs the same
  return ScratchLayout(nullptr, r, shape.head_dim).bytes;
}

Status attention_f32(const AttentionShape& shape, const float* q, const float* k_new,
                     const float* v_new, int32_t n, int64_t pos0, const KVLayerView* cache,
                     float* out, void* scratch, size_t scratch_bytes) {
  EINFER_TRY(attention_validate_shape(shape));
  if (n < 0 || pos0 < 0) {
    return make_status(StatusCode::invalid_argument, "attention: n and pos0 must be >= 0");
  }
  if (n == 0) return ok_status();
  if (q == nullptr || k_new == nullptr || v_new == nullptr || out == nullptr) {
    return make_status(StatusCode::invalid_argument, "attention: null q, k_new, v_new or out");
  }
  const int32_t H = shape.n_heads, G = shape.n_kv_heads, k = shape.head_dim, r = H / G;
  if (!shape.causal && cache != nullptr) {
    return make_status(StatusCode::invalid_argument,
                       "attention: non-causal attention takes no cache");
  }
  if (shape.causal && pos0 > 0) {
    if (cache == nullptr) {
      return make_status(StatusCode::invalid_argument,
                         "attention: positions before pos0 need a cache", pos0);
    }
    const KVLayerView& c = *cache;
    if (c.dtype != DType::f32 && c.dtype != DType::i8) {
      return make_status(StatusCode::unsupported, "attention: cache dtype must be f32 or i8");
    }
    if (c.n_kv_heads != G || c.head_dim != k) {
      return make_status(StatusCode::shape_mismatch, "attention: cache kv heads / head_dim differ");
    }
    if (c.k == nullptr || c.v == nullptr ||
        (c.dtype == DType::i8 && (c.k_scales == nullptr || c.v_scales == nullptr))) {
      return make_status(StatusCode::invalid_argument, "attention: cache view has null data");
    }
    if (c.capacity <= 0 || c.sinks < 0 || c.sinks >= c.capacity) {
      return make_status(StatusCode::invalid_argument, "attention: cache capacity/sinks invalid");
    }
    if (c.n_positions >= 0 && c.n_positions != pos0) {
      return make_status(StatusCode::out_of_range,
                         "attention: cache holds a different number of positions", pos0,
                         c.n_positions);
    }
    // Every attended position < pos0 must still be in the ring.
    if (pos0 > c.capacity) {
      if (shape.window == 0) {
        return make_status(StatusCode::out_of_range,
                           "attention: ring has wrapped; unwindowed attention needs all positions",
                           pos0, c.capacity);
      }
      if (shape.sinks > c.sinks || shape.window - shape.sinks > c.capacity - c.sinks) {
        return make_status(StatusCode::out_of_range,
                           "attention: window or sinks larger than the cache keeps", shape.window,
                           c.capacity);
      }
    }
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
  void* aligned = scratch ? reinterpret_cast<void*>((base + 63) & ~uintptr_t(63)) : nullptr;
  const ScratchLayout need(nullptr, r, k);
  if (scratch == nullptr || scratch_bytes < need.bytes) {
    return make_status(StatusCode::out_of_memory, "attention: scratch too small",
                       static_cast<int64_t>(need.bytes),
                       static_cast<int64_t>(scratch ? scratch_bytes : 0));
  }
  ScratchLayout s(aligned, r, k);
  s.vnni = use_vnni_i8_dots();

  KeySource src;
  src.k_new = k_new;
  src.v_new = v_new;
  src.pos0 = pos0;
  src.new_stride = static_cast<int64_t>(G) * k;
  src.cache = cache;
  src.k = k;
  int32_t small_vectors = 0;  // chosen per call from k and the cache dtype only (see above)
#if EINFER_HAS_SIMD
  if (small_head_path(k, cache, pos0)) small_vectors = k / kLanes;
#endif
  for (int32_t i = 0; i < n; ++i) {
    const int64_t t = pos0 + i;
    int64_t a1 = 0, b1 = 0, a2 = 0, b2 = 0;
    if (!shape.causal) {
      a1 = pos0;
      b1 = pos0 + n;
    } else if (shape.window == 0 || t - (shape.window - shape.sinks) <= shape.sinks) {
      b1 = t + 1;  // [0, t]
    } else {
      b1 = shape.sinks;
      a2 = t - (shape.window - shape.sinks);
      b2 = t + 1;
    }
    for (int32_t g = 0; g < G; ++g) {
      src.g = g;
      src.k_new = k_new + static_cast<size_t>(g) * k;
      src.v_new = v_new + static_cast<size_t>(g) * k;
      const size_t qoff = (static_cast<size_t>(i) * H + static_cast<size_t>(g) * r) * k;
      attend_query(q + qoff, r, k, shape.scale, src, a1, b1, a2, b2, s, small_vectors, out + qoff);
    }
  }
  return ok_status();
}

}  // namespace einfer
