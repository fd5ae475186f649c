// Scalar twins of the quantized GEMM microkernels (gemm_q8_q4_4x4_avx2.cpp,
// gemm_q8_q4_4x1_neon.cpp): the path of builds without SIMD (Cortex-M) and of group sizes the SIMD
// kernels do not take, and the test reference for them. One output element at a time (1 x 1 tiles).
#include <cstdint>

#include "kernels/gemm_quant/gemm_quant_internal.h"

namespace einfer::quant_detail {

namespace {

// Scalar int path: exact int32 dot per (row, row, group), one float multiply-add per group
// (group_fma: the chain the interleaved layouts' kernels reproduce bit for bit).
// weight(wr, e): element e of weight row wr as an integer.
template <typename WeightAt>
void gemm_1x1_scalar(const QuantGemm& p, WeightAt weight) {
  for (int64_t j = 0; j < p.n; ++j) {
    const uint8_t* wr = p.w + j * p.w_row_bytes;
    const float* swr = p.sw + j * p.groups;
    for (int64_t i = 0; i < p.m; ++i) {
      const int8_t* ar = p.qa + i * p.kpad;
      const float* sar = p.sa + i * p.groups;
      float acc = 0.f;
      for (int64_t g = 0, g0 = 0; g < p.groups; ++g, g0 += p.group) {
        const int64_t g1 = g0 + p.group < p.k ? g0 + p.group : p.k;
        int32_t isum = 0;
        for (int64_t e = g0; e < g1; ++e) isum += weight(wr, e) * ar[e];
        acc = group_fma(acc, isum, sar[g] * swr[g]);
      }
      p.c[i * p.ldc + j] = acc;
    }
  }
}

}  // namespace

void gemm_q8_1x1_scalar(const QuantGemm& p) {
  gemm_1x1_scalar(p, [](const uint8_t* wr, int64_t e) {
    return static_cast<int32_t>(static_cast<int8_t>(wr[e]));
  });
}

// q4: two elements per byte, element 2i in the low nibble, stored + 8.
void gemm_q4_1x1_scalar(const QuantGemm& p) {
  gemm_1x1_scalar(p, [](const uint8_t* wr, int64_t e) {
    const int u = (e & 1) ? (wr[e >> 1] >> 4) : (wr[e >> 1] & 0x0F);
    return u - 8;
  });
}

}  // namespace einfer::quant_detail
