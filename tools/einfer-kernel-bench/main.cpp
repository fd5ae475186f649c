// einfer-kernel-bench: GFLOP/s of the einsum GEMM against OpenBLAS sgemm on one thread, and GEMV
// bandwidth against a plain streaming-read loop over the same bytes, measured in the same run.
// The f32 prefill projections of the llama shapes (M = 128 tokens) are also given as a fraction
// of the FMA peak measured on the spot (independent FMA chains in the GEMM's own SIMD width).
//
// OpenBLAS picks its kernels when the library loads, so the tool re-executes itself with
// OPENBLAS_CORETYPE=Haswell and OPENBLAS_NUM_THREADS=1 unless they are already set (Debian's
// 0.3.21 does not recognise newer CPUs and would fall back to Prescott kernels).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/simd/simd.h"
#include "tools/common/cli.h"

#if defined(EINFER_HAVE_OPENBLAS)
extern "C" {
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
void openblas_set_num_threads(int n);
char* openblas_get_corename(void);
}
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
#endif

using namespace einfer;

namespace {

// Wall clock, or this thread's CPU time for the FMA-peak / prefill section (set by main): on a
// shared machine time spent descheduled is not the kernel's.
bool g_thread_clock = false;

double now() {
  if (g_thread_clock) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Best seconds per call over repeated runs (at least ~0.3 s of work in total).
template <typename F>
double time_best(F&& f) {
  f();
  double best = 1e30, total = 0;
  for (int rep = 0; rep < 200 && (total < 0.3 || rep < 3); ++rep) {
    const double t0 = now();
    f();
    const double dt = now() - t0;
    total += dt;
    best = dt < best ? dt : best;
  }
  return best;
}

std::vector<float> random_vec(size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Scratch {
  std::vector<unsigned char> bytes;
  void* get(size_t n) {
    bytes.resize(n + 64);
    return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(bytes.data()) + 63) &
                                   ~uintptr_t{63});
  }
};

// Times one einsum through plan/execute; returns seconds per call.
double time_einsum(const char* spec, const TensorView& a, const TensorView& b, float* out,
                   const char** kernel) {
  EinsumPlan plan;
  const TensorView in[2] = {a, b};
  Status st = plan_einsum(spec, in, 2, &plan);
  if (!st.ok()) {
    std::fprintf(stderr, "plan %s: %s\n", spec, st.message);
    std::exit(1);
  }
  *kernel = einsum_plan_kernel_name(plan);
  Scratch s;
  void* scratch = s.get(plan.scratch_bytes);
  const TensorView ov = make_view(DType::f32, out, plan.out_shape, plan.out_rank);
  return time_best([&] { execute_einsum(plan, in, 2, ov, scratch, plan.scratch_bytes); });
}

void bench_square(int n) {
  std::vector<float> a = random_vec(size_t(n) * n), b = random_vec(size_t(n) * n), c(size_t(n) * n);
  const char* kernel = "";
  const double t = time_einsum("ij,jk->ik", make_view(DType::f32, a.data(), {n, n}),
                               make_view(DType::f32, b.data(), {n, n}), c.data(), &kernel);
  const double flops = 2.0 * n * n * n;
  std::printf("gemm %-28s %-5s einfer %7.1f GFLOP/s", ("ij,jk->ik n=" + std::to_string(n)).c_str(),
              kernel, flops / t * 1e-9);
#if defined(EINFER_HAVE_OPENBLAS)
  const double tb = time_best([&] {
    cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f,
                c.data(), n);
  });
  std::printf("   openblas %7.1f GFLOP/s   ratio %.2f", flops / tb * 1e-9, tb / t);
#endif
  std::printf("\n");
}

