// einfer-vec-bench: microbenchmark of the vector primitives (kernels/vec/vec.h).
//
// For each primitive and length it times the scalar twin and the SIMD version in the same run
// (steady_clock; each sample repeats the call for sample_ms; scalar and SIMD samples alternate so
// load from other processes hits both alike) and prints the median ns per call of each, the
// speedup of the medians, and the speedup of the fastest samples (robust when the machine is
// shared: a preempted sample is only ever slower). With -DEINFER_SIMD=OFF both variants run the
// scalar code, so the ratio is ~1.
//
// Usage: einfer-vec-bench [--sample-ms MS] [--samples N]   (default 2 ms x 25: ~50 ms per variant;
// the two values may also be given positionally)
//        einfer-vec-bench --crc   GB/s of every CRC-32 path of this build (runtime/crc32.h), the
//                                 paths' samples alternating, over a 1 MB and a 64 MB buffer
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/simd/simd.h"
#include "kernels/vec/vec.h"
#include "runtime/crc32.h"
#include "tools/common/cli.h"

namespace {

using Clock = std::chrono::steady_clock;

volatile float g_sink;  // keeps reductions from being optimised away

// Repeat count so that one batch of calls to `fn` lasts about sample_ms.
long calibrate_reps(const std::function<void()>& fn, double sample_ms) {
  long reps = 1;
  for (;;) {
    const auto t0 = Clock::now();
    for (long r = 0; r < reps; ++r) fn();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (ms >= 1.0) return std::max(1L, static_cast<long>(reps * sample_ms / ms));
    reps *= 2;
  }
}

double sample_ns_per_call(const std::function<void()>& fn, long reps) {
  const auto t0 = Clock::now();
  for (long r = 0; r < reps; ++r) fn();
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / reps;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct Inputs {
  std::vector<float> a, b, w, y;
  explicit Inputs(size_t n) : a(n), b(n), w(n), y(n) {
    uint32_t state = 42;
    auto next = [&state] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) * (1.f / 16777216.f) * 8.f - 4.f;  // [-4, 4)
    };
    for (size_t i = 0; i < n; ++i) {
      a[i] = next();
      b[i] = next();
      w[i] = 1.f + 0.1f * next();
      y[i] = next();
    }
  }
};

// GB/s (median of alternating samples) of each CRC-32 path over `bytes` of pseudo-random data.
void bench_crc(size_t bytes, int samples) {
  std::vector<unsigned char> buf(bytes);
  uint32_t state = 7;
  for (auto& b : buf)
    b = static_cast<unsigned char>((state = state * 1664525u + 1013904223u) >> 24);
  struct Path {
    const char* name;
    uint32_t (*fn)(const void*, size_t, uint32_t);
  };
  std::vector<Path> paths = {{"bytewise", einfer::scalar::crc32_ieee_bytewise},
                             {"nibble", einfer::crc32_ieee_nibble},
                             {"slice8", einfer::crc32_ieee_slice8}};
#if defined(EINFER_CRC32_PCLMUL)
  if (einfer::crc32_pclmul_available()) paths.push_back({"pclmul", einfer::crc32_ieee_pclmul});
#endif
#if defined(EINFER_CRC32_ARMV8)
  if (einfer::crc32_armv8_available()) paths.push_back({"armv8", einfer::crc32_ieee_armv8});
#endif
  std::vector<std::vector<double>> gbs(paths.size());
  uint32_t check = 0;
  for (int s = 0; s < samples; ++s)
    for (size_t i = 0; i < paths.size(); ++i) {
      const auto t0 = Clock::now();
      const uint32_t crc = paths[i].fn(buf.data(), buf.size(), 0);
      const double sec = std::chrono::duration<double>(Clock::now() - t0).count();
      gbs[i].push_back(static_cast<double>(bytes) / sec / 1e9);
      if (i == 0) check = crc;
      if (crc != check) std::printf("MISMATCH: %s\n", paths[i].name);
    }
  for (size_t i = 0; i < paths.size(); ++i)
    std::printf("crc32 %-9s %8zu KB %8.3f GB/s\n", paths[i].name, bytes / 1024, median(gbs[i]));
}

}  // namespace

