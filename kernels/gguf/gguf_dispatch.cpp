// matmul_f32_gguf: argument checks, activation rows quantized once into scratch (q8k or q8a
// blocks), then the multi-row kernel (4 weight rows x up to 4 activation rows per call) where the
// build has one, else one dot kernel call per output element; output columns split across threads.
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "kernels/gguf/gguf.h"
#include "kernels/gguf/gguf_quant_internal.h"
#include "kernels/isa/isa.h"

namespace einfer {

namespace {

using gguf_detail::BlockQ8A;
using gguf_detail::BlockQ8K;

// Activation bytes of one row: the larger of the two encodings (q8a: 40 per 32 elements).
size_t act_row_bytes(int64_t k) {
  const size_t q8a = static_cast<size_t>(k / 32) * sizeof(BlockQ8A);
  const size_t q8k = static_cast<size_t>(k / 256) * sizeof(BlockQ8K);
  return q8a > q8k ? q8a : q8k;
}

// Output columns per task block: a whole number of cache lines of C.
constexpr int64_t kColumnAlign = 16;

#if defined(EINFER_GGUF_AVX2) || defined(EINFER_GGUF_NEON)
// Output columns [j0, j1) through the multi-row kernel: four weight rows per pass, read from
// memory once and kept in L1 while every activation row (up to four per call) meets them; a short
// last group repeats its last row. Its own function, every value in a local: inside the column
// lambda each captured value was reloaded through its reference for every call (on a Cortex-A76,
// 12% of a q5_0-heavy decode's instructions were this loop). One activation row and four weight
// rows (decode) write their sums straight into C.
[[gnu::noinline]] void rows_pass(gguf_detail::RowsFn rows, const uint8_t* wd, size_t w_row,
                                 int64_t j0, int64_t j1, const unsigned char* act, size_t row_bytes,
                                 int64_t m, int64_t nb, float* c, int64_t ldc) {
  constexpr int kR = gguf_detail::kRowsPerCall;
  constexpr int kA = gguf_detail::kMaxActRows;
  int64_t j = j0;
  if (m == 1) {  // decode: whole groups of rows, few live values around the call
    for (; j + kR <= j1; j += kR) {
      const uint8_t* w0 = wd + j * w_row;
      const uint8_t* const wr[kR] = {w0, w0 + w_row, w0 + 2 * w_row, w0 + 3 * w_row};
      rows(wr, act, row_bytes, 1, nb, c + j);
    }
  }
  for (; j < j1; j += kR) {
    const int nr = j1 - j < kR ? static_cast<int>(j1 - j) : kR;
    const uint8_t* wr[kR];
    for (int r = 0; r < kR; ++r) wr[r] = wd + (j + (r < nr ? r : nr - 1)) * w_row;
    for (int64_t i = 0; i < m; i += kA) {
      const int na = m - i >= kA ? kA : static_cast<int>(m - i);
      float out[kA * kR];
      rows(wr, act + i * row_bytes, row_bytes, na, nb, out);
      for (int ia = 0; ia < na; ++ia)
        for (int r = 0; r < nr; ++r) c[(i + ia) * ldc + j + r] = out[ia * kR + r];
    }
  }
}
#endif

#if EINFER_LAYOUTS
// Output columns [j0, j1) of an interleaved-layout weight: one tile (4 rows, their blocks
// interleaved) per pass against up to 4 activation rows; j0 is a multiple of 16, so every pass
// starts a tile. Its own function for rows_pass's reason (values in locals, not reloaded through
// the lambda's captures around each call); decode writes a whole tile's 4 outputs into C.
[[gnu::noinline]] void tiles_pass(gguf_detail::TileFn tile, const uint8_t* wd, uint64_t tile_bytes,
                                  int64_t j0, int64_t j1, const unsigned char* act,
                                  size_t row_bytes, int64_t m, int64_t nb, float* c, int64_t ldc) {
  constexpr int kA = gguf_detail::kMaxActRows;
  const uint8_t* t = wd + static_cast<uint64_t>(j0 / 4) * tile_bytes;
  int64_t j = j0;
  if (m == 1)
    for (; j + 4 <= j1; j += 4, t += tile_bytes) tile(t, act, row_bytes, 1, nb, c + j);
  for (; j < j1; j += 4, t += tile_bytes) {
    const int nr = j1 - j < 4 ? static_cast<int>(j1 - j) : 4;
    for (int64_t i = 0; i < m; i += kA) {
      const int na = m - i >= kA ? kA : static_cast<int>(m - i);
      float out[kA * 4];
      tile(t, act + i * row_bytes, row_bytes, na, nb, out);
      for (int ia = 0; ia < na; ++ia)
        for (int r = 0; r < nr; ++r) c[(i + ia) * ldc + j + r] = out[ia * 4 + r];
    }
  }
}
#endif

// The x86 prefill GEMMs that take whole column ranges of a rows-layout weight (one choice for
// run() and matmul_gguf_kernel_name): q4_k / q5_k on AMX tiles, else the 32-element types with
// weight rows in lanes (AVX-512 VNNI, else AVX2 for all but q8_0), from kLegacyTileRows rows.
enum class PrefillGemm { none, amx_q45k, legacy_16x8_avx512vnni, legacy_8x4_avx2 };

PrefillGemm prefill_gemm(DType dtype, WeightLayout layout, int64_t m, int64_t k, bool simd) {
#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (!simd || layout != WeightLayout::rows) return PrefillGemm::none;
  if ((dtype == DType::q4_k || dtype == DType::q5_k) && isa_extension_enabled(IsaExtension::amx) &&
      gguf_detail::gemm_q45k_amx_supports(m, k))
    return PrefillGemm::amx_q45k;
  if (m < gguf_detail::kLegacyTileRows) return PrefillGemm::none;
  if (gguf_block_elems(dtype) == 32 && isa_extension_enabled(IsaExtension::avx512vnni))
    return PrefillGemm::legacy_16x8_avx512vnni;
  if (gguf_detail::gemm_gguf_legacy_8x4_avx2_supports(dtype)) return PrefillGemm::legacy_8x4_avx2;
#else
  (void)dtype, (void)layout, (void)m, (void)k, (void)simd;
#endif
  return PrefillGemm::none;
}

Status run(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c, int64_t ldc,
           void* scratch, size_t scratch_bytes, const Threads* threads, bool simd) {
  if (!dtype_is_gguf_block(w.dtype) || w.rank != 2)
    return make_status(StatusCode::invalid_argument,
                       "matmul_f32_gguf: weight must be a 2-D GGUF block-quantized view");
  const int64_t n = w.shape[0], k = w.shape[1];
  const int64_t block = gguf_block_elems(w.dtype);
  if (m < 0 || n < 0 || k < 0 || k % block != 0)
    return make_status(StatusCode::shape_mismatch,
                       "matmul_f32_gguf: K must be a multiple of the block", block, k);
  if ((m > 1 && lda < k) || (m > 1 && ldc < n))
    return make_status(StatusCode::shape_mismatch, "matmul_f32_gguf: lda/ldc too small");
    // Interleaved layouts (runtime/layout.h): q4_k / q6_k / q8_0 / q5_0 tiles of 4 rows, left out
    // of rows-only builds (firmware).
#if EINFER_LAYOUTS
  const bool tiled = layout_interleaved(w.layout);
  if (w.layout != WeightLayout::rows && (!tiled || layout_fit_error(w.dtype, w.layout, 0)))
    return make_status(StatusCode::invalid_argument,
                       "matmul_f32_gguf: the weight's layout does not fit its block type",
                       static_cast<int64_t>(w.layout), static_cast<int64_t>(w.dtype));
#endif
  if (m == 0 || n == 0) return ok_status();
  if (!a || !c || !w.data)
    return make_status(StatusCode::invalid_argument, "matmul_f32_gguf: null data pointer");
  const size_t need = matmul_gguf_scratch_bytes(m, k);
  if (!scratch || scratch_bytes < need)
    return make_status(StatusCode::out_of_memory, "matmul_f32_gguf: scratch too small",
                       static_cast<int64_t>(need), static_cast<int64_t>(scratch_bytes));
  const gguf_detail::DotFn dot =
      simd ? gguf_detail::dot_kernel_best(w.dtype) : gguf_detail::scalar::dot_kernel(w.dtype);
  const bool kquant = block == 256;
  const size_t row_bytes = act_row_bytes(k);
  unsigned char* act = static_cast<unsigned char*>(scratch);
  act += (4 - reinterpret_cast<uintptr_t>(act) % 4) % 4;  // the blocks hold floats

  const int qtasks = static_cast<int>(m < thread_count(threads) ? m : thread_count(threads));
  auto quantize_rows = [&](int task) {
    long long r0 = 0, r1 = 0;
    split_range(m, task, qtasks, 1, &r0, &r1);
    for (int64_t i = r0; i < r1; ++i) {
      void* dst = act + i * row_bytes;
      if (kquant) {
        (simd ? gguf_detail::quantize_row_q8k_best : gguf_detail::quantize_row_q8k)(
            a + i * lda, k, static_cast<BlockQ8K*>(dst));
      } else {
        (simd ? gguf_detail::quantize_row_q8a_best : gguf_detail::quantize_row_q8a)(
            a + i * lda, k, static_cast<BlockQ8A*>(dst));
      }
    }
  };
  run_tasks(threads, qtasks, quantize_rows);

  const size_t w_row = quant_row_bytes(w.dtype, k);
  const int64_t nb = k / block;
  const uint8_t* wd = static_cast<const uint8_t*>(w.data);
  const int64_t blocks = (n + kColumnAlign - 1) / kColumnAlign;
  const int tasks =
      static_cast<int>(blocks < thread_count(threads) ? blocks : thread_count(threads));
  [[maybe_unused]] const gguf_detail::RowsFn rows =
      simd ? gguf_detail::rows_kernel_best(w.dtype, m) : nullptr;
  [[maybe_unused]] const PrefillGemm prefill = prefill_gemm(w.dtype, w.layout, m, k, simd);
  auto columns = [&](int task) {
    long long j0 = 0, j1 = 0;
    split_range(n, task, tasks, kColumnAlign, &j0, &j1);
#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (prefill == PrefillGemm::amx_q45k) {  // 16 x 16 tiles, the same bits as the twin
      if (j1 > j0)
        gguf_detail::gemm_q45k_16x16_amx(w.dtype == DType::q5_k, wd, w_row, j0, j1, act, row_bytes,
                                         m, nb, c, ldc);
      return;
    }
    if (prefill != PrefillGemm::none) {
      if (j1 > j0)
        (prefill == PrefillGemm::legacy_16x8_avx512vnni
             ? gguf_detail::gemm_gguf_legacy_16x8_avx512vnni
             : gguf_detail::gemm_gguf_legacy_8x4_avx2)(w.dtype, wd, w_row, j0, j1, act, row_bytes,
                                                       m, nb, c, ldc);
      return;
    }
#endif
#if EINFER_LAYOUTS  // left out of rows-only builds entirely (firmware size)
    {
      if (tiled) {
        const gguf_detail::TileFn tile = simd ? gguf_detail::tile_kernel_best(w.dtype).fn
                                              : gguf_detail::scalar::tile_kernel(w.dtype).fn;
        const uint64_t tile_bytes = layout_tile_bytes(w.dtype, w.layout, k, 0);
        tiles_pass(tile, wd, tile_bytes, j0, j1, act, row_bytes, m, nb, c, ldc);
        return;
      }
    }
#endif
#if defined(EINFER_GGUF_AVX2) || defined(EINFER_GGUF_NEON)  // builds with multi-row kernels
    if (rows) {
      rows_pass(rows, wd, w_row, j0, j1, act, row_bytes, m, nb, c, ldc);
      return;
    }
#endif
    for (int64_t j = j0; j < j1; ++j) {
      const uint8_t* wr = wd + j * w_row;
      for (int64_t i = 0; i < m; ++i) c[i * ldc + j] = dot(wr, act + i * row_bytes, nb);
    }
  };
  run_tasks(threads, tasks, columns);
  return ok_status();
}

}  // namespace

