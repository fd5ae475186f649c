// Fused attention: per query and kv head, an online softmax over key tiles aligned to absolute
// positions, with the kv head's H/G query heads processed together (see kernels/attention.h).
#include "kernels/attention.h"

#include <cmath>
#include <cstring>

#include "kernels/simd.h"

#if EINFER_HAS_SIMD && defined(__AVX2__)
#include <immintrin.h>
#endif

namespace einfer {

namespace {

constexpr int32_t kTile = kAttentionKeyTile;
constexpr int kHeadBlock = 4;
#ifndef EINFER_ATTN_PREFETCH
#define EINFER_ATTN_PREFETCH 64
#endif
constexpr int64_t kPrefetchAhead = EINFER_ATTN_PREFETCH;  // positions ahead to prefetch (0: off)  // query heads whose scores / accumulators are computed together

size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

// Carves the scratch buffer; the same function sizes it (base == nullptr) and lays it out.
struct ScratchLayout {
  float* acc = nullptr;     // [r][k] running numerators
  float* run_max = nullptr; // [r]
  float* run_sum = nullptr; // [r]
  float* scores = nullptr;  // [r][kTile] scores, then probabilities of the current tile
  const float** krow = nullptr;  // [kTile]
  const float** vrow = nullptr;  // [kTile]
  float* kscale = nullptr;  // [kTile]
  float* vscale = nullptr;  // [kTile]
  float* kdeq = nullptr;    // [kTile][k] (quantized caches only)
  float* vdeq = nullptr;    // [kTile][k]
  size_t bytes = 0;

  ScratchLayout(void* base, int32_t r, int32_t k, bool quantized) {
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
    kscale = static_cast<float*>(take(ts * sizeof(float)));
    vscale = static_cast<float*>(take(ts * sizeof(float)));
    if (quantized) {
      kdeq = static_cast<float*>(take(ts * ks * sizeof(float)));
      vdeq = static_cast<float*>(take(ts * ks * sizeof(float)));
    }
    bytes = off + 64;  // + room to align an unaligned scratch pointer
  }
};

// ---- microkernels -------------------------------------------------------------------------------
// Every (head, key) score and every (head, element) accumulator sees the same sequence of
// operations whatever the blocking, so results do not depend on how heads or keys are grouped.

// out[h * out_stride + j] = dot(q + h*k, krow[j]) for RB heads and KB keys.
template <int RB, int KB>
inline void dots_f32(const float* q, const float* const* krow, int32_t k, float* out,
                     int32_t out_stride) {
  int32_t d = 0;
  float acc[RB][KB];
#if EINFER_HAS_SIMD
  using B = xsimd::batch<float>;
  constexpr int32_t N = static_cast<int32_t>(B::size);
  B a[RB][KB];
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) a[h][j] = B(0.f);
  for (; d + N <= k; d += N) {
    B kv[KB];
    for (int j = 0; j < KB; ++j) kv[j] = B::load_unaligned(krow[j] + d);
    for (int h = 0; h < RB; ++h) {
      const B qv = B::load_unaligned(q + h * k + d);
      for (int j = 0; j < KB; ++j) a[h][j] = xsimd::fma(qv, kv[j], a[h][j]);
    }
  }
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) acc[h][j] = xsimd::hadd(a[h][j]);
#else
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) acc[h][j] = 0.f;
#endif
  for (; d < k; ++d) {
    for (int h = 0; h < RB; ++h)
      for (int j = 0; j < KB; ++j) acc[h][j] += q[h * k + d] * krow[j][d];
  }
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) out[h * out_stride + j] = acc[h][j];
}

