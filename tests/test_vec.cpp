// Vector primitives (kernels/vec/vec.h): every SIMD primitive against its scalar twin for n = 1..67
// on misaligned pointers (so every main-loop / remainder split and both tail paths are hit),
// in-place use, edge inputs, and the scalar twins themselves against an independent float64
// computation.
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"

using namespace einfer;

namespace {

constexpr size_t kMaxN = 67;  // > 2 * 4 * 8 lanes: covers the unrolled loop, single batches, tails

// Tolerances, |got - want| <= abs + rel * |want| unless stated otherwise.
// Sums (dot, sum, norms' statistics) in a different order differ by at most
// n * FLT_EPSILON * sum|terms| each (standard recursive-summation bound), so twice that.
constexpr double kSumOrderFactor = 2.0;
// exp: xsimd::exp measured <= 1.5 ulp, glibc expf <= 0.5 ulp: 2 ulp ~ 2.4e-7, take 4e-7 to stay
// clear of the bound; 1e-37 absolute because results below FLT_MIN flush to 0 in the SIMD path.
constexpr double kExpRel = 4e-7;
constexpr double kExpAbs = 1e-37;
// silu/swiglu: exp (1.5 ulp) + divide (NEON32 divides by two Newton steps of a reciprocal
// estimate) + multiplies: measured <= 3.4 ulp, so 1e-6 relative (~8 ulp).
constexpr double kSigmoidRel = 1e-6;
// GELU: the erf / tanh forms lose relative precision where 1 + erf(.) cancels (x << 0), in the
// reference as much as in SIMD; both are within 5e-7 of float64 in absolute terms, so 1e-6 absolute
// scaled by max(1, |x|) (the error of 0.5 x (1 + t) grows with |x| times the error of t).
constexpr double kGeluAbs = 1e-6;
// softmax: outputs in [0, 1]; exp error (2 ulp) plus the normalising sum's rounding (n eps).
constexpr double kSoftmaxRel = 4e-7 + kMaxN * FLT_EPSILON;
constexpr double kSoftmaxAbs = 1e-37;
// Norms: the inverse-rms / inverse-std scalar carries the sum-order error (n eps relative, halved
// by the square root) plus a few roundings per element: n * eps + 4 eps relative, to the largest
// output magnitude (layernorm subtracts the mean, so elementwise relative error is meaningless).
constexpr double kNormRel = (kMaxN + 4) * FLT_EPSILON;
// axpy: the SIMD path fuses the multiply-add, the scalar one may not (compiler contraction):
// they differ by the rounding of alpha x plus one rounding of each result, under
// 2 eps * (|alpha x| + |y|).
constexpr double kAxpyRel = 2 * FLT_EPSILON;

// Deterministic inputs without <random>: 32-bit LCG, uniform in [lo, hi).
struct Lcg {
  uint32_t state;
  float uniform(float lo, float hi) {
    state = state * 1664525u + 1013904223u;
    return lo + (hi - lo) * static_cast<float>(state >> 8) * (1.f / 16777216.f);
  }
};

// An aligned buffer handed out one float past the alignment: every load is misaligned.
struct Buf {
  alignas(64) float storage[kMaxN + 16];
  float* p() { return storage + 1; }
  void fill(Lcg& rng, float lo, float hi, size_t n) {
    for (size_t i = 0; i < n; ++i) p()[i] = rng.uniform(lo, hi);
  }
  void copy_from(const float* src, size_t n) { std::memcpy(p(), src, n * sizeof(float)); }
};

bool close(double got, double want, double rel, double abs) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= abs + rel * std::fabs(want);
}

// Index of the first element outside tolerance, or -1.
long first_mismatch(const float* got, const float* want, size_t n, double rel, double abs) {
  for (size_t i = 0; i < n; ++i)
    if (!close(got[i], want[i], rel, abs)) return static_cast<long>(i);
  return -1;
}

