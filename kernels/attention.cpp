// Fused attention: per query and kv head, an online softmax over key tiles aligned to absolute
// positions, with the kv head's H/G query heads processed together (see kernels/attention.h).
//
// Files: this driver (validation, scratch, gathering rows, the tile loop) with the f32 tile
// kernels (xsimd, ISA-generic, with scalar fallbacks in place); the int8 cache paths in
// attention_i8.inc, the small-head path in attention_small_head_simd.inc and the prefill query
// blocks in attention_query_block.inc, all included below into this one translation unit so the
// tile templates inline exactly as they did when it was one file. Its scalar twin is
// attention_reference.cpp (unfused, einsum-based), which the tests compare it with. At ~860 lines
// it is over the ~600 guide: the f32 tile kernels share ScratchLayout and the tail helpers with
// the driver, and splitting them further would cross a translation unit boundary in the innermost
// loop.
#include "kernels/attention.h"

#include <cmath>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstring>

#include "kernels/attention_i8_rows.h"
#include "kernels/exp_neon.h"
#include "kernels/isa.h"
#include "kernels/kv_ring.h"
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
// prefetchers alone fall behind. The distance that measured best differs by CPU: 8 KB of 1-32 KB
// on an AMD EPYC, 2 KB on an Intel Xeon with AVX-512/AMX, where 8 KB made decode at context 2000
// 7-15% slower (15M shape, q4). It is chosen once from the CPU vendor; -DEINFER_ATTN_PREFETCH_BYTES
// pins it (0 disables).
size_t prefetch_bytes() {
#if defined(EINFER_ATTN_PREFETCH_BYTES)
  return EINFER_ATTN_PREFETCH_BYTES;
#elif defined(__x86_64__)
  static const size_t bytes = [] {  // first use, not a static constructor
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool intel = __get_cpuid(0, &a, &b, &c, &d) && b == 0x756e6547u && d == 0x49656e69u &&
                       c == 0x6c65746eu;  // "GenuineIntel"
    return size_t{intel ? 2048u : 8192u};
  }();
  return bytes;
#else
  return 8192;
#endif
}

