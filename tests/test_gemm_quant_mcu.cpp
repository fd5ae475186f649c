// The Cortex-M kernels against their scalar twins. Quantized GEMM microkernels
// (gemm_q8_q4_2x1_dsp.cpp on the Cortex-M4F image, gemm_q8_q4_4x1_mve.cpp on the Cortex-M55 image)
// against their scalar twins: the same int8 activations, exact int32 group sums and the same float
// sequence, so every output must be bit-identical. Shapes cover tile remainders (n not a multiple
// of 2 or 4), short last groups, rows whose length is not a multiple of the SIMD step (the kernels
// must not read past a row) and raw weight bytes (-128 in q8, a non-zero padding nibble in odd q4
// rows). Other targets have no Cortex-M kernel: the cases say so and check nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/attention/attention_i8_rows.h"
#include "kernels/gemm_quant/gemm_quant_internal.h"
#include "kernels/quant/quant.h"
#include "runtime/tensor.h"

using namespace einfer;
using namespace einfer::quant_detail;

namespace {

// Random bits and floats in [-1, 1) from the standard library's Mersenne twister (fixed seeds).
struct Rng {
  std::mt19937 gen;
  explicit Rng(uint32_t seed) : gen(seed) {}
  uint32_t next() { return static_cast<uint32_t>(gen()); }
  float uniform() { return std::uniform_real_distribution<float>(-1.f, 1.f)(gen); }
};

#if EINFER_HAS_MVE || EINFER_HAS_DSP
void run_mcu_kernel(const QuantGemm& p, bool q4) {
#if EINFER_HAS_MVE
  q4 ? gemm_q4_4x1_mve(p) : gemm_q8_4x1_mve(p);
#else
  q4 ? gemm_q4_2x1_dsp(p) : gemm_q8_2x1_dsp(p);
#endif
}

void check_case(bool q4, int64_t m, int64_t n, int64_t k, int32_t group, Rng& rng) {
  CAPTURE(q4);
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  CAPTURE(group);
  const DType dt = q4 ? DType::q4 : DType::q8;
  const size_t row_bytes = quant_row_bytes(dt, k);
  const int64_t groups = quant_groups(k, group);
  const int64_t kpad = padded_k(k);
  // Weights exactly as long as they are: a kernel reading past the last row reads past the
  // vector (caught on hosts with sanitizers; here the raw bytes make stray reads change results).
  std::vector<uint8_t> w(row_bytes * static_cast<size_t>(n));
  for (auto& b : w) b = static_cast<uint8_t>(rng.next());
  std::vector<float> sw(static_cast<size_t>(n * groups));
  for (auto& s : sw) s = 0.001f + 0.02f * rng.uniform() * rng.uniform();
  std::vector<float> a(static_cast<size_t>(m * k));
  for (auto& x : a) x = rng.uniform() * 3.f;

  std::vector<int8_t> qa(static_cast<size_t>(m * kpad), 0), qa_mcu;
  std::vector<float> sa(static_cast<size_t>(m * groups));
  for (int64_t i = 0; i < m; ++i) {
    quantize_activations_q8(a.data() + i * k, k, group, qa.data() + i * kpad,
                            sa.data() + i * groups);
  }
  qa_mcu = qa;
#if !EINFER_HAS_MVE
  if (q4) {  // the DSP q4 kernel reads activations as even/odd halves of 8-blocks
    for (int64_t i = 0; i < m; ++i) permute_even_odd8(qa_mcu.data() + i * kpad, kpad);
  }
#endif
  const int64_t ldc = n + 1;
  const float sentinel = -777.f;
  std::vector<float> c_scalar(static_cast<size_t>(m * ldc), sentinel), c_mcu(c_scalar);
  QuantGemm p{.qa = qa.data(),
              .sa = sa.data(),
              .csum = nullptr,
              .w = w.data(),
              .sw = sw.data(),
              .w_row_bytes = row_bytes,
              .m = m,
              .n = n,
              .k = k,
              .kpad = kpad,
              .groups = groups,
              .group = group,
              .c = c_scalar.data(),
              .ldc = ldc};
  q4 ? gemm_q4_1x1_scalar(p) : gemm_q8_1x1_scalar(p);
  p.qa = qa_mcu.data();
  p.c = c_mcu.data();
  run_mcu_kernel(p, q4);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      uint32_t bits_scalar, bits_mcu;
      std::memcpy(&bits_scalar, &c_scalar[i * ldc + j], 4);
      std::memcpy(&bits_mcu, &c_mcu[i * ldc + j], 4);
      CHECK(bits_mcu == bits_scalar);  // j == n: the gap stays the sentinel in both
    }
  }
}
#endif

}  // namespace

