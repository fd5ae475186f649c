// einfer-quant-bench: weight throughput of the quantized matmul kernels against f32.
//
// For each size N x K (weights [N, K]) it times, single-threaded:
//   f32 GEMV  — the baseline: a 4-rows-at-a-time AVX2/FMA GEMV written here (einfer::dot_f32 per
//   row
//               on builds without AVX2), reading N*K*4 bytes of weights;
//   q8 GEMV   — matmul_f32_quant, m = 1, group 32 (N*K bytes + N*K/32 float scales);
//   q4 GEMV   — matmul_f32_quant, m = 1, group 32 (N*K/2 bytes + scales);
//   q8/q4 GEMM with m = 64 activation rows (prefill-shaped), in GFLOP/s (2*m*N*K flops).
// Weights/s counts logical weights; GB/s counts the bytes actually read (incl. scales).
// Then model-shaped decode cases larger than the last-level cache: GEMV over a cycle of distinct
// copies of a [2048 x 768] / [768 x 2048] q8 or q4 matrix (about 64-128 MB in all), so every call
// reads its weights from DRAM, against a streaming read (AVX2 sum) of the same buffers in the same
// order timed in the same run: "frac" = kernel GB/s / streaming-read GB/s (the roofline fraction).
// --copies C overrides the number of copies (e.g. 1: cache-resident, the compute ceiling).
// Usage: einfer-quant-bench [--reps R] [--cold-only] [--copies C]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/gguf/gguf.h"
#include "kernels/quant/quant.h"
#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"
#include "tools/common/cli.h"

namespace {

using Clock = std::chrono::steady_clock;

// y[n] = W[n, k] . x[k], f32.
void f32_gemv(const float* w, const float* x, float* y, int64_t n, int64_t k) {
#if defined(__AVX2__) && defined(__FMA__)
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* r0 = w + j * k;
    const float* r1 = r0 + k;
    const float* r2 = r1 + k;
    const float* r3 = r2 + k;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    int64_t e = 0;
    for (; e + 8 <= k; e += 8) {
      const __m256 xv = _mm256_loadu_ps(x + e);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + e), xv, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + e), xv, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + e), xv, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + e), xv, a3);
    }
    float out[4];
    const __m256 accs[4] = {a0, a1, a2, a3};
    for (int r = 0; r < 4; ++r) {
      float lanes[8];
      _mm256_storeu_ps(lanes, accs[r]);
      float s = 0.f;
      for (float v : lanes) s += v;
      for (int64_t t = e; t < k; ++t) s += w[(j + r) * k + t] * x[t];
      out[r] = s;
    }
    std::memcpy(y + j, out, sizeof out);
  }
  for (; j < n; ++j) y[j] = einfer::dot_f32(w + j * k, x, static_cast<size_t>(k));
#else
  for (int64_t j = 0; j < n; ++j) y[j] = einfer::dot_f32(w + j * k, x, static_cast<size_t>(k));
#endif
}

template <class F>
double best_seconds(int reps, F&& f) {
  f();  // warm up
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = s < best ? s : best;
  }
  return best;
}

struct QMat {
  std::vector<uint8_t> data;
  std::vector<float> scales;
  einfer::TensorView view;
};

QMat quantize(const std::vector<float>& w, int64_t n, int64_t k, einfer::DType dt, int32_t group) {
  QMat q;
  const size_t rb = einfer::quant_row_bytes(dt, k);
  const int64_t groups = einfer::quant_groups(k, group);
  q.data.resize(rb * static_cast<size_t>(n));
  q.scales.resize(static_cast<size_t>(n * groups));
  for (int64_t j = 0; j < n; ++j) {
    if (dt == einfer::DType::q8) {
      einfer::quantize_row_q8(w.data() + j * k, k, group,
                              reinterpret_cast<int8_t*>(q.data.data() + j * rb),
                              q.scales.data() + j * groups);
    } else {
      einfer::quantize_row_q4(w.data() + j * k, k, group, q.data.data() + j * rb,
                              q.scales.data() + j * groups);
    }
  }
  q.view = einfer::make_view(dt, q.data.data(), {n, k});
  q.view.scales = q.scales.data();
  q.view.group_size = group;
  return q;
}

