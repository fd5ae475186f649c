// Private to kernels/gemm_f32/: the BLIS-style packing driver shared by the f32 GEMM microkernels
// (gemm_f32_simd.cpp and its scalar twin gemm_f32_4x4_scalar.cpp). It packs A and B into caller
// scratch blocks and calls an MR x NR microkernel on every tile.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/gemm_f32/gemm_f32.h"

namespace einfer::gemm_detail {

// Cache blocking shared by every microkernel: KC x NC block of B (L3/L2), MC x KC block of A (L2),
// KC x NR panel of B (L1). MC is a multiple of every MR (4, 6, 8), NC of every NR (4, 8, 16, 32).
// K is cut into equal blocks of at most kKC (gemm_kc): K = 288 runs as one block of 288 rather
// than 256 + 32, whose second pass reloads and stores every C tile for 32 steps of work.
constexpr int64_t kKC = 320;
constexpr int64_t kMC = 144;
constexpr int64_t kNC = 1024;
constexpr int64_t kMaxMR = 8;
#if defined(__x86_64__)
constexpr int64_t kMaxNR = 32;  // the AVX-512 tiles (gemm_f32_8x32_avx512.cpp)
#else
constexpr int64_t kMaxNR = 16;
#endif

inline int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// K block size: K in ceil(K / kKC) blocks of equal size (the last one shorter by the rest).
inline int64_t gemm_kc(int64_t k) {
  const int64_t blocks = (k + kKC - 1) / kKC;
  return blocks > 0 ? (k + blocks - 1) / blocks : 0;
}

// Lines a tile requests while it computes: `rows` runs of `row_bytes` bytes, `stride` bytes apart.
// The driver hands each tile a slice of the next B panel's source. In a prefill chunk every weight
// matrix comes from memory once; without this, each panel's pack waited for its rows with the FMA
// units idle (15% of 110M f32 prefill at 64-token chunks went to the pack). The requests are spread
// over the tile's K loop, one per two steps: issued in a burst they take every line fill buffer
// and stall the tile instead.
struct PrefetchStream {
  const char* row = nullptr;
  int64_t stride = 0;
  int64_t rows = 0;
  int64_t row_bytes = 0;
  int64_t offset = 0;