#define CHECK_ARRAYS_CLOSE(got, want, n, rel, abs)                           \
  do {                                                                       \
    const long bad_ = first_mismatch(got, want, n, rel, abs);                \
    INFO("n=", n, " index=", bad_, " got=", (bad_ >= 0 ? (got)[bad_] : 0.f), \
         " want=", (bad_ >= 0 ? (want)[bad_] : 0.f));                        \
    CHECK(bad_ == -1);                                                       \
  } while (0)

using UnaryFn = void (*)(const float*, float*, size_t);

// SIMD vs scalar twin for y = f(x), out of place and in place, n = 1..kMaxN.
void check_unary(UnaryFn simd, UnaryFn ref, float lo, float hi, double rel, double abs,
                 bool scale_abs_by_x = false) {
  Lcg rng{12345};
  for (size_t n = 1; n <= kMaxN; ++n) {
    Buf x, got, want, inplace;
    x.fill(rng, lo, hi, n);
    simd(x.p(), got.p(), n);
    ref(x.p(), want.p(), n);
    if (scale_abs_by_x) {
      for (size_t i = 0; i < n; ++i) {
        const double a = abs * std::fmax(1.0, std::fabs(x.p()[i]));
        INFO("n=", n, " i=", i, " x=", x.p()[i], " got=", got.p()[i], " want=", want.p()[i]);
        CHECK(close(got.p()[i], want.p()[i], rel, a));
      }
    } else {
      CHECK_ARRAYS_CLOSE(got.p(), want.p(), n, rel, abs);
    }
    inplace.copy_from(x.p(), n);
    simd(inplace.p(), inplace.p(), n);
    CHECK(std::memcmp(inplace.p(), got.p(), n * sizeof(float)) == 0);
  }
}

using GateFn = void (*)(float*, const float*, size_t);

// A gated activation (g = act(g) * u) against its scalar twin for every length up to kMaxN, gates
// in [-10, 10] and up values in [-3, 3]: within rel (relative) or abs_of(g, u) (absolute).
template <class Abs>
void check_gate(GateFn simd, GateFn ref, uint32_t seed, Abs abs_of, double rel = 0.0) {
  Lcg rng{seed};
  for (size_t n = 1; n <= kMaxN; ++n) {
    Buf g, u, got, want;
    g.fill(rng, -10.f, 10.f, n);
    u.fill(rng, -3.f, 3.f, n);
    got.copy_from(g.p(), n);
    want.copy_from(g.p(), n);
    simd(got.p(), u.p(), n);
    ref(want.p(), u.p(), n);
    for (size_t i = 0; i < n; ++i) {
      INFO("n=", n, " i=", i);
      CHECK(close(got.p()[i], want.p()[i], rel, abs_of(g.p()[i], u.p()[i])));
    }
  }
}

double sum_abs_products(const float* a, const float* b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += std::fabs(static_cast<double>(a[i]) * b[i]);
  return s;
}

// Not std::fmax: GCC 12 at -O3 crashes (ICE in vect_transform_reduction) vectorising fmax
// reductions for aarch64.
double larger(double a, double b) {
  return b > a ? b : a;
}

double max_abs(const float* x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = std::fabs(x[i]);
    m = larger(m, v);
  }
  return m;
}

}  // namespace

TEST_CASE("vec: dot and sum agree with the scalar twins within the summation-order bound") {
  Lcg rng{1};
  for (size_t n = 1; n <= kMaxN; ++n) {
    Buf a, b;
    a.fill(rng, -2.f, 2.f, n);
    b.fill(rng, -2.f, 2.f, n);
    const double bound = kSumOrderFactor * n * FLT_EPSILON;
    INFO("n=", n);
    CHECK(std::fabs(dot_f32(a.p(), b.p(), n) - scalar::dot_f32(a.p(), b.p(), n)) <=
          bound * sum_abs_products(a.p(), b.p(), n));
    Buf ones;
    for (size_t i = 0; i < n; ++i) ones.p()[i] = 1.f;
    CHECK(std::fabs(sum_f32(a.p(), n) - scalar::sum_f32(a.p(), n)) <=
          bound * sum_abs_products(a.p(), ones.p(), n));
  }
  CHECK(dot_f32(nullptr, nullptr, 0) == 0.f);
  CHECK(sum_f32(nullptr, 0) == 0.f);
}

