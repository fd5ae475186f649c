// Shared by the GGUF kernel tests (test_gguf_quant.cpp, test_gguf_layout.cpp).
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernels/gguf/gguf.h"
#include "test_pool.h"

namespace einfer_test {

// matmul_f32_gguf of `m` rows of `a` (row length k) against `w` on 2 and 3 workers gives `want`
// (n outputs a row) bit for bit: the column split must not change a single sum.
inline void check_gguf_same_bits_threaded(const float* a, int64_t k, int64_t m,
                                          const einfer::TensorView& w, int64_t n,
                                          const std::vector<float>& want,
                                          std::vector<unsigned char>& scratch) {
  std::vector<float> threaded(want.size());
  for (int threads : {2, 3}) {
    CAPTURE(threads);
    TestPool pool(threads);
    const einfer_threads th = pool.threads();
    REQUIRE(
        einfer::matmul_f32_gguf(a, k, m, w, threaded.data(), n, scratch.data(), scratch.size(), &th)
            .ok());
    CHECK(std::memcmp(want.data(), threaded.data(), want.size() * sizeof(float)) == 0);
  }
}

}  // namespace einfer_test