int bench_size(int64_t n, int64_t k, int reps) {
  std::vector<float> w(static_cast<size_t>(n * k));
  uint32_t s = 12345;
  for (auto& v : w) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  const int32_t group = 32;
  const int64_t gm = 64;
  std::vector<float> x(static_cast<size_t>(gm * k));
  for (auto& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  std::vector<float> y(static_cast<size_t>(gm * n));
  const QMat q8 = quantize(w, n, k, einfer::DType::q8, group);
  const QMat q4 = quantize(w, n, k, einfer::DType::q4, group);
  std::vector<uint8_t> scratch(einfer::matmul_quant_scratch_bytes(gm, k, group));
  bool ok = true;
  auto qrun = [&](const QMat& q, int64_t m) {
    ok &= einfer::matmul_f32_quant(x.data(), k, m, q.view, y.data(), n, scratch.data(),
                                   scratch.size())
              .ok();
  };
  const double nw = static_cast<double>(n * k);
  const double scale_bytes = static_cast<double>(n * einfer::quant_groups(k, group) * 4);
  const double t_f32 = best_seconds(reps, [&] { f32_gemv(w.data(), x.data(), y.data(), n, k); });
  const double t_q8 = best_seconds(reps, [&] { qrun(q8, 1); });
  const double t_q4 = best_seconds(reps, [&] { qrun(q4, 1); });
  const int greps = reps / 4 > 2 ? reps / 4 : 2;
  const double t_q8g = best_seconds(greps, [&] { qrun(q8, gm); });
  const double t_q4g = best_seconds(greps, [&] { qrun(q4, gm); });
  const double t_f32g = best_seconds(greps, [&] {
    for (int64_t i = 0; i < gm; ++i) f32_gemv(w.data(), x.data() + i * k, y.data() + i * n, n, k);
  });
  if (!ok) {
    std::fprintf(stderr, "einfer-quant-bench: matmul_f32_quant failed\n");
    return 1;
  }
  std::printf("\n%lld x %lld weights (group %d), best of %d\n", static_cast<long long>(n),
              static_cast<long long>(k), group, reps);
  std::printf("  %-10s %10s %12s %10s %8s\n", "kernel", "time ms", "Gweights/s", "GB/s", "vs f32");
  auto row = [&](const char* name, double t, double bytes) {
    std::printf("  %-10s %10.3f %12.2f %10.2f %7.2fx\n", name, t * 1e3, nw / t * 1e-9,
                bytes / t * 1e-9, t_f32 / t);
  };
  row("f32 GEMV", t_f32, nw * 4);
  row("q8 GEMV", t_q8, nw + scale_bytes);
  row("q4 GEMV", t_q4, nw / 2 + scale_bytes);
  const double flops = 2.0 * static_cast<double>(gm) * nw;
  std::printf(
      "  m=%lld GEMM: f32 (GEMV per row) %.1f GFLOP/s, q8 %.1f GFLOP/s (%.2fx), q4 %.1f GFLOP/s "
      "(%.2fx)\n",
      static_cast<long long>(gm), flops / t_f32g * 1e-9, flops / t_q8g * 1e-9, t_f32g / t_q8g,
      flops / t_q4g * 1e-9, t_f32g / t_q4g);
  return 0;
}

// Sum of all bytes of buf as 64-bit lanes: a streaming read the compiler cannot drop.
uint64_t stream_read(const uint8_t* buf, size_t bytes) {
#if defined(__AVX2__)
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    const __m256i* p = reinterpret_cast<const __m256i*>(buf + i);
    a0 = _mm256_add_epi64(a0, _mm256_loadu_si256(p));
    a1 = _mm256_add_epi64(a1, _mm256_loadu_si256(p + 1));
    a2 = _mm256_add_epi64(a2, _mm256_loadu_si256(p + 2));
    a3 = _mm256_add_epi64(a3, _mm256_loadu_si256(p + 3));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  uint64_t s = lanes[0] + lanes[1] + lanes[2] + lanes[3];
#else
  uint64_t s = 0;
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t v;
    std::memcpy(&v, buf + i, 8);
    s += v;
  }
#endif
  for (; i < bytes; ++i) s += buf[i];
  return s;
}

