// Dispatch of the vector primitives: xsimd implementations when the build has a SIMD ISA, the
// scalar twins (kernels/vec/vec_f32_scalar.cpp) otherwise.
//
// One generic implementation serves AVX2+FMA, NEON64 and NEON 32-bit (xsimd::batch<float> is 8 or
// 4 lanes). Reductions keep several independent accumulators so the FMA/add latency is hidden
// (ILP); their n % lanes remainder is a scalar loop. Element-wise maps run their remainder through
// one padded batch in a stack buffer, so every element of a transcendental map (exp, silu, GELU)
// goes through the same SIMD formula whatever its position. The SIMD probes of kernels/simd/simd.h
// (simd_arch_name, simd_float_lanes, fma_chains_f32) live here too, in this level's instruction
// set.
#include <cmath>
#include <cstring>

#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"

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

#if EINFER_HAS_SIMD

namespace {

using Batch = xsimd::batch<float>;
constexpr size_t kLanes = Batch::size;

Batch load(const float* p) {
  return Batch::load_unaligned(p);
}

// y[i] = op(x[i]) for batches; the remainder goes through one zero-padded batch.
template <class Op>
void map_unary(const float* x, float* y, size_t n, Op op) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) op(load(x + i)).store_unaligned(y + i);
  if (i < n) {
    float buf[kLanes] = {};
    std::memcpy(buf, x + i, (n - i) * sizeof(float));
    op(load(buf)).store_unaligned(buf);
    std::memcpy(y + i, buf, (n - i) * sizeof(float));
  }
}

// y[i] = op(a[i], b[i]), remainder as in map_unary.
template <class Op>
void map_binary(const float* a, const float* b, float* y, size_t n, Op op) {
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) op(load(a + i), load(b + i)).store_unaligned(y + i);
  if (i < n) {
    float bufa[kLanes] = {};
    float bufb[kLanes] = {};
    std::memcpy(bufa, a + i, (n - i) * sizeof(float));
    std::memcpy(bufb, b + i, (n - i) * sizeof(float));
    op(load(bufa), load(bufb)).store_unaligned(bufa);
    std::memcpy(y + i, bufa, (n - i) * sizeof(float));
  }
}

// xsimd::exp (Cephes-style range reduction + degree-5 polynomial, ~1 ulp) returns exactly 0 below
// -87.3 (including -inf) and inf above 88.7; NaN propagates. Results that would be denormal
// flush to 0, which costs at most FLT_MIN of absolute error.
// On AArch64 neon::exp4 (kernels/simd/exp_neon.h) does the same inline.
Batch exp_batch(Batch x) {
#if defined(__aarch64__)
  return Batch(neon::exp4(x.data));
#else
  return xsimd::exp(x);
#endif
}

// sigmoid(x) = 1 / (1 + exp(-x)); exp overflowing to inf gives exactly 0, never NaN.
Batch sigmoid_batch(Batch x) {
#if defined(__aarch64__)
  return Batch(
      vdivq_f32(vdupq_n_f32(1.f), vaddq_f32(vdupq_n_f32(1.f), neon::exp4(vnegq_f32(x.data)))));
#else
  return Batch(1.f) / (Batch(1.f) + exp_batch(-x));
#endif
}

// Sum of squares of (x[i] - shift) with four accumulators (shift 0 for rmsnorm).
float sum_sq_shifted(const float* x, float shift, size_t n) {
  const Batch s(shift);
  Batch acc0(0.f), acc1(0.f), acc2(0.f), acc3(0.f);
  size_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const Batch d0 = load(x + i) - s, d1 = load(x + i + kLanes) - s;
    const Batch d2 = load(x + i + 2 * kLanes) - s, d3 = load(x + i + 3 * kLanes) - s;
    acc0 = xsimd::fma(d0, d0, acc0);
    acc1 = xsimd::fma(d1, d1, acc1);
    acc2 = xsimd::fma(d2, d2, acc2);
    acc3 = xsimd::fma(d3, d3, acc3);
  }
  for (; i + kLanes <= n; i += kLanes) {
    const Batch d = load(x + i) - s;
    acc0 = xsimd::fma(d, d, acc0);
  }
  float total = xsimd::hadd((acc0 + acc1) + (acc2 + acc3));
  for (; i < n; ++i) total += (x[i] - shift) * (x[i] - shift);
  return total;
}

}  // namespace

float dot_f32(const float* a, const float* b, size_t n) {
  Batch acc0(0.f), acc1(0.f), acc2(0.f), acc3(0.f);
  size_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    acc0 = xsimd::fma(load(a + i), load(b + i), acc0);
    acc1 = xsimd::fma(load(a + i + kLanes), load(b + i + kLanes), acc1);
    acc2 = xsimd::fma(load(a + i + 2 * kLanes), load(b + i + 2 * kLanes), acc2);
    acc3 = xsimd::fma(load(a + i + 3 * kLanes), load(b + i + 3 * kLanes), acc3);
  }
  for (; i + kLanes <= n; i += kLanes) acc0 = xsimd::fma(load(a + i), load(b + i), acc0);
  float total = xsimd::hadd((acc0 + acc1) + (acc2 + acc3));
  for (; i < n; ++i) total += a[i] * b[i];
  return total;
}