// Attention shapes (b=1, n=m=128 tokens, d=512, h=8 heads of 64); OpenBLAS does the same work
// with one sgemm (projections) or one sgemm per head.
void bench_attention() {
  const int n = 128, d = 512, h = 8, k = 64;
  std::vector<float> x = random_vec(n * d), wq = random_vec(d * h * k), q = random_vec(h * n * k),
                     kk = random_vec(h * n * k), s(h * n * n), v = random_vec(h * n * k),
                     o(h * n * k), wo = random_vec(h * k * d), y(n * d);
  struct Row {
    const char* spec;
    TensorView a, b;
    float* out;
    double flops;
  };
  const Row rows[] = {
      {"bnd,dhk->bhnk", make_view(DType::f32, x.data(), {1, n, d}),
       make_view(DType::f32, wq.data(), {d, h, k}), q.data(), 2.0 * n * d * h * k},
      {"bhnk,bhmk->bhnm", make_view(DType::f32, q.data(), {1, h, n, k}),
       make_view(DType::f32, kk.data(), {1, h, n, k}), s.data(), 2.0 * h * n * n * k},
      {"bhnm,bhmv->bhnv", make_view(DType::f32, s.data(), {1, h, n, n}),
       make_view(DType::f32, v.data(), {1, h, n, k}), o.data(), 2.0 * h * n * n * k},
      {"bhnv,hvd->bnd", make_view(DType::f32, o.data(), {1, h, n, k}),
       make_view(DType::f32, wo.data(), {h, k, d}), y.data(), 2.0 * n * d * h * k},
  };
  for (int r = 0; r < 4; ++r) {
    const char* kernel = "";
    const double t = time_einsum(rows[r].spec, rows[r].a, rows[r].b, rows[r].out, &kernel);
    std::printf("attn %-28s %-5s einfer %7.1f GFLOP/s", rows[r].spec, kernel,
                rows[r].flops / t * 1e-9);
#if defined(EINFER_HAVE_OPENBLAS)
    std::vector<float> c(size_t(h) * n * d);
    double tb = 0;
    if (r == 0) {  // [n, d] x [d, h*k] (output layout differs; same flops)
      tb = time_best([&] {
        cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, n, h * k, d, 1.f, x.data(), d, wq.data(), h * k,
                    0.f, c.data(), h * k);
      });
    } else if (r == 1) {
      tb = time_best([&] {
        for (int i = 0; i < h; ++i)
          cblas_sgemm(kRowMajor, kNoTrans, kTrans, n, n, k, 1.f, q.data() + i * n * k, k,
                      kk.data() + i * n * k, k, 0.f, c.data() + i * n * n, n);
      });
    } else if (r == 2) {
      tb = time_best([&] {
        for (int i = 0; i < h; ++i)
          cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, n, k, n, 1.f, s.data() + i * n * n, n,
                      v.data() + i * n * k, k, 0.f, c.data() + i * n * k, k);
      });
    } else {  // o as [n, h*k] (head-major layout aside) x wo [h*k, d]
      tb = time_best([&] {
        cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, n, d, h * k, 1.f, o.data(), h * k, wo.data(), d,
                    0.f, c.data(), d);
      });
    }
    std::printf("   openblas %7.1f GFLOP/s   ratio %.2f", rows[r].flops / tb * 1e-9, tb / t);
#endif
    std::printf("\n");
  }
}

// FMA peak in GFLOP/s of the f32 GEMM's registers (fma_chains_gemm_f32,
// kernels/gemm_f32/gemm_f32.h: 12 independent FMA chains in the same SIMD width as the GEMM
// microkernel). Best of several runs.
double fma_peak_gflops() {
  volatile float seed_m = 0.999999f, seed_a = 1e-7f;
  double best = 0;
  volatile float sink = 0;
  for (int run = 0; run < 7; ++run) {
    constexpr int64_t kIters = 1000000;
    const double t0 = now();
    sink = sink + fma_chains_gemm_f32(kIters, seed_m, seed_a);
    const double dt = now() - t0;
    best = std::max(best, 24.0 * gemm_f32_lanes() * double(kIters) / dt * 1e-9);
  }
  return best;
}

// The f32 prefill projections of the llama shapes, y[128, N] = x[128, K] W[N, K]^T through the
// einsum the models plan ("nd,ed->ne"), one thread, as GFLOP/s and as a fraction of the FMA
// peak measured right before each (the machine may be shared: the pair is what counts).
void bench_prefill_gemm(bool quick) {
  const int m = 128;
  struct Shape {
    int k, n;
    const char* what;
  };
  const Shape shapes[] = {{288, 288, "15M q/k/v/o"},  {288, 768, "15M w1/w3"},
                          {768, 288, "15M w2"},       {288, 32000, "15M classifier"},
                          {768, 768, "110M q/k/v/o"}, {768, 2048, "110M w1/w3"},
                          {2048, 768, "110M w2"},     {768, 32000, "110M classifier"}};
  std::printf("prefill f32 GEMM, M = %d tokens, one thread (einsum nd,ed->ne), thread CPU time:\n",
              m);
  double sum_ratio = 0;
  int count = 0;
  for (const Shape& sh : shapes) {
    if (quick && sh.n > 2048) continue;
    std::vector<float> x = random_vec(size_t(m) * sh.k), w = random_vec(size_t(sh.n) * sh.k),
                       y(size_t(m) * sh.n);
    const double peak = fma_peak_gflops();
    const char* kernel = "";
    const double t = time_einsum("nd,ed->ne", make_view(DType::f32, x.data(), {m, sh.k}),
                                 make_view(DType::f32, w.data(), {sh.n, sh.k}), y.data(), &kernel);
    const double gflops = 2.0 * m * sh.k * sh.n / t * 1e-9;
    std::printf("  K=%-5d N=%-6d %-16s %7.1f GFLOP/s   peak %6.1f   of peak %.2f\n", sh.k, sh.n,
                sh.what, gflops, peak, gflops / peak);
    sum_ratio += gflops / peak;
    ++count;
  }
  std::printf("  mean fraction of peak %.2f\n", sum_ratio / count);
}

// Sum of all floats with independent accumulators: the memory-bandwidth yardstick.
float stream_sum(const float* p, size_t n) {
#if EINFER_HAS_SIMD
  using B = xsimd::batch<float>;
  constexpr size_t L = B::size;
  B s0(0.f), s1(0.f), s2(0.f), s3(0.f);
  size_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    s0 += B::load_unaligned(p + i);
    s1 += B::load_unaligned(p + i + L);
    s2 += B::load_unaligned(p + i + 2 * L);
    s3 += B::load_unaligned(p + i + 3 * L);
  }
  float s = xsimd::hadd(s0 + s1 + s2 + s3);
