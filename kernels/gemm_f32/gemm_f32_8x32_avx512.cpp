// The f32 GEMM on AVX-512: 8 x 32 tiles (16 zmm accumulators, two B vectors, one broadcast A) on
// the packing driver of gemm_f32_driver.h, panels packed by the x86 register-transpose packer.
// Per output element the same FMA chain over K as the 6 x 16 AVX2 tiles (gemm_f32_simd.cpp), so
// the same bits: only the number of elements computed at once differs.
//
// The rest of the build may target plain x86-64-v3: this file compiles for AVX-512 with a target
// pragma (GCC only, like the VNNI kernels), and gemm_f32 calls it only when the ISA selection
// includes the avx512vnni extension (an AVX-512 F/BW/VL CPU with the ZMM state enabled).
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_f32/gemm_f32_driver.h"
#include "kernels/simd/simd.h"

#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)

#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq")
// GCC 12's 512-bit intrinsics pass _mm512_undefined_ps() as the unused merge operand, which
// -W(maybe-)uninitialized reports inside the header (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/gemm_f32/gemm_f32_pack_x86.h"

namespace einfer::gemm_detail {
namespace {

constexpr int kMR = 8, kNR = 32;

// A packed (ap[p * 8 + r]) or read in place (rows a + r * lda, rows >= mr repeating row mr - 1).
template <bool kDirect>
inline void tile_8x32(int64_t kc, const float* a, int64_t lda, int64_t mr, const float* bp,
                      float* c, int64_t ldc, bool accumulate, PrefetchStream* pf) {
  const float* ar[kMR];
  for (int r = 0; r < kMR; ++r) ar[r] = kDirect ? a + (r < mr ? r : mr - 1) * lda : a + r;
  __m512 acc[kMR][2];
  for (int r = 0; r < kMR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    if (kDirect && (p & 1) == 0) pf->next();
    const __m512 b0 = _mm512_loadu_ps(bp + p * kNR), b1 = _mm512_loadu_ps(bp + p * kNR + 16);
    for (int r = 0; r < kMR; ++r) {
      const __m512 av = _mm512_set1_ps(kDirect ? ar[r][p] : ar[r][p * kMR]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < kMR; ++r)
    for (int v = 0; v < 2; ++v) {
      float* dst = c + r * ldc + v * 16;
      if (accumulate) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_loadu_ps(dst));
      _mm512_storeu_ps(dst, acc[r][v]);
    }
}

void gemm_f32_8x32_avx512(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                          bool acc) {
  tile_8x32<false>(kc, ap, 0, kMR, bp, c, ldc, acc, nullptr);
}
void gemm_f32_8x32_avx512_direct(int64_t kc, const float* a, int64_t lda, int64_t mr,
                                 const float* bp, float* c, int64_t ldc, bool acc,
                                 PrefetchStream* pf) {
  tile_8x32<true>(kc, a, lda, mr, bp, c, ldc, acc, pf);
}

static_assert(kMR <= kMaxMR && kNR <= kMaxNR && kMC % kMR == 0 && kNC % kNR == 0);

}  // namespace

void gemm_f32_avx512(const GemmF32Args& args, void* scratch) {
  if (gemm_use_transposed<kNR>(args)) {
    return gemm_driver_transposed<kMR, kNR, gemm_f32_8x32_avx512_direct, pack_b_panel_x86<kNR>,
                                  store_transposed_x86<kNR>>(args, scratch);
  }
  gemm_driver<kMR, kNR, gemm_f32_8x32_avx512, gemm_f32_8x32_avx512_direct, pack_b_panel_x86<kNR>>(
      args, scratch);
}

float fma_chains_f32_avx512(int64_t iterations, float m, float a) {
  const __m512 vm = _mm512_set1_ps(m), va = _mm512_set1_ps(a);
  __m512 r[12];
  for (int j = 0; j < 12; ++j) r[j] = _mm512_set1_ps(1.f + 0.01f * float(j));
  for (int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < 12; ++j) r[j] = _mm512_fmadd_ps(r[j], vm, va);
  __m512 total = r[0];
  for (int j = 1; j < 12; ++j) total = _mm512_add_ps(total, r[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, total);
  float sum = 0.f;
  for (const float v : lanes) sum += v;
  return sum;
}

}  // namespace einfer::gemm_detail

#pragma GCC diagnostic pop
#pragma GCC pop_options

#endif
