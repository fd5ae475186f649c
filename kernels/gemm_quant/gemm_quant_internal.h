// Private to kernels/gemm_quant/: the pieces of matmul_f32_quant (kernels/gemm_quant/gemm_quant.h)
// shared by its scalar and SIMD microkernels, exposed so tests can check each piece against the
// others.
//
// Activation side: each row of A is quantized per group to int8 (scale = absmax / 127, round to
// nearest even), into a row of kpad = round_up(k, 64) bytes whose padding is zero, so SIMD kernels
// always read whole 32-element chunks (NEON) or 64-element blocks (AVX2) of activations. For q4
// weights the SIMD kernels want the elements in the order in which the nibbles of weight bytes
// unpack: NEON stores each 32-chunk as its 16 even then its 16 odd elements
// (permute_chunks_even_odd), AVX2 each 64-block as its 32 even then its 32 odd elements
// (permute_blocks_even_odd64), and AVX2 also wants 8 * (sum of each 32-chunk) to undo the +8
// offset of unsigned nibbles (chunk_sums_times8).
//
// Weight side: row j of W holds quant_row_bytes(dtype, k) bytes and `groups` scales. A group's
// int32 dot product is exact; it is scaled once per group by sa[i][g] * sw[j][g].
#pragma once

#include <cfloat>
#include <cstddef>
#include <cstdint>

#include "kernels/simd/simd.h"
#include "runtime/layout.h"

