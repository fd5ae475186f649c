// Cortex-M DSP-extension (SIMD32) kernel of the int8 KV rows
// (kernels/attention/attention_i8_rows.h): the int16 query against an int8 key row, 4 elements per
// step. SXTB16 widens key bytes 0/2 and 1/3 to halfword pairs, PKHBT/PKHTB put them back in element
// order, (k0,k1) and (k2,k3), and two SMLAD multiply them with the query pairs (q0,q1), (q2,q3)
// loaded as words. Exact int32 sums, so the result equals dot_i16_i8_scalar.
#include <cstring>

#include "kernels/attention/attention_i8_rows.h"

#if EINFER_HAS_DSP && !EINFER_HAS_MVE
#include <arm_acle.h>

namespace einfer::attention_detail {

namespace {

inline uint32_t load_word(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // unaligned LDR is fine on ARMv7-M
  return v;
}

}  // namespace

int32_t dot_i16_i8_dsp(const int16_t* a, const int8_t* b, int32_t n, int32_t acc) {
  int32_t d = 0;
  for (; d + 4 <= n; d += 4) {
    const uint32_t kb = load_word(b + d);
    const uint32_t k02 = static_cast<uint32_t>(__sxtb16(static_cast<int32_t>(kb)));
    uint32_t k13;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(k13) : "r"(kb));
    const int32_t k01 = static_cast<int32_t>((k02 & 0xFFFFu) | (k13 << 16));      // PKHBT
    const int32_t k23 = static_cast<int32_t>((k02 >> 16) | (k13 & 0xFFFF0000u));  // PKHTB
    acc = __smlad(static_cast<int32_t>(load_word(a + d)), k01, acc);
    acc = __smlad(static_cast<int32_t>(load_word(a + d + 2)), k23, acc);
  }
  for (; d < n; ++d) acc += static_cast<int32_t>(a[d]) * b[d];
  return acc;
}

}  // namespace einfer::attention_detail

#endif
