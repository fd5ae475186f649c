// Test helper: random q8/q4 weight matrices in the rows layout (runtime/tensor.h), for the
// quantized matmul tests (test_matmul_quant.cpp, test_quant_layout.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/quant/quant.h"
#include "runtime/tensor.h"
#include "tests/test_util.h"

namespace einfer_test {

// Quantized weights either from floats (the packer's path) or raw random bytes and scales, which
// exercise -128 in q8 and a non-zero padding nibble in q4 rows of odd length.
struct QWeights {
  std::vector<uint8_t> data;
  std::vector<float> scales;
  einfer::TensorView view;
};

inline QWeights make_weights(einfer::DType dt, int64_t n, int64_t k, int32_t group, bool raw,
                             Rng& rng) {
  using namespace einfer;
  QWeights w;
  const size_t rb = quant_row_bytes(dt, k);
  const int64_t groups = quant_groups(k, group);
  w.data.resize(rb * static_cast<size_t>(n) + 1);
  w.scales.resize(static_cast<size_t>(n * groups) + 1);
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t j = 0; j < n; ++j) {
    uint8_t* q = w.data.data() + j * rb;
    float* s = w.scales.data() + j * groups;
    if (raw) {
      for (size_t b = 0; b < rb; ++b) q[b] = static_cast<uint8_t>(rng.next());
      for (int64_t g = 0; g < groups; ++g) s[g] = 0.001f + 0.02f * std::fabs(rng.uniform());
    } else {
      for (auto& x : row) x = rng.uniform();
      if (dt == DType::q8) {
        quantize_row_q8(row.data(), k, group, reinterpret_cast<int8_t*>(q), s);
      } else {
        quantize_row_q4(row.data(), k, group, q, s);
      }
    }
  }
  w.view = make_view(dt, w.data.data(), {n, k});
  w.view.scales = w.scales.data();
  w.view.group_size = group;
  return w;
}

}  // namespace einfer_test