// acc[h][:] += sum_j p[h * p_stride + j] * vrow[j][:] for RB heads over cnt keys.
template <int RB>
inline void accumulate_v_f32(const float* p, int32_t p_stride, const float* const* vrow,
                             int32_t cnt, int32_t k, float* acc) {
  int32_t d = 0;
#if EINFER_HAS_SIMD
  using B = xsimd::batch<float>;
  constexpr int32_t N = static_cast<int32_t>(B::size);
  for (; d + 2 * N <= k; d += 2 * N) {
    B a0[RB], a1[RB];
    for (int h = 0; h < RB; ++h) {
      a0[h] = B::load_unaligned(acc + h * k + d);
      a1[h] = B::load_unaligned(acc + h * k + d + N);
    }
    for (int32_t j = 0; j < cnt; ++j) {
      const B v0 = B::load_unaligned(vrow[j] + d);
      const B v1 = B::load_unaligned(vrow[j] + d + N);
      for (int h = 0; h < RB; ++h) {
        const B w(p[h * p_stride + j]);
        a0[h] = xsimd::fma(w, v0, a0[h]);
        a1[h] = xsimd::fma(w, v1, a1[h]);
      }
    }
    for (int h = 0; h < RB; ++h) {
      a0[h].store_unaligned(acc + h * k + d);
      a1[h].store_unaligned(acc + h * k + d + N);
    }
  }
  for (; d + N <= k; d += N) {
    B a0[RB];
    for (int h = 0; h < RB; ++h) a0[h] = B::load_unaligned(acc + h * k + d);
    for (int32_t j = 0; j < cnt; ++j) {
      const B v0 = B::load_unaligned(vrow[j] + d);
      for (int h = 0; h < RB; ++h) a0[h] = xsimd::fma(B(p[h * p_stride + j]), v0, a0[h]);
    }
    for (int h = 0; h < RB; ++h) a0[h].store_unaligned(acc + h * k + d);
  }
#endif
  for (; d < k; ++d) {
    for (int h = 0; h < RB; ++h) {
      float a = acc[h * k + d];
      for (int32_t j = 0; j < cnt; ++j) a += p[h * p_stride + j] * vrow[j][d];
      acc[h * k + d] = a;
    }
  }
}

// y[i] = exp(x[i] - m); returns the sum of y (summed in index order after the exps).
inline float exp_shifted_sum(float* x, int32_t n, float m) {
  int32_t i = 0;
#if EINFER_HAS_SIMD
  using B = xsimd::batch<float>;
  constexpr int32_t N = static_cast<int32_t>(B::size);
  const B mv(m);
  for (; i + N <= n; i += N) xsimd::exp(B::load_unaligned(x + i) - mv).store_unaligned(x + i);
#endif
  for (; i < n; ++i) x[i] = std::exp(x[i] - m);
  float s = 0.f;
  for (int32_t j = 0; j < n; ++j) s += x[j];
  return s;
}

inline void int8_to_f32(const int8_t* x, float* y, int32_t n) {
  int32_t i = 0;
#if EINFER_HAS_SIMD && defined(__AVX2__)
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i));
    _mm256_storeu_ps(y + i, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)));
  }
#endif
  for (; i < n; ++i) y[i] = static_cast<float>(x[i]);
}

// Scores of RB heads against the tile, softmax state update, V accumulation.
template <int RB>
void attend_tile_heads(const float* q, int32_t k, float scale, const ScratchLayout& s,
                       int32_t cnt, float* scores, float* run_max, float* run_sum, float* acc) {
  int32_t j = 0;
  for (; j + 2 <= cnt; j += 2) dots_f32<RB, 2>(q, s.krow + j, k, scores + j, kTile);
  for (; j < cnt; ++j) dots_f32<RB, 1>(q, s.krow + j, k, scores + j, kTile);
  for (int h = 0; h < RB; ++h) {
    float* sh = scores + h * kTile;
    float tile_max = -INFINITY;
    for (int32_t i = 0; i < cnt; ++i) {
      sh[i] = sh[i] * s.kscale[i] * scale;
      tile_max = sh[i] > tile_max ? sh[i] : tile_max;
    }
    const float new_max = tile_max > run_max[h] ? tile_max : run_max[h];
    const float tile_sum = exp_shifted_sum(sh, cnt, new_max);
    if (new_max != run_max[h]) {
      const float alpha = std::exp(run_max[h] - new_max);  // 0 on the first tile (max was -inf)
      run_sum[h] *= alpha;
      float* ah = acc + h * k;
      for (int32_t d = 0; d < k; ++d) ah[d] *= alpha;
      run_max[h] = new_max;
    }
    run_sum[h] += tile_sum;
    for (int32_t i = 0; i < cnt; ++i) sh[i] *= s.vscale[i];
  }
  accumulate_v_f32<RB>(scores, kTile, s.vrow, cnt, k, acc);
}

