// matmul_f32_half (half.h): picks the build's f16/bf16 kernels and cuts the product into
// per-task blocks of output columns.
#include "kernels/half/half.h"

#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/half/gemv_half_internal.h"

namespace einfer {

namespace {

// Below this many activation rows the product is a GEMV per row (weights read m times, never
// widened in memory); from it on, blocks of weights are widened once and fed to the f32 GEMM.
constexpr int64_t kGemmRows = 4;
// A widened weight block holds about this many floats (256 KB), at least 16 rows.
constexpr int64_t kBlockFloats = 65536;

int64_t block_rows(int64_t n, int64_t k) {
  int64_t r = k > 0 ? kBlockFloats / k / 16 * 16 : 16;
  if (r < 16) r = 16;
  return r < n ? r : n;
}

size_t align64(size_t n) {
  return (n + 63) / 64 * 64;
}

Status half_error(StatusCode code, const char* message, int64_t need = -1, int64_t have = -1) {
  return make_status(code, message, need, have);
}

}  // namespace

void widen_f16_f32(const uint16_t* src, float* dst, int64_t n) {
#if defined(EINFER_HALF_AVX2)
  half_detail::widen_f16_f32_avx2(src, dst, n);
#elif defined(EINFER_HALF_NEON)
  half_detail::widen_f16_f32_neon(src, dst, n);
#else
  scalar::widen_f16_f32(src, dst, n);
#endif
}

void widen_bf16_f32(const uint16_t* src, float* dst, int64_t n) {
#if defined(EINFER_HALF_AVX2)
  half_detail::widen_bf16_f32_avx2(src, dst, n);
#elif defined(EINFER_HALF_NEON)
  half_detail::widen_bf16_f32_neon(src, dst, n);
#else
  scalar::widen_bf16_f32(src, dst, n);
#endif
}

void gemv_f16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
#if defined(EINFER_HALF_AVX2)
  half_detail::gemv_f16_4x1_avx2(n, k, w, w_j, x, y);
#elif defined(EINFER_HALF_NEON)
  half_detail::gemv_f16_4x1_neon(n, k, w, w_j, x, y);
#else
  scalar::gemv_f16(n, k, w, w_j, x, y);
#endif
}

void gemv_bf16(int64_t n, int64_t k, const uint16_t* w, int64_t w_j, const float* x, float* y) {
#if defined(EINFER_HALF_AVX2)
  half_detail::gemv_bf16_4x1_avx2(n, k, w, w_j, x, y);
#elif defined(EINFER_HALF_NEON)
  half_detail::gemv_bf16_4x1_neon(n, k, w, w_j, x, y);
#else
  scalar::gemv_bf16(n, k, w, w_j, x, y);
#endif
}

const char* matmul_half_kernel_name(DType w, int64_t m) {
  const bool bf = w == DType::bf16;
  if (m >= kGemmRows) return bf ? "widen_bf16+gemm_f32" : "widen_f16+gemm_f32";
#if defined(EINFER_HALF_AVX2)
  return bf ? "gemv_bf16_4x1_avx2" : "gemv_f16_4x1_avx2";
#elif defined(EINFER_HALF_NEON)
  return bf ? "gemv_bf16_4x1_neon" : "gemv_f16_4x1_neon";
#else
  return bf ? "gemv_bf16_scalar" : "gemv_f16_scalar";
#endif
}

size_t matmul_half_scratch_bytes(int64_t m, int64_t n, int64_t k) {
  if (m < kGemmRows || n <= 0 || k <= 0) return 0;
  const int64_t rows = block_rows(n, k);
  return align64(static_cast<size_t>(rows * k) * sizeof(float)) +
         align64(gemm_f32_scratch_bytes(m, rows, k));
}

Status matmul_f32_half(const float* a, int64_t lda, int64_t m, const TensorView& w, float* c,
                       int64_t ldc, void* scratch, size_t scratch_bytes, const Threads* threads) {
  if (!dtype_is_half(w.dtype) || w.rank != 2 || !w.is_contiguous())
    return half_error(StatusCode::invalid_argument,
                      "matmul_half: weights must be a contiguous 2-D f16 or bf16 tensor");
  const int64_t n = w.shape[0], k = w.shape[1];
  if (m < 0 || lda < k || ldc < n)
    return half_error(StatusCode::shape_mismatch, "matmul_half: bad row strides", k, lda);
  if (m == 0 || n == 0) return ok_status();
  const uint16_t* wd = static_cast<const uint16_t*>(w.data);
  const bool bf = w.dtype == DType::bf16;
  const size_t slot = matmul_half_scratch_bytes(m, n, k);
  int tasks = thread_count(threads);
  const int64_t col_blocks = (n + 15) / 16;
  if (tasks > col_blocks) tasks = static_cast<int>(col_blocks);
  if (slot > 0) {
    if (scratch_bytes < slot)
      return half_error(StatusCode::invalid_argument, "matmul_half: scratch too small",
                        static_cast<int64_t>(slot), static_cast<int64_t>(scratch_bytes));
    if (static_cast<int64_t>(scratch_bytes / slot) < tasks)
      tasks = static_cast<int>(scratch_bytes / slot);
  }
  auto body = [&](int task) {
    long long j0 = 0, j1 = 0;
    split_range(n, task, tasks, 16, &j0, &j1);
    if (j1 <= j0) return;
    if (m < kGemmRows) {
      for (int64_t i = 0; i < m; ++i) {
        if (bf)
          gemv_bf16(j1 - j0, k, wd + j0 * k, k, a + i * lda, c + i * ldc + j0);
        else
          gemv_f16(j1 - j0, k, wd + j0 * k, k, a + i * lda, c + i * ldc + j0);
      }
      return;
    }
    unsigned char* s = static_cast<unsigned char*>(scratch) + static_cast<size_t>(task) * slot;
    float* block = reinterpret_cast<float*>(s);
    const int64_t rows = block_rows(n, k);
    void* gemm_scratch = s + align64(static_cast<size_t>(rows * k) * sizeof(float));
    for (int64_t j = j0; j < j1; j += rows) {
      const int64_t r = j1 - j < rows ? j1 - j : rows;
      if (bf)
        widen_bf16_f32(wd + j * k, block, r * k);
      else
        widen_f16_f32(wd + j * k, block, r * k);
      GemmF32Args g;
      g.m = m;
      g.n = r;
      g.k = k;
      g.a = a;
      g.a_m = lda;
      g.a_k = 1;
      g.b = block;  // B[p, j] = W[j, p]
      g.b_k = 1;
      g.b_n = k;
      g.c = c + j;
      g.c_m = ldc;
      g.c_n = 1;
      gemm_f32(g, gemm_scratch);
    }
  };
  run_tasks(threads, tasks, body);
  return ok_status();
}

}  // namespace einfer
