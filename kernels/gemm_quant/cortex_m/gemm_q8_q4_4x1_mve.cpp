// Helium / MVE (Cortex-M55/M85) microkernels of the quantized GEMM
// (kernels/gemm_quant/gemm_quant.h): C[i, j] = sum over groups g of isum(i, j, g) * (sa[i][g] *
// sw[j][g]) with the same exact int32 group sums and the same float sequence as the scalar twins
// (gemm_q8_q4_1x1_scalar.cpp), so the results are bit-identical.
//
// Tiles of 4 weight rows x 1 activation row: each activation vector is loaded once for 4 rows.
// VMLADAVA.S8 multiplies 16 int8 lanes and adds all 16 products to a general-purpose register, so
// a group's int32 sum needs no horizontal step:
//   q8: per 16 elements a row costs one VLDRB and one VMLADAVA;
//   q4: 16 weight bytes hold 32 elements, the low nibbles the even ones and the high nibbles the
//       odd ones: VAND / VSHR split them and VSUB takes the +8 offset off; VLD20/VLD21
//       deinterleave the natural-order activations into the matching even and odd vectors.
// Groups are walked in steps of 16 (q8) or 32 (q4) elements; a step that ends inside a group's
// last vector uses tail predication (VCTP: lanes past the end load as zero and read no memory),
// so a weight row is never read past its end; the activation row is zero-padded to kpad (a
// multiple of 64).
#include <cstdint>

#include "kernels/gemm_quant/cortex_m/gemm_q8_q4_mcu_driver.h"
#include "kernels/simd/simd.h"

#if EINFER_HAS_MVE
#include <arm_mve.h>

namespace einfer::quant_detail {

namespace {

// q8 step: 16 elements.
struct Q8 {
  static constexpr int32_t kStep = 16;
  static constexpr int32_t row_bytes(int32_t n) { return n; }
  struct Act {
    int8x16_t a;
  };
  static Act act(const int8_t* a) { return {vldrbq_s8(a)}; }
  // A step with n < 16 elements left in its group: a group that is not a multiple of 16 may end
  // within the last 16 bytes of the activation row, so the lanes past it are not read either.
  static Act act_tail(const int8_t* a, int32_t n) {
    return {vldrbq_z_s8(a, vctp8q(static_cast<uint32_t>(n)))};
  }
  static int32_t dot(const uint8_t* row, int32_t e, const Act& a, int32_t s) {
    return vmladavaq_s8(s, vldrbq_s8(reinterpret_cast<const int8_t*>(row) + e), a.a);
  }
  // The last step of a group or row: only its end - e elements count.
  static int32_t dot_tail(const uint8_t* row, int32_t e, int32_t end, const Act& a, int32_t s) {
    const mve_pred16_t live = vctp8q(static_cast<uint32_t>(end - e));
    return vmladavaq_s8(s, vldrbq_z_s8(reinterpret_cast<const int8_t*>(row) + e, live), a.a);
  }
};

// q4 step: 32 elements, 16 weight bytes.
struct Q4 {
  static constexpr int32_t kStep = 32;
  static constexpr int32_t row_bytes(int32_t n) { return n / 2; }  // groups: multiples of 32
  struct Act {
    int8x16x2_t even_odd;
  };
  static Act act(const int8_t* a) { return {vld2q_s8(a)}; }
  // Groups are multiples of 32 (mve_supports_group), so a short step is the row's last and lies
  // within the padded activation row (kpad is a multiple of 64).
  static Act act_tail(const int8_t* a, int32_t) { return act(a); }
  static int32_t dot_bytes(uint8x16_t w, const Act& a, int32_t s) {
    const int8x16_t lo = vsubq_n_s8(vreinterpretq_s8_u8(vandq_u8(w, vdupq_n_u8(0x0F))), 8);
    const int8x16_t hi = vsubq_n_s8(vreinterpretq_s8_u8(vshrq_n_u8(w, 4)), 8);
    s = vmladavaq_s8(s, lo, a.even_odd.val[0]);
    return vmladavaq_s8(s, hi, a.even_odd.val[1]);
  }
  static int32_t dot(const uint8_t* row, int32_t e, const Act& a, int32_t s) {
    return dot_bytes(vldrbq_u8(row + e / 2), a, s);
  }
  // Absent bytes load as 0: nibbles 0 whose -8 meets the zero activation padding.
  static int32_t dot_tail(const uint8_t* row, int32_t e, int32_t end, const Act& a, int32_t s) {
    const mve_pred16_t live = vctp8q(static_cast<uint32_t>((end - e + 1) / 2));
    return dot_bytes(vldrbq_z_u8(row + e / 2, live), a, s);
  }
};

}  // namespace

void gemm_q8_4x1_mve(const QuantGemm& p) {
  mcu_gemm_any_group<Q8, 4>(p);
}

void gemm_q4_4x1_mve(const QuantGemm& p) {
  mcu_gemm_any_group<Q4, 4>(p);
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_MVE
