// Runtime instruction set dispatch.
//
// Dispatching builds (CMake EINFER_ISA=dispatch, the default on x86-64 and aarch64 Linux) compile
// the library for the target's baseline (x86-64 / armv8-a) and the instruction-set dependent
// kernels once more per level, each into its own suffixed symbols with a kernel table
// (kernels/isa/kernel_table.h). Levels, lowest first:
//   x86-64:  scalar, sse2 (baseline), avx2 (x86-64-v3: AVX2+FMA+F16C)
//   aarch64: scalar, neon (baseline armv8-a), dotprod (armv8.2-a+dotprod), i8mm (dotprod + the
//            int8 matrix multiply SMMLA; HWCAP2_I8MM)
// The public kernel functions forward to the selected level's table. The level is chosen once:
// explicitly by isa_select / isa_init (session_create calls isa_init), else on the first kernel
// call; isa_init takes the environment variable EINFER_ISA (a level name, or "best") or the
// highest level this CPU runs (CPUID / getauxval(AT_HWCAP, AT_HWCAP2)).
//
// Pinned builds (EINFER_ISA=native|baseline|..., Cortex-M, EINFER_SIMD=OFF) have exactly one level,
// chosen at compile time; the functions below then report it and accept only its name.
//
// Extensions: on x86-64 a level with AVX2 code (avx2; a pinned avx2/native build) also holds
// kernels for instructions checked at each use, not a level of their own: "avx512vnni" (AVX-512
// F/BW/VL/VNNI: the q8/q4 prefill GEMMs, vpdpbusd on ymm, the f32 GEMM's 8 x 32 zmm tiles and
// the GGUF K-quant kernels' vpdpwssd), "avxvnni" (vpdpwssd in the int8 KV-cache attention dots and,
// with GFNI, the GGUF K-quant kernels) and "amx" (the q8/q4 and GGUF Q4_K/Q5_K prefill GEMMs on AMX
// tiles, TDPBSSD; on a CPU with AVX-512 VNNI, and on Linux only once the kernel granted the process
// the tile state: arch_prctl ARCH_REQ_XCOMP_PERM, asked for when the features are first read). A
// selection names them after the level, "avx2+avx512vnni"; "avx2" alone runs AVX2+FMA+F16C code
// only; "best" takes every extension the CPU has. isa_name() reports the selection the same way, so
// it is always a valid EINFER_ISA value.
//
// Selecting a level is not synchronized with kernels running on other threads: select before
// starting work (tests switch levels between runs).
#pragma once

#include "runtime/status.h"

namespace einfer {

// Number of levels this build has and their names, lowest first.
int isa_level_count();
const char* isa_level_name(int level);
// Whether this CPU can run the level.
bool isa_level_supported(int level);

// Selects a level by name, with extensions ("avx2+avx512vnni"; "best": the highest supported level
// with every extension the CPU has). Errors: unknown level or extension, an extension the level
// has no kernels for, or a level / extension this CPU does not support. The previous choice stays
// on error.
Status isa_select(const char* name);

// Selects from the environment variable EINFER_ISA if set (an error if it names an unknown or
// unsupported level), else the highest supported level. Does nothing after a successful
// isa_select / isa_init: the first choice holds.
Status isa_init();

// Name of the selected level and its extensions, e.g. "avx2+avx512vnni" (selecting the default
// first if none was).
const char* isa_name();

// Instruction set extensions (see top). Kernels ask isa_extension_enabled before using one: true
// when the selection includes it (and hence the CPU has it).
enum class IsaExtension : unsigned { avx512vnni = 1u, avxvnni = 2u, amx = 4u };
bool isa_extension_enabled(IsaExtension ext);
// Number of extensions this build knows (0 off x86-64), their names, and whether `level` has
// kernels for extension `ext` and this CPU runs it.
int isa_extension_count();
const char* isa_extension_name(int ext);
bool isa_extension_supported(int level, int ext);

// Whether this build selects kernels at run time.
bool isa_dispatches();

// Tuning: exact alternatives a kernel takes by microarchitecture rather than by instruction set.
//   x86_float_add_accumulate: the AVX2 q8 prefill tiles (gemm_q8_6x16_avx2, gemm_q8_8x4l_6x16_avx2)
//   add their int32 madd results with vaddps on the bit patterns instead of vpaddd: their operands
//   are offset to be non-negative, and non-negative int32 below 2^24 read as floats (denormal or
//   the lowest binade) add exactly, giving the integer sum's bits. On AMD Zen 4 a vpaddd fed by a
//   madd measured 5 cycles per 8 madds, vaddps 4 (the float adds have pipes of their own); Intel
//   cores add floats on the multiply ports. Default: on for AMD and Hygon CPUs, off elsewhere;
//   the environment variable EINFER_X86_FADD=0|1 overrides it (read once). The kernels fall back to
//   vpaddd whenever MXCSR flushes denormals (DAZ or FTZ, e.g. a -ffast-math host program).
enum class IsaTuning : unsigned { x86_float_add_accumulate = 1u };
bool isa_tuning_enabled(IsaTuning tuning);
// Sets a tuning for this process (tests and benchmarks compare both forms); not synchronized with
// kernels running on other threads.
void isa_set_tuning(IsaTuning tuning, bool on);

}  // namespace einfer