int main(int argc, char** argv) {
  double sample_ms = 2.0;
  int64_t samples_arg = 25;
  std::string sample_ms_text, samples_text;
  einfer::tools::cli::Parser p("einfer-vec-bench", "[SAMPLE_MS] [SAMPLES] [options]",
                               "Vector primitives: scalar twin against SIMD, median ns per call.");
  p.option({"--sample-ms"}, &sample_ms, "MS", "length of one timed sample (default 2)")
      .range(1e-3, 1e4);
  p.option({"--samples"}, &samples_arg, "N", "samples per variant (default 25)").range(1, 1 << 20);
  bool crc = false;
  p.flag({"--crc"}, &crc, "time the CRC-32 paths instead (GB/s)");
  p.positional("SAMPLE_MS", &sample_ms_text, "as --sample-ms");
  p.positional("SAMPLES", &samples_text, "as --samples");
  if (int code; !p.parse(argc, argv, &code)) return code;
  // The positional forms, read and bounded as their options are.
  if (!sample_ms_text.empty() && (!einfer::tools::cli::read_number(sample_ms_text, &sample_ms) ||
                                  sample_ms < 1e-3 || sample_ms > 1e4))
    return p.fail("SAMPLE_MS: expected a number in [0.001, 10000], got '" + sample_ms_text + "'");
  std::string why;
  if (!samples_text.empty() &&
      !einfer::tools::cli::read_integer_in(samples_text, 1, 1 << 20, &samples_arg, &why))
    return p.fail("SAMPLES: " + why);
  const int samples = static_cast<int>(samples_arg);
  if (crc) {
    std::printf("einfer-vec-bench --crc: crc32_ieee uses %s, %d samples per path\n",
                einfer::crc32_ieee_impl_name(), samples < 5 ? 5 : samples);
    bench_crc(size_t{1} << 20, samples < 5 ? 5 : samples);
    bench_crc(size_t{64} << 20, 5);
    return 0;
  }
  std::printf("einfer-vec-bench: SIMD %s (%d float lanes), %d samples of %.1f ms per variant\n",
              einfer::simd_arch_name(), einfer::simd_float_lanes(), samples, sample_ms);
  std::printf("%-10s %6s %12s %12s %12s %12s\n", "primitive", "n", "scalar ns", "simd ns",
              "speedup med", "speedup min");

  for (size_t n : {64u, 512u, 4096u}) {
    Inputs in(n);
    float* a = in.a.data();
    float* b = in.b.data();
    float* w = in.w.data();
    float* y = in.y.data();
    struct Case {
      const char* name;
      std::function<void()> scalar, simd;
    };
    // softmax runs in place on y (stays finite: it is a probability vector after the first call);
    // axpy's alpha is tiny so y does not drift far from its initial range.
    const Case cases[] = {
        {"dot", [=] { g_sink = einfer::scalar::dot_f32(a, b, n); },
         [=] { g_sink = einfer::dot_f32(a, b, n); }},
        {"axpy", [=] { einfer::scalar::axpy_f32(1e-7f, a, y, n); },
         [=] { einfer::axpy_f32(1e-7f, a, y, n); }},
        {"exp", [=] { einfer::scalar::exp_f32(a, y, n); }, [=] { einfer::exp_f32(a, y, n); }},
        {"softmax", [=] { einfer::scalar::softmax_f32(y, n); }, [=] { einfer::softmax_f32(y, n); }},
        {"rmsnorm", [=] { einfer::scalar::rmsnorm_f32(a, w, 1e-5f, y, n); },
         [=] { einfer::rmsnorm_f32(a, w, 1e-5f, y, n); }},
        {"silu", [=] { einfer::scalar::silu_f32(a, y, n); }, [=] { einfer::silu_f32(a, y, n); }},
        {"gelu_erf", [=] { einfer::scalar::gelu_erf_f32(a, y, n); },
         [=] { einfer::gelu_erf_f32(a, y, n); }},
        {"gelu_tanh", [=] { einfer::scalar::gelu_tanh_f32(a, y, n); },
         [=] { einfer::gelu_tanh_f32(a, y, n); }},
    };
    for (const Case& c : cases) {
      // Scalar and SIMD samples alternate so that load from other processes hits both alike.
      const long reps_scalar = calibrate_reps(c.scalar, sample_ms);
      const long reps_simd = calibrate_reps(c.simd, sample_ms);
      std::vector<double> ns_scalar, ns_simd;
      for (int s = 0; s < samples; ++s) {
        ns_scalar.push_back(sample_ns_per_call(c.scalar, reps_scalar));
        ns_simd.push_back(sample_ns_per_call(c.simd, reps_simd));
      }
      const double t_scalar = median(ns_scalar), t_simd = median(ns_simd);
      const double min_scalar = *std::min_element(ns_scalar.begin(), ns_scalar.end());
      const double min_simd = *std::min_element(ns_simd.begin(), ns_simd.end());
      std::printf("%-10s %6zu %12.1f %12.1f %11.2fx %11.2fx\n", c.name, n, t_scalar, t_simd,
                  t_scalar / t_simd, min_scalar / min_simd);
    }
  }
  return 0;
}