TEST_CASE("vec: max, scale, add, mul, relu are exact") {
  Lcg rng{2};
  for (size_t n = 1; n <= kMaxN; ++n) {
    INFO("n=", n);
    Buf a, b, got, want;
    a.fill(rng, -5.f, 5.f, n);
    b.fill(rng, -5.f, 5.f, n);
    CHECK(max_f32(a.p(), n) == scalar::max_f32(a.p(), n));
    // The maximum in the last slot (a tail element) must be found too.
    a.p()[n - 1] = 6.f;
    CHECK(max_f32(a.p(), n) == 6.f);

    got.copy_from(a.p(), n);
    want.copy_from(a.p(), n);
    scale_f32(got.p(), 0.37f, n);
    scalar::scale_f32(want.p(), 0.37f, n);
    CHECK(std::memcmp(got.p(), want.p(), n * sizeof(float)) == 0);

    add_f32(a.p(), b.p(), got.p(), n);
    scalar::add_f32(a.p(), b.p(), want.p(), n);
    CHECK(std::memcmp(got.p(), want.p(), n * sizeof(float)) == 0);
    mul_f32(a.p(), b.p(), got.p(), n);
    scalar::mul_f32(a.p(), b.p(), want.p(), n);
    CHECK(std::memcmp(got.p(), want.p(), n * sizeof(float)) == 0);
    // In place: y aliases a.
    got.copy_from(a.p(), n);
    add_f32(got.p(), b.p(), got.p(), n);
    scalar::add_f32(a.p(), b.p(), want.p(), n);
    CHECK(std::memcmp(got.p(), want.p(), n * sizeof(float)) == 0);
  }
  CHECK(max_f32(nullptr, 0) == -INFINITY);
  check_unary(relu_f32, scalar::relu_f32, -3.f, 3.f, 0.0, 0.0);
}

TEST_CASE("vec: argmax finds the scalar scan's index: first of equal maxima, NaNs never chosen") {
  Lcg rng{5};
  for (size_t n : {size_t{1}, size_t{2}, size_t{15}, size_t{16}, size_t{17}, size_t{40}, kMaxN,
                   size_t{32000}}) {
    INFO("n=", n);
    std::vector<float> storage(n + 1);
    float* a = storage.data() + 1;  // misaligned
    auto fill = [&] {
      for (size_t i = 0; i < n; ++i) a[i] = rng.uniform(-5.f, 5.f);
    };
    fill();
    CHECK(argmax_f32(a, n) == scalar::argmax_f32(a, n));
    // Ties: the maximum at three places, the first one wins; -0 and +0 count as equal.
    for (size_t at : {n - 1, n / 2, n / 3}) a[at] = 9.f;
    CHECK(argmax_f32(a, n) == n / 3);
    CHECK(argmax_f32(a, n) == scalar::argmax_f32(a, n));
    for (size_t i = 0; i < n; ++i) a[i] = (i % 2) ? 0.f : -0.f;
    CHECK(argmax_f32(a, n) == 0);
    // NaNs are skipped, wherever they are; a NaN in slot 0 keeps the scan at 0.
    fill();
    for (size_t i = 1; i < n; i += 3) a[i] = NAN;
    CHECK(argmax_f32(a, n) == scalar::argmax_f32(a, n));
    CHECK(!std::isnan(a[argmax_f32(a, n)]));
    a[0] = NAN;
    CHECK(argmax_f32(a, n) == 0);
  }
  CHECK(argmax_f32(nullptr, 0) == 0);
}

