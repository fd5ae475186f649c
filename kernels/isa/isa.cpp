// Runtime ISA dispatch (kernels/isa/isa.h): level selection and, in dispatching builds, the public
// kernel entry points forwarding to the selected level's table (kernels/isa/kernel_table.h).
// Built for the baseline ISA. EINFER_ISA_DISPATCH (0/1) and the level list come from CMake
// (cmake/isa.cmake writes isa_levels.h).
#include "kernels/isa/isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "isa_levels.h"  // EINFER_ISA_LEVELS(X): X(name) per level, lowest first

#if EINFER_SIMD && defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

#if EINFER_ISA_DISPATCH
#include "kernels/isa/kernel_table.h"
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP2_I8MM
#define HWCAP2_I8MM (1 << 13)
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
constexpr const char* kExtNames[] = {"avx512vnni", "avxvnni", "amx"};
constexpr int kExts = 3;
// Every (level, extension set) name, index level * 8 + set (bit 0 avx512vnni, bit 1 avxvnni,
// bit 2 amx).
#define EINFER_ISA_FULL_NAMES(name)                                                        \
#name, #name "+avx512vnni", #name "+avxvnni", #name "+avx512vnni+avxvnni", #name "+amx", \
      #name "+avx512vnni+amx", #name "+avxvnni+amx", #name "+avx512vnni+avxvnni+amx",
constexpr const char* kFullNames[] = {EINFER_ISA_LEVELS(EINFER_ISA_FULL_NAMES)};
#undef EINFER_ISA_FULL_NAMES
#else
constexpr const char* kExtNames[] = {""};
constexpr int kExts = 0;
#define EINFER_ISA_FULL_NAMES(name) #name,
constexpr const char* kFullNames[] = {EINFER_ISA_LEVELS(EINFER_ISA_FULL_NAMES)};
#undef EINFER_ISA_FULL_NAMES
#endif
constexpr int kSets = kExts == 0 ? 1 : 8;

// Index of the selected level, -1 until one is chosen, and its extension bits. Constant-initialized
// (no constructor). The extensions are stored before the level is published.
std::atomic<int> g_level{-1};
std::atomic<unsigned> g_extensions{0};

#if EINFER_SIMD && defined(__x86_64__)
// The x86 features the levels and extensions need, read from CPUID and XGETBV (rather than
// __builtin_cpu_supports, whose feature names differ between GCC and clang releases). An AVX
// feature counts only when the OS saves the YMM (and for AVX-512 the ZMM/opmask) state.
struct X86Features {
  bool avx2_level = false;  // AVX2 + FMA + F16C + BMI2 with YMM state enabled
  bool avx512vnni = false;  // AVX-512 F/BW/VL/VNNI with ZMM state enabled
  bool avxvnni = false;     // VEX-encoded VNNI (CPUID 7.1 EAX bit 4) on an avx2-level CPU
  bool amx = false;  // AMX-TILE + AMX-INT8 with tile state enabled (and, on Linux, permitted),
                     // on an avx512vnni CPU (the AMX kernel's scaling is AVX-512)
  bool amd = false;  // vendor AuthenticAMD or HygonGenuine (Zen cores)
};

// Linux hands out the AMX tile data state only to a process that asks (arch_prctl
// ARCH_REQ_XCOMP_PERM, kernel 5.16+); without the permission the first tile instruction faults.
bool amx_permitted() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