namespace einfer::quant_detail {

inline constexpr int64_t kChunk = 32;  // elements per SIMD chunk (one ymm of int8, two NEON q-regs)
inline constexpr int64_t kBlock = 64;  // activation row padding: two chunks (AVX2 q4 step)

constexpr int64_t padded_k(int64_t k) {
  return (k + kBlock - 1) / kBlock * kBlock;
}

// The scale of a group of activations whose largest magnitude is amax: amax / 127, or 0 when that
// would not be a normal float (amax < 127 FLT_MIN: the group quantizes to zeros). 1 / scale then
// stays finite, so every x * (1 / scale) is a finite number within [-127, 127] (a rounding step
// past it) that every twin rounds and clamps alike; a denormal scale made it inf or NaN, which
// each ISA converts to an integer its own way.
inline constexpr float kActivationAmaxMin = 127.f * FLT_MIN;
inline float activation_scale(float amax) {
  return amax >= kActivationAmaxMin ? amax / 127.f : 0.f;
}

// Quantizes k floats in groups of `group` into qa[0..k) (int8 in [-127, 127]) and one scale per
// group into sa. Groups of all zeros (or of magnitudes below 127 FLT_MIN) get scale 0 and zeros.
void quantize_activations_q8(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa);

// Reorder each 32-byte chunk (NEON) or 64-byte block (AVX2) of qa[0..kpad) to its even then its odd
// elements, [e0 e2 .. e1 e3 ..] (kpad a multiple of the size): the order in which the q4 kernels
// unpack low and high nibbles. The Cortex-M DSP q4 kernel wants the same per 8-byte block.
void permute_chunks_even_odd(int8_t* qa, int64_t kpad);
void permute_blocks_even_odd64(int8_t* qa, int64_t kpad);
void permute_even_odd8(int8_t* qa, int64_t kpad);

// csum[c] = 8 * sum of qa[32c .. 32c + 32) for the kpad / 32 chunks of a natural-order row.
void chunk_sums_times8(const int8_t* qa, int64_t kpad, int32_t* csum);

// How the quantized activations lie in the scratch for the kernel that reads them.
//   natural    row i at qa + i * kpad, its scales at sa + i * groups (the scalar and generic
//   kernels) even_odd   natural rows with each chunk / block reordered (rows-layout q4 SIMD
//   kernels, above) single, quad, pair: blocked, for the interleaved layouts' SIMD kernels. Tokens
//   go in blocks of 1, 4 or 2 (act_block_rows), and each (token block, group) is one block of
//   act_block_bytes at qa + (block * groups + g) * act_block_bytes: a header, then the block's
//   values of the group, zero-padded past k (and zero tokens past m). q4 needs isum = dot(u, a) - 8
//   sum(a) for the unsigned nibbles u: the header's asum8 = -8 * sum(a) is the group's starting
//   int32 sum (0 for q8); asum128 = -128 * sum(a) starts the x86 VNNI q8 GEMV's (w + 128).
//     single  header [sa, asum8, asum128, 0], values [G]                (GEMV)
//     quad    header [sa x 4][asum8 of each token in 4 lanes: 4 x 4], values [G/16][4 tokens][16]
//             (sdot GEMM, lane = row: one 64-byte load starts the 4 tokens' row sums)
//     pair    header [sa0 sa0 sa1 sa1][asum8: same], values [G/8][2 tokens][8]  (SMMLA operand)
//   wide16  natural rows as a + 128 in int16 (1..255), row i at (int16_t*)qa + i *
//           wide16_stride(kpad), zero past k; in csum's row i, per group g, wide16_offset(G) +
//           128 * sum(a + 128) (a group's, not a chunk's): the AVX2 q8 prefill tiles, whose madd
//           takes int16 pairs of non-negative operands (x86-64 only).
enum class ActOrder : uint8_t { natural, even_odd, single, quad, pair, wide16 };

// Row stride (int16 elements) of ActOrder::wide16: kpad and 32, so that rows a power of two long
// do not sit 4 KiB apart (loads of the same L1 set, measured slower on Zen 4).
constexpr int64_t wide16_stride(int64_t kpad) {
  return kpad + 32;
}
// The offset T of a group's starting sums in the AVX2 q8 prefill tiles: 128 * 128 per element, so
// that T - 128 sum(w) >= 0 (gemm_q8_q4_3x16_avx2.cpp). The wide16 group sums hold T + 128 sum(a +
// 128).
constexpr int32_t wide16_offset(int32_t group) {
  return 16384 * group;
}
// A group's wide16 sum from its n int8 activations summing to sum_a: T + 128 sum(a + 128).
constexpr int32_t wide16_group_sum(int32_t group, int32_t sum_a, int32_t n) {
  return wide16_offset(group) + 128 * (sum_a + 128 * n);
}

// Whether this build has SIMD kernels for interleaved layouts (and so the blocked orders):
// AArch64 and x86 AVX2 (the 8x4 GEMVs read the single order; x86's 8x4 prefill tiles read natural
// rows). Elsewhere (armv7, Cortex-M) the generic kernel runs every layout from natural rows and the
// blocked code is left out (firmware size).
#if EINFER_HAS_SIMD && (defined(__aarch64__) || defined(__AVX2__))
#define EINFER_LAYOUT_SIMD 1
#else
#define EINFER_LAYOUT_SIMD 0
#endif
// The scratch is sized alike by every level of one build (EINFER_SIMD, not the level's
// EINFER_HAS_SIMD), so any level's kernels fit in scratch another level sized: room for the blocked
// orders where a level may have those kernels, for the AVX2 chunk sums on x86-64.
#if defined(EINFER_SIMD) && EINFER_SIMD && (defined(__aarch64__) || defined(__x86_64__)) && \
    EINFER_LAYOUTS
#define EINFER_BLOCKED_SCRATCH 1
#else
#define EINFER_BLOCKED_SCRATCH 0
#endif
#if defined(EINFER_SIMD) && EINFER_SIMD && defined(__x86_64__)
#define EINFER_CHUNK_SUM_SCRATCH 1
#else
#define EINFER_CHUNK_SUM_SCRATCH 0
#endif

constexpr int act_block_rows(ActOrder o) {
  return o == ActOrder::quad ? 4 : o == ActOrder::pair ? 2 : 1;
}
constexpr int64_t act_block_bytes(ActOrder o, int32_t group) {
  switch (o) {
    case ActOrder::single:
      return 16 + group;
    case ActOrder::quad:
      return 80 + 4 * int64_t{group};
    case ActOrder::pair:
      return 32 + 2 * int64_t{group};
    default:
      return 0;
  }
}
// Groups the blocked orders' kernels take: whole 16-byte chunks (q4: whole 32-value pairs of
// them, a byte's two nibbles), at most 256 (a group is staged on the stack while it is laid out).
constexpr bool blocked_group(bool q4, int32_t group) {
  return group % (q4 ? 32 : 16) == 0 && group <= 256;
}

// Everything a microkernel needs for C[m, n] = A_q · W_qᵀ after the activations are quantized.
// Interleaved weight layouts (runtime/layout.h): `w` is the first tile's first block, tiles
// w_tile_bytes apart, `sw` null (the scales are in the blocks); the kernel computes whole tiles
// and stores the n columns only.
struct QuantGemm {
  const int8_t* qa;     // m rows of kpad int8 (layout per weight dtype, see above)
  const float* sa;      // m rows of `groups` activation scales
  const int32_t* csum;  // m rows of kpad / 32 chunk sums (chunk_sums_times8), x86 SIMD only
  const uint8_t* w;     // n rows of w_row_bytes
  const float* sw;      // n rows of `groups` weight scales
  size_t w_row_bytes;
  int64_t m, n, k, kpad, groups;
  int32_t group;
  float* c;
  int64_t ldc;
  WeightLayout layout = WeightLayout::rows;
  size_t w_tile_bytes = 0;  // interleaved layouts: bytes of one tile (layout_tile_bytes)
  ActOrder order = ActOrder::natural;
  int64_t act_block_bytes = 0;  // blocked orders: bytes of one (token block, group) block
};

// The float step of the kernels that promise results bit-identical to their scalar twins (the
// interleaved layouts' kernels, gemm_q8_q4_interleaved_scalar.cpp): acc + float(isum) * s, fused
// where every Arm core einfer targets has a fused multiply-add (AArch64, VFPv4 / FPv5 / MVE),
// with two roundings elsewhere (x86: the baseline level has no FMA; the files using this are
// compiled with -ffp-contract=off so no level fuses it behind our back).
inline float group_fma(float acc, int32_t isum, float s) {
#if defined(__aarch64__) || defined(__ARM_FEATURE_FMA)
  return __builtin_fmaf(static_cast<float>(isum), s, acc);
#else
  return acc + static_cast<float>(isum) * s;
#endif
}

// The scalar twin of the x86 decode GEMVs gemv_q8/q4_1x4_{avx2,avx512vnni} (groups of 32, rows
// layout, m == 1): their float operations in their order, from natural-order activations
// (gemm_q8_q4_1x4_lanes_scalar.cpp). Tests only: scalar::matmul_f32_quant_gemv_lanes.
void gemv_q8_1x4_lanes_scalar(const QuantGemm& p);
void gemv_q4_1x4_lanes_scalar(const QuantGemm& p);

// Whether the SIMD kernels of this build handle this group size (else the scalar int path runs).
bool simd_supports_group(bool q4, int32_t group);

#if EINFER_HAS_SIMD && defined(__AVX2__)
// quantize_activations_q8 in AVX2 lanes (quantize_act_q8_avx2.cpp), same bytes and scales.
void quantize_activations_q8_avx2(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa);
// The same values for ActOrder::wide16 (group <= 1024): a + 128 as int16 into dst[0, k), and per
// group gsum[g] = wide16_offset(group) + 128 * sum(a + 128); whole groups of a multiple of 8 in one
// pass fewer than quantizing to int8 and widening.
void quantize_activations_q8_wide16_avx2(const float* a, int64_t k, int32_t group, int16_t* dst,
                                         float* sa, int32_t* gsum);
// GEMV for groups of 32, 4 weight rows per pass: q8 when K is not whole blocks of 8 groups, q4.
void gemv_q8_1x4_avx2(const QuantGemm& p);
void gemv_q4_1x4_avx2(const QuantGemm& p);
// GEMV (m == 1; GEMM shapes go to the 4x2 kernels).
void gemm_q8_4x4_avx2(const QuantGemm& p);
void gemm_q4_4x4_avx2(const QuantGemm& p);
// Prefill GEMM (m > 1): 4 x 2 tiles of float accumulators, no horizontal add in the K loop.
void gemm_q8_4x2_avx2(const QuantGemm& p);
void gemm_q4_4x2_avx2(const QuantGemm& p);
// Prefill GEMMs bit-identical to the scalar twin (gemm_q8_q4_3x16_avx2.cpp): q4 3 activation rows
// x 16 weight rows in ymm lanes, q8 6 x 16 as int16 pairs (activations in ActOrder::wide16);
// groups multiple of 32 up to 1024 (gemm_3x16_avx2_supports); q4 reads the chunk sums (csum) of
// the rows.
bool gemm_3x16_avx2_supports(const QuantGemm& p);
void gemm_q4_3x16_avx2(const QuantGemm& p);
void gemm_q8_6x16_avx2(const QuantGemm& p);
#endif
#if EINFER_HAS_SIMD && defined(__AVX2__)
// The same prefill GEMMs on the 8x4 weight layout (the tiles packed from its blocks without
// transposes, activations in natural order), bit-identical to gemm_q8/q4_interleaved_scalar;
// the groups of gemm_3x16_avx2_supports.
void gemm_q8_8x4l_6x16_avx2(const QuantGemm& p);
void gemm_q4_8x4l_3x16_avx2(const QuantGemm& p);
#endif
#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)
// The same prefill GEMM on AVX-512 VNNI (vpdpbusd on ymm), compiled for it whatever the build's
// target; call only when isa_extension_enabled(IsaExtension::avx512vnni) (kernels/isa/isa.h).
void gemm_q8_4x4_avx512vnni(const QuantGemm& p);
// The decode GEMVs of gemv_q8/q4_1x4_avx2 with vpdpbusd (same int32 group sums), groups of 32.
void gemv_q8_1x4_avx512vnni(const QuantGemm& p);
void gemv_q4_1x4_avx512vnni(const QuantGemm& p);
void gemm_q4_4x4_avx512vnni(const QuantGemm& p);
// The q8 and q4 prefill GEMMs on AMX tiles (gemm_q8_q4_16x16_amx.cpp): groups of 32 or 64 dividing
// k, k small enough for their stack buffers (gemm_amx_supports); call only when
// isa_extension_enabled(IsaExtension::amx).
bool gemm_amx_supports(const QuantGemm& p, bool q4);
// Prefill GEMMs bit-identical to the scalar twin (gemm_q8_q4_8x16_avx512vnni.cpp): 8 activation
// rows x 16 weight rows in zmm lanes, groups multiple of 32 up to 1024 (..._supports), q8 and q4
// both reading the chunk sums (csum) of the rows.
bool gemm_8x16_avx512vnni_supports(const QuantGemm& p);
void gemm_q8_8x16_avx512vnni(const QuantGemm& p);
void gemm_q4_8x16_avx512vnni(const QuantGemm& p);
void gemm_q8_16x16_amx(const QuantGemm& p);
void gemm_q4_16x16_amx(const QuantGemm& p);
#endif
#if EINFER_HAS_SIMD && defined(__AVX2__) && defined(__x86_64__) && defined(__GNUC__) && \
    !defined(__clang__)
// The 8x16 AVX-512 VNNI prefill GEMMs on the 8x4 weight layout (as the AVX2 ones above; the groups
// of gemm_8x16_avx512vnni_supports); call only when
// isa_extension_enabled(IsaExtension::avx512vnni).
void gemm_q8_8x4l_8x16_avx512vnni(const QuantGemm& p);
void gemm_q4_8x4l_8x16_avx512vnni(const QuantGemm& p);
#endif
#if EINFER_HAS_SIMD && defined(__ARM_NEON)
void gemm_q8_4x1_neon(const QuantGemm& p);  // sdot with __ARM_FEATURE_DOTPROD, else vmull/vpadal
void gemm_q4_4x1_neon(const QuantGemm& p);
#endif
#if EINFER_HAS_SIMD && defined(__aarch64__)
// quantize_activations_q8 in NEON lanes (quantize_act_q8_neon.cpp), same bytes and scales.
void quantize_activations_q8_neon(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa);
// One group of it (n <= group values, group a multiple of 16) straight into a blocked order: the
// group's values in chunks of `chunk` (8 or 16) bytes, `stride` apart, zero past n. Returns the
// scale; *sum gets the sum of the group's int8 values.
float quantize_group_chunked_neon(const float* x, int32_t n, int32_t group, int chunk,
                                  int64_t stride, int8_t* dst, int32_t* sum);
#endif
// The interleaved layouts' SIMD kernels (runtime/layout.h), each bit-identical to
// gemm_q8/q4_interleaved_scalar. GEMV (m == 1) reads ActOrder::single, the GEMMs quad (4x4) or
// pair (4x8) blocks; groups with blocked_group only.
#if EINFER_HAS_SIMD && defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
void gemv_q8_4x4_dotprod(const QuantGemm& p);  // sdot, lane = row
void gemv_q4_4x4_dotprod(const QuantGemm& p);
void gemm_q8_4x4_dotprod(const QuantGemm& p);
void gemm_q4_4x4_dotprod(const QuantGemm& p);
#elif EINFER_HAS_SIMD && defined(__aarch64__)
void gemv_q8_4x4_neon(const QuantGemm& p);  // smull/smlal + sadalp (Cortex-A53/A72)
void gemv_q4_4x4_neon(const QuantGemm& p);
void gemm_q8_4x4_neon(const QuantGemm& p);
void gemm_q4_4x4_neon(const QuantGemm& p);
#endif
#if EINFER_HAS_SIMD && defined(__AVX2__)
// 8x4 layout decode GEMVs (gemv_8x4_driver.h): 8 rows in ymm lanes, maddubs (AVX2) or vpdpbusd
// (AVX-512 VNNI: call only when isa_extension_enabled(IsaExtension::avx512vnni); GCC builds).
void gemv_q8_8x4_avx2(const QuantGemm& p);
void gemv_q4_8x4_avx2(const QuantGemm& p);
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
void gemv_q8_8x4_avx512vnni(const QuantGemm& p);
void gemv_q4_8x4_avx512vnni(const QuantGemm& p);
#endif
#endif
#if EINFER_HAS_SIMD && defined(__aarch64__) && defined(__ARM_FEATURE_MATMUL_INT8)
void gemv_q8_4x8_i8mm(const QuantGemm& p);  // smmla, 2 rows x 8 bytes per operand
void gemv_q4_4x8_i8mm(const QuantGemm& p);
void gemm_q8_4x8_i8mm(const QuantGemm& p);
void gemm_q4_4x8_i8mm(const QuantGemm& p);
#endif

// Cortex-M kernels (kernels/simd/simd.h; these builds have no xsimd SIMD): Helium on M55/M85,
// else the DSP extension's SIMD32 on M4/M7/M33. mcu_supports_group says whether this build has
// one for the weight dtype and group size (false on every other target): q8 takes groups that
// are multiples of 4, q4 multiples of 8 (DSP, activations in permute_even_odd8 order) or of 32
// (MVE, natural order).
bool mcu_supports_group(bool q4, int32_t group);
#if EINFER_HAS_MVE
// quantize_activations_q8 in Helium lanes (quantize_act_q8_mve.cpp), same bytes and scales.
void quantize_activations_q8_mve(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa);
void gemm_q8_4x1_mve(const QuantGemm& p);
void gemm_q4_4x1_mve(const QuantGemm& p);
#elif EINFER_HAS_DSP
void gemm_q8_2x1_dsp(const QuantGemm& p);
void gemm_q4_2x1_dsp(const QuantGemm& p);
#endif

// Scalar int path on natural-order activations (the no-SIMD path and test reference).
void gemm_q8_1x1_scalar(const QuantGemm& p);
void gemm_q4_1x1_scalar(const QuantGemm& p);
// The generic kernel of every interleaved layout (natural-order activations, kpad >= groups *
// group): the scalar twin of the layouts' SIMD kernels and the path of CPUs without one.
void gemm_q8_interleaved_scalar(const QuantGemm& p);
void gemm_q4_interleaved_scalar(const QuantGemm& p);

}  // namespace einfer::quant_detail
