// Quantized matmul: argument checks, activation quantization into scratch, dispatch to the SIMD
// microkernels (gemm_q8_q4_4x4_avx2.cpp, gemm_q8_q4_4x1_neon.cpp), the Cortex-M ones
// (gemm_q8_q4_2x1_dsp.cpp, gemm_q8_q4_4x1_mve.cpp) or the scalar int path, and the float
// dequantizing reference.
#include "kernels/gemm_quant/gemm_quant.h"

#include <cmath>
#include <cstring>

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
    const float scale = amax / 127.f;
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
Status check_args(const float* a, int64_t lda, int64_t m, const TensorView& w, const float* c,
                  int64_t ldc, bool check_c = true) {
  if (!dtype_is_quantized(w.dtype) || w.rank != 2 || w.group_size <= 0) {
    return make_status(StatusCode::invalid_argument,
                       "matmul_f32_quant: weight must be a 2-D q8/q4 view with group_size > 0");
  }
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
  if (m > 0 && n > 0 && ((check_c && !c) || (k > 0 && (!a || !w.data || !w.scales)))) {
    return make_status(StatusCode::invalid_argument, "matmul_f32_quant: null data pointer");
  }
  return ok_status();
}

// Scratch layout (from the first 64-byte boundary, each part on a 64-byte boundary): activation
// scales [m][groups] f32, chunk sums [m][kpad / 32] int32, quantized activations [m][kpad] int8.
struct ScratchLayout {
  float* sa;
  int32_t* csum;
  int8_t* qa;
};

size_t scales_bytes(int64_t m, int64_t groups) {
  return round64(4 * static_cast<size_t>(m * groups));
}
size_t csum_bytes(int64_t m, int64_t kpad) {
  return round64(4 * static_cast<size_t>(m * (kpad / quant_detail::kChunk)));
}

ScratchLayout carve_scratch(void* scratch, int64_t m, int64_t groups, int64_t kpad) {
  const uintptr_t base = (reinterpret_cast<uintptr_t>(scratch) + 63) & ~static_cast<uintptr_t>(63);
  ScratchLayout s;
  s.sa = reinterpret_cast<float*>(base);
  s.csum = reinterpret_cast<int32_t*>(base + scales_bytes(m, groups));
  s.qa = reinterpret_cast<int8_t*>(base + scales_bytes(m, groups) + csum_bytes(m, kpad));
  return s;
}