void axpy_f32(float alpha, const float* x, float* y, size_t n) {
  const Batch va(alpha);
  map_binary(x, y, y, n, [va](Batch xv, Batch yv) { return xsimd::fma(va, xv, yv); });
}

void scale_f32(float* x, float s, size_t n) {
  const Batch vs(s);
  map_unary(x, x, n, [vs](Batch v) { return v * vs; });
}

void add_f32(const float* a, const float* b, float* y, size_t n) {
  map_binary(a, b, y, n, [](Batch u, Batch v) { return u + v; });
}

void mul_f32(const float* a, const float* b, float* y, size_t n) {
  map_binary(a, b, y, n, [](Batch u, Batch v) { return u * v; });
}

float max_f32(const float* x, size_t n) {
  float m = -INFINITY;
  size_t i = 0;
  if (n >= 2 * kLanes) {
    Batch m0 = load(x), m1 = load(x + kLanes);
    for (i = 2 * kLanes; i + 2 * kLanes <= n; i += 2 * kLanes) {
      m0 = xsimd::max(m0, load(x + i));
      m1 = xsimd::max(m1, load(x + i + kLanes));
    }
    float lanes[kLanes];
    xsimd::max(m0, m1).store_unaligned(lanes);
    for (size_t l = 0; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// Two passes: the largest value (NaN lanes replaced by x[0], so never chosen), then the first index
// holding it. A scalar scan carries the index through a load and a compare per element (~1 ns
// each: 33 us of a 15M decode step's 440 us went to the 32000-logit argmax).
size_t argmax_f32(const float* x, size_t n) {
  if (n < 2 * kLanes || !(x[0] == x[0])) return scalar::argmax_f32(x, n);
  const Batch first(x[0]);
  Batch m0 = first, m1 = first;
  size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Batch a = load(x + i), b = load(x + i + kLanes);
    m0 = xsimd::max(m0, xsimd::select(a == a, a, first));
    m1 = xsimd::max(m1, xsimd::select(b == b, b, first));
  }
  float lanes[kLanes];
  xsimd::max(m0, m1).store_unaligned(lanes);
  float m = x[0];
  for (size_t l = 0; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  for (size_t t = i; t < n; ++t) m = x[t] > m ? x[t] : m;
  // The first element equal to m: the scalar scan's answer (it moves only on a strict increase,
  // and -0 == +0, so the first of equal maxima wins either way).
  const Batch vm(m);
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    if (xsimd::any(load(x + j) == vm)) break;
  for (; j < n; ++j)
    if (x[j] == m) return j;
  return 0;  // unreachable: m is one of x
}

float sum_f32(const float* x, size_t n) {
  Batch acc0(0.f), acc1(0.f), acc2(0.f), acc3(0.f);
  size_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    acc0 += load(x + i);
    acc1 += load(x + i + kLanes);
    acc2 += load(x + i + 2 * kLanes);
    acc3 += load(x + i + 3 * kLanes);
  }
  for (; i + kLanes <= n; i += kLanes) acc0 += load(x + i);
  float total = xsimd::hadd((acc0 + acc1) + (acc2 + acc3));
  for (; i < n; ++i) total += x[i];
  return total;
}

void exp_f32(const float* x, float* y, size_t n) {
  map_unary(x, y, n, exp_batch);
}

void softmax_f32(float* x, size_t n) {
  if (n == 0) return;
  const float m = max_f32(x, n);
  // exp(x - m) with the largest term exactly 1: no overflow whatever the input magnitude. The
  // exponentials are stored and summed in the same pass (two accumulators).
  const Batch vm(m);
  Batch acc0(0.f), acc1(0.f);
  size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Batch e0 = exp_batch(load(x + i) - vm), e1 = exp_batch(load(x + i + kLanes) - vm);
    e0.store_unaligned(x + i);
    e1.store_unaligned(x + i + kLanes);
    acc0 += e0;
    acc1 += e1;
  }
  float total = xsimd::hadd(acc0 + acc1);
  const size_t done = i;
  map_unary(x + done, x + done, n - done, [vm](Batch v) { return exp_batch(v - vm); });
  for (; i < n; ++i) total += x[i];
  scale_f32(x, 1.f / total, n);
}

void rmsnorm_f32(const float* x, const float* w, float eps, float* y, size_t n) {
  if (n == 0) return;
  const float inv = 1.f / std::sqrt(sum_sq_shifted(x, 0.f, n) / static_cast<float>(n) + eps);
  const Batch vinv(inv);
  map_binary(x, w, y, n, [vinv](Batch xv, Batch wv) { return xv * vinv * wv; });
}

void layernorm_f32(const float* x, const float* w, const float* b, float eps, float* y, size_t n) {
  if (n == 0) return;
  const float mean = sum_f32(x, n) / static_cast<float>(n);
  // Two-pass variance (sum of (x - mean)^2): no cancellation for inputs with a large mean.
  const float var = sum_sq_shifted(x, mean, n) / static_cast<float>(n);
  const float inv = 1.f / std::sqrt(var + eps);
  const Batch vmean(mean), vinv(inv);
  const auto normed = [vmean, vinv](Batch xv) { return (xv - vmean) * vinv; };
  if (w && b) {
    map_binary(x, w, y, n, [normed](Batch xv, Batch wv) { return normed(xv) * wv; });
    add_f32(y, b, y, n);
  } else if (w) {
    map_binary(x, w, y, n, [normed](Batch xv, Batch wv) { return normed(xv) * wv; });
  } else if (b) {
    map_binary(x, b, y, n, [normed](Batch xv, Batch bv) { return normed(xv) + bv; });
  } else {
    map_unary(x, y, n, normed);
  }
}

void silu_f32(const float* x, float* y, size_t n) {
  map_unary(x, y, n, [](Batch v) { return v * sigmoid_batch(v); });
}

void relu_f32(const float* x, float* y, size_t n) {
  map_unary(x, y, n, [](Batch v) { return xsimd::max(v, Batch(0.f)); });
}

void gelu_erf_f32(const float* x, float* y, size_t n) {
  map_unary(x, y, n, [](Batch v) {
    return Batch(0.5f) * v * (Batch(1.f) + xsimd::erf(v * Batch(0.70710678118654752f)));
  });
}

void gelu_tanh_f32(const float* x, float* y, size_t n) {
  // 0.5 (1 + tanh(u)) == sigmoid(2u): one exp and one divide, and no cancellation in 1 + tanh(u)
  // for negative u, so this is at least as accurate as the tanh form.
  const Batch k2(2.f * 0.7978845608028654f);  // 2 sqrt(2/pi)
  const Batch c(0.044715f);
  map_unary(x, y, n, [k2, c](Batch v) {
    const Batch u2 = k2 * xsimd::fma(c * v, v * v, v);
    return v * sigmoid_batch(u2);
  });
}

void swiglu_f32(float* g, const float* u, size_t n) {
  map_binary(g, u, g, n, [](Batch gv, Batch uv) { return gv * sigmoid_batch(gv) * uv; });
}

void geglu_tanh_f32(float* g, const float* u, size_t n) {
  // gelu_tanh_f32's sigmoid form, times the up projection.
  const Batch k2(2.f * 0.7978845608028654f);
  const Batch c(0.044715f);
  map_binary(g, u, g, n, [k2, c](Batch v, Batch uv) {
    const Batch u2 = k2 * xsimd::fma(c * v, v * v, v);
    return v * sigmoid_batch(u2) * uv;
  });
}

void softcap_f32(float* x, float cap, size_t n) {
  const Batch cv(cap);
  map_unary(x, x, n, [cv](Batch v) { return cv * xsimd::tanh(v / cv); });
}

#else  // !EINFER_HAS_SIMD

float dot_f32(const float* a, const float* b, size_t n) {
  return scalar::dot_f32(a, b, n);
}
void axpy_f32(float alpha, const float* x, float* y, size_t n) {
  scalar::axpy_f32(alpha, x, y, n);
}
void scale_f32(float* x, float s, size_t n) {
  scalar::scale_f32(x, s, n);
}
void add_f32(const float* a, const float* b, float* y, size_t n) {
  scalar::add_f32(a, b, y, n);
}
void mul_f32(const float* a, const float* b, float* y, size_t n) {
  scalar::mul_f32(a, b, y, n);
}
size_t argmax_f32(const float* x, size_t n) {
  return scalar::argmax_f32(x, n);
}
float max_f32(const float* x, size_t n) {
  return scalar::max_f32(x, n);
}
float sum_f32(const float* x, size_t n) {
  return scalar::sum_f32(x, n);
}
void exp_f32(const float* x, float* y, size_t n) {
  scalar::exp_f32(x, y, n);
}
void softmax_f32(float* x, size_t n) {
  scalar::softmax_f32(x, n);
}
void rmsnorm_f32(const float* x, const float* w, float eps, float* y, size_t n) {
  scalar::rmsnorm_f32(x, w, eps, y, n);
}
void layernorm_f32(const float* x, const float* w, const float* b, float eps, float* y, size_t n) {
  scalar::layernorm_f32(x, w, b, eps, y, n);
}
void silu_f32(const float* x, float* y, size_t n) {
  scalar::silu_f32(x, y, n);
}
void relu_f32(const float* x, float* y, size_t n) {
  scalar::relu_f32(x, y, n);
}
void gelu_erf_f32(const float* x, float* y, size_t n) {
  scalar::gelu_erf_f32(x, y, n);
}
void gelu_tanh_f32(const float* x, float* y, size_t n) {
  scalar::gelu_tanh_f32(x, y, n);
}
void swiglu_f32(float* g, const float* u, size_t n) {
  scalar::swiglu_f32(g, u, n);
}
void geglu_tanh_f32(float* g, const float* u, size_t n) {
  scalar::geglu_tanh_f32(g, u, n);
}
void softcap_f32(float* x, float cap, size_t n) {
  scalar::softcap_f32(x, cap, n);
}

#endif  // EINFER_HAS_SIMD

}  // namespace einfer