size_t matmul_gguf_scratch_bytes(int64_t m, int64_t k) {
  if (m < 0 || k < 0) return 4;
  return 4 + static_cast<size_t>(m) * act_row_bytes(k);
}

Status matmul_f32_gguf(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                       int64_t ldc, void* scratch, size_t scratch_bytes, const Threads* threads) {
  return run(a, lda, m, w, c, ldc, scratch, scratch_bytes, threads, true);
}

const char* matmul_gguf_kernel_name(DType dtype, WeightLayout layout, int64_t m, bool* fast) {
  if (fast) *fast = true;
  if (layout_interleaved(layout) && layout_fit_error(dtype, layout, 0) == nullptr) {
    const gguf_detail::TileChoice simd = gguf_detail::tile_kernel_simd(dtype);
    if (fast) *fast = simd.fn != nullptr;
    return simd.fn ? simd.name : gguf_detail::scalar::tile_kernel(dtype).name;
  }
  switch (prefill_gemm(dtype, layout, m, 0, true)) {  // k = 0: any K within AMX's limit
    case PrefillGemm::amx_q45k:
      return "gemm_q45k_16x16_amx";
    case PrefillGemm::legacy_16x8_avx512vnni:
      return "gemm_gguf_legacy_16x8_avx512vnni";
    case PrefillGemm::legacy_8x4_avx2:
      return "gemm_gguf_legacy_8x4_avx2";
    case PrefillGemm::none:
      break;
  }
  return gguf_detail::rows_kernel_best(dtype, m) ? "gemm_gguf_q8_4x4 (rows)" : "dot_gguf_q8_scalar";
}

