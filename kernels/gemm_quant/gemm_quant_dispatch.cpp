// Quantized matmul: argument checks, activation quantization into scratch (natural rows or the
// interleaved layouts' blocked orders), dispatch to the microkernels gemm_quant_choice.inc picks
// (x86/, arm/, cortex_m/, the scalar twins), and the float dequantizing reference.
#include "kernels/gemm_quant/gemm_quant.h"

#include <cmath>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "kernels/gemm_quant/gemm_quant_internal.h"
#include "kernels/isa/isa.h"
#include "kernels/quant/quant.h"

namespace einfer {

namespace quant_detail {

void quantize_activations_q8(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa) {
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    // Per-group counts in int32 (a group is an int32): 64-bit loop counters cost 32-bit cores.
    const int32_t n = static_cast<int32_t>(k - g0 < group ? k - g0 : group);
    const float* ag = a + g0;
    int8_t* qg = qa + g0;
    float amax = 0.f;
    for (int32_t e = 0; e < n; ++e) amax = std::fabs(ag[e]) > amax ? std::fabs(ag[e]) : amax;
    const float scale = activation_scale(amax);
    const float inv = scale > 0.f ? 1.f / scale : 0.f;
    sa[gi] = scale;
    for (int32_t e = 0; e < n; ++e) {
      // x * inv can exceed 127 by an ulp; clamp after rounding (nearest even, the FP default).
      int32_t r = lrint_small(ag[e] * inv);
      r = r > 127 ? 127 : (r < -127 ? -127 : r);
      qg[e] = static_cast<int8_t>(r);
    }
  }
}

template <int kSize>
void permute_even_odd(int8_t* qa, int64_t kpad) {
  for (int64_t c = 0; c < kpad; c += kSize) {
    int8_t tmp[kSize];
    for (int e = 0; e < kSize / 2; ++e) {
      tmp[e] = qa[c + 2 * e];
      tmp[kSize / 2 + e] = qa[c + 2 * e + 1];
    }
    std::memcpy(qa + c, tmp, sizeof tmp);
  }
}

void permute_chunks_even_odd(int8_t* qa, int64_t kpad) {
  permute_even_odd<kChunk>(qa, kpad);
}
void permute_blocks_even_odd64(int8_t* qa, int64_t kpad) {
  permute_even_odd<kBlock>(qa, kpad);
}
void permute_even_odd8(int8_t* qa, int64_t kpad) {
  permute_even_odd<8>(qa, kpad);
}

void chunk_sums_times8(const int8_t* qa, int64_t kpad, int32_t* csum) {
  for (int64_t c = 0; c < kpad / kChunk; ++c) {
    int32_t s = 0;
    for (int64_t e = 0; e < kChunk; ++e) s += qa[c * kChunk + e];
    csum[c] = 8 * s;
  }
}

bool simd_supports_group(bool q4, int32_t group) {
#if EINFER_HAS_SIMD && defined(__AVX2__)
  // Group sums stay in int32; only two chunks' products ever share an int16 lane.
  (void)q4;
  return group % kChunk == 0;
#elif EINFER_HAS_SIMD && defined(__ARM_NEON)
  // The NEON q4 kernel keeps the limit of 8 chunks per group it shares with the tiling it was
  // written for (8 * 3810 < 32767 for int16 sums of unsigned nibbles).
  return group % kChunk == 0 && (!q4 || group <= 8 * kChunk);
#else
  (void)q4;
  (void)group;
  return false;
#endif
}

bool mcu_supports_group(bool q4, int32_t group) {
#if EINFER_HAS_MVE
  return q4 ? group % 32 == 0 : group % 4 == 0;
#elif EINFER_HAS_DSP
  return group % (q4 ? 8 : 4) == 0;
#else
  (void)q4;
  (void)group;
  return false;
#endif
}

}  // namespace quant_detail

