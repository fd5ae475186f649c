// Fused attention (kernels/attention/attention.h), the driver compiled once per ISA level: per
// query and kv head, an online softmax over key tiles aligned to absolute positions, with the kv
// head's H/G query heads processed together.
//
// Files: this driver (scratch, the tile loop, the entry points and their threads), with the
// tile kernels of its level included below into this one translation unit, one ISA per file, so
// the tile templates inline into the tile loop: attention_f32_simd.inc (xsimd) or
// attention_f32_scalar.inc, attention_small_head_simd.inc, attention_i8_avx2.inc or
// attention_i8_scalar.inc; the query walks (one query, prefill query blocks) in
// attention_query.inc, with the query blocks' own register tiles on aarch64
// (attention_block_neon.inc). The shape checks (attention.cpp) do not depend on the level. The
// scalar twin is attention_reference.cpp (unfused, einsum-based), which the tests compare it with.
#include "kernels/attention/attention.h"

#include <cmath>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstring>

#include "kernels/attention/attention_i8_rows.h"
#include "kernels/isa/isa.h"
#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"

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
//
// On AMD, only decode with heads wider than 64 takes the f32 requests (prefetch_head_dim,
// ScratchLayout::prefetch). For heads of 48 and 64 (MHA, r = 1) they cost more than they bring
// there: with K/V in L2 they were a third of the 15M shape's decode time (6.3 vs 4.4 us, 128
// positions), and end to end on a Zen 4 (one thread, CPU time, EINFER_ISA=avx2) decode ran faster
// without them: 15M q4 / q8 at context 2048 443 -> 639 / 373 -> 545 t/s, 110M q4 at 2048 70.9 ->
// 77.8 t/s, at 128 within noise. Its hardware prefetchers keep up with these short rows, and a
// request 8 KB ahead reaches rows that the rest of the tile's K or V pass evicts from L1 again
// before they are read. With 128-wide GQA heads (32 query heads on 8 kv heads, 2048 positions,
// K/V beyond L2) the requests still made decode 1.3x faster. Intel and Arm CPUs, not measured
// without them, keep the requests for every head.
#if defined(EINFER_ATTN_PREFETCH_BYTES)
size_t prefetch_bytes() {
  return EINFER_ATTN_PREFETCH_BYTES;
}
bool prefetch_head_dim(int32_t) {
  return true;
}
#elif defined(__x86_64__)
bool cpu_is_intel() {
  static const bool intel = [] {  // first use, not a static constructor
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(0, &a, &b, &c, &d) && b == 0x756e6547u && d == 0x49656e69u &&
           c == 0x6c65746eu;  // "GenuineIntel"
  }();
  return intel;
}
size_t prefetch_bytes() {
  return cpu_is_intel() ? 2048 : 8192;
}
bool prefetch_head_dim(int32_t head_dim) {
  return head_dim > 64 || cpu_is_intel();
}
#else
size_t prefetch_bytes() {
  return 8192;
}
bool prefetch_head_dim(int32_t) {
  return true;
}
#endif

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
  float* kscale = nullptr;         // [kTile] i8 row scales (1 for f32 rows; unset without i8 rows)
  float* vscale = nullptr;         // [kTile]
  int16_t* q16 = nullptr;          // [r][k] the query quantized for integer dots with i8 keys
  float* q16_scale = nullptr;      // [r]
  int32_t* p16 = nullptr;          // [r][kTile/2] int16 weight pairs for int8 V rows
  float* p16_scale = nullptr;      // [r]
  float* qbuf = nullptr;           // [r][k] a query block's query vectors (when sized for blocks)
  bool vnni = false;               // int8 integer dots via AVX-VNNI (chosen per call)
  bool prefetch = true;            // request f32 K/V rows ahead (decode; see attention_f32)
  float softcap = 0.f;             // AttentionShape::softcap
  size_t bytes = 0;

  // query_blocks: room for a query block's vectors (qbuf; attention_query.inc).
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
// Each level's kernels take the whole vectors of a row (the files below, one ISA each) and return
// where they stopped; these tails finish every row. The kernels are always inlined into the
// wrappers below, which compile as they did when each was one function.

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

