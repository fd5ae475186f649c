// GEMM microkernels and GEMV kernels in xsimd (see gemm_f32.h). ISA-generic: the same code builds
// gemm_f32_6x16_avx2 (x86-64-v3), gemm_f32_8x8_neon (aarch64) or gemm_f32_4x8_neon (armhf); only
// the tile shape is chosen per ISA. Without SIMD the entry points run the scalar twins
// (gemm_f32_4x4_scalar.cpp). The packing driver is in gemm_f32_driver.h.
#include <cstring>

#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_f32/gemm_f32_driver.h"
#include "kernels/isa/isa.h"
#include "kernels/simd/simd.h"
#if EINFER_HAS_SIMD && defined(__AVX2__)
#include "kernels/gemm_f32/gemm_f32_pack_x86.h"
#endif

namespace einfer {

using namespace gemm_detail;

namespace {

#if EINFER_HAS_SIMD
using Batch = xsimd::batch<float>;
constexpr int kLanes = static_cast<int>(Batch::size);

// MR rows x NV registers of columns, all accumulators in registers; B panel rows are 64-byte
// aligned (scratch is aligned and NR * 4 bytes is a multiple of the register width).
template <int MR, int NV>
inline void gemm_f32_simd_tile(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                               bool accumulate) {
  constexpr int NR = NV * kLanes;
  Batch acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = Batch(0.f);
  for (int64_t p = 0; p < kc; ++p) {
    Batch b[NV];
    for (int v = 0; v < NV; ++v) b[v] = Batch::load_aligned(bp + p * NR + v * kLanes);
    for (int r = 0; r < MR; ++r) {
      const Batch a(ap[p * MR + r]);
      for (int v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(a, b[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) {
      float* dst = c + r * ldc + v * kLanes;
      if (accumulate) acc[r][v] += Batch::load_unaligned(dst);
      acc[r][v].store_unaligned(dst);
    }
}

template <int MR, int NV>
inline void gemm_f32_simd_tile_direct(int64_t kc, const float* a, int64_t lda, int64_t mr,
                                      const float* bp, float* c, int64_t ldc, bool accumulate,
                                      PrefetchStream* pf) {
  constexpr int NR = NV * kLanes;
  const float* ar[MR];
  for (int r = 0; r < MR; ++r) ar[r] = a + (r < mr ? r : mr - 1) * lda;
  Batch acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = Batch(0.f);
  for (int64_t p = 0; p < kc; ++p) {
    if ((p & 1) == 0) pf->next();
    Batch b[NV];
    for (int v = 0; v < NV; ++v) b[v] = Batch::load_aligned(bp + p * NR + v * kLanes);
    for (int r = 0; r < MR; ++r) {
      const Batch av(ar[r][p]);
      for (int v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(av, b[v], acc[r][v]);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) {
      float* dst = c + r * ldc + v * kLanes;
      if (accumulate) acc[r][v] += Batch::load_unaligned(dst);
      acc[r][v].store_unaligned(dst);
    }
}

#if defined(__AVX2__)
constexpr int kMR = 6, kNV = 2;
void gemm_f32_6x16_avx2(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                        bool acc) {
  gemm_f32_simd_tile<6, 2>(kc, ap, bp, c, ldc, acc);
}
void gemm_f32_6x16_avx2_direct(int64_t kc, const float* a, int64_t lda, int64_t mr, const float* bp,
                               float* c, int64_t ldc, bool acc, PrefetchStream* pf) {
  gemm_f32_simd_tile_direct<6, 2>(kc, a, lda, mr, bp, c, ldc, acc, pf);
}
constexpr MicroKernel kSimdKernel = gemm_f32_6x16_avx2;
constexpr DirectMicroKernel kSimdDirectKernel = gemm_f32_6x16_avx2_direct;
constexpr PanelPacker kSimdPanelPacker = pack_b_panel_x86<16>;
constexpr const char* kSimdKernelName = "gemm_f32_6x16_avx2";
#elif defined(__aarch64__)
constexpr int kMR = 8, kNV = 2;
void gemm_f32_8x8_neon(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                       bool acc) {
  gemm_f32_simd_tile<8, 2>(kc, ap, bp, c, ldc, acc);
}
void gemm_f32_8x8_neon_direct(int64_t kc, const float* a, int64_t lda, int64_t mr, const float* bp,
                              float* c, int64_t ldc, bool acc, PrefetchStream* pf) {
  gemm_f32_simd_tile_direct<8, 2>(kc, a, lda, mr, bp, c, ldc, acc, pf);
}
constexpr MicroKernel kSimdKernel = gemm_f32_8x8_neon;
constexpr DirectMicroKernel kSimdDirectKernel = gemm_f32_8x8_neon_direct;
constexpr PanelPacker kSimdPanelPacker = pack_b<kNV * kLanes>;
constexpr const char* kSimdKernelName = "gemm_f32_8x8_neon";
#else  // armhf NEON (16 q registers): 8 accumulators + 2 B + 1 A
constexpr int kMR = 4, kNV = 2;
void gemm_f32_4x8_neon(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                       bool acc) {
  gemm_f32_simd_tile<4, 2>(kc, ap, bp, c, ldc, acc);
}
void gemm_f32_4x8_neon_direct(int64_t kc, const float* a, int64_t lda, int64_t mr, const float* bp,
                              float* c, int64_t ldc, bool acc, PrefetchStream* pf) {
  gemm_f32_simd_tile_direct<4, 2>(kc, a, lda, mr, bp, c, ldc, acc, pf);
}
constexpr MicroKernel kSimdKernel = gemm_f32_4x8_neon;
constexpr DirectMicroKernel kSimdDirectKernel = gemm_f32_4x8_neon_direct;
constexpr PanelPacker kSimdPanelPacker = pack_b<kNV * kLanes>;
constexpr const char* kSimdKernelName = "gemm_f32_4x8_neon";
#endif
static_assert(kMR <= kMaxMR && kNV * kLanes <= kMaxNR && kMC % kMR == 0 &&
              kNC % (kNV * kLanes) == 0);

inline float hsum(Batch v) {
  return xsimd::hadd(v);
}

// y[j] = W[j, :] . x, four rows per pass with two accumulators each (hides FMA latency).
void gemv_f32_rows4_simd(int64_t n, int64_t k, const float* w, int64_t w_j, const float* x,
                         float* y, int64_t ys, bool accumulate) {
  int64_t j = 0;
  const int64_t k2 = k / (2 * kLanes) * (2 * kLanes);
  // Prefetch distance in floats. The rows of a row-major matrix (w_j == k) are one sequential
  // stream: fetch the same offsets of the rows 8 ahead (4 for rows over 1 KB), into L2, so enough
  // lines are in flight to cover DRAM latency; with 512 bytes per row ahead the 15M classifier
  // (32000 x 288) read ~10 GB/s. Strided rows keep the short per-row look-ahead.
  const int64_t far = (k * 4 <= 1024 ? 8 : 4) * w_j;
  for (; j + 4 <= n; j += 4) {
    const float* w0 = w + j * w_j;
    const float* w1 = w0 + w_j;
    const float* w2 = w1 + w_j;
    const float* w3 = w2 + w_j;
    const bool stream = w_j == k && j + 4 + far / w_j <= n;
    Batch a0(0.f), a1(0.f), a2(0.f), a3(0.f), b0(0.f), b1(0.f), b2(0.f), b3(0.f);
    int64_t p = 0;
    for (; p < k2; p += 2 * kLanes) {
      if (stream) {
        __builtin_prefetch(w0 + p + far, 0, 2);
        __builtin_prefetch(w1 + p + far, 0, 2);
        __builtin_prefetch(w2 + p + far, 0, 2);
        __builtin_prefetch(w3 + p + far, 0, 2);
      } else {
        __builtin_prefetch(w0 + p + 128);
        __builtin_prefetch(w1 + p + 128);
        __builtin_prefetch(w2 + p + 128);
        __builtin_prefetch(w3 + p + 128);
      }
      const Batch x0 = Batch::load_unaligned(x + p);
      const Batch x1 = Batch::load_unaligned(x + p + kLanes);
      a0 = xsimd::fma(Batch::load_unaligned(w0 + p), x0, a0);
      b0 = xsimd::fma(Batch::load_unaligned(w0 + p + kLanes), x1, b0);
      a1 = xsimd::fma(Batch::load_unaligned(w1 + p), x0, a1);
      b1 = xsimd::fma(Batch::load_unaligned(w1 + p + kLanes), x1, b1);
      a2 = xsimd::fma(Batch::load_unaligned(w2 + p), x0, a2);
      b2 = xsimd::fma(Batch::load_unaligned(w2 + p + kLanes), x1, b2);
      a3 = xsimd::fma(Batch::load_unaligned(w3 + p), x0, a3);
      b3 = xsimd::fma(Batch::load_unaligned(w3 + p + kLanes), x1, b3);
    }
    float s0 = hsum(a0 + b0), s1 = hsum(a1 + b1), s2 = hsum(a2 + b2), s3 = hsum(a3 + b3);
    for (; p < k; ++p) {
      s0 += w0[p] * x[p];
      s1 += w1[p] * x[p];
      s2 += w2[p] * x[p];
      s3 += w3[p] * x[p];
    }
    float* yj = y + j * ys;
    if (accumulate) {
      s0 += yj[0];
      s1 += yj[ys];
      s2 += yj[2 * ys];
      s3 += yj[3 * ys];
    }
    yj[0] = s0;
    yj[ys] = s1;
    yj[2 * ys] = s2;
    yj[3 * ys] = s3;
  }
  for (; j < n; ++j) {
    const float* wj = w + j * w_j;
    Batch a(0.f);
    int64_t p = 0;
    for (; p + kLanes <= k; p += kLanes)
      a = xsimd::fma(Batch::load_unaligned(wj + p), Batch::load_unaligned(x + p), a);
    float s = hsum(a);
    for (; p < k; ++p) s += wj[p] * x[p];
    y[j * ys] = accumulate ? y[j * ys] + s : s;
  }
}

// y[j] = sum_p x[p] W[p, j] (columns contiguous), axpy-style: rows of W stream past a chunk of y
// that stays in L1; four rows per pass so each y load/store serves four FMAs.
void gemv_f32_cols_chunk(int64_t n, int64_t k, const float* w, int64_t w_p, const float* x,
                         float* y) {
  int64_t p = 0;
  const int64_t nv = n / kLanes * kLanes;
  for (; p + 4 <= k; p += 4) {
    const float* r0 = w + p * w_p;
    const float* r1 = r0 + w_p;
    const float* r2 = r1 + w_p;
    const float* r3 = r2 + w_p;
    const Batch x0(x[p]), x1(x[p + 1]), x2(x[p + 2]), x3(x[p + 3]);
    int64_t j = 0;
    for (; j < nv; j += kLanes) {
      Batch acc = Batch::load_unaligned(y + j);
      acc = xsimd::fma(x0, Batch::load_unaligned(r0 + j), acc);
      acc = xsimd::fma(x1, Batch::load_unaligned(r1 + j), acc);
      acc = xsimd::fma(x2, Batch::load_unaligned(r2 + j), acc);
      acc = xsimd::fma(x3, Batch::load_unaligned(r3 + j), acc);
      acc.store_unaligned(y + j);
    }
    for (; j < n; ++j)
      y[j] += x[p] * r0[j] + x[p + 1] * r1[j] + x[p + 2] * r2[j] + x[p + 3] * r3[j];
  }
  for (; p < k; ++p) {
    const float* r = w + p * w_p;
    const Batch xp(x[p]);
    int64_t j = 0;
    for (; j < nv; j += kLanes)
      xsimd::fma(xp, Batch::load_unaligned(r + j), Batch::load_unaligned(y + j))
          .store_unaligned(y + j);
    for (; j < n; ++j) y[j] += x[p] * r[j];
  }
}

void gemv_f32_cols_simd(int64_t n, int64_t k, const float* w, int64_t w_p, const float* x, float* y,
                        int64_t ys, bool accumulate) {
  if (ys == 1) {  // accumulate in place, chunks of y small enough for L1
    constexpr int64_t kChunk = 2048;
    if (!accumulate) std::memset(y, 0, sizeof(float) * static_cast<size_t>(n));
    for (int64_t j = 0; j < n; j += kChunk) {
      gemv_f32_cols_chunk(n - j < kChunk ? n - j : kChunk, k, w + j, w_p, x, y + j);
    }
    return;
  }
  constexpr int64_t kChunk = 256;  // strided y: through a small stack buffer
  alignas(64) float buf[kChunk];
  for (int64_t j = 0; j < n; j += kChunk) {
    const int64_t c = n - j < kChunk ? n - j : kChunk;
    std::memset(buf, 0, sizeof buf);
    gemv_f32_cols_chunk(c, k, w + j, w_p, x, buf);
    for (int64_t i = 0; i < c; ++i) {
      float& dst = y[(j + i) * ys];
      dst = accumulate ? dst + buf[i] : buf[i];
    }
  }
}
#endif  // EINFER_HAS_SIMD

}  // namespace

size_t gemm_f32_scratch_bytes(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const int64_t nc = min64(kNC, n + kMaxNR);
  const int64_t mc = min64(kMC, m + kMaxMR);
  const int64_t kc = gemm_kc(k);
  const int64_t floats = ((nc * kc + 15) & ~int64_t{15}) + mc * kc;
  return static_cast<size_t>(floats) * sizeof(float) + 64;
}

const char* gemm_f32_kernel_name() {
#if EINFER_HAS_SIMD
#if defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (isa_extension_enabled(IsaExtension::avx512vnni)) return "gemm_f32_8x32_avx512";
#endif
  return kSimdKernelName;
#else
  return "gemm_f32_4x4_scalar";
#endif
}

void gemm_f32(const GemmF32Args& args, void* scratch) {
#if EINFER_HAS_SIMD
#if defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (isa_extension_enabled(IsaExtension::avx512vnni)) return gemm_f32_avx512(args, scratch);
#endif
  gemm_driver<kMR, kNV * kLanes, kSimdKernel, kSimdDirectKernel, kSimdPanelPacker>(args, scratch);
#else
  scalar::gemm_f32(args, scratch);
#endif
}

void gemv_f32(int64_t n, int64_t k, const float* w, int64_t w_j, int64_t w_p, const float* x,
              float* y, int64_t y_stride, bool accumulate) {
#if EINFER_HAS_SIMD
  if (w_p == 1) return gemv_f32_rows4_simd(n, k, w, w_j, x, y, y_stride, accumulate);
  return gemv_f32_cols_simd(n, k, w, w_p, x, y, y_stride, accumulate);
#else
  scalar::gemv_f32(n, k, w, w_j, w_p, x, y, y_stride, accumulate);
#endif
}

int gemm_f32_lanes() {
#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)
  if (isa_extension_enabled(IsaExtension::avx512vnni)) return 16;
#endif
  return simd_float_lanes();
}

float fma_chains_gemm_f32(int64_t iterations, float m, float a) {
#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)
  if (isa_extension_enabled(IsaExtension::avx512vnni))
    return gemm_detail::fma_chains_f32_avx512(iterations, m, a);
#endif
  return fma_chains_f32(iterations, m, a);
}

}  // namespace einfer