void attend_tile(const float* q, int32_t r, int32_t k, float scale, const ScratchLayout& s,
                 int32_t cnt) {
  int32_t h = 0;
  for (; h + kHeadBlock <= r; h += kHeadBlock) {
    attend_tile_heads<4>(q + h * k, k, scale, s, cnt, s.scores + h * kTile, s.run_max + h,
                         s.run_sum + h, s.acc + h * k);
  }
  const int32_t rest = r - h;
  float* sc = s.scores + h * kTile;
  if (rest == 3) attend_tile_heads<3>(q + h * k, k, scale, s, cnt, sc, s.run_max + h, s.run_sum + h, s.acc + h * k);
  if (rest == 2) attend_tile_heads<2>(q + h * k, k, scale, s, cnt, sc, s.run_max + h, s.run_sum + h, s.acc + h * k);
  if (rest == 1) attend_tile_heads<1>(q + h * k, k, scale, s, cnt, sc, s.run_max + h, s.run_sum + h, s.acc + h * k);
}

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

// Asks for the cache rows of position p one tile ahead, so the next tile's K/V stream in while
// this one is computed (decode is bound by how fast the rows arrive).
inline void prefetch_rows(const KeySource& src, int64_t p) {
  const KVLayerView& c = *src.cache;
  const int64_t slot = cache_slot(c, p);
  const size_t esz = c.dtype == DType::f32 ? 4 : 1;
  const size_t off = static_cast<size_t>(src.g * c.head_stride + slot * c.row_stride) * esz;
  const size_t row_bytes = static_cast<size_t>(src.k) * esz;
  const char* kp = static_cast<const char*>(c.k) + off;
  const char* vp = static_cast<const char*>(c.v) + off;
  for (size_t b = 0; b < row_bytes; b += 64) {
    __builtin_prefetch(kp + b, 0, 1);
    __builtin_prefetch(vp + b, 0, 1);
  }
}

// Appends positions [a, b) to the tile's row lists.
void gather(const KeySource& src, int64_t a, int64_t b, const ScratchLayout& s, int32_t* cnt) {
  const int64_t cached_end = b < src.pos0 ? b : src.pos0;
  for (int64_t p = a; p < b; ++p) {
    if (kPrefetchAhead > 0 && p + kPrefetchAhead < cached_end) prefetch_rows(src, p + kPrefetchAhead);
    const int32_t j = (*cnt)++;
    if (p >= src.pos0) {
      const int64_t off = (p - src.pos0) * src.new_stride;
      s.krow[j] = src.k_new + off;
      s.vrow[j] = src.v_new + off;
      s.kscale[j] = 1.f;
      s.vscale[j] = 1.f;
      continue;
    }
    const KVLayerView& c = *src.cache;
    const int64_t slot = cache_slot(c, p);
    const int64_t off = src.g * c.head_stride + slot * c.row_stride;
    if (c.dtype == DType::f32) {
      // Copied row by row into scratch: one sequential read of each row keeps the hardware
      // prefetchers streaming, where reading V in place column-block by column-block stalls.
      float* kd = s.kdeq + static_cast<size_t>(j) * src.k;
      float* vd = s.vdeq + static_cast<size_t>(j) * src.k;
      std::memcpy(kd, static_cast<const float*>(c.k) + off, static_cast<size_t>(src.k) * 4);
      std::memcpy(vd, static_cast<const float*>(c.v) + off, static_cast<size_t>(src.k) * 4);
      s.krow[j] = kd;
      s.vrow[j] = vd;
      s.kscale[j] = 1.f;
      s.vscale[j] = 1.f;
    } else {  // i8: dequantize into scratch, scale folded into score / probability
      float* kd = s.kdeq + static_cast<size_t>(j) * src.k;
      float* vd = s.vdeq + static_cast<size_t>(j) * src.k;
      int8_to_f32(static_cast<const int8_t*>(c.k) + off, kd, src.k);
      int8_to_f32(static_cast<const int8_t*>(c.v) + off, vd, src.k);
      s.krow[j] = kd;
      s.vrow[j] = vd;
      s.kscale[j] = c.k_scales[src.g * c.capacity + slot];
      s.vscale[j] = c.v_scales[src.g * c.capacity + slot];
    }
  }
}

