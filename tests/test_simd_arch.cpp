#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "kernels/simd.h"

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