TEST_CASE("vec: axpy matches the scalar twin up to the fused rounding, in place too") {
  Lcg rng{3};
  for (size_t n = 1; n <= kMaxN; ++n) {
    Buf x, y0, got, want;
    x.fill(rng, -3.f, 3.f, n);
    y0.fill(rng, -3.f, 3.f, n);
    const float alpha = rng.uniform(-2.f, 2.f);
    got.copy_from(y0.p(), n);
    want.copy_from(y0.p(), n);
    axpy_f32(alpha, x.p(), got.p(), n);
    scalar::axpy_f32(alpha, x.p(), want.p(), n);
    for (size_t i = 0; i < n; ++i) {
      INFO("n=", n, " i=", i);
      const double terms = std::fabs(alpha * x.p()[i]) + std::fabs(y0.p()[i]);
      CHECK(std::fabs(got.p()[i] - want.p()[i]) <= kAxpyRel * terms);
    }
    // y == x: y[i] = x[i] + alpha x[i]. The bound is on the terms, not the result: for alpha
    // near -1 the result cancels and carries no relative accuracy in either version.
    got.copy_from(x.p(), n);
    want.copy_from(x.p(), n);
    axpy_f32(alpha, got.p(), got.p(), n);
    scalar::axpy_f32(alpha, want.p(), want.p(), n);
    for (size_t i = 0; i < n; ++i) {
      INFO("in place, n=", n, " i=", i);
      const double terms = (1.0 + std::fabs(alpha)) * std::fabs(x.p()[i]);
      CHECK(std::fabs(got.p()[i] - want.p()[i]) <= kAxpyRel * terms);
    }
  }
}

TEST_CASE("vec: exp over the full float range, underflow to 0 and overflow to inf") {
  check_unary(exp_f32, scalar::exp_f32, -87.f, 88.f, kExpRel, kExpAbs);
  check_unary(exp_f32, scalar::exp_f32, -5.f, 5.f, kExpRel, kExpAbs);
  float x[9] = {-100.f, -1e4f, -INFINITY, 0.f, -0.f, 1.f, 100.f, INFINITY, -87.5f};
  float y[9];
  exp_f32(x, y, 9);
  // exp(-100) = 3.7e-44 is denormal: libm returns it, the SIMD path flushes it to 0.
  CHECK(y[0] >= 0.f);
  CHECK(y[0] < FLT_MIN);
  CHECK(y[1] == 0.f);
  CHECK(y[2] == 0.f);
  CHECK(y[3] == 1.f);
  CHECK(y[4] == 1.f);
  CHECK(close(y[5], 2.718281828459045, kExpRel, 0));
  CHECK(std::isinf(y[6]));
  CHECK(std::isinf(y[7]));
  CHECK(!std::isnan(y[8]));
  CHECK(y[8] <= 1.2e-38f);
}

TEST_CASE("vec: silu, swiglu, GELU (erf and tanh forms)") {
  check_unary(silu_f32, scalar::silu_f32, -20.f, 20.f, kSigmoidRel, 1e-37);
  check_unary(gelu_erf_f32, scalar::gelu_erf_f32, -6.f, 6.f, 0.0, kGeluAbs, true);
  check_unary(gelu_tanh_f32, scalar::gelu_tanh_f32, -6.f, 6.f, 0.0, kGeluAbs, true);
  // Large magnitudes: silu(-100) is -0 (exp overflow gives 1 / inf, never NaN), GELU saturates.
  float x[4] = {-100.f, 100.f, -1e4f, 1e4f};
  float y[4];
  silu_f32(x, y, 4);
  CHECK(y[0] == 0.f);
  CHECK(y[1] == 100.f);
  CHECK(y[2] == 0.f);
  CHECK(y[3] == 1e4f);
  gelu_erf_f32(x, y, 4);
  CHECK(y[0] == 0.f);
  CHECK(y[1] == 100.f);
  gelu_tanh_f32(x, y, 4);
  CHECK(y[0] == 0.f);
  CHECK(y[1] == 100.f);

  check_gate(
      swiglu_f32, scalar::swiglu_f32, 4, [](float, float) { return 1e-37; }, kSigmoidRel);
}