// One query (r heads sharing kv head src.g) over the attended intervals [a1,b1) and [a2,b2)
// (sorted, disjoint, the second possibly empty), tile by tile on the absolute-position grid.
void attend_query(const float* q, int32_t r, int32_t k, float scale, const KeySource& src,
                  int64_t a1, int64_t b1, int64_t a2, int64_t b2, const ScratchLayout& s,
                  float* out) {
  for (int32_t i = 0; i < r * k; ++i) s.acc[i] = 0.f;
  for (int32_t h = 0; h < r; ++h) {
    s.run_max[h] = -INFINITY;
    s.run_sum[h] = 0.f;
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
    int32_t cnt = 0;
    gather(src, t0 > a1 ? t0 : a1, t1 < b1 ? t1 : b1, s, &cnt);
    if (a2 < b2) gather(src, t0 > a2 ? t0 : a2, t1 < b2 ? t1 : b2, s, &cnt);
    if (cnt > 0) attend_tile(q, r, k, scale, s, cnt);
    ++tile;
    if (a2 < b2 && tile * kTile >= b1 && tile * kTile < a2) tile = a2 / kTile;
  }
  for (int32_t h = 0; h < r; ++h) {
    const float inv = 1.f / s.run_sum[h];
    for (int32_t d = 0; d < k; ++d) out[h * k + d] = s.acc[h * k + d] * inv;
  }
}

}  // namespace

float attention_default_scale(int32_t head_dim) {
  return head_dim > 0 ? 1.f / std::sqrt(static_cast<float>(head_dim)) : 0.f;
}

Status attention_validate_shape(const AttentionShape& sh) {
  if (sh.n_heads <= 0 || sh.n_kv_heads <= 0 || sh.head_dim <= 0) {
    return make_status(StatusCode::invalid_argument, "attention: head counts and head_dim must be > 0");
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
  (void)kv_dtype;  // every cache dtype stages a tile of rows in scratch
  return ScratchLayout(nullptr, r, shape.head_dim, true).bytes;
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
    return make_status(StatusCode::invalid_argument, "attention: non-causal attention takes no cache");
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
      return make_status(StatusCode::out_of_range, "attention: cache holds a different number of positions",
                         pos0, c.n_positions);
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
                           "attention: window or sinks larger than the cache keeps",
                           shape.window, c.capacity);
      }
    }
  }
  const bool quantized = shape.causal && pos0 > 0;  // cache rows are staged in scratch
  const uintptr_t base = reinterpret_cast<uintptr_t>(scratch);
  void* aligned = scratch ? reinterpret_cast<void*>((base + 63) & ~uintptr_t(63)) : nullptr;
  const ScratchLayout need(nullptr, r, k, quantized);
  if (scratch == nullptr || scratch_bytes < need.bytes) {
    return make_status(StatusCode::out_of_memory, "attention: scratch too small",
                       static_cast<int64_t>(need.bytes), static_cast<int64_t>(scratch ? scratch_bytes : 0));
  }
  const ScratchLayout s(aligned, r, k, quantized);

  KeySource src;
  src.k_new = k_new;
  src.v_new = v_new;
  src.pos0 = pos0;
  src.new_stride = static_cast<int64_t>(G) * k;
  src.cache = cache;
  src.k = k;
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
      attend_query(q + qoff, r, k, shape.scale, src, a1, b1, a2, b2, s, out + qoff);
    }
  }
  return ok_status();
}

}  // namespace einfer