// Quantizes rows [r0, r1) of A into the scratch layout `s` (natural order, or even/odd chunks for
// the SIMD and Cortex-M DSP q4 kernels).
void quantize_row_range(const float* a, int64_t lda, int64_t k, DType dtype, int32_t group,
                        bool even_odd_q4, const ScratchLayout& s, int64_t kpad, int64_t groups,
                        int64_t r0, int64_t r1) {
  for (int64_t i = r0; i < r1; ++i) {
    int8_t* qa = s.qa + i * kpad;
#if EINFER_HAS_MVE
    quant_detail::quantize_activations_q8_mve(a + i * lda, k, group, qa, s.sa + i * groups);
#elif EINFER_HAS_SIMD && defined(__AVX2__)
    quant_detail::quantize_activations_q8_avx2(a + i * lda, k, group, qa, s.sa + i * groups);
#else
    quant_detail::quantize_activations_q8(a + i * lda, k, group, qa, s.sa + i * groups);
#endif
    std::memset(qa + k, 0, static_cast<size_t>(kpad - k));
#if EINFER_HAS_SIMD && defined(__AVX2__)
    // The chunk sums: the q4 kernels' nibble offset, and the AVX-512 VNNI prefill's q8 offset.
    if (even_odd_q4) {
      quant_detail::chunk_sums_times8(qa, kpad, s.csum + i * (kpad / quant_detail::kChunk));
    }
#endif
    if (even_odd_q4 && dtype == DType::q4) {
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

// Checks, quantizes A into scratch (natural order, or even/odd chunks for the SIMD and Cortex-M
// DSP q4 kernels) and fills the kernel arguments.
Status prepare(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c, int64_t ldc,
               void* scratch, size_t scratch_bytes, bool even_odd_q4, const Threads* threads,
               quant_detail::QuantGemm* p) {
  EINFER_TRY(check_args(a, lda, m, w, c, ldc));
  const int64_t k = w.shape[1];
  const size_t need = matmul_quant_scratch_bytes(m, k, w.group_size);
  if (!scratch || scratch_bytes < need) {
    return make_status(StatusCode::out_of_memory, "matmul_f32_quant: scratch too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  }
  const int64_t groups = quant_groups(k, w.group_size);
  const int64_t kpad = padded_k(k);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  // Rows are quantized independently, so tasks take whole rows.
  const int tasks = static_cast<int>(m < thread_count(threads) ? m : thread_count(threads));
  auto quantize_rows = [&](int task) {
    long long r0 = 0, r1 = 0;
    split_range(m, task, tasks, 1, &r0, &r1);
    quantize_row_range(a, lda, k, w.dtype, w.group_size, even_odd_q4, s, kpad, groups, r0, r1);
  };
  run_tasks(threads, tasks, quantize_rows);
  *p = quant_detail::QuantGemm{s.qa,     s.sa,
                               s.csum,   static_cast<const uint8_t*>(w.data),
                               w.scales, quant_row_bytes(w.dtype, k),
                               m,        w.shape[0],
                               k,        kpad,
                               groups,   w.group_size,
                               c,        ldc};
  return ok_status();
}

void run_scalar_int(const quant_detail::QuantGemm& p, DType dtype) {
  if (dtype == DType::q8) {
    quant_detail::gemm_q8_1x1_scalar(p);
  } else {
    quant_detail::gemm_q4_1x1_scalar(p);
  }
}

// Cortex-M builds only (mcu_supports_group is false elsewhere).
void run_mcu(const quant_detail::QuantGemm& p, DType dtype) {
#if EINFER_HAS_MVE
  if (dtype == DType::q8) {
    quant_detail::gemm_q8_4x1_mve(p);
  } else {
    quant_detail::gemm_q4_4x1_mve(p);
  }
#elif EINFER_HAS_DSP
  if (dtype == DType::q8) {
    quant_detail::gemm_q8_2x1_dsp(p);
  } else {
    quant_detail::gemm_q4_2x1_dsp(p);
  }
#else
  run_scalar_int(p, dtype);
#endif
}

// Column blocks of a threaded product: a multiple of every microkernel's tile width.
constexpr int64_t kColumnAlign = 16;

void run_kernel(const quant_detail::QuantGemm& p, DType dtype, bool simd, bool mcu);

}  // namespace

size_t matmul_quant_scratch_bytes(int64_t m, int64_t k, int32_t group) {
  if (m < 0 || k < 0 || group <= 0) return 64;
  // 64 bytes to align the caller's pointer, activation scales, chunk sums, zero-padded int8 rows.
  return 64 + scales_bytes(m, quant_groups(k, group)) + csum_bytes(m, padded_k(k)) +
         round64(static_cast<size_t>(m * padded_k(k)));
}

Status matmul_f32_quant(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                        int64_t ldc, void* scratch, size_t scratch_bytes, const Threads* threads) {
  const bool q4 = w.dtype == DType::q4;
  const bool simd = quant_detail::simd_supports_group(q4, w.group_size);
  const bool mcu = quant_detail::mcu_supports_group(q4, w.group_size);
  quant_detail::QuantGemm p;
  EINFER_TRY(prepare(a, lda, m, w, c, ldc, scratch, scratch_bytes, simd || mcu, threads, &p));
  if (p.m == 0 || p.n == 0) return ok_status();
  // Tasks take blocks of output columns (weight rows) on multiples of kColumnAlign, so every
  // element is computed by the same tile, in the same order, whatever the thread count.
  const int64_t blocks = (p.n + kColumnAlign - 1) / kColumnAlign;
  const int tasks =
      static_cast<int>(blocks < thread_count(threads) ? blocks : thread_count(threads));
  auto columns = [&](int task) {
    long long j0 = 0, j1 = 0;
    split_range(p.n, task, tasks, kColumnAlign, &j0, &j1);
    quant_detail::QuantGemm part = p;
    part.w += static_cast<size_t>(j0) * p.w_row_bytes;
    part.sw += j0 * p.groups;
    part.c += j0;
    part.n = j1 - j0;
    if (part.n > 0) run_kernel(part, w.dtype, simd, mcu);
  };
  run_tasks(threads, tasks, columns);
  return ok_status();
}

namespace {
// The scratch checks both steps of the two-step form make.
Status check_step_scratch(int64_t m, const TensorView& w, const void* scratch,
                          size_t scratch_bytes) {
  const size_t need = matmul_quant_scratch_bytes(m, w.shape[1], w.group_size);
  if (!scratch || scratch_bytes < need) {
    return make_status(StatusCode::out_of_memory, "matmul_f32_quant: scratch too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  }
  return ok_status();
}
// The weight, scratch and C checks of the second step (matmul_quant_columns / _row_block).
Status check_second_step(int64_t m, const TensorView& w, const float* c, int64_t ldc,
                         const void* scratch, size_t scratch_bytes) {
  if (!dtype_is_quantized(w.dtype) || w.rank != 2 || w.group_size <= 0 || !w.data || !w.scales) {
    return make_status(StatusCode::invalid_argument,
                       "matmul_quant: weight must be a 2-D q8/q4 view with data");
  }
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
  const bool q4 = w.dtype == DType::q4;
  const bool even_odd = quant_detail::simd_supports_group(q4, w.group_size) ||
                        quant_detail::mcu_supports_group(q4, w.group_size);
  const int64_t k = w.shape[1], groups = quant_groups(k, w.group_size), kpad = padded_k(k);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  quantize_row_range(a, lda, k, w.dtype, w.group_size, even_odd, s, kpad, groups, r0, r1);
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
  const bool q4 = w.dtype == DType::q4;
  const bool simd = quant_detail::simd_supports_group(q4, w.group_size);
  const bool mcu = quant_detail::mcu_supports_group(q4, w.group_size);
  const int64_t k = w.shape[1], groups = quant_groups(k, w.group_size), kpad = padded_k(k);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  const quant_detail::QuantGemm part{
      s.qa,
      s.sa,
      s.csum,
      static_cast<const uint8_t*>(w.data) + static_cast<size_t>(j0) * quant_row_bytes(w.dtype, k),
      w.scales + j0 * groups,
      quant_row_bytes(w.dtype, k),
      m,
      j1 - j0,
      k,
      kpad,
      groups,
      w.group_size,
      c + j0,
      ldc};
  run_kernel(part, w.dtype, simd, mcu);
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
  const bool q4 = w.dtype == DType::q4;
  const bool simd = quant_detail::simd_supports_group(q4, w.group_size);
  const bool mcu = quant_detail::mcu_supports_group(q4, w.group_size);
  const int64_t k = w.shape[1], groups = quant_groups(k, w.group_size), kpad = padded_k(k);
  const ScratchLayout s = carve_scratch(scratch, m, groups, kpad);
  const quant_detail::QuantGemm part{s.qa + r0 * kpad,
                                     s.sa + r0 * groups,
                                     s.csum + r0 * (kpad / quant_detail::kChunk),
                                     static_cast<const uint8_t*>(w.data),
                                     w.scales,
                                     quant_row_bytes(w.dtype, k),
                                     r1 - r0,
                                     n,
                                     k,
                                     kpad,
                                     groups,
                                     w.group_size,
                                     c + r0 * ldc,
                                     ldc};
  run_kernel(part, w.dtype, simd, mcu);
  return ok_status();
}

namespace {

void run_kernel(const quant_detail::QuantGemm& p, DType dtype, bool simd, bool mcu) {
  if (mcu) {
    run_mcu(p, dtype);
    return;
  }
  const bool q4 = dtype == DType::q4;
  if (!simd) {
    run_scalar_int(p, dtype);
    return;
  }
#if EINFER_HAS_SIMD && defined(__AVX2__)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  // AMX whenever m > 1 (not only for many rows): a row block of a threaded prefill must take the
  // kernel the whole product takes, or the bits would depend on the thread count.
  if (p.m > 1 && isa_extension_enabled(IsaExtension::amx) &&
      quant_detail::gemm_amx_supports(p, q4)) {
    if (q4) {
      quant_detail::gemm_q4_16x16_amx(p);
    } else {
      quant_detail::gemm_q8_16x16_amx(p);
    }
    return;
  }
  if (p.m > 1 && isa_extension_enabled(IsaExtension::avx512vnni) &&
      quant_detail::gemm_8x16_avx512vnni_supports(p)) {
    if (q4) {
      quant_detail::gemm_q4_8x16_avx512vnni(p);
    } else {
      quant_detail::gemm_q8_8x16_avx512vnni(p);
    }
    return;
  }
  if (p.m > 1 && isa_extension_enabled(IsaExtension::avx512vnni)) {
    if (q4) {
      quant_detail::gemm_q4_4x4_avx512vnni(p);
    } else {
      quant_detail::gemm_q8_4x4_avx512vnni(p);
    }
    return;
  }
  if (p.m == 1 && p.group == 32 && isa_extension_enabled(IsaExtension::avx512vnni)) {
    if (q4) {
      quant_detail::gemv_q4_1x4_avx512vnni(p);
    } else {
      quant_detail::gemv_q8_1x4_avx512vnni(p);
    }
    return;
  }
#endif
  if (p.m > 1 && quant_detail::gemm_3x16_avx2_supports(p)) {
    if (q4) {
      quant_detail::gemm_q4_3x16_avx2(p);
    } else {
      quant_detail::gemm_q8_3x16_avx2(p);
    }
  } else if (p.m > 1) {
    if (q4) {
      quant_detail::gemm_q4_4x2_avx2(p);
    } else {
      quant_detail::gemm_q8_4x2_avx2(p);
    }
  } else if (q4 && p.group == 32) {
    quant_detail::gemv_q4_1x4_avx2(p);
  } else if (!q4 && p.group == 32 && p.groups % 8 != 0) {
    quant_detail::gemv_q8_1x4_avx2(p);
  } else if (q4) {
    quant_detail::gemm_q4_4x4_avx2(p);
  } else {
    quant_detail::gemm_q8_4x4_avx2(p);
  }
#elif EINFER_HAS_SIMD && defined(__ARM_NEON)
  if (q4) {
    quant_detail::gemm_q4_4x1_neon(p);
  } else {
    quant_detail::gemm_q8_4x1_neon(p);
  }
#else
  (void)q4;
  run_scalar_int(p, dtype);
#endif
}

}  // namespace

namespace scalar {

Status matmul_f32_quant_int8(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                             int64_t ldc, void* scratch, size_t scratch_bytes) {
  quant_detail::QuantGemm p;
  EINFER_TRY(prepare(a, lda, m, w, c, ldc, scratch, scratch_bytes, false, nullptr, &p));
  if (p.m > 0 && p.n > 0) run_scalar_int(p, w.dtype);
  return ok_status();
}

void matmul_f32_quant_reference(const float* a, int64_t lda, int64_t m, const TensorView& w,
                                float* c, int64_t ldc) {
  const int64_t n = w.shape[0], k = w.shape[1];
  const int64_t groups = quant_groups(k, w.group_size);
  const size_t row_bytes = quant_row_bytes(w.dtype, k);
  for (int64_t j = 0; j < n; ++j) {
    const unsigned char* q = static_cast<const unsigned char*>(w.data) + j * row_bytes;
    const float* s = w.scales + j * groups;
    for (int64_t i = 0; i < m; ++i) {
      float acc = 0.f;
      for (int64_t e = 0; e < k; ++e) {
        int v;
        if (w.dtype == DType::q8) {
          v = static_cast<int8_t>(q[e]);
        } else {
          v = ((e & 1) ? (q[e / 2] >> 4) : (q[e / 2] & 0x0F)) - 8;
        }
        acc += a[i * lda + e] * static_cast<float>(v) * s[e / w.group_size];
      }
      c[i * ldc + j] = acc;
    }
  }
}

}  // namespace scalar

}  // namespace einfer
