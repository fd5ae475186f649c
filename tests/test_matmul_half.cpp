// f16 / bf16 weights: the widening conversions, the per-ISA GEMV kernels against their scalar
// twins, matmul_f32_half against a double-precision reference (GEMV and GEMM paths, threads), and
// the einsum planner routing f16/bf16 weight products to them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "kernels/half/half.h"
#include "kernels/quant/quant.h"
#include "tests/isa_levels.h"
#include "tests/test_util.h"

using namespace einfer;

namespace {

using einfer_test::Rng;

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float widen(DType d, uint16_t h) {
  return d == DType::f16 ? f16_to_f32(h) : bf16_to_f32(h);
}

std::vector<uint16_t> random_half(DType d, size_t n, Rng& rng) {
  std::vector<uint16_t> v(n);
  for (auto& h : v) h = d == DType::f16 ? f32_to_f16(rng.uniform()) : f32_to_bf16(rng.uniform());
  return v;
}

// C = A · Wᵀ in double from the widened weights.
std::vector<double> reference(DType d, const std::vector<float>& a, int64_t m, int64_t lda,
                              const std::vector<uint16_t>& w, int64_t n, int64_t k) {
  std::vector<double> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += double(a[i * lda + p]) * widen(d, w[j * k + p]);
      c[i * n + j] = s;
    }
  return c;
}

// A "pool" that runs the tasks one after another in reverse order on the calling thread (no
// std::thread, so the test also runs on bare metal): each task must use only its own scratch slot
// and columns for the result to match the one-task run.
void run_reversed(void*, void (*fn)(void*, int), void* arg, int count) {
  for (int i = count - 1; i >= 0; --i) fn(arg, i);
}

}  // namespace

TEST_CASE("half: bf16 narrowing rounds to the nearest bf16, ties to even; widening is exact") {
  Rng rng{7};
  for (int i = 0; i < 100000; ++i) {
    uint32_t b = rng.next() << 11 ^ rng.next();
    if (i % 4 == 0) b = (b & 0xFFFF0000u) | 0x8000u;  // exact ties
    float x;
    std::memcpy(&x, &b, 4);
    if (!std::isfinite(x)) continue;
    const uint16_t h = f32_to_bf16(x);
    const double got = bf16_to_f32(h);
    // The two bf16 neighbours of x: truncation and the next one away from zero.
    const uint16_t lo = static_cast<uint16_t>(b >> 16), hi = static_cast<uint16_t>(lo + 1);
    // IEEE rounding treats infinity as the value one ulp past the largest finite bf16 (2^128).
    auto value = [](uint16_t v) {
      const double f = bf16_to_f32(v);
      return std::isinf(f) ? std::copysign(std::ldexp(1.0, 128), f) : f;
    };
    const double dlo = std::fabs(value(lo) - x), dhi = std::fabs(value(hi) - x);
    INFO(x);
    if (dlo < dhi) CHECK(h == lo);
    if (dhi < dlo) CHECK(h == hi);
    if (dlo == dhi) CHECK((h & 1u) == 0u);
    if (std::isfinite(got)) CHECK(bits(float(got)) == uint32_t{h} << 16);
  }
  CHECK(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  CHECK(bf16_to_f32(f32_to_bf16(3.4e38f)) == INFINITY);  // past the largest bf16 + half an ulp
  CHECK(bf16_to_f32(f32_to_bf16(3.39e38f)) < INFINITY);
  CHECK(bf16_to_f32(f32_to_bf16(-1.5f)) == -1.5f);
}

TEST_CASE("half: every ISA level's widening matches the scalar twin on every 16-bit pattern") {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  einfer_test::for_each_isa([&](const std::string&) {
    for (DType d : {DType::f16, DType::bf16}) {
      std::vector<float> fast(65536 + 5), ref(65536 + 5);
      // An odd start and length exercise the vector loop's tail.
      for (int off : {0, 3}) {
        const int64_t n = 65536 - off - 2;
        if (d == DType::f16) {
          widen_f16_f32(all.data() + off, fast.data(), n);
          scalar::widen_f16_f32(all.data() + off, ref.data(), n);
        } else {
          widen_bf16_f32(all.data() + off, fast.data(), n);
          scalar::widen_bf16_f32(all.data() + off, ref.data(), n);
        }
        for (int64_t i = 0; i < n; ++i) {
          INFO(dtype_name(d) << " pattern " << i + off);
          if (std::isnan(ref[i]))
            REQUIRE(std::isnan(fast[i]));
          else
            REQUIRE(bits(fast[i]) == bits(ref[i]));
        }
      }
    }
  });
}

TEST_CASE("half: every ISA level's GEMV kernels match their scalar twins over odd shapes") {
  einfer_test::for_each_isa([&](const std::string&) {
    Rng rng{11};
    for (DType d : {DType::f16, DType::bf16}) {
      for (int64_t n : {1, 3, 4, 7, 33}) {
        for (int64_t k : {1, 8, 15, 16, 17, 63, 288, 301}) {
          const std::vector<uint16_t> w = random_half(d, static_cast<size_t>(n * k), rng);
          std::vector<float> x(static_cast<size_t>(k));
          for (auto& v : x) v = rng.uniform();
          std::vector<float> y(static_cast<size_t>(n)), yr(static_cast<size_t>(n));
          if (d == DType::f16) {
            gemv_f16(n, k, w.data(), k, x.data(), y.data());
            scalar::gemv_f16(n, k, w.data(), k, x.data(), yr.data());
          } else {
            gemv_bf16(n, k, w.data(), k, x.data(), y.data());
            scalar::gemv_bf16(n, k, w.data(), k, x.data(), yr.data());
          }
          const std::vector<double> ref = reference(d, x, 1, k, w, n, k);
          for (int64_t j = 0; j < n; ++j) {
            INFO(dtype_name(d) << " n=" << n << " k=" << k << " j=" << j);
            const double tol = 1e-5 * (1.0 + std::sqrt(double(k)));
            CHECK(std::fabs(y[j] - ref[j]) < tol);
            CHECK(std::fabs(yr[j] - ref[j]) < tol);
          }
        }
      }
    }
  });
}

TEST_CASE(
    "half: matmul_f32_half (GEMV and GEMM paths, 3 tasks, every ISA level) against a double "
    "reference") {
  const Threads threads{nullptr, 3, run_reversed};
  einfer_test::for_each_isa([&](const std::string&) {
    Rng rng{13};
    for (DType d : {DType::f16, DType::bf16}) {
      for (int64_t m : {1, 2, 3, 4, 9, 37}) {
        for (int64_t n : {5, 48, 300}) {
          const int64_t k = m % 2 ? 77 : 288, lda = k + 3, ldc = n + 1;
          const std::vector<uint16_t> w = random_half(d, static_cast<size_t>(n * k), rng);
          std::vector<float> a(static_cast<size_t>(m * lda));
          for (auto& v : a) v = rng.uniform();
          const std::vector<double> ref = reference(d, a, m, lda, w, n, k);
          const TensorView wv = make_view(d, const_cast<uint16_t*>(w.data()), {n, k});
          const size_t slot = matmul_half_scratch_bytes(m, n, k);
          std::vector<unsigned char> scratch_store(slot * 3 + 64);
          void* scratch = reinterpret_cast<void*>(
              (reinterpret_cast<uintptr_t>(scratch_store.data()) + 63) & ~uintptr_t{63});
          std::vector<float> c1(static_cast<size_t>(m * ldc)), c3(c1.size());
          REQUIRE(matmul_f32_half(a.data(), lda, m, wv, c1.data(), ldc, scratch, slot).ok());
          REQUIRE(matmul_f32_half(a.data(), lda, m, wv, c3.data(), ldc, scratch, slot * 3, &threads)
                      .ok());
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              INFO(dtype_name(d) << " m=" << m << " n=" << n << " i=" << i << " j=" << j);
              CHECK(std::fabs(c1[i * ldc + j] - ref[i * n + j]) < 1e-4);
              CHECK(c3[i * ldc + j] == c1[i * ldc + j]);  // same tiles whatever the thread count
            }
        }
      }
    }
  });
  const std::vector<float> f(16);
  float c = 0;
  CHECK(!matmul_f32_half(f.data(), 4, 1,
                         make_view(DType::f32, const_cast<float*>(f.data()), {4, 4}), &c, 4,
                         nullptr, 0)
             .ok());
}