namespace {

using quant_detail::padded_k;

size_t round64(size_t x) {
  return (x + 63) / 64 * 64;
}

// c == nullptr with check_c false: the caller writes no C (matmul_quant_rows).
// The weight view's own checks, shared by every entry point.
inline Status check_weight(const TensorView& w) {
  // A rows-only build (EINFER_LAYOUTS off) takes the rows layout alone.
  if (!dtype_is_quantized(w.dtype) || w.rank != 2 || w.group_size <= 0 ||
      (!kLayoutsBuilt && w.layout != WeightLayout::rows)) {
    return make_status(StatusCode::invalid_argument,
                       "matmul_quant: weight must be a 2-D q8/q4 view with group_size > 0");
  }
  if constexpr (kLayoutsBuilt) {
    if (const char* why = layout_fit_error(w.dtype, w.layout, w.group_size))
      return make_status(StatusCode::invalid_argument, why, -1, w.group_size);
  }
  return ok_status();
}

Status check_args(const float* a, int64_t lda, int64_t m, const TensorView& w, const float* c,
                  int64_t ldc, bool check_c = true) {
  EINFER_TRY(check_weight(w));
  const int64_t n = w.shape[0], k = w.shape[1];
  if (m < 0 || n < 0 || k < 0) {
    return make_status(StatusCode::shape_mismatch, "matmul_f32_quant: negative dimension");
  }
  if (m > 1 && lda < k) {
    return make_status(StatusCode::shape_mismatch, "matmul_f32_quant: lda smaller than k", k, lda);
  }
  if (m > 1 && ldc < n) {
    return make_status(StatusCode::shape_mismatch, "matmul_f32_quant: ldc smaller than n", n, ldc);
  }
  const bool scales = w.scales != nullptr || layout_interleaved(w.layout);
  if (m > 0 && n > 0 && ((check_c && !c) || (k > 0 && (!a || !w.data || !scales)))) {
    return make_status(StatusCode::invalid_argument, "matmul_f32_quant: null data pointer");
  }
  return ok_status();
}

using quant_detail::ActOrder;

// The order the kernel matmul_f32_quant picks for w and m rows reads its activations in.
ActOrder act_order(const TensorView& w, int64_t m);

// Activation row length in the scratch: interleaved layouts read whole groups (a last group past
// k is zero-padded in the weights, so its activations must read as zeros too).
int64_t weight_kpad(const TensorView& w) {
  const int64_t k = w.shape[1];
  return padded_k(layout_interleaved(w.layout) ? quant_groups(k, w.group_size) * w.group_size : k);
}

// Scratch layout (from the first 64-byte boundary, each part on a 64-byte boundary): activation
// scales [m][groups] f32, chunk sums [m][kpad / 32] int32 (AVX2 builds: the only kernels that read
// them), quantized activations [m][kpad] int8 (or a blocked order's blocks).
struct ScratchLayout {
  float* sa;
  int32_t* csum;
  int8_t* qa;
};

size_t scales_bytes(int64_t m, int64_t groups) {
  return round64(4 * static_cast<size_t>(m * groups));
}
constexpr bool kChunkSums = EINFER_CHUNK_SUM_SCRATCH != 0;
size_t csum_bytes(int64_t m, int64_t kpad) {
  return kChunkSums ? round64(4 * static_cast<size_t>(m * (kpad / quant_detail::kChunk))) : 0;
}

ScratchLayout carve_scratch(void* scratch, int64_t m, int64_t groups, int64_t kpad) {
  const uintptr_t base = (reinterpret_cast<uintptr_t>(scratch) + 63) & ~static_cast<uintptr_t>(63);
  ScratchLayout s;
  s.sa = reinterpret_cast<float*>(base);
  s.csum = reinterpret_cast<int32_t*>(base + scales_bytes(m, groups));
  s.qa = reinterpret_cast<int8_t*>(base + scales_bytes(m, groups) + csum_bytes(m, kpad));
  return s;
}

// One row's group quantization (the fastest code the build has).
void quantize_row(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa) {
#if EINFER_HAS_MVE
  quant_detail::quantize_activations_q8_mve(a, k, group, qa, sa);
#elif EINFER_HAS_SIMD && defined(__AVX2__)
  quant_detail::quantize_activations_q8_avx2(a, k, group, qa, sa);
#elif EINFER_HAS_SIMD && defined(__aarch64__)
  quant_detail::quantize_activations_q8_neon(a, k, group, qa, sa);
#else
  quant_detail::quantize_activations_q8(a, k, group, qa, sa);
#endif
}

#if EINFER_LAYOUT_SIMD
#if EINFER_HAS_SIMD && defined(__AVX2__)
// The sum of n int8 (n a multiple of 16): sums of absolute differences of x + 128 against zero.
int32_t sum_int8_x16(const int8_t* x, int32_t n) {
  __m128i acc = _mm_setzero_si128();
  for (int32_t e = 0; e < n; e += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + e));
    acc = _mm_add_epi64(acc,
                        _mm_sad_epu8(_mm_xor_si128(v, _mm_set1_epi8(-128)), _mm_setzero_si128()));
  }
  acc = _mm_add_epi64(acc, _mm_unpackhi_epi64(acc, acc));
  return _mm_cvtsi128_si32(acc) - 128 * n;
}
#endif