X86Features read_x86_features() {
  X86Features f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d)) {  // vendor string in EBX, EDX, ECX
    f.amd = (b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) ||  // "AuthenticAMD"
            (b == 0x6f677948u && d == 0x6e65476eu && c == 0x656e6975u);    // "HygonGenuine"
  }
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool fma = (c >> 12) & 1u, osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u,
             f16c = (c >> 29) & 1u;
  if (!osxsave || !avx) return f;
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool ymm_state = (xcr0_lo & 0x6u) == 0x6u;    // SSE and AVX state
  const bool zmm_state = (xcr0_lo & 0xE6u) == 0xE6u;  // plus opmask, ZMM_Hi256, Hi16_ZMM
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  if (!__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) return f;
  const bool avx2 = (b7 >> 5) & 1u, bmi2 = (b7 >> 8) & 1u, avx512f = (b7 >> 16) & 1u,
             avx512bw = (b7 >> 30) & 1u, avx512vl = (b7 >> 31) & 1u, vnni = (c7 >> 11) & 1u;
  f.avx2_level = ymm_state && avx2 && fma && f16c && bmi2;
  f.avx512vnni = f.avx2_level && zmm_state && avx512f && avx512bw && avx512vl && vnni;
  unsigned a71 = 0, b71 = 0, c71 = 0, d71 = 0;
  f.avxvnni = f.avx2_level && a7 >= 1 && __get_cpuid_count(7, 1, &a71, &b71, &c71, &d71) &&
              ((a71 >> 4) & 1u) != 0;
  const bool amx_tile = (d7 >> 24) & 1u, amx_int8 = (d7 >> 25) & 1u;
  const bool tile_state = (xcr0_lo & 0x60000u) == 0x60000u;  // XTILECFG and XTILEDATA
  f.amx = f.avx512vnni && amx_tile && amx_int8 && tile_state && amx_permitted();
  return f;
}

const X86Features& x86_features() {
  static const X86Features features = read_x86_features();  // first use, not a static constructor
  return features;
}
#endif

bool cpu_runs(const char* level) {
#if EINFER_ISA_DISPATCH && defined(__x86_64__)
  if (std::strcmp(level, "avx2") == 0) return x86_features().avx2_level;
#elif EINFER_ISA_DISPATCH && defined(__aarch64__) && defined(__linux__)
  if (std::strcmp(level, "dotprod") == 0) return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  // i8mm code is dotprod code too: both features.
  if (std::strcmp(level, "i8mm") == 0)
    return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0 && (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0;
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
  (void)level;
#if defined(__clang__) || !defined(__GNUC__)
  if (ext == static_cast<unsigned>(IsaExtension::avx512vnni)) return false;
  if (ext == static_cast<unsigned>(IsaExtension::amx)) return false;
#endif
  return ext == 1u || ext == 2u || ext == 4u;
#else
  (void)level;
  (void)ext;
  return false;
#endif
}

bool cpu_has_extension(unsigned ext) {
#if defined(EINFER_ISA_X86_EXTENSIONS)
  if (ext == static_cast<unsigned>(IsaExtension::avx512vnni)) return x86_features().avx512vnni;
  if (ext == static_cast<unsigned>(IsaExtension::avxvnni)) return x86_features().avxvnni;
  if (ext == static_cast<unsigned>(IsaExtension::amx)) return x86_features().amx;
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
      c.error = "unknown ISA extension (EINFER_ISA=<level>[+avx512vnni][+avxvnni][+amx] on x86-64)";
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

namespace {
// The tuning bits, -1 until first read (constant-initialized: no static constructor).
std::atomic<int> g_tuning{-1};

int default_tuning() {
  int bits = 0;
#if EINFER_SIMD && defined(__x86_64__)
  if (x86_features().amd) bits |= static_cast<int>(IsaTuning::x86_float_add_accumulate);
#endif
  const char* fadd = std::getenv("EINFER_X86_FADD");
  if (fadd != nullptr && (std::strcmp(fadd, "0") == 0 || std::strcmp(fadd, "1") == 0)) {
    const int bit = static_cast<int>(IsaTuning::x86_float_add_accumulate);
    bits = fadd[0] == '1' ? bits | bit : bits & ~bit;
  }
  return bits;
}

int tuning_bits() {
  int bits = g_tuning.load(std::memory_order_acquire);
  if (bits < 0) {
    int expected = -1;
    g_tuning.compare_exchange_strong(expected, default_tuning(), std::memory_order_acq_rel);
    bits = g_tuning.load(std::memory_order_acquire);
  }
  return bits;
}
}  // namespace

bool isa_tuning_enabled(IsaTuning tuning) {
  return (tuning_bits() & static_cast<int>(tuning)) != 0;
}

void isa_set_tuning(IsaTuning tuning, bool on) {
  const int bits = tuning_bits();
  const int bit = static_cast<int>(tuning);
  g_tuning.store(on ? bits | bit : bits & ~bit, std::memory_order_release);
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