TEST_CASE("vec: softmax is max-subtracted (no overflow at 1e4) and matches the scalar twin") {
  Lcg rng{5};
  for (float range : {1.f, 30.f, 1e4f}) {
    for (size_t n = 1; n <= kMaxN; ++n) {
      Buf got, want;
      got.fill(rng, -range, range, n);
      want.copy_from(got.p(), n);
      softmax_f32(got.p(), n);
      scalar::softmax_f32(want.p(), n);
      INFO("range=", range);
      CHECK_ARRAYS_CLOSE(got.p(), want.p(), n, kSoftmaxRel, kSoftmaxAbs);
      double total = 0;
      for (size_t i = 0; i < n; ++i) total += got.p()[i];
      CHECK(std::fabs(total - 1.0) <= kSoftmaxRel * 2);
    }
  }
  // All equal and huge: uniform, not NaN.
  float x[5] = {1e4f, 1e4f, 1e4f, 1e4f, 1e4f};
  softmax_f32(x, 5);
  for (float v : x) CHECK(close(v, 0.2, kSoftmaxRel, 0));
  softmax_f32(nullptr, 0);  // n == 0 is a no-op
  // Masked scores (-inf, as causal attention writes them) get exactly 0, the rest share 1.
  for (size_t n = 2; n <= kMaxN; ++n) {
    Buf got, want;
    got.fill(rng, -3.f, 3.f, n);
    for (size_t i = 1; i < n; i += 2) got.p()[i] = -INFINITY;
    want.copy_from(got.p(), n);
    softmax_f32(got.p(), n);
    scalar::softmax_f32(want.p(), n);
    CHECK_ARRAYS_CLOSE(got.p(), want.p(), n, kSoftmaxRel, kSoftmaxAbs);
    for (size_t i = 1; i < n; i += 2) CHECK(got.p()[i] == 0.f);
  }
}

TEST_CASE("vec: rmsnorm and layernorm match the scalar twins, with and without weights") {
  Lcg rng{6};
  for (size_t n = 1; n <= kMaxN; ++n) {
    INFO("n=", n);
    Buf x, w, b, got, want;
    x.fill(rng, -4.f, 4.f, n);
    w.fill(rng, 0.5f, 1.5f, n);
    b.fill(rng, -1.f, 1.f, n);
    rmsnorm_f32(x.p(), w.p(), 1e-5f, got.p(), n);
    scalar::rmsnorm_f32(x.p(), w.p(), 1e-5f, want.p(), n);
    CHECK_ARRAYS_CLOSE(got.p(), want.p(), n, 0.0, kNormRel * max_abs(want.p(), n));
    got.copy_from(x.p(), n);
    rmsnorm_f32(got.p(), w.p(), 1e-5f, got.p(), n);  // in place
    CHECK_ARRAYS_CLOSE(got.p(), want.p(), n, 0.0, kNormRel * max_abs(want.p(), n));

    // Offset inputs: the mean is large relative to the spread.
    for (size_t i = 0; i < n; ++i) x.p()[i] += 100.f;
    const float* ws[2] = {w.p(), nullptr};
    const float* bs[2] = {b.p(), nullptr};
    for (const float* wp : ws) {
      for (const float* bp : bs) {
        layernorm_f32(x.p(), wp, bp, 1e-5f, got.p(), n);
        scalar::layernorm_f32(x.p(), wp, bp, 1e-5f, want.p(), n);
        // 100 / spread amplifies the rounding of x - mean: scale by the input magnitude too.
        const double tol = kNormRel * (max_abs(want.p(), n) + 1.0) * 104.0 / 4.0;
        CHECK_ARRAYS_CLOSE(got.p(), want.p(), n, 0.0, tol);
        Buf inplace;
        inplace.copy_from(x.p(), n);
        layernorm_f32(inplace.p(), wp, bp, 1e-5f, inplace.p(), n);
        CHECK(std::memcmp(inplace.p(), got.p(), n * sizeof(float)) == 0);
      }
    }
  }
  // Zeros: eps keeps rmsnorm / layernorm finite (0 / sqrt(eps) = 0); layernorm then yields b.
  float z[9] = {}, w[9], b[9], y[9];
  for (int i = 0; i < 9; ++i) {
    w[i] = 1.f + static_cast<float>(i);
    b[i] = 0.5f * static_cast<float>(i);
  }
  rmsnorm_f32(z, w, 1e-6f, y, 9);
  for (float v : y) CHECK(v == 0.f);
  layernorm_f32(z, w, b, 1e-6f, y, 9);
  for (int i = 0; i < 9; ++i) CHECK(y[i] == b[i]);
}

