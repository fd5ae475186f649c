// Zero-heap checks for the foundation areas: arena, vector primitives, quantization, quantized
// matmul. Inputs are prepared before the HeapWatch starts; only library calls run under it.
// Later areas (prefill, decode, ...) add their own alloc_<area>.cpp with one TEST_CASE each.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/quant/quant.h"
#include "kernels/vec/vec.h"
#include "runtime/arena.h"
#include "runtime/tensor.h"
#include "tests/alloc/heap_counter.h"

using namespace einfer;

namespace {
std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return v;
}
}  // namespace

TEST_CASE("no heap: arena allocate, measure, rewind") {
  // 64-byte aligned base: a measuring arena counts as if the buffer started on a cache line.
  alignas(64) static unsigned char buffer[1 << 16];
  HeapWatch watch;
  Arena arena(buffer, sizeof buffer);
  Arena measure = Arena::measuring();
  float* a = nullptr;
  int8_t* b = nullptr;
  const size_t mark = arena.mark();
  const bool ok = arena.allocate_array(1000, &a).ok() && arena.allocate_array(333, &b, 16).ok() &&
                  measure.allocate_array(1000, &a).ok() && measure.allocate_array(333, &b, 16).ok();
  arena.rewind(mark);
  void* too_big = nullptr;
  const bool failed = !arena.allocate(1 << 20, 64, &too_big).ok();
  const size_t allocations = watch.allocations();
  CHECK(ok);
  CHECK(failed);
  CHECK(measure.used() == arena.high_water());
  CHECK(allocations == 0);
}

TEST_CASE("no heap: vector primitives") {
  const size_t n = 1003;  // not a multiple of any SIMD width
  std::vector<float> x = ramp(n, 2.0f), w = ramp(n, 0.5f), b = ramp(n, 0.1f), y(n), z(n);
  HeapWatch watch;
  float acc = dot_f32(x.data(), w.data(), n) + max_f32(x.data(), n) + sum_f32(x.data(), n);
  axpy_f32(0.5f, x.data(), y.data(), n);
  scale_f32(y.data(), 1.5f, n);
  add_f32(x.data(), w.data(), y.data(), n);
  mul_f32(x.data(), w.data(), z.data(), n);
  exp_f32(x.data(), y.data(), n);
  softmax_f32(y.data(), n);
  rmsnorm_f32(x.data(), w.data(), 1e-5f, y.data(), n);
  layernorm_f32(x.data(), w.data(), b.data(), 1e-5f, y.data(), n);
  layernorm_f32(x.data(), nullptr, nullptr, 1e-5f, y.data(), n);
  silu_f32(x.data(), y.data(), n);
  relu_f32(x.data(), y.data(), n);
  gelu_erf_f32(x.data(), y.data(), n);
  gelu_tanh_f32(x.data(), y.data(), n);
  swiglu_f32(z.data(), x.data(), n);
  acc += y[n - 1] + z[0];
  const size_t allocations = watch.allocations();
  CHECK(std::isfinite(acc));
  CHECK(allocations == 0);
}

TEST_CASE("no heap: quantize and dequantize rows (q8, q4, f16)") {
  const int64_t k = 200;
  const int32_t group = 32;
  std::vector<float> x = ramp(k, 3.0f), y(k), scales(quant_groups(k, group));
  std::vector<int8_t> q8(k);
  std::vector<uint8_t> q4(quant_row_bytes(DType::q4, k));
  HeapWatch watch;
  quantize_row_q8(x.data(), k, group, q8.data(), scales.data());
  dequantize_row_q8(q8.data(), scales.data(), k, group, y.data());
  quantize_row_q4(x.data(), k, group, q4.data(), scales.data());
  dequantize_row_q4(q4.data(), scales.data(), k, group, y.data());
  const float back = f16_to_f32(f32_to_f16(x[5]));
  const size_t allocations = watch.allocations();
  CHECK(std::fabs(back - x[5]) < 1e-2f);
  CHECK(allocations == 0);
}

TEST_CASE("no heap: matmul_f32_quant with caller scratch (q8 and q4 weights)") {
  const int64_t m = 3, n = 17, k = 96;
  const int32_t group = 32;
  std::vector<float> a = ramp(m * k, 1.0f), wf = ramp(n * k, 0.25f), c(m * n);
  std::vector<float> scales(n * quant_groups(k, group));
  std::vector<int8_t> q8(n * quant_row_bytes(DType::q8, k));
  std::vector<uint8_t> q4(n * quant_row_bytes(DType::q4, k));
  for (int64_t r = 0; r < n; ++r) {
    quantize_row_q8(&wf[r * k], k, group, &q8[r * k], &scales[r * quant_groups(k, group)]);
  }
  std::vector<unsigned char> scratch_buffer(1 << 16);
  for (DType dtype : {DType::q8, DType::q4}) {
    CAPTURE(dtype_name(dtype));
    if (dtype == DType::q4) {
      for (int64_t r = 0; r < n; ++r) {
        quantize_row_q4(&wf[r * k], k, group, &q4[r * quant_row_bytes(DType::q4, k)],
                        &scales[r * quant_groups(k, group)]);
      }
    }
    void* data = dtype == DType::q8 ? static_cast<void*>(q8.data()) : q4.data();
    TensorView w = make_view(dtype, data, {n, k});
    w.scales = scales.data();
    w.group_size = group;
    HeapWatch watch;
    Arena arena(scratch_buffer.data(), scratch_buffer.size());
    void* scratch = nullptr;
    const Status got = arena.allocate(matmul_quant_scratch_bytes(m, k, group), 64, &scratch);
    const Status s = matmul_f32_quant(a.data(), k, m, w, c.data(), n, scratch,
                                      matmul_quant_scratch_bytes(m, k, group));
    const size_t allocations = watch.allocations();
    REQUIRE(got.ok());
    CHECK(s.ok());
    CHECK(allocations == 0);
  }
}