// Row i of A (null: a zero row past m) into its blocks of blocked order kOrder
// (gemm_quant_internal.h): the token's values in chunks of 16 (single, quad) or 8 (pair) bytes,
// its scale and -8 * sum (q4; 0 for q8) in the header (single: also -128 * sum).
template <ActOrder kOrder>
void quantize_row_blocked(const float* a, int64_t i, int64_t k, int32_t group, bool q4,
                          int8_t* base, int64_t groups) {
  constexpr int kRows = quant_detail::act_block_rows(kOrder);
  constexpr int kChunk = kOrder == ActOrder::pair ? 8 : 16;
  constexpr int64_t kStride = kOrder == ActOrder::quad ? 64 : 16;
  const int64_t bb = quant_detail::act_block_bytes(kOrder, group);
  const int r = static_cast<int>(i % kRows);
  const int64_t at = kOrder == ActOrder::single ? 16
                     : kOrder == ActOrder::quad ? 80 + r * 16
                                                : 32 + r * 8;
  int8_t* blk = base + i / kRows * groups * bb;
  for (int64_t g = 0; g < groups; ++g, blk += bb) {
    const int32_t len = static_cast<int32_t>(k - g * group < group ? k - g * group : group);
    float sa = 0.f;
    int32_t sum = 0;
#if EINFER_HAS_SIMD && defined(__aarch64__)
    if (a != nullptr) {
      sa = quant_detail::quantize_group_chunked_neon(a + g * group, len, group, kChunk, kStride,
                                                     blk + at, &sum);
    } else {
      for (int32_t c = 0; c < group / kChunk; ++c) std::memset(blk + at + c * kStride, 0, kChunk);
    }
#else
#if EINFER_HAS_SIMD && defined(__AVX2__)
    if constexpr (kOrder == ActOrder::single) {  // the x86 GEMVs: straight into place
      int8_t* dst = blk + 16;
      const int32_t n = a != nullptr ? len : 0;
      if (n > 0) quantize_row(a + g * group, len, group, dst, &sa);
      std::memset(dst + n, 0, static_cast<size_t>(group - n));
      sum = sum_int8_x16(dst, group);
    } else
#endif
    {
      int8_t tmp[256];
      if (a != nullptr) quantize_row(a + g * group, len, group, tmp, &sa);
      std::memset(tmp + (a != nullptr ? len : 0), 0, static_cast<size_t>(group - (a ? len : 0)));
      for (int32_t e = 0; e < group; ++e) sum += tmp[e];
      for (int32_t c = 0; c < group / kChunk; ++c)
        std::memcpy(blk + at + c * kStride, tmp + c * kChunk, static_cast<size_t>(kChunk));
    }
#endif
    const int32_t asum8 = q4 ? -8 * sum : 0;
    float* hs = reinterpret_cast<float*>(blk);
    int32_t* hi = reinterpret_cast<int32_t*>(blk) + (kOrder == ActOrder::single ? 1 : 4);
    if constexpr (kOrder == ActOrder::single) {
      const int32_t h[3] = {asum8, -128 * sum, 0};
      hs[0] = sa;
      std::memcpy(hi, h, sizeof h);
    } else if constexpr (kOrder == ActOrder::quad) {
      const int32_t h[4] = {asum8, asum8, asum8, asum8};
      hs[r] = sa;
      std::memcpy(hi + 4 * r, h, sizeof h);
    } else {
      hs[2 * r] = hs[2 * r + 1] = sa;
      hi[2 * r] = hi[2 * r + 1] = asum8;
    }
  }
}