#else
  float s = 0.f;
  size_t i = 0;
#endif
  for (; i < n; ++i) s += p[i];
  return s;
}

// Model projection with W stored [out, in] (rows contiguous): y = x W^T.
void bench_projection() {
  const int n = 128, d = 1024, e = 1024;
  std::vector<float> x = random_vec(size_t(n) * d), w = random_vec(size_t(e) * d), y(size_t(n) * e);
  const char* kernel = "";
  const double t = time_einsum("nd,ed->ne", make_view(DType::f32, x.data(), {n, d}),
                               make_view(DType::f32, w.data(), {e, d}), y.data(), &kernel);
  const double flops = 2.0 * n * d * e;
  std::printf("proj %-28s %-5s einfer %7.1f GFLOP/s", "nd,ed->ne n=128 d=e=1024", kernel,
              flops / t * 1e-9);
#if defined(EINFER_HAVE_OPENBLAS)
  const double tb = time_best([&] {
    cblas_sgemm(kRowMajor, kNoTrans, kTrans, n, e, d, 1.f, x.data(), d, w.data(), d, 0.f, y.data(),
                e);
  });
  std::printf("   openblas %7.1f GFLOP/s   ratio %.2f", flops / tb * 1e-9, tb / t);
#endif
  std::printf("\n");
}

void bench_gemv() {
  const int64_t rows = 4096, k = 1024;  // 16 MiB of weights, far beyond L2
  std::vector<float> w = random_vec(size_t(rows * k)), x = random_vec(size_t(k)),
                     y(static_cast<size_t>(rows));
  const char* kernel = "";
  const double t = time_einsum("nd,ed->ne", make_view(DType::f32, x.data(), {1, k}),
                               make_view(DType::f32, w.data(), {rows, k}), y.data(), &kernel);
  volatile float sink = 0;
  const double ts = time_best([&] { sink = sink + stream_sum(w.data(), w.size()); });
  const double bytes = double(rows) * k * 4;
  std::printf(
      "gemv nd,ed->ne n=1 e=%lld d=%lld  %-5s einfer %6.1f GB/s   stream-read %6.1f GB/s   ratio "
      "%.2f\n",
      static_cast<long long>(rows), static_cast<long long>(k), kernel, bytes / t * 1e-9,
      bytes / ts * 1e-9, ts / t);
  // Columns form: x^T W with W [d, e] (rows of e contiguous).
  const double tc = time_einsum("nd,de->ne", make_view(DType::f32, x.data(), {1, k}),
                                make_view(DType::f32, w.data(), {k, rows}), y.data(), &kernel);
  std::printf(
      "gemv nd,de->ne n=1 e=%lld d=%lld  %-5s einfer %6.1f GB/s   stream-read %6.1f GB/s   ratio "
      "%.2f\n",
      static_cast<long long>(rows), static_cast<long long>(k), kernel, bytes / tc * 1e-9,
      bytes / ts * 1e-9, ts / tc);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  einfer::tools::cli::Parser p("einfer-kernel-bench", "[--quick] [--prefill]",
                               "f32 GEMM against OpenBLAS (one thread, when found at build time), "
                               "attention, projections and GEMV against a streaming read.");
  bool prefill_only = false;
  p.flag({"--quick"}, &quick, "square GEMMs up to n = 256 only, no classifier-sized prefill GEMM");
  p.flag({"--prefill"}, &prefill_only, "only the FMA peak and the prefill GEMMs");
  if (int code; !p.parse(argc, argv, &code)) return code;
#if defined(EINFER_HAVE_OPENBLAS)
  if (!std::getenv("OPENBLAS_CORETYPE") || !std::getenv("OPENBLAS_NUM_THREADS")) {
    if (!std::getenv("OPENBLAS_CORETYPE")) setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    execv("/proc/self/exe",
          argv);  // OpenBLAS reads these when it loads; fall through if exec fails
  }
  openblas_set_num_threads(1);
  std::printf("openblas core: %s (one thread)\n", openblas_get_corename());
#else
  std::printf("openblas: not found at build time (einfer numbers only)\n");
#endif
  std::printf("einfer: %s, microkernel %s\n", simd_arch_name(), gemm_f32_kernel_name());
  g_thread_clock = true;  // FMA peak and prefill GEMMs in thread CPU time
  std::printf(
      "FMA peak (12 independent chains, %s, %d-float registers, thread CPU time): %.1f "
      "GFLOP/s\n",
      simd_arch_name(), gemm_f32_lanes(), fma_peak_gflops());
  bench_prefill_gemm(quick);
  g_thread_clock = false;
  if (prefill_only) return 0;
  for (int n : {64, 128, 256, 384, 512, 768, 1024}) {
    if (quick && n > 256) break;
    bench_square(n);
  }
  bench_attention();
  bench_projection();
  bench_gemv();
  return 0;
}