// Soft-caps a tile's scaled scores (AttentionShape::softcap) and returns their new maximum. Every
// score goes through the same SIMD formula whatever its position (softcap_f32's padded tail).
__attribute__((noinline)) float softcap_scores(float* sh, int32_t cnt, float cap) {
  softcap_f32(sh, cap, static_cast<size_t>(cnt));
  return max_f32(sh, static_cast<size_t>(cnt));
}

#if EINFER_HAS_SIMD
#include "kernels/attention/attention_f32_simd.inc"         // xsimd: AVX2, NEON64, NEON32
#include "kernels/attention/attention_small_head_simd.inc"  // xsimd: heads of 1, 2 or 4 vectors
#else
#include "kernels/attention/attention_f32_scalar.inc"  // no SIMD: the tails do every element
#endif
#if EINFER_HAS_SIMD && defined(__AVX2__)
#include "kernels/attention/attention_i8_avx2.inc"  // int8 cache: AVX2 / AVX-VNNI integer dots
#else
#include "kernels/attention/attention_i8_scalar.inc"  // int8 cache: V rows widened to float
#endif

// out[h * out_stride + j] = dot(q + h*k, krow[j]) for RB heads and KB keys; q and K are read once
// per block, the RB*KB products accumulate in registers.
template <int RB, int KB, bool kPf>
inline void f32_dots_RBxKB(const float* q, const float* const* krow, int32_t k, float* out,
                           int32_t out_stride) {
  float acc[RB * KB];
  if constexpr (kPf)
    for (int j = 0; j < KB; ++j) prefetch_ahead(krow[j], static_cast<size_t>(k) * sizeof(float));
  const int32_t d = f32_dots_vec<RB, KB>(q, krow, k, acc);
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) {
      const float s =
          d < k ? dot_tail_f32(q + h * k, krow[j], d, k, acc[h * KB + j]) : acc[h * KB + j];
      out[h * out_stride + j] = s;
    }
}

// acc[h][:] += p[h * p_stride + j] * vrow[j][:] for RB heads over keys [j0, j1).
template <int RB, bool kPf>
inline void f32_accumulate_v_RB(const float* p, int32_t p_stride, const float* const* vrow,
                                int32_t j0, int32_t j1, int32_t k, float* acc) {
  const int32_t kv = f32_accumulate_v_vec<RB, kPf>(p, p_stride, vrow, j0, j1, k, acc);
  if (kv < k) {
    for (int32_t j = j0; j < j1; ++j)
      for (int h = 0; h < RB; ++h) axpy_tail_f32(p[h * p_stride + j], vrow[j], kv, k, acc + h * k);
  }
}

// f32_accumulate_v_RB over the f32 rows [j0, j1) of a tile (p: the heads' tile scores), one head's
// accumulator in registers where its rows are whole vectors.
template <int RB, bool kPf>
[[gnu::always_inline]] inline void f32_accumulate_v_rows(const float* p, const float* const* vrow,
                                                         int32_t j0, int32_t j1, int32_t k,
                                                         float* acc) {
  if (RB == 1 && f32_accumulate_v_regs_any<kPf>(p, vrow, j0, j1, k, acc)) return;
  f32_accumulate_v_RB<RB, kPf>(p, kTile, vrow, j0, j1, k, acc);
}

// Integer dots of the int16 query against int8 keys (exact, so any order): out = isum * q_scale.
template <int RB, int KB, bool kVnni>
inline void i8_dots_RBxKB(const int16_t* q16, const float* q_scale, const int8_t* const* krow,
                          int32_t k, float* out, int32_t out_stride) {
  int32_t acc[RB * KB];
  for (int j = 0; j < KB; ++j) prefetch_ahead(krow[j], static_cast<size_t>(k));
  const int32_t d = i8_dots_vec<RB, KB, kVnni>(q16, krow, k, acc);
  for (int h = 0; h < RB; ++h)
    for (int j = 0; j < KB; ++j) {
      const int32_t s =
          d < k ? dot_tail_i16_i8(q16 + h * k, krow[j], d, k, acc[h * KB + j]) : acc[h * KB + j];
      out[h * out_stride + j] = static_cast<float>(s) * q_scale[h];
    }
}