template <ActOrder kOrder>
void quantize_rows_blocked(const float* a, int64_t lda, int64_t k, int32_t group, bool q4,
                           int8_t* base, int64_t groups, int64_t m, int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i)
    quantize_row_blocked<kOrder>(a + i * lda, i, k, group, q4, base, groups);
  // The task with the last row zeroes the rest of its token block.
  if (r1 == m && r1 > r0)
    for (int64_t i = m; i % quant_detail::act_block_rows(kOrder) != 0; ++i)
      quantize_row_blocked<kOrder>(nullptr, i, k, group, q4, base, groups);
}
#endif  // EINFER_LAYOUT_SIMD

// Quantizes rows [r0, r1) of A (m rows in all) into the scratch layout `s` in the order `order`.
void quantize_row_range(const float* a, int64_t lda, int64_t k, int32_t group, bool q4,
                        ActOrder order, const ScratchLayout& s, int64_t kpad, int64_t groups,
                        int64_t m, int64_t r0, int64_t r1) {
#if EINFER_LAYOUT_SIMD
  switch (order) {
    case ActOrder::single:
      return quantize_rows_blocked<ActOrder::single>(a, lda, k, group, q4, s.qa, groups, m, r0, r1);
    case ActOrder::quad:
      return quantize_rows_blocked<ActOrder::quad>(a, lda, k, group, q4, s.qa, groups, m, r0, r1);
    case ActOrder::pair:
      return quantize_rows_blocked<ActOrder::pair>(a, lda, k, group, q4, s.qa, groups, m, r0, r1);
#if EINFER_HAS_SIMD && defined(__AVX2__)
    case ActOrder::wide16:  // int16 rows, zero from k to the stride
      for (int64_t i = r0; i < r1; ++i) {
        int16_t* row = reinterpret_cast<int16_t*>(s.qa) + i * quant_detail::wide16_stride(kpad);
        quant_detail::quantize_activations_q8_wide16_avx2(
            a + i * lda, k, group, row, s.sa + i * groups,
            s.csum + i * (kpad / quant_detail::kChunk));
        std::memset(row + k, 0, static_cast<size_t>(quant_detail::wide16_stride(kpad) - k) * 2);
      }
      return;
#endif
    default:
      break;
  }
#else
  (void)q4;
  (void)m;
#endif
  for (int64_t i = r0; i < r1; ++i) {
    int8_t* qa = s.qa + i * kpad;
    quantize_row(a + i * lda, k, group, qa, s.sa + i * groups);
    std::memset(qa + k, 0, static_cast<size_t>(kpad - k));
#if EINFER_HAS_SIMD && defined(__AVX2__)
    // The chunk sums (natural order, before any permutation): the q4 kernels' nibble offset and
    // the AVX-512 VNNI prefill's q8 offset (w + 128). No q8 GEMV reads them: none at m == 1.
    if (order == ActOrder::even_odd || m > 1)
      quant_detail::chunk_sums_times8(qa, kpad, s.csum + i * (kpad / quant_detail::kChunk));
#endif
    if (order == ActOrder::even_odd) {
#if EINFER_HAS_SIMD && defined(__AVX2__)
      quant_detail::permute_blocks_even_odd64(qa, kpad);
#elif EINFER_HAS_SIMD
      quant_detail::permute_chunks_even_odd(qa, kpad);
#elif EINFER_HAS_DSP && !EINFER_HAS_MVE
      quant_detail::permute_even_odd8(qa, kpad);
#else
      (void)s;
#endif  // MVE: natural order (VLD2 deinterleaves)
    }
  }
}

