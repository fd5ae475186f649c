// einfer-bench --kernels (see bench_kernels.h).
#include "tools/einfer-bench/bench_kernels.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "kernels/quant/quant.h"
#include "tools/common/thread_pool.h"

extern char** environ;

namespace {

// Folder of the running executable (tools are installed side by side in bin/).
std::string own_dir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  path[n] = 0;
  std::string p(path);
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// Runs one tool and waits for it; its output goes straight to the terminal.
int run_tool(FILE* out, const std::string& dir, const char* name,
             const std::vector<std::string>& args) {
  const std::string exe = dir + "/" + name;
  std::fprintf(out, "\n== %s ==\n", name);
  std::fflush(out);
  if (access(exe.c_str(), X_OK) != 0) {
    std::fprintf(out, "%s: not built (skipped)\n", name);
    return 0;
  }
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    std::fprintf(out, "%s: cannot start\n", name);
    return 1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(out, "%s: failed (status %d)\n", name, status);
    return 1;
  }
  return 0;
}

uint64_t wall_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The projections of the 15M shape ("nd,ed->ne", the einsum the model runs) on 1 and on `threads`
// workers, wall clock, passes alternated, medians.
int run_threaded_projections(FILE* out, bool quick, int threads) {
  std::fprintf(out,
               "\n== threaded projections (einsum nd,ed->ne; %d threads vs 1, wall clock) ==\n",
               threads);
  if (threads < 2) {
    std::fprintf(out, "1 thread: nothing to compare (pass -t N, N >= 2)\n");
    return 0;
  }
  einfer::tools::ThreadPool pool(threads);
  const einfer_threads many = pool.threads();
  struct Case {
    const char* what;
    int64_t n, e, d;
    einfer::DType dtype;
  } cases[] = {{"classifier decode", 1, 32000, 288, einfer::DType::q8},
               {"ffn w1 decode", 1, 768, 288, einfer::DType::q8},
               {"ffn w1 prefill", 64, 768, 288, einfer::DType::q8},
               {"ffn w1 decode", 1, 768, 288, einfer::DType::f32},
               {"ffn w1 prefill", 64, 768, 288, einfer::DType::f32}};
  const int reps = quick ? 5 : 21;
  for (const Case& c : cases) {
    const int32_t group = 32;
    std::vector<float> wf(static_cast<size_t>(c.e * c.d)), x(static_cast<size_t>(c.n * c.d)),
        y(static_cast<size_t>(c.n * c.e));
    uint64_t r = 12345;
    for (float& v : wf)
      v = static_cast<float>((r = r * 6364136223846793005ull + 1) >> 40) / 1e7f - 0.8f;
    for (float& v : x)
      v = static_cast<float>((r = r * 6364136223846793005ull + 1) >> 40) / 1e7f - 0.8f;
    std::vector<int8_t> wq(static_cast<size_t>(c.e * c.d));
    std::vector<float> scales(static_cast<size_t>(c.e * (c.d / group)));
    einfer::TensorView w;
    if (c.dtype == einfer::DType::q8) {
      for (int64_t i = 0; i < c.e; ++i)
        einfer::quantize_row_q8(wf.data() + i * c.d, c.d, group, wq.data() + i * c.d,
                                scales.data() + i * (c.d / group));
      w = einfer::make_view(c.dtype, wq.data(), {c.e, c.d});
      w.scales = scales.data();
      w.group_size = group;
    } else {
      w = einfer::make_view(c.dtype, wf.data(), {c.e, c.d});
    }
    const einfer::TensorView xv = einfer::make_view(einfer::DType::f32, x.data(), {c.n, c.d});
    const einfer::TensorView yv = einfer::make_view(einfer::DType::f32, y.data(), {c.n, c.e});
    einfer::EinsumPlan plan;
    if (!einfer::plan<"nd,ed->ne">(xv, w, &plan).ok()) return 1;
    const size_t slot = (plan.scratch_bytes + 63) / 64 * 64;
    std::vector<unsigned char> scratch(slot * static_cast<size_t>(threads) + 128);
    void* sp = scratch.data() + (64 - reinterpret_cast<uintptr_t>(scratch.data()) % 64) % 64;
    const einfer::TensorView in[2] = {xv, w};
    std::vector<double> t1, tn;
    const int calls = c.n == 1 ? 200 : 10;
    for (int rep = 0; rep < reps + 1; ++rep) {
      for (int pass = 0; pass < 2; ++pass) {
        const bool all = pass == rep % 2;
        const uint64_t t0 = wall_now_ns();
        for (int i = 0; i < calls; ++i)
          einfer::execute_einsum(plan, in, 2, yv, sp, slot * threads + 64, all ? &many : nullptr);
        const double us = double(wall_now_ns() - t0) / 1e3 / calls;
        if (rep > 0) (all ? tn : t1).push_back(us);
      }
    }
    std::fprintf(
        out, "%-18s %-4s n=%-3lld %5lldx%-4lld  1 thread %9.2f us  %d threads %9.2f us  %.2fx\n",
        c.what, einfer::dtype_name(c.dtype), static_cast<long long>(c.n),
        static_cast<long long>(c.e), static_cast<long long>(c.d), median(t1), threads, median(tn),
        median(t1) / median(tn));
  }
  return 0;
}

}  // namespace

int run_kernel_benches(FILE* out, bool quick, int threads) {
  const std::string dir = own_dir();
  int failures = 0;
  failures += run_tool(out, dir, "einfer-kernel-bench",
                       quick ? std::vector<std::string>{"--quick"} : std::vector<std::string>{});
  failures += run_tool(out, dir, "einfer-vec-bench",
                       quick ? std::vector<std::string>{"1", "5"} : std::vector<std::string>{});
  failures +=
      run_tool(out, dir, "einfer-quant-bench",
               quick ? std::vector<std::string>{"--reps", "3"} : std::vector<std::string>{});
  failures += run_tool(
      out, dir, "einfer-attn-bench",
      quick ? std::vector<std::string>{"--positions", "1024", "--reps", "5", "--prefill", "128"}
            : std::vector<std::string>{});
  failures += run_threaded_projections(out, quick, threads);
  return failures ? 1 : 0;
}
