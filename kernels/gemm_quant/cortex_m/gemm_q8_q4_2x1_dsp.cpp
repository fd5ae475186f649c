// Cortex-M DSP-extension (SIMD32: Cortex-M4/M7/M33) microkernels of the quantized GEMM
// (kernels/gemm_quant/gemm_quant.h): C[i, j] = sum over groups g of isum(i, j, g) * (sa[i][g] *
// sw[j][g]) with the same exact int32 group sums and the same float sequence as the scalar twins
// (gemm_q8_q4_1x1_scalar.cpp), so the results are bit-identical.
//
// Tiles of 2 weight rows x 1 activation row: each activation word is loaded and unpacked once and
// used for both rows (two rows keep every pointer and accumulator in registers; GCC spills with
// three or four). SXTB16 sign-extends bytes 0 and 2 of a word into two halfwords (bytes 1 and 3
// with a rotation by 8, one instruction), and SMLAD adds both halfword products to an int32 sum:
//   q8: a step of 4 elements costs a row LDR + 2 SXTB16 + 2 SMLAD, pairs (w0,w2)x(a0,a2) and
//       (w1,w3)x(a1,a3);
//   q4: a step of 8 elements is one weight word of 8 nibbles. Masking gives the low nibbles (the
//       even elements e0 e2 e4 e6) and the high ones (e1 e3 e5 e7) as bytes, SSUB8 takes the +8
//       offset off all four at once, and the activations are stored per 8-block as their 4 even
//       then 4 odd elements (permute_even_odd8, once per activation row), so that SXTB16 pairs
//       line up: (e0,e4)x(a0,a4), (e2,e6)x(a2,a6), (e1,e5)x(a1,a5), (e3,e7)x(a3,a7).
// A group of 32 (the packer's default) is unrolled completely. A step that would run past the end
// of a weight row (the last group of a row whose length is not a multiple of the step) reads only
// the row's bytes; the activation row is zero past k, so the extra products are 0.
#include <cstdint>
#include <cstring>

#include "kernels/gemm_quant/cortex_m/gemm_q8_q4_mcu_driver.h"
#include "kernels/simd/simd.h"

#if EINFER_HAS_DSP && !EINFER_HAS_MVE
#include <arm_acle.h>

namespace einfer::quant_detail {

namespace {

inline uint32_t load_word(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // LDR: unaligned word loads are fine on ARMv7-M/ARMv8-M
  return v;
}

// The first n (1..4) bytes at p, zero above: never reads past a weight row.
inline uint32_t load_partial(const uint8_t* p, int32_t n) {
  uint32_t v = 0;
  for (int32_t b = 0; b < n; ++b) v |= static_cast<uint32_t>(p[b]) << (8 * b);
  return v;
}

// Bytes 0 and 2 / bytes 1 and 3 of x, sign-extended to halfwords. GCC 12's arm_acle.h has no
// rotate operand for SXTB16, and a separate ROR would cost an instruction per use.
inline int32_t sx02(uint32_t x) {
  return __sxtb16(static_cast<int32_t>(x));
}
inline int32_t sx13(uint32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}

// q8 step: 4 elements, one weight word.
struct Q8 {
  static constexpr int32_t kStep = 4;
  static constexpr int32_t row_bytes(int32_t n) { return n; }
  struct Act {
    int32_t a02, a13;
  };
  static Act act(const int8_t* a) {
    const uint32_t v = load_word(a);
    return {sx02(v), sx13(v)};
  }
  // Groups are multiples of 4 (mcu_supports_group): a short step is a row's last, and a word at
  // e < k lies within the activation row padded to kpad.
  static Act act_tail(const int8_t* a, int32_t) { return act(a); }
  static int32_t dot_word(uint32_t w, const Act& a, int32_t s) {
    return __smlad(sx13(w), a.a13, __smlad(sx02(w), a.a02, s));
  }
  static int32_t dot(const uint8_t* row, int32_t e, const Act& a, int32_t s) {
    return dot_word(load_word(row + e), a, s);
  }
  static int32_t dot_tail(const uint8_t* row, int32_t e, int32_t end, const Act& a, int32_t s) {
    return dot_word(load_partial(row + e, end - e), a, s);
  }
};

// q4 step: 8 elements, one weight word; activations in even/odd order per 8-block.
struct Q4 {
  static constexpr int32_t kStep = 8;
  static constexpr int32_t row_bytes(int32_t n) { return n / 2; }  // groups: multiples of 8
  struct Act {
    int32_t a04, a26, a15, a37;
  };
  static Act act(const int8_t* a) {
    const uint32_t even = load_word(a), odd = load_word(a + 4);
    return {sx02(even), sx13(even), sx02(odd), sx13(odd)};
  }
  static Act act_tail(const int8_t* a, int32_t) { return act(a); }  // groups: multiples of 8
  static int32_t dot_word(uint32_t w, const Act& a, int32_t s) {
    const int32_t eights = 0x08080808;
    const int32_t lo = __ssub8(static_cast<int32_t>(w & 0x0F0F0F0Fu), eights);
    const int32_t hi = __ssub8(static_cast<int32_t>((w >> 4) & 0x0F0F0F0Fu), eights);
    s = __smlad(sx02(lo), a.a04, s);
    s = __smlad(sx13(lo), a.a26, s);
    s = __smlad(sx02(hi), a.a15, s);
    return __smlad(sx13(hi), a.a37, s);
  }
  static int32_t dot(const uint8_t* row, int32_t e, const Act& a, int32_t s) {
    return dot_word(load_word(row + e / 2), a, s);
  }
  // A row of odd length ends in a padding nibble; it meets the zero activation at k.
  static int32_t dot_tail(const uint8_t* row, int32_t e, int32_t end, const Act& a, int32_t s) {
    return dot_word(load_partial(row + e / 2, (end - e + 1) / 2), a, s);
  }
};

}  // namespace

void gemm_q8_2x1_dsp(const QuantGemm& p) {
  mcu_gemm_any_group<Q8, 2>(p);
}

void gemm_q4_2x1_dsp(const QuantGemm& p) {
  mcu_gemm_any_group<Q4, 2>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_DSP && !EINFER_HAS_MVE