TEST_CASE("vec: GeGLU (gelu_tanh gate) and soft-capping (Gemma)") {
  // GELU's absolute bound, scaled by the gate's and the up projection's magnitudes.
  check_gate(geglu_tanh_f32, scalar::geglu_tanh_f32, 9, [](float g, float u) {
    return kGeluAbs * std::fmax(1.0, std::fabs(g)) * std::fmax(1.0, std::fabs(u));
  });
  Lcg rng{10};
  for (float cap : {2.f, 30.f, 50.f}) {
    for (size_t n = 1; n <= kMaxN; ++n) {
      Buf x, got, want;
      x.fill(rng, -4.f * cap, 4.f * cap, n);
      got.copy_from(x.p(), n);
      want.copy_from(x.p(), n);
      softcap_f32(got.p(), cap, n);
      scalar::softcap_f32(want.p(), cap, n);
      // tanh to a few ulp of its (<= 1) result, times the cap.
      CHECK_ARRAYS_CLOSE(got.p(), want.p(), n, 0.0, 4 * FLT_EPSILON * cap);
      for (size_t i = 0; i < n; ++i) CHECK(std::fabs(got.p()[i]) <= cap);
    }
  }
  // Saturation and the identity near zero.
  float x[5] = {0.f, 1e-3f, -1e-3f, 1e6f, -1e6f}, y[5];
  std::memcpy(y, x, sizeof x);
  softcap_f32(y, 50.f, 5);
  CHECK(y[0] == 0.f);
  CHECK(close(y[1], 1e-3, 1e-6, 0));
  CHECK(close(y[2], -1e-3, 1e-6, 0));
  CHECK(y[3] == 50.f);
  CHECK(y[4] == -50.f);
}

