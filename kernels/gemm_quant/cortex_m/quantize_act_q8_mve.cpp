// Helium / MVE twin of quantize_activations_q8 (gemm_quant_dispatch.cpp): every projection input is
// quantized to int8 per group before the GEMM, and in scalar code that cost about as much as a
// small projection's arithmetic on the Cortex-M55. Four lanes per step, the tail predicated:
// VMAXNMAV gives the group's largest |x| (exact, as the scalar max), VMUL scales by the same
// 1 / scale, VCVTN rounds to nearest with ties to even (what lrintf / VCVTR do in the default
// rounding mode), VMIN/VMAX clamp to [-127, 127] and VSTRB narrows to bytes. Same scales and
// bytes as the scalar function (test_gemm_quant_mcu.cpp), whose group loop it repeats in Helium
// lanes: one ISA per file.
#include <cstdint>

#include "kernels/gemm_quant/gemm_quant_internal.h"
#include "kernels/simd/simd.h"

#if EINFER_HAS_MVE
#include <arm_mve.h>

namespace einfer::quant_detail {

void quantize_activations_q8_mve(const float* a, int64_t k, int32_t group, int8_t* qa, float* sa) {
  for (int64_t g0 = 0, gi = 0; g0 < k; g0 += group, ++gi) {
    const int32_t n = static_cast<int32_t>(k - g0 < group ? k - g0 : group);
    const float* ag = a + g0;
    int8_t* qg = qa + g0;
    float amax = 0.f;
    int32_t e = 0;
    for (; e + 4 <= n; e += 4) amax = vmaxnmavq_f32(amax, vld1q_f32(ag + e));
    if (e < n) {  // predication only for the tail: a VPST per instruction otherwise
      const mve_pred16_t live = vctp32q(static_cast<uint32_t>(n - e));
      amax = vmaxnmavq_p_f32(amax, vldrwq_z_f32(ag + e, live), live);
    }
    const float scale = activation_scale(amax);
    const float inv = scale > 0.f ? 1.f / scale : 0.f;
    sa[gi] = scale;
    const int32x4_t hi = vdupq_n_s32(127), lo = vdupq_n_s32(-127);
    for (e = 0; e + 4 <= n; e += 4) {
      const int32x4_t r = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(ag + e), inv));
      vstrbq_s32(qg + e, vmaxq_s32(vminq_s32(r, hi), lo));
    }
    if (e < n) {
      const mve_pred16_t live = vctp32q(static_cast<uint32_t>(n - e));
      const int32x4_t r = vcvtnq_s32_f32(vmulq_n_f32(vldrwq_z_f32(ag + e, live), inv));
      vstrbq_p_s32(qg + e, vmaxq_s32(vminq_s32(r, hi), lo), live);
    }
  }
}

}  // namespace einfer::quant_detail

#endif  // EINFER_HAS_MVE
