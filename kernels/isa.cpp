// Runtime ISA dispatch (kernels/isa.h): level selection and, in dispatching builds, the public
// kernel entry points forwarding to the selected level's table (kernels/kernel_table.h).
// Built for the baseline ISA. EINFER_ISA_DISPATCH (0/1) and the level list come from CMake
// (cmake/isa.cmake writes isa_levels.h).
#include "kernels/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "isa_levels.h"  // EINFER_ISA_LEVELS(X): X(name) per level, lowest first

#if EINFER_SIMD && defined(__x86_64__)
#include <cpuid.h>
#endif

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

// Extensions (isa.h): x86-64 only; avx512vnni needs GCC (its kernels use a target pragma).
#if EINFER_SIMD && defined(__x86_64__)
#define EINFER_ISA_X86_EXTENSIONS 1
constexpr const char* kExtNames[] = {"avx512vnni", "avxvnni"};
constexpr int kExts = 2;
// Every (level, extension set) name, index level * 4 + set (bit 0 avx512vnni, bit 1 avxvnni).
#define EINFER_ISA_FULL_NAMES(name) \
#name, #name "+avx512vnni", #name "+avxvnni", #name "+avx512vnni+avxvnni",
constexpr const char* kFullNames[] = {EINFER_ISA_LEVELS(EINFER_ISA_FULL_NAMES)};
#undef EINFER_ISA_FULL_NAMES
#else
constexpr const char* kExtNames[] = {""};
constexpr int kExts = 0;
#define EINFER_ISA_FULL_NAMES(name) #name,
constexpr const char* kFullNames[] = {EINFER_ISA_LEVELS(EINFER_ISA_FULL_NAMES)};
#undef EINFER_ISA_FULL_NAMES
#endif
constexpr int kSets = kExts == 0 ? 1 : 4;

// Index of the selected level, -1 until one is chosen, and its extension bits. Constant-initialized
// (no constructor). The extensions are stored before the level is published.
std::atomic<int> g_level{-1};
std::atomic<unsigned> g_extensions{0};

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

// Whether `level` has kernels for extension bit `ext` (its code is AVX2 code).
bool level_has_extension(int level, unsigned ext) {
#if defined(EINFER_ISA_X86_EXTENSIONS)
#if EINFER_ISA_DISPATCH
  if (std::strcmp(kLevelNames[level], "avx2") != 0) return false;
#elif !defined(__AVX2__)
  return false;
#endif
#if defined(__clang__) || !defined(__GNUC__)
  if (ext == static_cast<unsigned>(IsaExtension::avx512vnni)) return false;
#endif
  (void)level;
  return ext == 1u || ext == 2u;
#else
  (void)level;
  (void)ext;
  return false;
#endif
}

bool cpu_has_extension(unsigned ext) {
#if defined(EINFER_ISA_X86_EXTENSIONS)
  __builtin_cpu_init();
  if (ext == static_cast<unsigned>(IsaExtension::avx512vnni))
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  if (ext == static_cast<unsigned>(IsaExtension::avxvnni)) {
    // CPUID leaf 7, sub-leaf 1, EAX bit 4 (VEX-encoded VNNI); the AVX state is the avx2 level's.
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 4) & 1u) != 0 &&
           __builtin_cpu_supports("avx2");
  }
#endif
  (void)ext;
  return false;
}

// Every extension `level` has kernels for and this CPU runs.
unsigned all_extensions(int level) {
  unsigned set = 0;
  for (int e = 0; e < kExts; ++e) {
    const unsigned bit = 1u << e;
    if (level_has_extension(level, bit) && cpu_has_extension(bit)) set |= bit;
  }
  return set;
}

int best_level() {
  for (int i = kLevels - 1; i > 0; --i)
    if (cpu_runs(kLevelNames[i])) return i;
  return 0;
}

struct Choice {
  int level = -1;
  unsigned extensions = 0;
  const char* error = nullptr;  // why the name does not parse
};