  // Requests the next line into L2, if any is left.
  inline void next() {
    if (rows <= 0) return;
    __builtin_prefetch(row + offset, 0, 2);
    offset += 64;
    if (offset >= row_bytes) {
      offset = 0;
      row += stride;
      --rows;
    }
  }
};

using MicroKernel = void (*)(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                             bool accumulate);
// Same tile with A read in place (rows of contiguous K, row stride lda); rows >= mr repeat row
// mr - 1 (their results are discarded), so edge tiles need no padding. pf (never null) is advanced
// by the lines the kernel requested; the driver requests any it left.
using DirectMicroKernel = void (*)(int64_t kc, const float* a, int64_t lda, int64_t mr,
                                   const float* bp, float* c, int64_t ldc, bool accumulate,
                                   PrefetchStream* pf);

// Slice `part` of `parts` of B's block [p0, p0 + kc) x [j0, j0 + nr) as a prefetch stream: whole
// columns when they run along K (b_k == 1), whole rows when B's rows are contiguous (b_n == 1),
// nothing otherwise.
inline PrefetchStream b_slice_stream(const GemmF32Args& g, int64_t p0, int64_t kc, int64_t j0,
                                     int64_t nr, int64_t part, int64_t parts) {
  PrefetchStream s;
  const int64_t f = static_cast<int64_t>(sizeof(float));
  if (g.b_k == 1) {
    const int64_t first = nr * part / parts, last = nr * (part + 1) / parts;
    s.row = reinterpret_cast<const char*>(g.b + p0 + (j0 + first) * g.b_n);
    s.stride = g.b_n * f;
    s.rows = last - first;
    s.row_bytes = kc * f;
  } else if (g.b_n == 1) {
    const int64_t first = kc * part / parts, last = kc * (part + 1) / parts;
    s.row = reinterpret_cast<const char*>(g.b + (p0 + first) * g.b_k + j0);
    s.stride = g.b_k * f;
    s.rows = last - first;
    s.row_bytes = nr * f;
  }
  return s;
}

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

// Where column j of C lands (the optional n_inner split of GemmF32Args).
inline int64_t gemm_col_offset(const GemmF32Args& g, int64_t j) {
  return g.n_inner > 0 ? (j / g.n_inner) * g.c_n_outer + (j % g.n_inner) * g.c_n : j * g.c_n;
}

// Writes a tile of the transposed product: tile[r * NR + c] is C[i0 + c][j0 + r] (or is added to
// it), for r < mr, c < nr. An ISA file may pass a register-transposing one.
using TransposedStore = void (*)(const float* tile, int64_t mr, int64_t nr, const GemmF32Args& g,
                                 int64_t i0, int64_t j0, bool accumulate);

template <int NR>
void store_transposed(const float* tile, int64_t mr, int64_t nr, const GemmF32Args& g, int64_t i0,
                      int64_t j0, bool accumulate) {
  for (int64_t c = 0; c < nr; ++c) {
    float* crow = g.c + (i0 + c) * g.c_m;
    for (int64_t r = 0; r < mr; ++r) {
      float& dst = crow[gemm_col_offset(g, j0 + r)];
      dst = accumulate ? dst + tile[r * NR + c] : tile[r * NR + c];
    }
  }
}

// Packs one B panel, columns [j0, j0 + nr) (nr <= NR) of rows [p0, p0 + kc), as pack_b does; an
// ISA file may pass a faster one (e.g. a register transpose when B's columns run along K).
using PanelPacker = void (*)(const GemmF32Args& g, int64_t p0, int64_t kc, int64_t j0, int64_t nr,
                             float* bp);

template <int MR, int NR, MicroKernel UK, DirectMicroKernel UKD, PanelPacker PACK = pack_b<NR>>
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
  const int64_t kc_max = gemm_kc(g.k);
  float* ap = bp + ((nc_max * kc_max + 15) & ~int64_t{15});
  alignas(64) float tile[MR * NR];
  auto col_off = [&g](int64_t j) { return gemm_col_offset(g, j); };
  // One tile: C[i0 .. i0+mr, j .. j+nr) from the packed panel bpanel (and A in place or packed).
  PrefetchStream no_prefetch;
  auto run_tile = [&](int64_t i0, int64_t mr, int64_t j, int64_t nr, int64_t pc, int64_t kc,
                      const float* bpanel, const float* apanel, bool acc, PrefetchStream* pf) {
    float* c = g.c + i0 * g.c_m;
    const float* a_rows = g.a + i0 * g.a_m + pc;
    // A full tile whose columns are contiguous in C (not straddling an n_inner split: the
    // planner's splits are multiples of 16, not always of a 32-column tile).
    const bool contiguous = g.c_n == 1 && (g.n_inner <= 0 || (j % g.n_inner) + NR <= g.n_inner);
    if (mr == MR && nr == NR && contiguous) {
      if (!apanel)
        UKD(kc, a_rows, g.a_m, mr, bpanel, c + col_off(j), g.c_m, acc, pf);
      else
        UK(kc, apanel, bpanel, c + col_off(j), g.c_m, acc);
    } else {  // edge tile or strided columns: through a register-sized buffer
      if (!apanel)
        UKD(kc, a_rows, g.a_m, mr, bpanel, tile, NR, false, pf);
      else
        UK(kc, apanel, bpanel, tile, NR, false);
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t jj = 0; jj < nr; ++jj) {
          float& dst = c[r * g.c_m + col_off(j + jj)];
          dst = acc ? dst + tile[r * NR + jj] : tile[r * NR + jj];
        }
    }
  };
  for (int64_t jc = 0; jc < g.n; jc += kNC) {
    const int64_t nc = min64(kNC, g.n - jc);
    for (int64_t pc = 0; pc < g.k; pc += kc_max) {
      const int64_t kc = min64(kc_max, g.k - pc);
      const bool acc = g.accumulate || pc > 0;
      if (g.a_k == 1) {
        // Row-contiguous A is read in place (the tile broadcasts from MR row streams, all of A's
        // K block stays in L2), so each B panel is packed right before the tiles that use it and
        // is still in L1 for all of them: no KC x NC block of B round-trips through L2.
        // While its tiles run, the next panel's source is requested (PrefetchStream).
        const int64_t tiles = (g.m + MR - 1) / MR;
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t nr = min64(NR, nc - jr);
          PACK(g, pc, kc, jc + jr, nr, bp);
          int64_t next_j = jc + jr + NR, next_p = pc;  // the next panel, maybe of the next block
          if (next_j >= min64(jc + kNC, g.n)) {
            next_j = jc;
            next_p = pc + kc_max;
            if (next_p >= g.k) {
              next_p = 0;
              next_j = jc + kNC;
            }
          }
          const int64_t next_nr = next_j < g.n ? min64(NR, g.n - next_j) : 0;
          const int64_t next_kc = min64(kc_max, g.k - next_p);
          int64_t t = 0;
          for (int64_t ir = 0; ir < g.m; ir += MR, ++t) {
            PrefetchStream pf;
            if (next_nr > 0) pf = b_slice_stream(g, next_p, next_kc, next_j, next_nr, t, tiles);
            run_tile(ir, min64(MR, g.m - ir), jc + jr, nr, pc, kc, bp, nullptr, acc, &pf);
            while (pf.rows > 0) pf.next();
          }
        }
        continue;
      }
      for (int64_t jr = 0; jr < nc; jr += NR)
        PACK(g, pc, kc, jc + jr, min64(NR, nc - jr), bp + jr * kc);
      for (int64_t ic = 0; ic < g.m; ic += kMC) {
        const int64_t mc = min64(kMC, g.m - ic);
        pack_a<MR>(g, ic, mc, pc, kc, ap);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const int64_t nr = min64(NR, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += MR)
            run_tile(ic + ir, min64(MR, mc - ir), jc + jr, nr, pc, kc, bp + jr * kc, ap + ir * kc,
                     acc, &no_prefetch);
        }
      }
    }
  }
}