TEST_CASE("gemm_quant_mcu: Cortex-M q8/q4 kernels == scalar twins, bit for bit") {
#if EINFER_HAS_MVE || EINFER_HAS_DSP
  Rng rng(0xC0FFEE12u);
  const int64_t ms[] = {1, 2, 3};
  const int64_t ns[] = {1, 2, 3, 4, 5, 7, 9};
  const int64_t ks[] = {1, 3, 7, 8, 15, 31, 32, 33, 64, 100, 172, 257};
  const int32_t groups[] = {4, 8, 16, 20, 32, 48, 64, 96};
  int cases = 0;
  for (bool q4 : {false, true}) {
    for (int32_t group : groups) {
      if (!mcu_supports_group(q4, group)) continue;
      for (int64_t k : ks) {
        for (int64_t n : ns) {
          for (int64_t m : ms) {
            if (m > 1 && n > 4 && k > 64) continue;  // enough GEMM shapes; keep the M4 run short
            check_case(q4, m, n, k, group, rng);
            ++cases;
          }
        }
      }
    }
  }
  // Every kernel variant ran: q8 with a group that is a multiple of the step and one that is not
  // (MVE: 20), q4 with the packer's default group 32.
  CHECK(mcu_supports_group(false, 32));
  CHECK(mcu_supports_group(true, 32));
  CHECK(cases > 500);
#else
  CHECK_FALSE(mcu_supports_group(false, 32));
  CHECK_FALSE(mcu_supports_group(true, 32));
  MESSAGE("no Cortex-M kernels in this build (not an M-profile target)");
#endif
}

TEST_CASE("attention_i8_rows: the build's int8 KV row kernels == scalar twins, bit for bit") {
  using namespace einfer::attention_detail;
  Rng rng(0xA77E5710u);
  for (int32_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 64, 100}) {
    CAPTURE(n);
    // Exactly n elements: a kernel reading past the row end reads past the vectors.
    std::vector<int16_t> a(static_cast<size_t>(n));
    std::vector<int8_t> b(static_cast<size_t>(n));
    for (auto& x : a) x = static_cast<int16_t>(rng.next());  // full int16 range, incl. -32768
    for (auto& x : b) x = static_cast<int8_t>(rng.next());   // incl. -128
    const int32_t acc0 = static_cast<int32_t>(rng.next() % 2000001) - 1000000;
    CHECK(attention_dot_i16_i8(a.data(), b.data(), n, acc0) ==
          dot_i16_i8_scalar(a.data(), b.data(), n, acc0));

    const float w = rng.uniform() * 0.01f;
    std::vector<float> y(static_cast<size_t>(n) + 1), y_ref;
    for (auto& x : y) x = rng.uniform();
    y_ref = y;
    attention_axpy_f32_i8(w, b.data(), n, y.data());
    axpy_f32_i8_scalar(w, b.data(), n, y_ref.data());
    CHECK(std::memcmp(y.data(), y_ref.data(), y.size() * sizeof(float)) == 0);  // incl. y[n]
  }
#if EINFER_HAS_MVE
  MESSAGE("checked the Helium (MVE) dot and axpy");
#elif EINFER_HAS_DSP
  MESSAGE("checked the SIMD32 (DSP) dot; the axpy is the scalar twin on this core");
#else
  MESSAGE("no Cortex-M row kernels in this build: the dispatch runs the scalar twins");
#endif
}

TEST_CASE("quantize_activations_q8: the Helium twin gives the scalar bytes and scales") {
#if EINFER_HAS_MVE
  Rng rng(0x5EED0F0Au);
  for (int32_t group : {4, 8, 20, 32, 64}) {
    for (int64_t k : {1, 3, 4, 5, 31, 32, 33, 64, 100, 172, 257}) {
      CAPTURE(group);
      CAPTURE(k);
      const int64_t groups = quant_groups(k, group);
      std::vector<float> a(static_cast<size_t>(k));
      for (auto& x : a) x = rng.uniform() * 4.f;
      if (k > 8) {  // an all-zero group (scale 0) and exact .5 ties after scaling
        for (int64_t e = 0; e < (k < group ? k : group); ++e) a[static_cast<size_t>(e)] = 0.f;
        a[static_cast<size_t>(k - 1)] = 127.f;
        a[static_cast<size_t>(k - 2)] = 0.5f;
        a[static_cast<size_t>(k - 3)] = -2.5f;
      }
      std::vector<int8_t> q(static_cast<size_t>(k) + 4, 99), q_mve(q);  // + 4: nothing past k
      std::vector<float> s(static_cast<size_t>(groups)), s_mve(s);
      quantize_activations_q8(a.data(), k, group, q.data(), s.data());
      quantize_activations_q8_mve(a.data(), k, group, q_mve.data(), s_mve.data());
      CHECK(q == q_mve);
      CHECK(std::memcmp(s.data(), s_mve.data(), s.size() * sizeof(float)) == 0);
    }
  }
#else
  MESSAGE("no Helium in this build: the scalar quantizer is the only one");
#endif
}