// The scalar twins are the reference above, so check them against an independent float64
// computation here (a few lengths are enough: they have no lane/tail structure).
TEST_CASE("vec: scalar twins agree with float64 references") {
  Lcg rng{7};
  for (size_t n : {1u, 7u, 33u, 67u}) {
    INFO("n=", n);
    Buf a, b, y;
    a.fill(rng, -3.f, 3.f, n);
    b.fill(rng, -3.f, 3.f, n);
    double dot = 0, sum = 0, ss = 0, mx = -INFINITY;
    for (size_t i = 0; i < n; ++i) {
      dot += static_cast<double>(a.p()[i]) * b.p()[i];
      sum += a.p()[i];
      ss += static_cast<double>(a.p()[i]) * a.p()[i];
      mx = larger(mx, a.p()[i]);
    }
    const double sum_bound = n * FLT_EPSILON;
    CHECK(std::fabs(scalar::dot_f32(a.p(), b.p(), n) - dot) <=
          sum_bound * sum_abs_products(a.p(), b.p(), n));
    double sum_abs = 0;
    for (size_t i = 0; i < n; ++i) sum_abs += std::fabs(a.p()[i]);
    CHECK(std::fabs(scalar::sum_f32(a.p(), n) - sum) <= sum_bound * sum_abs);
    CHECK(scalar::max_f32(a.p(), n) == mx);

    // exp, silu, GELU: elementwise against libm double.
    scalar::exp_f32(a.p(), y.p(), n);
    for (size_t i = 0; i < n; ++i) CHECK(close(y.p()[i], std::exp(double(a.p()[i])), kExpRel, 0));
    scalar::silu_f32(a.p(), y.p(), n);
    for (size_t i = 0; i < n; ++i) {
      const double v = a.p()[i];
      CHECK(close(y.p()[i], v / (1 + std::exp(-v)), kSigmoidRel, 1e-37));
    }
    scalar::gelu_erf_f32(a.p(), y.p(), n);
    for (size_t i = 0; i < n; ++i) {
      const double v = a.p()[i];
      CHECK(close(y.p()[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 0, kGeluAbs));
    }
    scalar::gelu_tanh_f32(a.p(), y.p(), n);
    for (size_t i = 0; i < n; ++i) {
      const double v = a.p()[i];
      const double t = std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v));
      CHECK(close(y.p()[i], 0.5 * v * (1 + t), 0, kGeluAbs));
    }
    y.copy_from(a.p(), n);
    scalar::geglu_tanh_f32(y.p(), b.p(), n);
    for (size_t i = 0; i < n; ++i) {
      const double v = a.p()[i];
      const double t = std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v));
      CHECK(close(y.p()[i], 0.5 * v * (1 + t) * b.p()[i], 0, 4 * kGeluAbs));
    }
    y.copy_from(a.p(), n);
    scalar::softcap_f32(y.p(), 2.f, n);
    for (size_t i = 0; i < n; ++i)
      CHECK(close(y.p()[i], 2.0 * std::tanh(a.p()[i] / 2.0), 0, 4 * FLT_EPSILON));

    // softmax
    y.copy_from(a.p(), n);
    scalar::softmax_f32(y.p(), n);
    double denom = 0;
    for (size_t i = 0; i < n; ++i) denom += std::exp(a.p()[i] - mx);
    for (size_t i = 0; i < n; ++i)
      CHECK(close(y.p()[i], std::exp(a.p()[i] - mx) / denom, kSoftmaxRel, kSoftmaxAbs));

    // rmsnorm with weights b
    scalar::rmsnorm_f32(a.p(), b.p(), 1e-5f, y.p(), n);
    const double inv_rms = 1.0 / std::sqrt(ss / n + 1e-5);
    double ref[kMaxN];
    for (size_t i = 0; i < n; ++i) ref[i] = a.p()[i] * inv_rms * b.p()[i];
    double ref_max = 0;
    for (size_t i = 0; i < n; ++i) ref_max = larger(ref_max, std::fabs(ref[i]));
    for (size_t i = 0; i < n; ++i) CHECK(std::fabs(y.p()[i] - ref[i]) <= kNormRel * ref_max);

    // layernorm with weights a-independent w = b and bias 0.25
    Buf bias;
    for (size_t i = 0; i < n; ++i) bias.p()[i] = 0.25f;
    scalar::layernorm_f32(a.p(), b.p(), bias.p(), 1e-5f, y.p(), n);
    const double mean = sum / n;
    double var = 0;
    for (size_t i = 0; i < n; ++i) var += (a.p()[i] - mean) * (a.p()[i] - mean);
    var /= n;
    ref_max = 0;
    for (size_t i = 0; i < n; ++i) {
      ref[i] = (a.p()[i] - mean) / std::sqrt(var + 1e-5) * b.p()[i] + 0.25;
      ref_max = larger(ref_max, std::fabs(ref[i]));
    }
    for (size_t i = 0; i < n; ++i) CHECK(std::fabs(y.p()[i] - ref[i]) <= kNormRel * ref_max);
  }
}

TEST_CASE("vec: simd_arch_name and lane count are consistent") {
  if (EINFER_HAS_SIMD) {
    CHECK(simd_float_lanes() >= 4);
    CHECK(std::strcmp(simd_arch_name(), "scalar") != 0);
  } else {
    CHECK(simd_float_lanes() == 1);
    CHECK(std::strcmp(simd_arch_name(), "scalar") == 0);
  }
}