namespace scalar {
Status matmul_f32_gguf(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                       int64_t ldc, void* scratch, size_t scratch_bytes) {
  return run(a, lda, m, w, c, ldc, scratch, scratch_bytes, nullptr, false);
}
}  // namespace scalar

namespace gguf_detail {
DotFn dot_kernel_best(DType dtype) {
  const DotFn simd = dot_kernel_simd(dtype);
  return simd ? simd : scalar::dot_kernel(dtype);
}

#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
namespace {
// GFNI (CPUID 7.0 ECX bit 8), which the AVX-VNNI kernels also use. Every CPU with AVX-VNNI so far
// has it; checked anyway, once (first use, not a static constructor).
bool cpu_has_gfni() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c >> 8 & 1u) != 0;
  }();
  return has;
}
}  // namespace
#endif

TileChoice tile_kernel_best(DType dtype) {
  const TileChoice simd = tile_kernel_simd(dtype);
  return simd.fn ? simd : scalar::tile_kernel(dtype);
}

RowsFn rows_kernel_best(DType dtype, int64_t m) {
#if defined(EINFER_GGUF_AVX2) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (isa_extension_enabled(IsaExtension::avxvnni) && cpu_has_gfni())
    return rows_kernel_avxvnni(dtype);
  // q6_k decode stays on the AVX2 build: its GEMV streamed 15-25% slower from DRAM in the
  // AVX-512 VNNI one on Zen 4 (the same bits either way; docs/gguf-quant.md).
  if (isa_extension_enabled(IsaExtension::avx512vnni) && !(dtype == DType::q6_k && m == 1))
    return rows_kernel_avx512vnni(dtype);
#else
  (void)m;
#endif
  return rows_kernel_simd(dtype);
}
}  // namespace gguf_detail

}  // namespace einfer

#if !defined(EINFER_GGUF_AVX2) && !defined(EINFER_GGUF_NEON)
namespace einfer::gguf_detail {
DotFn dot_kernel_simd(DType) {
  return nullptr;  // no SIMD kernels in this build: the scalar twins run
}
RowsFn rows_kernel_simd(DType) {
  return nullptr;
}
}  // namespace einfer::gguf_detail
#endif

#if !defined(EINFER_GGUF_NEON)
namespace einfer::gguf_detail {
TileChoice tile_kernel_simd(DType) {
  return {nullptr, nullptr};  // the K-quant tiles have NEON kernels only: the generic one runs
}
}  // namespace einfer::gguf_detail
#endif

#if !defined(EINFER_GGUF_AVX2)
namespace einfer::gguf_detail {
void quantize_row_q8k_best(const float* x, int64_t k, BlockQ8K* out) {
  quantize_row_q8k(x, k, out);
}
void quantize_row_q8a_best(const float* x, int64_t k, BlockQ8A* out) {
  quantize_row_q8a(x, k, out);
}
}  // namespace einfer::gguf_detail
#endif