// The kernel arguments for all m rows of the quantized A in `s` and every column of W.
quant_detail::QuantGemm make_gemm(const ScratchLayout& s, const TensorView& w, int64_t m, float* c,
                                  int64_t ldc) {
  const int64_t k = w.shape[1];
  quant_detail::QuantGemm p{.qa = s.qa,
                            .sa = s.sa,
                            .csum = s.csum,
                            .w = static_cast<const uint8_t*>(w.data),
                            .sw = w.scales,
                            .w_row_bytes = quant_row_bytes(w.dtype, k),
                            .m = m,
                            .n = w.shape[0],
                            .k = k,
                            .kpad = weight_kpad(w),
                            .groups = quant_groups(k, w.group_size),
                            .group = w.group_size,
                            .c = c,
                            .ldc = ldc,
                            .layout = w.layout};
  if (layout_interleaved(w.layout)) {
    p.sw = nullptr;
    p.w_tile_bytes = static_cast<size_t>(layout_tile_bytes(w.dtype, w.layout, k, w.group_size));
  }
  if constexpr (EINFER_LAYOUT_SIMD) {  // the kernels that read blocked orders need the order
    p.order = act_order(w, m);
    p.act_block_bytes = quant_detail::act_block_bytes(p.order, w.group_size);
  }
  return p;
}

// p restricted to output columns [j0, j1) (j0 on a tile boundary of the layout).
quant_detail::QuantGemm column_part(const quant_detail::QuantGemm& p, int64_t j0, int64_t j1) {
  quant_detail::QuantGemm part = p;
  if (layout_interleaved(p.layout)) {
    part.w += static_cast<size_t>(j0 / layout_tile_rows(p.layout)) * p.w_tile_bytes;
  } else {
    part.w += static_cast<size_t>(j0) * p.w_row_bytes;
    part.sw += j0 * p.groups;
  }
  part.c += j0;
  part.n = j1 - j0;
  return part;
}