template <int RB, bool kVnni>
void i8_tile_scores(const ScratchLayout& s, int32_t h0, int32_t k, int32_t n8, float* sc) {
  int32_t j = 0;
  for (; j + 2 <= n8; j += 2)
    i8_dots_RBxKB<RB, 2, kVnni>(s.q16 + h0 * k, s.q16_scale + h0, s.k8row + j, k, sc + j, kTile);
  for (; j < n8; ++j)
    i8_dots_RBxKB<RB, 1, kVnni>(s.q16 + h0 * k, s.q16_scale + h0, s.k8row + j, k, sc + j, kTile);
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

template <int RB, bool kPf>
void tile_accumulate(const ScratchLayout& s, int32_t h0, int32_t k, TileRows t) {
  if (t.n8 > 0) i8_tile_accumulate<RB>(s, h0, k, t.n8);
  if (t.cnt > t.n8) {
    f32_accumulate_v_rows<RB, kPf>(s.scores + h0 * kTile, s.vrow, t.n8, t.cnt, k, s.acc + h0 * k);
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
// sum and accumulator. Fixed operation order for a given cnt: the level's whole vectors first, then
// these loops. kScales: the tile has int8 rows (TileRows::n8 > 0); all-f32 tiles have scales of 1,
// and their products are left out (x * 1 is x exactly, so the bits are the same).
// Size-optimized builds (-Os: the Cortex-M firmware) keep one softmax: there all-f32 tiles carry
// row scales of 1 like mixed ones (gather), so tile_softmax<true> serves both with the same bits.
#if defined(__OPTIMIZE_SIZE__)
constexpr bool kF32Scales = true;
#else
constexpr bool kF32Scales = false;
#endif

template <bool kScales>
void tile_softmax(const ScratchLayout& s, int32_t h, int32_t k, float scale, int32_t cnt) {
  float* sh = s.scores + h * kTile;
  float tile_max = -INFINITY;
  int32_t i = scores_scale_max_vec<kScales>(sh, s.kscale, scale, cnt, &tile_max);
  for (; i < cnt; ++i) {
    sh[i] = (kScales ? sh[i] * s.kscale[i] : sh[i]) * scale;
    tile_max = sh[i] > tile_max ? sh[i] : tile_max;
  }
  if (s.softcap > 0.f) tile_max = softcap_scores(sh, cnt, s.softcap);
  const float new_max = tile_max > s.run_max[h] ? tile_max : s.run_max[h];
  float tile_sum = 0.f;
  i = scores_exp_sum_vec<kScales>(sh, s.vscale, new_max, cnt, &tile_sum);
  for (; i < cnt; ++i) {
    const float e = std::exp(sh[i] - new_max);
    tile_sum += e;
    sh[i] = kScales ? e * s.vscale[i] : e;
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
  if (kF32Scales || t.n8 > 0) {
    for (int32_t h = 0; h < r; ++h) tile_softmax<true>(s, h, k, scale, t.cnt);
  } else {
    for (int32_t h = 0; h < r; ++h) tile_softmax<false>(s, h, k, scale, t.cnt);
  }
  for_rows<kPf>(q, s, 0, r, k, t, false);
}

#if EINFER_HAS_SIMD && defined(__aarch64__)
#include "kernels/attention/attention_block_neon.inc"  // prefill query blocks: register tiles
#else
constexpr bool kBlockKernels = false;  // query blocks run through for_rows (same float operations)
// Never called (kBlockKernels): only named in a discarded `if constexpr` branch.
[[maybe_unused]] inline void block_rows(const float*, const ScratchLayout&, int32_t, int32_t,
                                        int32_t, int32_t, bool) {}
#endif
#include "kernels/attention/attention_query.inc"

}  // namespace

bool attention_i8_dot_uses_vnni(AttentionI8Dot choice) {
  return i8_dot_uses_vnni(choice);
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
  // Chosen per call from k and the cache dtype only.
  const int32_t small_vectors = small_head_vectors(k, cache, pos0);
  const bool vnni = i8_dot_uses_vnni(shape.i8_dot);
  // Query blocks (attention_query.inc): prefill over f32 rows on the general path.
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
    s.softcap = shape.softcap;
    // Decode reads each f32 K/V row once, from wherever the cache sits; with wide enough rows
    // (prefetch_head_dim) it gains from requests ahead. A prefill block's queries
    // re-read the same rows, already in L1/L2, where the requests only cost (15M q8 prefill: +9%
    // without them). Two instantiations, so decode keeps its code as it was.
    s.prefetch = n == 1 && prefetch_head_dim(k);
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
