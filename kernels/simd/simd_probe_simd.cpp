// The instruction set of the selected level as the benchmarks see it: its name, its float width
// and its FMA peak (kernels/simd/simd.h). Compiled once per level like every *_simd.cpp, so each
// level reports itself; the f32 GEMM's own probe is in kernels/gemm_f32/gemm_f32_simd.cpp.
#include <cmath>

#include "kernels/simd/simd.h"

namespace einfer {

const char* simd_arch_name() {
#if EINFER_HAS_SIMD
  return xsimd::default_arch::name();
#else
  return "scalar";
#endif
}

int simd_float_lanes() {
#if EINFER_HAS_SIMD
  return static_cast<int>(xsimd::batch<float>::size);
#else
  return 1;
#endif
}

float fma_chains_f32(int64_t iterations, float m, float a) {
#if EINFER_HAS_SIMD
  using B = xsimd::batch<float>;
  const B vm(m), va(a);
  B r[12];
  for (int j = 0; j < 12; ++j) r[j] = B(1.f + 0.01f * float(j));
  for (int64_t i = 0; i < iterations; ++i) {
    for (int j = 0; j < 12; ++j) r[j] = xsimd::fma(r[j], vm, va);
  }
  B total = r[0];
  for (int j = 1; j < 12; ++j) total += r[j];
  return xsimd::hadd(total);
#else
  float r[12];
  for (int j = 0; j < 12; ++j) r[j] = 1.f + 0.01f * float(j);
  for (int64_t i = 0; i < iterations; ++i) {
    for (int j = 0; j < 12; ++j) r[j] = std::fma(r[j], m, a);
  }
  float total = 0.f;
  for (int j = 0; j < 12; ++j) total += r[j];
  return total;
#endif
}

}  // namespace einfer
