// einfer-bench --kernels (see bench_kernels.h).
#include "tools/einfer-bench/bench_kernels.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

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

}  // namespace

int run_kernel_benches(FILE* out, bool quick) {
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
  return failures ? 1 : 0;
}