// gemm_driver for a product whose operands both run along K (A's rows and B's columns: x W^T, a
// projection with the weights stored [N, K]), computed as its transpose: the weight rows are the
// tiles' broadcast operand, read in place, and the activations are packed as panels of NR rows.
// The pack then costs O(M K) per call instead of O(N K): at 64-token prefill chunks packing each
// weight panel for only 64 rows took a fifth of the GEMM time. Each element gets the same FMA
// chain over a K block and the same C + block sum as in gemm_driver (C + t == t + C), so the
// same bits. Uses the scratch of gemm_driver (M <= N, so M's panels fit B's block).
template <int MR, int NR, DirectMicroKernel UKD, PanelPacker PACK, TransposedStore STORE>
void gemm_driver_transposed(const GemmF32Args& g, void* scratch) {
  GemmF32Args x = g;  // the activations as the B operand: x(p, i) = A[i, p]
  x.b = g.a;
  x.b_k = g.a_k;
  x.b_n = g.a_m;
  float* xp = static_cast<float*>(scratch);
  const int64_t kc_max = gemm_kc(g.k);
  alignas(64) float tile[MR * NR];
  for (int64_t ic = 0; ic < g.m; ic += kNC) {
    const int64_t mc = min64(kNC, g.m - ic);
    const int64_t panels = (mc + NR - 1) / NR;
    for (int64_t pc = 0; pc < g.k; pc += kc_max) {
      const int64_t kc = min64(kc_max, g.k - pc);
      const bool acc = g.accumulate || pc > 0;
      for (int64_t ip = 0; ip < mc; ip += NR)
        PACK(x, pc, kc, ic + ip, min64(NR, mc - ip), xp + ip * kc);
      for (int64_t jr = 0; jr < g.n; jr += MR) {
        const int64_t mr = min64(MR, g.n - jr);
        const float* w = g.b + jr * g.b_n + pc;
        // The next weight rows (this K block's next tile, else the next K block's first) are
        // requested while this tile's panels run, a slice per panel.
        int64_t next_j = jr + MR, next_p = pc;
        if (next_j >= g.n) {
          next_j = 0;
          next_p = pc + kc_max;
        }
        const bool more = next_p < g.k;
        const int64_t next_rows = more ? min64(MR, g.n - next_j) : 0;
        const int64_t next_kc = more ? min64(kc_max, g.k - next_p) : 0;
        int64_t t = 0;
        for (int64_t ip = 0; ip < mc; ip += NR, ++t) {
          PrefetchStream pf;  // B's columns are the weight rows: b_slice_stream's column case
          if (more) pf = b_slice_stream(g, next_p, next_kc, next_j, next_rows, t, panels);
          UKD(kc, w, g.b_n, mr, xp + ip * kc, tile, NR, false, &pf);
          while (pf.rows > 0) pf.next();
          STORE(tile, mr, min64(NR, mc - ip), g, ic + ip, jr, acc);
        }
      }
    }
  }
}

// Whether gemm_driver_transposed suits: both operands along K, more weight rows than activation
// rows, NR to 3 NR activation rows (at 128 rows the packed-weight path measured faster: 184 vs
// 163 GFLOP/s), and activation panels at least 7/8 full (a 64-token chunk fills two of 32).
template <int NR>
bool gemm_use_transposed(const GemmF32Args& g) {
  if (g.a_k != 1 || g.b_k != 1 || g.n <= g.m || g.m < NR || g.m > 3 * NR) return false;
  const int64_t padded = (g.m + NR - 1) / NR * NR;
  return (padded - g.m) * 8 <= g.m;
}

#if defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// gemm_f32 on 8 x 32 AVX-512 tiles (gemm_f32_8x32_avx512.cpp, a GCC target pragma): call only
// when isa_extension_enabled(IsaExtension::avx512vnni). Per element the same FMA chain as the
// AVX2 tiles, so the same bits.
void gemm_f32_avx512(const GemmF32Args& args, void* scratch);
// fma_chains_f32 on zmm (gemm_f32.h: fma_chains_gemm_f32).
float fma_chains_f32_avx512(int64_t iterations, float m, float a);
#endif

}  // namespace einfer::gemm_detail