// Parses "<level>[+<extension>...]" or "best" (unknown parts give an error; CPU support is
// checked by the caller).
Choice parse(const char* name) {
  Choice c;
  if (std::strcmp(name, "best") == 0) {
    c.level = best_level();
    c.extensions = all_extensions(c.level);
    return c;
  }
  const char* plus = std::strchr(name, '+');
  const size_t base = plus ? static_cast<size_t>(plus - name) : std::strlen(name);
  for (int i = 0; i < kLevels; ++i)
    if (std::strlen(kLevelNames[i]) == base && std::strncmp(name, kLevelNames[i], base) == 0)
      c.level = i;
  if (c.level < 0) {
    c.error = "unknown ISA level (see isa_level_name; EINFER_ISA=" EINFER_ISA_LEVEL_LIST "|best)";
    return c;
  }
  while (plus) {
    const char* ext = plus + 1;
    plus = std::strchr(ext, '+');
    const size_t len = plus ? static_cast<size_t>(plus - ext) : std::strlen(ext);
    int found = -1;
    for (int e = 0; e < kExts; ++e)
      if (std::strlen(kExtNames[e]) == len && std::strncmp(ext, kExtNames[e], len) == 0) found = e;
    if (found < 0) {
      c.error = "unknown ISA extension (EINFER_ISA=<level>[+avx512vnni][+avxvnni] on x86-64)";
      return c;
    }
    if (!level_has_extension(c.level, 1u << found)) {
      c.error = "this ISA level has no kernels for the requested extension";
      return c;
    }
    c.extensions |= 1u << found;
  }
  return c;
}

Status select_level(const char* name) {
  const Choice c = parse(name);
  if (c.error) return make_status(StatusCode::invalid_argument, c.error);
  if (!cpu_runs(kLevelNames[c.level]))
    return make_status(StatusCode::unsupported, "this CPU does not support the requested ISA level",
                       -1, -1, c.level);
  for (int e = 0; e < kExts; ++e)
    if ((c.extensions >> e) & 1u && !cpu_has_extension(1u << e))
      return make_status(StatusCode::unsupported,
                         "this CPU does not support the requested ISA extension", -1, -1, e);
  g_extensions.store(c.extensions, std::memory_order_release);
  g_level.store(c.level, std::memory_order_release);
  return ok_status();
}

// The default selection: the best level with every extension the CPU has.
void select_default() {
  const int level = best_level();
  g_extensions.store(all_extensions(level), std::memory_order_release);
  g_level.store(level, std::memory_order_release);
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
    const Choice c = parse(env);
    bool usable = c.error == nullptr && cpu_runs(kLevelNames[c.level]);
    for (int e = 0; usable && e < kExts; ++e)
      if ((c.extensions >> e) & 1u && !cpu_has_extension(1u << e)) usable = false;
    if (!usable) return select_level(env);  // the error
  }
  if (g_level.load(std::memory_order_acquire) >= 0) return ok_status();
  if (has_env) return select_level(env);
  select_default();
  return ok_status();
}

const char* isa_name() {
  if (g_level.load(std::memory_order_acquire) < 0 && !isa_init().ok()) {
    // An unusable EINFER_ISA makes isa_init fail (session_create reports it) and leaves the
    // choice open; the default is what would run.
    const int level = best_level();
    return kFullNames[level * kSets + (kSets > 1 ? all_extensions(level) : 0)];
  }
  const int level = g_level.load(std::memory_order_acquire);
  const unsigned ext = g_extensions.load(std::memory_order_acquire);
  return kFullNames[level * kSets + (kSets > 1 ? ext : 0)];
}

bool isa_extension_enabled(IsaExtension ext) {
  if (g_level.load(std::memory_order_acquire) < 0 && !isa_init().ok()) select_default();
  return (g_extensions.load(std::memory_order_acquire) & static_cast<unsigned>(ext)) != 0;
}

int isa_extension_count() {
  return kExts;
}

const char* isa_extension_name(int ext) {
  return ext >= 0 && ext < kExts ? kExtNames[ext] : "";
}

bool isa_extension_supported(int level, int ext) {
  return level >= 0 && level < kLevels && ext >= 0 && ext < kExts &&
         level_has_extension(level, 1u << ext) && cpu_has_extension(1u << ext);
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
    if (!isa_init().ok()) select_default();
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