TEST_CASE("einsum: f16 and bf16 weight products take the half-precision kernels") {
  Rng rng{17};
  for (DType d : {DType::f16, DType::bf16}) {
    for (int64_t m : {1, 6}) {
      const int64_t n = 40, k = 24;
      const std::vector<uint16_t> w = random_half(d, static_cast<size_t>(n * k), rng);
      std::vector<float> x(static_cast<size_t>(m * k)), y(static_cast<size_t>(m * n)), yr(y.size());
      for (auto& v : x) v = rng.uniform();
      const TensorView in[2] = {make_view(DType::f32, x.data(), {m, k}),
                                make_view(d, const_cast<uint16_t*>(w.data()), {n, k})};
      EinsumPlan plan;
      REQUIRE(plan_einsum("mk,nk->mn", in, 2, &plan).ok());
      CHECK(std::string(einsum_plan_kind_name(plan)) == "half_matmul");
      const std::string name = einsum_plan_kernel_name(plan);
      INFO(name);
      CHECK(name == matmul_half_kernel_name(d, m));
      CHECK(name.find(d == DType::f16 ? "f16" : "bf16") != std::string::npos);
      CHECK(name.find(m == 1 ? "gemv" : "gemm_f32") != std::string::npos);
      std::vector<unsigned char> scratch(plan.scratch_bytes + 64);
      REQUIRE(execute_einsum(plan, in, 2, make_view(DType::f32, y.data(), {m, n}), scratch.data(),
                             scratch.size())
                  .ok());
      REQUIRE(execute_einsum_reference(plan, in, 2, make_view(DType::f32, yr.data(), {m, n})).ok());
      for (size_t i = 0; i < y.size(); ++i) CHECK(std::fabs(y[i] - yr[i]) < 1e-5);
    }
  }
}