inline void prefetch_ahead(const void* row, size_t row_bytes) {
  const size_t distance = prefetch_bytes();
  if (distance == 0) return;
  const char* p = static_cast<const char*>(row) + distance;
  for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b, 0, 3);
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
  float* qbuf = nullptr;           // [r][k] a query block's query vectors (when sized for blocks)
  bool vnni = false;               // int8 integer dots via AVX-VNNI (chosen per call)
  bool prefetch = true;            // request f32 K/V rows ahead (decode; see attention_f32)
  size_t bytes = 0;

  // query_blocks: room for a query block's vectors (qbuf; attention_query_block.inc).
  ScratchLayout(void* base, int32_t r, int32_t k, bool query_blocks = false) {
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
    qbuf = static_cast<float*>(take(query_blocks ? rs * ks * sizeof(float) : 0));
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
template <int RB, int KB, bool kPf>
inline void f32_dots_RBxKB(const float* q, const float* const* krow, int32_t k, float* out,
                           int32_t out_stride) {
  float acc[RB * KB];
  int32_t d = 0;
  if constexpr (kPf)
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

#include "kernels/attention_i8.inc"

// acc[h][:] += p[h * p_stride + j] * vrow[j][:] for RB heads over keys [j0, j1), one V row pair
// at a time: the rows are read in order (sequential memory), the 2*RB weights stay in registers
// and the accumulators (r*k floats, L1-resident) are loaded and stored once per pair.
template <int RB, bool kPf>
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
    if constexpr (kPf) {
      prefetch_ahead(v0, static_cast<size_t>(k) * sizeof(float));
      prefetch_ahead(v1, static_cast<size_t>(k) * sizeof(float));
    }
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

// ---- one tile -----------------------------------------------------------------------------------

// A tile's rows: i8 cache rows [0, n8) (k8row/v8row), then f32 rows [n8, cnt) (krow/vrow).
struct TileRows {
  int32_t n8 = 0;
  int32_t cnt = 0;
};

template <int RB, bool kPf>
void tile_scores(const float* q, const ScratchLayout& s, int32_t h0, int32_t k, TileRows t) {
  float* sc = s.scores + h0 * kTile;
  if (s.vnni) {
    i8_tile_scores<RB, true>(s, h0, k, t.n8, sc);
  } else {
    i8_tile_scores<RB, false>(s, h0, k, t.n8, sc);
  }
  int32_t j = t.n8;
  // RB x KB = 8 products per block where the heads allow: their sums come out of one
  // transpose-reduce instead of a store and a scalar tree each (same tree, same bits).
  if constexpr (RB == 1 || RB == 2) {
    for (; j + 8 / RB <= t.cnt; j += 8 / RB)
      f32_dots_RBxKB<RB, 8 / RB, kPf>(q + h0 * k, s.krow + j, k, sc + j, kTile);
  }
  for (; j + 2 <= t.cnt; j += 2)
    f32_dots_RBxKB<RB, 2, kPf>(q + h0 * k, s.krow + j, k, sc + j, kTile);
  for (; j < t.cnt; ++j) f32_dots_RBxKB<RB, 1, kPf>(q + h0 * k, s.krow + j, k, sc + j, kTile);
}

#if EINFER_HAS_SIMD
// f32_accumulate_v_RB<1> for rows of NV whole vectors: the accumulator stays in registers over the
// tile instead of a load and a store per key pair. Per element the same FMA chain in key order.
template <int NV, bool kPf>
void f32_accumulate_v_regs(const float* p, const float* const* vrow, int32_t j0, int32_t j1,
                           float* acc) {
  Batch a[NV];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) a[v] = Batch::load_unaligned(acc + v * kLanes);
  for (int32_t j = j0; j < j1; ++j) {
    const Batch w(p[j]);
    const float* x = vrow[j];
    if (kPf && (j - j0) % 2 == 0) {  // f32_accumulate_v_RB's prefetch pace: both rows of a pair
      prefetch_ahead(x, NV * kLanes * sizeof(float));
      if (j + 1 < j1) prefetch_ahead(vrow[j + 1], NV * kLanes * sizeof(float));
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) a[v] = xsimd::fma(w, Batch::load_unaligned(x + v * kLanes), a[v]);
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) a[v].store_unaligned(acc + v * kLanes);
}

// f32_accumulate_v_regs<NV> for the first NV in [kFrom, 8] equal to nv; false when none is.
template <int kFrom, bool kPf>
bool f32_accumulate_v_regs_nv(int32_t nv, const float* p, const float* const* vrow, int32_t j0,
                              int32_t j1, float* acc) {
  if (nv == kFrom) {
    f32_accumulate_v_regs<kFrom, kPf>(p, vrow, j0, j1, acc);
    return true;
  }
  if constexpr (kFrom < 8) {
    return f32_accumulate_v_regs_nv<kFrom + 1, kPf>(nv, p, vrow, j0, j1, acc);
  } else {
    return false;
  }
}

// Whether one head's f32 V rows take f32_accumulate_v_regs (2 to 8 whole vectors).
template <bool kPf>
bool f32_accumulate_v_regs_any(const float* p, const float* const* vrow, int32_t j0, int32_t j1,
                               int32_t k, float* acc) {
  return k % kLanes == 0 && f32_accumulate_v_regs_nv<2, kPf>(k / kLanes, p, vrow, j0, j1, acc);
}
#endif

template <int RB, bool kPf>
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
  if (t.cnt > t.n8) {
#if EINFER_HAS_SIMD
    if (RB == 1 && f32_accumulate_v_regs_any<kPf>(p, s.vrow, t.n8, t.cnt, k, acc)) return;
#endif
    f32_accumulate_v_RB<RB, kPf>(p, kTile, s.vrow, t.n8, t.cnt, k, acc);
  }
}

