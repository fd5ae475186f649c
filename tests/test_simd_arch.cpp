#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/simd/simd.h"
#include "tests/isa_levels.h"

// The build system states which instruction set this build must use (CMake EINFER_EXPECTED_SIMD,
// set per preset): a toolchain or flag mistake that silently falls back to scalar, or to a
// narrower ISA, fails here instead of only being slower.
TEST_CASE("simd: the build selected the expected instruction set") {
  const char* expected = EINFER_EXPECTED_SIMD;
  const char* actual = einfer::simd_arch_name();
  std::printf("simd arch: %s (expected %s), %d float lanes\n", actual, expected,
              einfer::simd_float_lanes());
  REQUIRE_MESSAGE(std::strlen(expected) > 0, "configure with -DEINFER_EXPECTED_SIMD=<name>");
  CHECK(std::strcmp(actual, expected) == 0);
  CHECK(EINFER_HAS_SIMD == (std::strcmp(expected, "scalar") != 0));
  if (std::strcmp(expected, "fma3+avx2") == 0) CHECK(einfer::simd_float_lanes() == 8);
  if (std::strcmp(expected, "arm64+neon") == 0) CHECK(einfer::simd_float_lanes() == 4);
  if (std::strcmp(expected, "arm32+neon") == 0) CHECK(einfer::simd_float_lanes() == 4);
  if (std::strcmp(expected, "scalar") == 0) CHECK(einfer::simd_float_lanes() == 1);
}

// The FMA-peak probe of the benchmarks computes what it says: 12 chains x <- x * m + a, chain j
// starting at 1 + 0.01 j, in every lane. Three steps with m = 2, a = 1 give 8 x0 + 7 per chain.
TEST_CASE("simd: fma_chains_f32 runs 12 chains in every lane") {
  double want = 0;
  for (int j = 0; j < 12; ++j) want += 8.0 * (1.0 + 0.01 * j) + 7.0;
  want *= einfer::simd_float_lanes();
  CHECK(einfer::fma_chains_f32(3, 2.f, 1.f) == doctest::Approx(want).epsilon(1e-5));
  CHECK(einfer::fma_chains_f32(0, 2.f, 1.f) ==
        doctest::Approx((12 + 0.66) * einfer::simd_float_lanes()).epsilon(1e-5));
}

// Its twin in the f32 GEMM's registers (zmm where the AVX-512 tiles are selected), every
// selection this CPU runs.
TEST_CASE("simd: fma_chains_gemm_f32 runs 12 chains in every lane of the GEMM's registers") {
  einfer_test::for_each_isa([](const std::string&) {
    double want = 0;
    for (int j = 0; j < 12; ++j) want += 8.0 * (1.0 + 0.01 * j) + 7.0;
    want *= einfer::gemm_f32_lanes();
    CHECK(einfer::gemm_f32_lanes() >= einfer::simd_float_lanes());
    CHECK(einfer::fma_chains_gemm_f32(3, 2.f, 1.f) == doctest::Approx(want).epsilon(1e-5));
  });
}
