// Runtime ISA dispatch (kernels/isa.h): level selection and, in dispatching builds, the public
// kernel entry points forwarding to the selected level's table (kernels/kernel_table.h).
// Built for the baseline ISA. EINFER_ISA_DISPATCH (0/1) and the level list come from CMake
// (cmake/isa.cmake writes isa_levels.h).
#include "kernels/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "isa_levels.h"  // EINFER_ISA_LEVELS(X): X(name) per level, lowest first

#if EINFER_ISA_DISPATCH
#include "kernels/kernel_table.h"
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif
#endif

namespace einfer {

namespace {

#define EINFER_ISA_LEVEL_NAME(name) #name,
constexpr const char* kLevelNames[] = {EINFER_ISA_LEVELS(EINFER_ISA_LEVEL_NAME)};
#undef EINFER_ISA_LEVEL_NAME
constexpr int kLevels = static_cast<int>(sizeof(kLevelNames) / sizeof(kLevelNames[0]));

// Index of the selected level, -1 until one is chosen. Constant-initialized (no constructor).
std::atomic<int> g_level{-1};

bool cpu_runs(const char* level) {
#if EINFER_ISA_DISPATCH && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  if (std::strcmp(level, "avx2") == 0)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2");
#elif EINFER_ISA_DISPATCH && defined(__aarch64__) && defined(__linux__)
  if (std::strcmp(level, "dotprod") == 0) return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
  (void)level;
  return true;  // the baseline levels (and a pinned build's only level)
}

int best_level() {
  for (int i = kLevels - 1; i > 0; --i)
    if (cpu_runs(kLevelNames[i])) return i;
  return 0;
}

int find_level(const char* name) {
  if (std::strcmp(name, "best") == 0) return best_level();
  for (int i = 0; i < kLevels; ++i)
    if (std::strcmp(name, kLevelNames[i]) == 0) return i;
  return -1;
}

Status select_level(const char* name) {
  const int level = find_level(name);
  if (level < 0)
    return make_status(StatusCode::invalid_argument,
                       "unknown ISA level (see isa_level_name; EINFER_ISA=" EINFER_ISA_LEVEL_LIST
                       "|best)");
  if (!cpu_runs(kLevelNames[level]))
    return make_status(StatusCode::unsupported, "this CPU does not support the requested ISA level",
                       -1, -1, level);
  g_level.store(level, std::memory_order_release);
  return ok_status();
}

}  // namespace

int isa_level_count() {
  return kLevels;
}

const char* isa_level_name(int level) {
  return level >= 0 && level < kLevels ? kLevelNames[level] : "";
}

bool isa_level_supported(int level) {
  return level >= 0 && level < kLevels && cpu_runs(kLevelNames[level]);
}

Status isa_select(const char* name) {
  if (name == nullptr) return make_status(StatusCode::invalid_argument, "isa_select: null name");
  return select_level(name);
}

Status isa_init() {
  // EINFER_ISA is checked on every call, so an unusable value is reported even when a kernel
  // call already fell back to the default.
  const char* env = std::getenv("EINFER_ISA");
  const bool has_env = env != nullptr && env[0] != '\0';
  if (has_env) {
    const int level = find_level(env);
    if (level < 0 || !cpu_runs(kLevelNames[level])) return select_level(env);  // the error
  }
  if (g_level.load(std::memory_order_acquire) >= 0) return ok_status();
  if (has_env) return select_level(env);
  g_level.store(best_level(), std::memory_order_release);
  return ok_status();
}

const char* isa_name() {
  const int level = g_level.load(std::memory_order_acquire);
  if (level >= 0) return kLevelNames[level];
  // An unusable EINFER_ISA makes isa_init fail (session_create reports it) and leaves the choice
  // open; the default is what would run.
  return isa_init().ok() ? kLevelNames[g_level.load(std::memory_order_acquire)]
                         : kLevelNames[best_level()];
}

bool isa_dispatches() {
  return EINFER_ISA_DISPATCH != 0;
}

#if EINFER_ISA_DISPATCH

#define EINFER_ISA_TABLE_DECL(name) extern "C" const KernelTable einfer_isa_table_##name;
EINFER_ISA_LEVELS(EINFER_ISA_TABLE_DECL)
#undef EINFER_ISA_TABLE_DECL

namespace {

#define EINFER_ISA_TABLE_PTR(name) &einfer_isa_table_##name,
constexpr const KernelTable* kTables[] = {EINFER_ISA_LEVELS(EINFER_ISA_TABLE_PTR)};
#undef EINFER_ISA_TABLE_PTR

inline const KernelTable& active() {
  int level = g_level.load(std::memory_order_acquire);
  if (level < 0) {
    // A kernel called before any session: select now, the default if EINFER_ISA is unusable.
    if (!isa_init().ok()) g_level.store(best_level(), std::memory_order_release);
    level = g_level.load(std::memory_order_acquire);
  }
  return *kTables[level];
}

}  // namespace

#define EINFER_ISA_FORWARD(ret, name, params, args) \
  ret name params {                                 \
    return active().name args;                      \
  }
EINFER_DISPATCHED_KERNELS(EINFER_ISA_FORWARD)
#undef EINFER_ISA_FORWARD

#endif  // EINFER_ISA_DISPATCH

}  // namespace einfer
