// Helium / MVE kernels of the int8 KV rows (kernels/attention/attention_i8_rows.h), 8 (dot) or 4
// (axpy) lanes per step, the last partial step tail-predicated, so rows of any length read nothing
// past their end:
//   dot_i16_i8: VLDRB.S16 widens 8 key bytes to int16 lanes, VMLADAVA.S16 multiplies them with
//     8 query lanes and adds the products to the int32 sum (exact: equals the scalar twin);
//   axpy_f32_i8: VLDRB.S32 widens 4 bytes to int32 lanes, VCVT makes them float and VFMA adds
//     w * x to y, the same fused multiply-add per element as the scalar twin (GCC contracts its
//     y[d] += w * x[d] to VFMA), so the results are bit-identical.
#include "kernels/attention/attention_i8_rows.h"

#if EINFER_HAS_MVE
#include <arm_mve.h>

namespace einfer::attention_detail {

int32_t dot_i16_i8_mve(const int16_t* a, const int8_t* b, int32_t n, int32_t acc) {
  int32_t d = 0;
  for (; d + 8 <= n; d += 8) acc = vmladavaq_s16(acc, vldrhq_s16(a + d), vldrbq_s16(b + d));
  if (d < n) {  // predicated only here: a VPST per instruction would double the loop
    const mve_pred16_t live = vctp16q(static_cast<uint32_t>(n - d));
    acc = vmladavaq_s16(acc, vldrhq_z_s16(a + d, live), vldrbq_z_s16(b + d, live));
  }
  return acc;
}

void axpy_f32_i8_mve(float w, const int8_t* x, int32_t n, float* y) {
  int32_t d = 0;
  for (; d + 4 <= n; d += 4) {
    vst1q_f32(y + d, vfmaq_n_f32(vld1q_f32(y + d), vcvtq_f32_s32(vldrbq_s32(x + d)), w));
  }
  if (d < n) {
    const mve_pred16_t live = vctp32q(static_cast<uint32_t>(n - d));
    const float32x4_t xf = vcvtq_f32_s32(vldrbq_z_s32(x + d, live));
    vstrwq_p_f32(y + d, vfmaq_n_f32(vldrwq_z_f32(y + d, live), xf, w), live);
  }
}

}  // namespace einfer::attention_detail

#endif
