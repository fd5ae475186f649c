// Internal to kernels/: the BLIS-style packing driver shared by the f32 GEMM microkernels
// (gemm_f32_simd.cpp and its scalar twin gemm_f32_4x4_scalar.cpp). It packs A and B into caller
// scratch blocks and calls an MR x NR microkernel on every tile.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/gemm_f32.h"

namespace einfer::gemm_detail {

// Cache blocking shared by every microkernel: KC x NC block of B (L3/L2), MC x KC block of A (L2),
// KC x NR panel of B (L1). MC is a multiple of every MR (4, 6, 8), NC of every NR (4, 8, 16).
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 144;
constexpr int64_t kNC = 1024;
constexpr int64_t kMaxMR = 8;
constexpr int64_t kMaxNR = 16;

inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

using MicroKernel = void (*)(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                             bool accumulate);
// Same tile with A read in place (rows of contiguous K, row stride lda); rows >= mr repeat row
// mr - 1 (their results are discarded), so edge tiles need no padding.
using DirectMicroKernel = void (*)(int64_t kc, const float* a, int64_t lda, int64_t mr,
                                   const float* bp, float* c, int64_t ldc, bool accumulate);

// A[i0 .. i0+mc, p0 .. p0+kc] -> panels of MR rows: ap[panel][p][r], zero-padded rows.
template <int MR>
void pack_a(const GemmF32Args& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* ap) {
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t mr = min64(MR, mc - ir);
    float* dst = ap + ir * kc;
    const float* src = g.a + (i0 + ir) * g.a_m + p0 * g.a_k;
    if (mr < MR) std::memset(dst, 0, sizeof(float) * MR * kc);
    if (g.a_k == 1) {
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t p = 0; p < kc; ++p) dst[p * MR + r] = src[r * g.a_m + p];
    } else {
      for (int64_t p = 0; p < kc; ++p)
        for (int64_t r = 0; r < mr; ++r) dst[p * MR + r] = src[r * g.a_m + p * g.a_k];
    }
  }
}

// B[p0 .. p0+kc, j0 .. j0+nc] -> panels of NR columns: bp[panel][p][j], zero-padded columns.
template <int NR>
void pack_b(const GemmF32Args& g, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* bp) {
  for (int64_t jr = 0; jr < nc; jr += NR) {
    const int64_t nr = min64(NR, nc - jr);
    float* dst = bp + jr * kc;
    const float* src = g.b + p0 * g.b_k + (j0 + jr) * g.b_n;
    if (nr < NR) std::memset(dst, 0, sizeof(float) * NR * kc);
    if (g.b_n == 1) {
      for (int64_t p = 0; p < kc; ++p)
        std::memcpy(dst + p * NR, src + p * g.b_k, sizeof(float) * nr);
    } else {
      for (int64_t j = 0; j < nr; ++j)
        for (int64_t p = 0; p < kc; ++p) dst[p * NR + j] = src[j * g.b_n + p * g.b_k];
    }
  }
}

template <int MR, int NR, MicroKernel UK, DirectMicroKernel UKD>
void gemm_driver(const GemmF32Args& g, void* scratch) {
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k <= 0) {  // empty contraction: C = 0 (or unchanged)
    if (!g.accumulate)
      for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j)
          g.c[i * g.c_m + (g.n_inner > 0 ? (j / g.n_inner) * g.c_n_outer + (j % g.n_inner) * g.c_n
                                         : j * g.c_n)] = 0.f;
    return;
  }
  float* bp = static_cast<float*>(scratch);
  const int64_t nc_max = min64(kNC, g.n + kMaxNR);
  const int64_t kc_max = min64(kKC, g.k);
  float* ap = bp + ((nc_max * kc_max + 15) & ~int64_t{15});
  alignas(64) float tile[MR * NR];
  auto col_off = [&g](int64_t j) {
    return g.n_inner > 0 ? (j / g.n_inner) * g.c_n_outer + (j % g.n_inner) * g.c_n : j * g.c_n;
  };
  for (int64_t jc = 0; jc < g.n; jc += kNC) {
    const int64_t nc = min64(kNC, g.n - jc);
    for (int64_t pc = 0; pc < g.k; pc += kKC) {
      const int64_t kc = min64(kKC, g.k - pc);
      const bool acc = g.accumulate || pc > 0;
      pack_b<NR>(g, pc, kc, jc, nc, bp);
      // Row-contiguous A is read in place (no packing: the tile broadcasts from MR row streams).
      const bool direct_a = g.a_k == 1;
      for (int64_t ic = 0; ic < g.m; ic += kMC) {
        const int64_t mc = min64(kMC, g.m - ic);
        if (!direct_a) pack_a<MR>(g, ic, mc, pc, kc, ap);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t nr = min64(NR, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const int64_t mr = min64(MR, mc - ir);
            float* c = g.c + (ic + ir) * g.c_m;
            const float* a_rows = g.a + (ic + ir) * g.a_m + pc;
            if (mr == MR && nr == NR && g.c_n == 1) {  // a full tile never straddles a split
              if (direct_a)
                UKD(kc, a_rows, g.a_m, mr, bp + jr * kc, c + col_off(jc + jr), g.c_m, acc);
              else
                UK(kc, ap + ir * kc, bp + jr * kc, c + col_off(jc + jr), g.c_m, acc);
            } else {  // edge tile or strided columns: through a register-sized buffer
              if (direct_a)
                UKD(kc, a_rows, g.a_m, mr, bp + jr * kc, tile, NR, false);
              else
                UK(kc, ap + ir * kc, bp + jr * kc, tile, NR, false);
              for (int64_t r = 0; r < mr; ++r)
                for (int64_t j = 0; j < nr; ++j) {
                  float& dst = c[r * g.c_m + col_off(jc + jr + j)];
                  dst = acc ? dst + tile[r * NR + j] : tile[r * NR + j];
                }
            }
          }
        }
      }
    }
  }
}

}  // namespace einfer::gemm_detail