template <int RB, bool kPf>
void tile_heads(const float* q, const ScratchLayout& s, int32_t h0, int32_t k, TileRows t,
                bool scores) {
  if (scores) {
    tile_scores<RB, kPf>(q, s, h0, k, t);
  } else {
    tile_accumulate<RB, kPf>(s, h0, k, t);
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
#if defined(__aarch64__)
    const Batch e(neon::exp4((Batch::load_unaligned(sh + i) - mv).data));  // kernels/exp_neon.h
#else
    const Batch e = xsimd::exp(Batch::load_unaligned(sh + i) - mv);
#endif
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

// Rows [row0, row1) of the tile state (query heads; in a query block, (query, head) pairs).
template <bool kPf>
void for_rows(const float* q, const ScratchLayout& s, int32_t row0, int32_t row1, int32_t k,
              TileRows t, bool scores) {
  int32_t h = row0;
  for (; h + kHeadBlock <= row1; h += kHeadBlock)
    tile_heads<kHeadBlock, kPf>(q, s, h, k, t, scores);
  const int32_t rest = row1 - h;
  if (rest == 3) tile_heads<3, kPf>(q, s, h, k, t, scores);
  if (rest == 2) tile_heads<2, kPf>(q, s, h, k, t, scores);
  if (rest == 1) tile_heads<1, kPf>(q, s, h, k, t, scores);
}

template <bool kPf>
void attend_tile(const float* q, int32_t r, int32_t k, float scale, const ScratchLayout& s,
                 TileRows t) {
  for_rows<kPf>(q, s, 0, r, k, t, true);
  for (int32_t h = 0; h < r; ++h) tile_softmax(s, h, k, scale, t.cnt);
  for_rows<kPf>(q, s, 0, r, k, t, false);
}

#include "kernels/attention_small_head_simd.inc"

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
  return kv_ring_slot(p, c.capacity, c.sinks);
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
      // NaN or Inf in q (a hostile model) would make the cast undefined: 0 and +-qmax instead.
      const float c = x >= -qmax && x <= qmax ? x : (x > 0.f ? qmax : (x < 0.f ? -qmax : 0.f));
      s.q16[h * k + d] = static_cast<int16_t>(c + (c < 0.f ? -0.5f : 0.5f));
    }
  }
}

// attend_tile with or without requests ahead for the f32 K/V rows (ScratchLayout::prefetch).
inline void attend_f32_tile(const float* q, int32_t r, int32_t k, float scale,
                            const ScratchLayout& s, TileRows t) {
  if (s.prefetch) {
    attend_tile<true>(q, r, k, scale, s, t);
  } else {
    attend_tile<false>(q, r, k, scale, s, t);
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
        attend_f32_tile(q, r, k, scale, s, rows);
      }
#else
      attend_f32_tile(q, r, k, scale, s, rows);
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

#include "kernels/attention_query_block.inc"

}  // namespace

// AVX-VNNI where the CPU has it (one vpdpwssd per 16 int16 products instead of vpmaddwd + vpaddd)
// unless the caller asks for AVX2.
bool attention_i8_dot_uses_vnni(AttentionI8Dot choice) {
#if EINFER_HAS_SIMD && defined(__AVX2__)
  if (choice == AttentionI8Dot::avx2) return false;
  return isa_extension_enabled(IsaExtension::avxvnni);
#else
  (void)choice;
  return false;
#endif
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
  const int32_t rows = scratch_rows(r, shape.head_dim);
  return ScratchLayout(nullptr, rows, shape.head_dim, rows > r).bytes;
}

