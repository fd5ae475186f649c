// rope_apply in xsimd (ISA-generic: AVX2, NEON64 and NEON32 builds compile it alike). The table
// path of the half_split layout rotates SIMD-width runs of pairs (x[i..], x[i+half..]) at once;
// interleaved pairs run 4 at a time on AArch64 (ld2/st2), elsewhere, like the lanes that remain
// and positions beyond the table, the scalar twin's formula (rope_scalar.cpp). Compiled with
// -ffp-contract=off like the twin: every lane does the same two multiplies and one add/subtract as
// the scalar code, so the results agree bit for bit.
#include "kernels/rope/rope.h"
#include "kernels/rope/rope_internal.h"
#include "kernels/simd/simd.h"

#if EINFER_HAS_SIMD && defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace einfer {

void rope_apply(const RopeTable& table, RopeLayout layout, float* x, int32_t n_heads, int64_t pos) {
#if EINFER_HAS_SIMD
  using Batch = xsimd::batch<float>;
  constexpr int32_t kLanes = static_cast<int32_t>(Batch::size);
  const int32_t half = table.head_dim / 2;
  if (layout == RopeLayout::half_split && pos >= 0 && pos < table.n_positions && half >= kLanes) {
    const float* c = table.cos + static_cast<size_t>(pos) * half;
    const float* s = table.sin + static_cast<size_t>(pos) * half;
    const int32_t vec_end = half / kLanes * kLanes;
    for (int32_t h = 0; h < n_heads; ++h) {
      float* a = x + static_cast<size_t>(h) * table.head_dim;
      float* b = a + half;
      int32_t i = 0;
      for (; i < vec_end; i += kLanes) {
        const Batch x0 = Batch::load_unaligned(a + i), x1 = Batch::load_unaligned(b + i);
        const Batch cv = Batch::load_unaligned(c + i), sv = Batch::load_unaligned(s + i);
        (x0 * cv - x1 * sv).store_unaligned(a + i);
        (x0 * sv + x1 * cv).store_unaligned(b + i);
      }
      for (; i < half; ++i) rope_detail::rotate_pair(a + i, b + i, c[i], s[i]);
    }
    return;
  }
#if defined(__aarch64__)
  // Interleaved pairs (llama): ld2 splits 4 pairs into their first and second elements, st2
  // interleaves them back.
  if (layout == RopeLayout::interleaved && pos >= 0 && pos < table.n_positions && half >= 4) {
    const float* c = table.cos + static_cast<size_t>(pos) * half;
    const float* s = table.sin + static_cast<size_t>(pos) * half;
    const int32_t vec_end = half / 4 * 4;
    for (int32_t h = 0; h < n_heads; ++h) {
      float* a = x + static_cast<size_t>(h) * table.head_dim;
      int32_t i = 0;
      for (; i < vec_end; i += 4) {
        const float32x4x2_t v = vld2q_f32(a + 2 * i);
        const float32x4_t cv = vld1q_f32(c + i), sv = vld1q_f32(s + i);
        float32x4x2_t r;
        r.val[0] = vsubq_f32(vmulq_f32(v.val[0], cv), vmulq_f32(v.val[1], sv));
        r.val[1] = vaddq_f32(vmulq_f32(v.val[0], sv), vmulq_f32(v.val[1], cv));
        vst2q_f32(a + 2 * i, r);
      }
      for (; i < half; ++i) rope_detail::rotate_pair(a + 2 * i, a + 2 * i + 1, c[i], s[i]);
    }
    return;
  }
#endif
#endif
  scalar::rope_apply(table, layout, x, n_heads, pos);
}

}  // namespace einfer