// Decode-shaped GEMV whose weights stream from DRAM: `copies` distinct copies of one quantized
// [n, k] matrix, each call on the next copy. Returns kernel GB/s / streaming-read GB/s.
int bench_cold(int64_t n, int64_t k, einfer::DType dt, int copies, int reps) {
  std::vector<float> w(static_cast<size_t>(n * k));
  uint32_t s = 777;
  for (auto& v : w) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  std::vector<float> x(static_cast<size_t>(k));
  for (auto& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  const int32_t group = 32;
  const QMat base = quantize(w, n, k, dt, group);
  std::vector<QMat> mats(static_cast<size_t>(copies));
  for (auto& m : mats) {
    m.data = base.data;
    m.scales = base.scales;
    m.view = base.view;
    m.view.data = m.data.data();
    m.view.scales = m.scales.data();
  }
  std::vector<float> y(static_cast<size_t>(n));
  std::vector<uint8_t> scratch(einfer::matmul_quant_scratch_bytes(1, k, group));
  const double bytes_per = static_cast<double>(base.data.size() + base.scales.size() * 4);
  const double total = bytes_per * copies;
  bool ok = true;
  volatile uint64_t sink = 0;
  const double t_read = best_seconds(reps, [&] {
    uint64_t acc = 0;
    for (const auto& m : mats) {
      acc += stream_read(m.data.data(), m.data.size());
      acc += stream_read(reinterpret_cast<const uint8_t*>(m.scales.data()), m.scales.size() * 4);
    }
    sink = sink + acc;
  });
  const double t_gemv = best_seconds(reps, [&] {
    for (const auto& m : mats) {
      ok &= einfer::matmul_f32_quant(x.data(), k, 1, m.view, y.data(), n, scratch.data(),
                                     scratch.size())
                .ok();
    }
  });
  if (!ok) {
    std::fprintf(stderr, "einfer-quant-bench: matmul_f32_quant failed\n");
    return 1;
  }
  const double gbs = total / t_gemv * 1e-9, read_gbs = total / t_read * 1e-9;
  std::printf(
      "  %s GEMV %5lld x %-5lld x %3d copies (%6.1f MB): %7.3f ms/pass  %6.2f GB/s  "
      "read %6.2f GB/s  frac %.2f\n",
      dt == einfer::DType::q8 ? "q8" : "q4", static_cast<long long>(n), static_cast<long long>(k),
      copies, total * 1e-6, t_gemv * 1e3, gbs, read_gbs, gbs / read_gbs);
  return 0;
}

// GGUF block types (--gguf): random blocks (every byte random but the f16 scale fields, set
// to finite values) of an [n, k] matrix of dtype `dt`, `copies` copies cycled as bench_cold does;
// m = 1 (decode) and, with m_gemm > 1, an m_gemm-row product (prefill) on one copy.
int bench_gguf(int64_t n, int64_t k, einfer::DType dt, int copies, int reps, int64_t m_gemm) {
  const size_t row = einfer::quant_row_bytes(dt, k), bytes = einfer::gguf_block_bytes(dt);
  std::vector<uint8_t> base(row * static_cast<size_t>(n));
  uint32_t s = 4242;
  for (auto& b : base) {
    s = s * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(s >> 24);
  }
  // The f16 fields of each block type (docs/gguf-quant.md).
  size_t f16_at[2] = {0, 0};
  int f16_count = 1;
  switch (dt) {
    case einfer::DType::q2_k:
      f16_at[0] = 80, f16_at[1] = 82, f16_count = 2;
      break;
    case einfer::DType::q3_k:
      f16_at[0] = 108;
      break;
    case einfer::DType::q6_k:
      f16_at[0] = 208;
      break;
    case einfer::DType::q4_k:
    case einfer::DType::q5_k:
    case einfer::DType::q4_1:
    case einfer::DType::q5_1:
      f16_at[1] = 2, f16_count = 2;
      break;
    default:
      break;
  }
  for (size_t at = 0; at < base.size(); at += bytes)
    for (int f = 0; f < f16_count; ++f) {
      const uint16_t h = 0x2000;  // 2^-7
      std::memcpy(&base[at + f16_at[f]], &h, 2);
    }
  std::vector<std::vector<uint8_t>> mats(static_cast<size_t>(copies), base);
  const int64_t m_max = m_gemm > 1 ? m_gemm : 1;
  std::vector<float> x(static_cast<size_t>(m_max * k));
  for (auto& v : x) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  std::vector<float> y(static_cast<size_t>(m_max * n));
  std::vector<uint8_t> scratch(einfer::matmul_gguf_scratch_bytes(m_max, k));
  bool ok = true;
  auto run = [&](const std::vector<uint8_t>& w, int64_t m) {
    const einfer::TensorView v = einfer::make_view(dt, const_cast<uint8_t*>(w.data()), {n, k});
    ok &= einfer::matmul_f32_gguf(x.data(), k, m, v, y.data(), n, scratch.data(), scratch.size())
              .ok();
  };
  const double total = static_cast<double>(base.size()) * copies;
  const double t_gemv = best_seconds(reps, [&] {
    for (const auto& w : mats) run(w, 1);
  });
  double t_gemm = 0;
  if (m_gemm > 1) t_gemm = best_seconds(reps, [&] { run(mats[0], m_gemm); });
  if (!ok) {
    std::fprintf(stderr, "einfer-quant-bench: matmul_f32_gguf failed\n");
    return 1;
  }
  std::printf("  %-4s GEMV %5lld x %-5lld x %3d copies (%6.1f MB): %7.3f ms/pass  %6.2f GB/s",
              einfer::dtype_name(dt), static_cast<long long>(n), static_cast<long long>(k), copies,
              total * 1e-6, t_gemv * 1e3, total / t_gemv * 1e-9);
  if (m_gemm > 1)
    std::printf("  m=%lld %.1f GOP/s", static_cast<long long>(m_gemm),
                2.0 * static_cast<double>(m_gemm * n * k) / t_gemm * 1e-9);
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t reps_arg = 20, copies = -1;
  bool cold_only = false, gguf = false;
  einfer::tools::cli::Parser p("einfer-quant-bench", "[options]",
                               "Quantized matmul (q8/q4) throughput: warm GEMM/GEMV, then cold "
                               "GEMV with the weights in DRAM.");
  p.option({"-r", "--reps"}, &reps_arg, "R", "repetitions (default 20)").range(1, 1 << 20);
  p.flag({"--cold-only"}, &cold_only, "only the cold (weights from DRAM) GEMV");
  p.option({"--copies"}, &copies, "C",
           "weight copies cycled through for the cold runs (default 64 for q8, 128 for q4)")
      .range(1, 1 << 16);
  p.flag({"--gguf"}, &gguf, "GGUF block types instead (q4 beside them): cold GEMV + m=32 GEMM");
  if (int code; !p.parse(argc, argv, &code)) return code;
  const int reps = static_cast<int>(reps_arg);
  const int copies_q8 = copies > 0 ? static_cast<int>(copies) : 64;
  const int copies_q4 = copies > 0 ? static_cast<int>(copies) : 128;
  std::printf("einfer-quant-bench: SIMD %s, single thread\n", einfer::simd_arch_name());
  int rc = 0;
  if (gguf) {
    // Same shapes as the cold q4 runs; copies: about 64 MB of weights each (DRAM), or --copies.
    const int creps = reps / 4 > 3 ? reps / 4 : 3;
    const einfer::DType types[] = {einfer::DType::q4_k, einfer::DType::q5_k, einfer::DType::q6_k,
                                   einfer::DType::q2_k, einfer::DType::q3_k, einfer::DType::q8_0,
                                   einfer::DType::q4_0, einfer::DType::q5_0};
    const int64_t shapes[2][2] = {{2048, 768}, {768, 2048}};
    for (const auto& sh : shapes) {
      if (rc == 0) rc = bench_cold(sh[0], sh[1], einfer::DType::q4, copies_q4, creps);
      for (einfer::DType dt : types) {
        const int c =
            copies > 0
                ? static_cast<int>(copies)
                : static_cast<int>(64e6 /
                                   static_cast<double>(einfer::quant_row_bytes(dt, sh[1]) * sh[0]));
        if (rc == 0) rc = bench_gguf(sh[0], sh[1], dt, c, creps, 32);
      }
    }
    return rc;
  }
  if (!cold_only) {
    rc = bench_size(4096, 4096, reps);
    if (rc == 0) rc = bench_size(1024, 1024, reps * 4);
  }
  // Decode shapes of a dim-768 / hidden-2048 model (feed-forward w1/w3 and w2), > L3 in all.
  std::printf("\ncold GEMV (weights from DRAM), best of %d passes\n", reps / 4 > 3 ? reps / 4 : 3);
  const int creps = reps / 4 > 3 ? reps / 4 : 3;
  const einfer::DType dts[2] = {einfer::DType::q8, einfer::DType::q4};
  for (einfer::DType dt : dts) {
    const int copies = dt == einfer::DType::q8 ? copies_q8 : copies_q4;
    if (rc == 0) rc = bench_cold(2048, 768, dt, copies, creps);
    if (rc == 0) rc = bench_cold(768, 2048, dt, copies, creps);
  }
  return rc;
}