Status attention_f32(const AttentionShape& shape, const float* q, const float* k_new,
                     const float* v_new, int32_t n, int64_t pos0, const KVLayerView* cache,
                     float* out, void* scratch, size_t scratch_bytes, const Threads* threads) {
  EINFER_TRY(attention_validate_shape(shape));
  if (n < 0 || pos0 < 0) {
    return make_status(StatusCode::invalid_argument, "attention: n and pos0 must be >= 0");
  }
  if (n == 0) return ok_status();
  if (q == nullptr || k_new == nullptr || v_new == nullptr || out == nullptr) {
    return make_status(StatusCode::invalid_argument, "attention: null q, k_new, v_new or out");
  }
  const int32_t H = shape.n_heads, G = shape.n_kv_heads, k = shape.head_dim, r = H / G;
  const int64_t q_stride = shape.q_row_stride > 0 ? shape.q_row_stride : int64_t{H} * k;
  const int64_t out_stride = shape.out_row_stride > 0 ? shape.out_row_stride : int64_t{H} * k;
  if (shape.q_row_stride < 0 || shape.kv_row_stride < 0 || shape.out_row_stride < 0 ||
      q_stride < int64_t{H} * k || out_stride < int64_t{H} * k ||
      (shape.kv_row_stride > 0 && shape.kv_row_stride < int64_t{G} * k)) {
    return make_status(StatusCode::invalid_argument,
                       "attention: row strides must be 0 (dense) or cover a row's heads");
  }
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
  const uintptr_t aligned = (base + 63) & ~uintptr_t(63);
  const int32_t rows = scratch_rows(r, k);
  const ScratchLayout need(nullptr, rows, k, rows > r);
  const size_t slot = (need.bytes + 63) & ~size_t{63};
  if (scratch == nullptr || scratch_bytes < need.bytes) {
    return make_status(StatusCode::out_of_memory, "attention: scratch too small",
                       static_cast<int64_t>(need.bytes),
                       static_cast<int64_t>(scratch ? scratch_bytes : 0));
  }
  // Work items are (query, kv group) pairs, each attended wholly by one task with its own
  // scratch slot: a task count changes who computes an item, never how. They are numbered kv
  // group first (item = g * n + i), so a task's share is whole kv heads where it can be: equal
  // work for every task (a query-major cut gave the later, longer queries of a causal block to
  // the last task), and consecutive items reuse one head's keys.
  const int64_t items = static_cast<int64_t>(n) * G;
  int64_t tasks = thread_count(threads);
  if (tasks > items) tasks = items;
  const size_t slots = (scratch_bytes - (aligned - base) + (slot - need.bytes)) / slot;
  if (tasks > static_cast<int64_t>(slots)) tasks = static_cast<int64_t>(slots);
  if (tasks < 1) tasks = 1;
  // Slots a page apart where the scratch has room: the L2 streamer prefetches ahead within a
  // 4 KiB page, and pulling the next task's running state (written all the time) into this core
  // cost both tasks of a 2-thread prefill ~8% (15M shape, 128 queries: 142 -> 131 us).
  size_t stride = slot;
  if (tasks > 1 && (static_cast<size_t>(tasks) - 1) * (slot + 4096) + slot <= slots * slot)
    stride = slot + 4096;

  KeySource src0;
  src0.k_new = k_new;
  src0.v_new = v_new;
  src0.pos0 = pos0;
  src0.new_stride = shape.kv_row_stride > 0 ? shape.kv_row_stride : static_cast<int64_t>(G) * k;
  src0.cache = cache;
  src0.k = k;
  int32_t small_vectors = 0;  // chosen per call from k and the cache dtype only (see above)
#if EINFER_HAS_SIMD
  if (small_head_path(k, cache, pos0)) small_vectors = k / kLanes;
#endif
  const bool vnni = attention_i8_dot_uses_vnni(shape.i8_dot);
  // Query blocks (attention_query_block.inc): prefill over f32 rows on the general path.
  const int32_t per_block = queries_per_block(r);
  const bool blocks = n > 1 && per_block > 1 && small_vectors == 0 &&
                      !(cache != nullptr && cache->dtype != DType::f32 && pos0 > 0);
  // The attended intervals [a1,b1) and [a2,b2) of the query at position t: one formula for the
  // work estimate and the walk.
  auto intervals = [&](int64_t t, int64_t* a1, int64_t* b1, int64_t* a2, int64_t* b2) {
    *a1 = *b1 = *a2 = *b2 = 0;
    if (!shape.causal) {
      *a1 = pos0;
      *b1 = pos0 + n;
    } else if (shape.window == 0 || t - (shape.window - shape.sinks) + 1 <= shape.sinks) {
      *b1 = t + 1;  // [0, t]
    } else {
      *b1 = shape.sinks;  // the sinks, then the window - sinks most recent positions, t included
      *a2 = t - (shape.window - shape.sinks) + 1;
      *b2 = t + 1;
    }
  };
  // Keys query i attends (its work, plus a fixed cost per item): causal prefill gives the last
  // queries of a block many more keys than the first, so tasks get equal work, not equal counts.
  auto item_cost = [&](int64_t item) -> int64_t {
    int64_t a1 = 0, b1 = 0, a2 = 0, b2 = 0;
    intervals(pos0 + item % n, &a1, &b1, &a2, &b2);
    return (b1 - a1) + (b2 - a2) + 16;
  };
  auto attend_items = [&](int task) {
    long long first = 0, last = items;
    if (tasks > 1) {
      // first = the first item whose preceding work reaches task/tasks of the total.
      int64_t total = 0;
      for (int64_t item = 0; item < items; ++item) total += item_cost(item);
      int64_t before = 0;
      first = -1;
      for (int64_t item = 0; item <= items; ++item) {
        if (first < 0 && before * tasks >= total * task) first = item;
        if (before * tasks >= total * (task + 1) || item == items) {
          last = task + 1 == tasks ? items : item;
          break;
        }
        before += item_cost(item);
      }
      if (first < 0 || first > last) first = last;
    }
    ScratchLayout s(reinterpret_cast<void*>(aligned + static_cast<size_t>(task) * stride), rows, k,
                    rows > r);
    s.vnni = vnni;
    // Decode reads each f32 K/V row once, from wherever the cache sits, and gains from requests
    // ahead; a prefill block's queries re-read the same rows, already in L1/L2, where the
    // requests only cost (15M q8 prefill: +9% without them). Two instantiations, so decode
    // keeps its code as it was.
    s.prefetch = n == 1;
    KeySource src = src0;
    for (int64_t item = first; item < last;) {
      const int32_t g = static_cast<int32_t>(item / n), i = static_cast<int32_t>(item % n);
      int64_t a1 = 0, b1 = 0, a2 = 0, b2 = 0;
      intervals(pos0 + i, &a1, &b1, &a2, &b2);
      src.g = g;
      src.k_new = k_new + static_cast<size_t>(g) * k;
      src.v_new = v_new + static_cast<size_t>(g) * k;
      const size_t hoff = static_cast<size_t>(g) * r * k;
      const size_t qoff = static_cast<size_t>(i) * q_stride + hoff;
      const size_t ooff = static_cast<size_t>(i) * out_stride + hoff;
      // Consecutive queries of this kv head with one attended interval from the same start
      // (causal without a window, or an encoder) go as a block.
      int32_t nq = 1;
      const float* qs[kMaxBlockQueries];
      float* outs[kMaxBlockQueries];
      int64_t ends[kMaxBlockQueries];
      if (blocks && a2 >= b2 && a1 < b1) {
        qs[0] = q + qoff;
        outs[0] = out + ooff;
        ends[0] = b1;
        while (nq < per_block && item + nq < last && i + nq < n) {
          int64_t c1 = 0, d1 = 0, c2 = 0, d2 = 0;
          intervals(pos0 + i + nq, &c1, &d1, &c2, &d2);
          if (c1 != a1 || c2 < d2 || d1 < ends[nq - 1]) break;
          qs[nq] = q + qoff + static_cast<size_t>(nq) * q_stride;
          outs[nq] = out + ooff + static_cast<size_t>(nq) * out_stride;
          ends[nq++] = d1;
        }
      }
      if (nq > 1) {
        attend_query_block(qs, nq, r, k, shape.scale, src, a1, ends, s, outs);
      } else {
        attend_query(q + qoff, r, k, shape.scale, src, a1, b1, a2, b2, s, small_vectors,
                     out + ooff);
      }
      item += nq;
    }
  };
  run_tasks(threads, static_cast<int>(tasks), attend_items);
  return ok_status();
}

}  // namespace einfer