// The scratch checks every entry point makes.
Status check_step_scratch(int64_t m, const TensorView& w, const void* scratch,
                          size_t scratch_bytes) {
  const size_t need = matmul_quant_scratch_bytes(m, w.shape[1], w.group_size);
  if (!scratch || scratch_bytes < need) {
    return make_status(StatusCode::out_of_memory, "matmul_f32_quant: scratch too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  }
  return ok_status();
}
// Checks, quantizes A into scratch (in the order the weight's kernel reads) and fills the kernel
// arguments.
Status prepare(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c, int64_t ldc,
               void* scratch, size_t scratch_bytes, bool generic, const Threads* threads,
               quant_detail::QuantGemm* p) {
  EINFER_TRY(check_args(a, lda, m, w, c, ldc));
  EINFER_TRY(check_step_scratch(m, w, scratch, scratch_bytes));
  const int64_t k = w.shape[1];
  const int64_t groups = quant_groups(k, w.group_size);
  const int64_t kpad = weight_kpad(w);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  // generic: the scalar reference paths, which read natural rows.
  const ActOrder order = generic ? ActOrder::natural : act_order(w, m);
  // Rows are quantized independently, so tasks take whole rows.
  const int tasks = static_cast<int>(m < thread_count(threads) ? m : thread_count(threads));
  auto quantize_rows = [&](int task) {
    long long r0 = 0, r1 = 0;
    split_range(m, task, tasks, 1, &r0, &r1);
    quantize_row_range(a, lda, k, w.group_size, w.dtype == DType::q4, order, s, kpad, groups, m, r0,
                       r1);
  };
  run_tasks(threads, tasks, quantize_rows);
  *p = make_gemm(s, w, m, c, ldc);
  if (generic) {
    p->order = ActOrder::natural;
    p->act_block_bytes = 0;
  }
  return ok_status();
}

// The kernel choice: choose_kernel, scalar_int (KernelChoice, KERNEL).
#include "kernels/gemm_quant/gemm_quant_choice.inc"

ActOrder act_order(const TensorView& w, int64_t m) {
  quant_detail::QuantGemm p{};
  p.m = m;
  p.k = w.shape[1];
  p.group = w.group_size;
  p.groups = quant_groups(p.k, p.group);
  p.layout = w.layout;
  return choose_kernel(p, w.dtype).order;
}

void run_kernel(const quant_detail::QuantGemm& p, DType dtype) {
  choose_kernel(p, dtype).fn(p);
}

// Column blocks of a threaded product: a multiple of every microkernel's tile width and of every
// interleaved layout's tile rows.
constexpr int64_t kColumnAlign = 16;
static_assert(kColumnAlign % layout_tile_rows(WeightLayout::i4x4) == 0 &&
              kColumnAlign % layout_tile_rows(WeightLayout::i4x8) == 0 &&
              kColumnAlign % layout_tile_rows(WeightLayout::i8x4) == 0);

}  // namespace

size_t matmul_quant_scratch_bytes(int64_t m, int64_t k, int32_t group) {
  if (m < 0 || k < 0 || group <= 0) return 64;
  // 64 bytes to align the caller's pointer, activation scales, chunk sums, zero-padded int8 rows
  // (as long as whole groups: the interleaved layouts read them).
  const int64_t groups = quant_groups(k, group);
  const int64_t kpad = padded_k(groups * group);
  // The blocked orders (interleaved layouts' SIMD kernels) take at most (20 + group) bytes per
  // row and group, rows rounded up to a block of 4.
  size_t qa = static_cast<size_t>(m * kpad);
#if EINFER_CHUNK_SUM_SCRATCH  // x86-64 SIMD: AVX2's q8 prefill tiles read int16 rows (wide16)
  if (m > 1) qa = static_cast<size_t>(m * quant_detail::wide16_stride(kpad) * 2);
#endif
#if EINFER_BLOCKED_SCRATCH
  const size_t blocked = static_cast<size_t>((m + 3) / 4 * 4 * groups * (20 + int64_t{group}));
  if (quant_detail::blocked_group(false, group) && blocked > qa) qa = blocked;
#endif
  return 64 + scales_bytes(m, groups) + csum_bytes(m, kpad) + round64(qa);
}

namespace {
// The kernel a product of this shape would take (for the queries below; no data).
[[gnu::always_inline]] inline KernelChoice kernel_for(DType dtype, WeightLayout layout, int64_t k,
                                                      int32_t group, int64_t m) {
  quant_detail::QuantGemm p{};
  p.m = m;
  p.k = k;
  p.group = group;
  p.groups = quant_groups(k, group);
  p.kpad = padded_k(layout_interleaved(layout) ? p.groups * group : k);
  p.layout = layout;
  return choose_kernel(p, dtype);
}
}  // namespace

const char* matmul_quant_kernel_name(DType dtype, WeightLayout layout, int64_t k, int32_t group,
                                     int64_t m, bool* fast) {
  const KernelChoice choice = kernel_for(dtype, layout, k, group, m);
  if (fast != nullptr) *fast = choice.fast;
  return choice.name;
}

int64_t matmul_quant_min_rows(DType dtype, WeightLayout layout, int64_t k, int32_t group) {
#if !(EINFER_HAS_SIMD && defined(__AVX2__))
  (void)dtype, (void)layout, (void)k, (void)group;
  return 0;  // the packing tiles are x86's (no choice kept in firmware flash)
#else
  return kernel_for(dtype, layout, k, group, 2).min_rows;  // m = 2: a prefill
#endif
}

Status matmul_f32_quant(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                        int64_t ldc, void* scratch, size_t scratch_bytes, const Threads* threads) {
  quant_detail::QuantGemm p{};
  EINFER_TRY(prepare(a, lda, m, w, c, ldc, scratch, scratch_bytes, false, threads, &p));
  if (p.m == 0 || p.n == 0) return ok_status();
  // Tasks take blocks of output columns (weight rows) on multiples of kColumnAlign, so every
  // element is computed by the same tile, in the same order, whatever the thread count.
  const int64_t blocks = (p.n + kColumnAlign - 1) / kColumnAlign;
  const int tasks =
      static_cast<int>(blocks < thread_count(threads) ? blocks : thread_count(threads));
  auto columns = [&](int task) {
    long long j0 = 0, j1 = 0;
    split_range(p.n, task, tasks, kColumnAlign, &j0, &j1);
    if (j1 > j0) run_kernel(column_part(p, j0, j1), w.dtype);
  };
  run_tasks(threads, tasks, columns);
  return ok_status();
}

namespace {
// The weight, scratch and C checks of the second step (matmul_quant_columns / _row_block).
Status check_second_step(int64_t m, const TensorView& w, const float* c, int64_t ldc,
                         const void* scratch, size_t scratch_bytes) {
  EINFER_TRY(check_weight(w));
  if (!w.data || (!w.scales && !layout_interleaved(w.layout)))
    return make_status(StatusCode::invalid_argument, "matmul_quant: weight without data");
  EINFER_TRY(check_step_scratch(m, w, scratch, scratch_bytes));
  const int64_t n = w.shape[0];
  if (m < 0 || (m > 1 && ldc < n) || (m > 0 && n > 0 && c == nullptr)) {
    return make_status(StatusCode::invalid_argument, "matmul_quant: bad C", m, ldc);
  }
  return ok_status();
}
}  // namespace

Status matmul_quant_rows(const float* a, int64_t lda, int64_t m, const TensorView& w, int64_t r0,
                         int64_t r1, void* scratch, size_t scratch_bytes) {
  EINFER_TRY(check_args(a, lda, m, w, nullptr, w.shape[0], false));
  EINFER_TRY(check_step_scratch(m, w, scratch, scratch_bytes));
  if (r0 < 0 || r1 > m || r0 > r1) {
    return make_status(StatusCode::invalid_argument, "matmul_quant_rows: rows outside A", r0, r1,
                       m);
  }
  const int64_t k = w.shape[1], groups = quant_groups(k, w.group_size), kpad = weight_kpad(w);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  quantize_row_range(a, lda, k, w.group_size, w.dtype == DType::q4, act_order(w, m), s, kpad,
                     groups, m, r0, r1);
  return ok_status();
}

Status matmul_quant_columns(int64_t m, const TensorView& w, float* c, int64_t ldc, int64_t j0,
                            int64_t j1, void* scratch, size_t scratch_bytes) {
  EINFER_TRY(check_second_step(m, w, c, ldc, scratch, scratch_bytes));
  const int64_t n = w.shape[0];
  if (j0 < 0 || j1 > n || j0 > j1 || j0 % kColumnAlign != 0 ||
      (j1 % kColumnAlign != 0 && j1 != n)) {
    return make_status(StatusCode::invalid_argument,
                       "matmul_quant_columns: columns outside W or off the 16-column grid", j0, j1);
  }
  if (m == 0 || j1 == j0) return ok_status();
  const int64_t groups = quant_groups(w.shape[1], w.group_size), kpad = weight_kpad(w);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  run_kernel(column_part(make_gemm(s, w, m, c, ldc), j0, j1), w.dtype);
  return ok_status();
}

Status matmul_quant_row_block(int64_t m, const TensorView& w, float* c, int64_t ldc, int64_t r0,
                              int64_t r1, void* scratch, size_t scratch_bytes) {
  EINFER_TRY(check_second_step(m, w, c, ldc, scratch, scratch_bytes));
  const int64_t n = w.shape[0];
  // Off the 4-row grid (or a lone row of a longer product, which would take the GEMV) the tiles
  // would differ from matmul_f32_quant's, and so could the bits.
  if (r0 < 0 || r1 > m || r0 > r1 || r0 % 4 != 0 || (r1 % 4 != 0 && r1 != m) ||
      (m > 1 && r1 - r0 == 1)) {
    return make_status(StatusCode::invalid_argument,
                       "matmul_quant_row_block: rows outside A or off the 4-row grid", r0, r1, m);
  }
  if (r1 == r0 || n == 0) return ok_status();
  const int64_t groups = quant_groups(w.shape[1], w.group_size), kpad = weight_kpad(w);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  quant_detail::QuantGemm part = make_gemm(s, w, m, c, ldc);
  if (part.act_block_bytes > 0)  // blocked: r0 is a multiple of 4, so it starts a token block
    part.qa += r0 / quant_detail::act_block_rows(part.order) * groups * part.act_block_bytes;
#if EINFER_CHUNK_SUM_SCRATCH  // x86-64: the AVX2 q8 prefill's int16 rows
  else if (part.order == ActOrder::wide16)
    part.qa += r0 * quant_detail::wide16_stride(kpad) * 2;
#endif
  else
    part.qa += r0 * kpad;
  part.sa += r0 * groups;
  if constexpr (kChunkSums) part.csum += r0 * (kpad / quant_detail::kChunk);
  part.m = r1 - r0;
  part.c += r0 * ldc;
  run_kernel(part, w.dtype);
  return ok_status();
}

namespace scalar {

Status matmul_f32_quant_int8(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                             int64_t ldc, void* scratch, size_t scratch_bytes) {
  quant_detail::QuantGemm p{};
  EINFER_TRY(prepare(a, lda, m, w, c, ldc, scratch, scratch_bytes, true, nullptr, &p));
  if (p.m == 0 || p.n == 0) return ok_status();
  if (layout_interleaved(w.layout))
    (w.dtype == DType::q8 ? quant_detail::gemm_q8_interleaved_scalar
                          : quant_detail::gemm_q4_interleaved_scalar)(p);
  else
    scalar_int(w.dtype).fn(p);
  return ok_status();
}

#if defined(__x86_64__)  // the x86 GEMVs' twin: tests only, kept out of firmware
Status matmul_f32_quant_gemv_lanes(const float* a, const TensorView& w, float* c, void* scratch,
                                   size_t scratch_bytes) {
  if (layout_interleaved(w.layout) || w.group_size != 32)
    return make_status(StatusCode::invalid_argument,
                       "matmul_f32_quant_gemv_lanes: rows layout with groups of 32 only");
  quant_detail::QuantGemm p{};
  EINFER_TRY(
      prepare(a, w.shape[1], 1, w, c, w.shape[0], scratch, scratch_bytes, true, nullptr, &p));
  if (p.n == 0) return ok_status();
  (w.dtype == DType::q8 ? quant_detail::gemv_q8_1x4_lanes_scalar
                        : quant_detail::gemv_q4_1x4_lanes_scalar)(p);
  return ok_status();
}
#endif

namespace {
// Element e of row j of W (any layout) and its group's scale.
int weight_value(const TensorView& w, int64_t j, int64_t e, float* scale) {
  const int64_t k = w.shape[1], g = e / w.group_size;
  if (!layout_interleaved(w.layout)) {
    const unsigned char* q =
        static_cast<const unsigned char*>(w.data) + j * quant_row_bytes(w.dtype, k);
    *scale = w.scales[j * quant_groups(k, w.group_size) + g];
    if (w.dtype == DType::q8) return static_cast<int8_t>(q[e]);
    return ((e & 1) ? (q[e / 2] >> 4) : (q[e / 2] & 0x0F)) - 8;
  }
  const int32_t rows = layout_tile_rows(w.layout);
  const unsigned char* b =
      static_cast<const unsigned char*>(w.data) +
      static_cast<size_t>(j / rows) * layout_tile_bytes(w.dtype, w.layout, k, w.group_size) +
      static_cast<size_t>(g) * layout_block_bytes(w.dtype, w.layout, w.group_size);
  const int32_t r = static_cast<int32_t>(j % rows);
  std::memcpy(scale, b + r * 4, 4);
  const LayoutPlace at =
      layout_place(w.dtype, w.layout, w.group_size, r, static_cast<int32_t>(e - g * w.group_size));
  const unsigned char v = b[rows * 4 + at.byte];
  if (w.dtype == DType::q8) return static_cast<int8_t>(v);
  return (at.nibble ? v >> 4 : v & 0x0F) - 8;
}
}  // namespace

void matmul_f32_quant_reference(const float* a, int64_t lda, int64_t m, const TensorView& w,
                                float* c, int64_t ldc) {
  const int64_t n = w.shape[0], k = w.shape[1];
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      float acc = 0.f;
      for (int64_t e = 0; e < k; ++e) {
        float s = 0.f;
        const int v = weight_value(w, j, e, &s);
        acc += a[i * lda + e] * static_cast<float>(v) * s;
      }
      c[i * ldc + j] = acc;
    }
  }
}

}  // namespace scalar

}  // namespace einfer
