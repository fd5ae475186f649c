// Internal to the GGUF multi-row kernels (gemm_gguf_q8_4x4_avx2.cpp, gemm_gguf_q8_4x4_neon.cpp):
// the part every ISA shares, from one ISA's kernel template and per-type classes to the RowsFn /
// DotFn entries (gguf_quant_internal.h). Isa provides `kernel<T, NA>(w, act, act_bytes, nb, out)`
// (NA = 1, 2, 4 activation rows) and the type classes K2 (q2_k), K3 (q3_k), K45<five> (q4_k,
// q5_k), K6 (q6_k) and Legacy32<dtype> (the 32-element types). Each ISA file instantiates it with
// its own internal types.
#pragma once

#include "kernels/gguf/gguf_quant_internal.h"

namespace einfer::gguf_detail {

template <class Isa>
struct RowsTable {
  // na activation rows: 4 at once, 3 as 2 + 1 (each pair gets the same operations either way).
  template <class T>
  static void rows(const uint8_t* const* w, const void* act, size_t act_bytes, int na, int64_t nb,
                   float* out) {
    if (na >= 4) {
      Isa::template kernel<T, 4>(w, act, act_bytes, nb, out);
    } else if (na >= 2) {
      Isa::template kernel<T, 2>(w, act, act_bytes, nb, out);
      if (na == 3)
        Isa::template kernel<T, 1>(w, static_cast<const uint8_t*>(act) + 2 * act_bytes, 0, nb,
                                   out + 8);
    } else {
      Isa::template kernel<T, 1>(w, act, act_bytes, nb, out);
    }
  }

  // One row against one activation row (the DotFn interface): the 4x1 kernel on a repeated row.
  template <class T>
  static float dot_one(const uint8_t* w, const void* act, int64_t nb) {
    const uint8_t* w4[4] = {w, w, w, w};
    float out[4];
    Isa::template kernel<T, 1>(w4, act, 0, nb, out);
    return out[0];
  }

  template <class T>
  static constexpr KernelPair pair() {
    return {rows<T>, dot_one<T>};
  }

  static constexpr KernelPair for_type(DType dtype) {
    switch (dtype) {
      case DType::q2_k:
        return pair<typename Isa::K2>();
      case DType::q3_k:
        return pair<typename Isa::K3>();
      case DType::q4_k:
        return pair<typename Isa::template K45<false>>();
      case DType::q5_k:
        return pair<typename Isa::template K45<true>>();
      case DType::q6_k:
        return pair<typename Isa::K6>();
      case DType::q8_0:
        return pair<typename Isa::template Legacy32<DType::q8_0>>();
      case DType::q4_0:
        return pair<typename Isa::template Legacy32<DType::q4_0>>();
      case DType::q4_1:
        return pair<typename Isa::template Legacy32<DType::q4_1>>();
      case DType::q5_0:
        return pair<typename Isa::template Legacy32<DType::q5_0>>();
      case DType::q5_1:
        return pair<typename Isa::template Legacy32<DType::q5_1>>();
      default:
        return {nullptr, nullptr};
    }
  }
};

}  // namespace einfer::gguf_detail
