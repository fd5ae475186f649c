// doctest entry point; prints which SIMD path this build selected before running the suites.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "kernels/simd/simd.h"

int main(int argc, char** argv) {
  std::printf("einfer_tests: SIMD architecture %s (%d float lanes)\n", einfer::simd_arch_name(),
              einfer::simd_float_lanes());
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
