// TensorView: a non-owning, strided view of a tensor somebody else's memory holds.
//
// Shapes and strides are in elements (not bytes), rank <= kMaxRank. A view never allocates or
// frees; the arena, a model file or the caller owns the bytes.
//
// Group-quantized views (q8, q4) are always row-major over their logical shape [..., K], quantized
// along the last axis K in groups of `group_size` (the last group of a row may be shorter):
//   values: rows x quant_row_bytes(dtype, K) bytes at `data` (q4: element 2i low nibble, 2i+1 high,
//           stored as unsigned u, value (u - 8) * scale; q8: signed int8, value q * scale)
//   scales: rows x ceil(K / group_size) float32 at `scales`
// Their `strides` describe the logical element layout and are always contiguous. A 2-D q8/q4
// weight may instead be in an interleaved `layout` (runtime/layout.h): one region of blocks at
// `data` with the scales inside them, `scales` null; its shape and strides stay the logical
// [N, K] ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "runtime/dtype.h"
#include "runtime/layout.h"

namespace einfer {

inline constexpr int kMaxRank = 8;

struct TensorView {
  DType dtype = DType::f32;
  int32_t rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};  // in elements
  void* data = nullptr;
  const float* scales = nullptr;             // quantized types only
  int32_t group_size = 0;                    // quantized types only
  WeightLayout layout = WeightLayout::rows;  // q8/q4 matrices only

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int i = rank - 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != expected) return false;
      expected *= shape[i];
    }
    return true;
  }
  float* f32() const { return static_cast<float*>(data); }
};

// Row-major strides for `shape`.
inline void set_contiguous_strides(TensorView& v) {
  int64_t s = 1;
  for (int i = v.rank - 1; i >= 0; --i) {
    v.strides[i] = s;
    s *= v.shape[i];
  }
}

// A contiguous view over `data` with the given shape (rank = shape.size(), must be <= kMaxRank).
inline TensorView make_view(DType dtype, void* data, std::initializer_list<int64_t> shape) {
  TensorView v;
  v.dtype = dtype;
  v.data = data;
  for (int64_t d : shape) {
    if (v.rank == kMaxRank) break;
    v.shape[v.rank++] = d;
  }
  set_contiguous_strides(v);
  return v;
}

inline TensorView make_view(DType dtype, void* data, const int64_t* shape, int rank) {
  TensorView v;
  v.dtype = dtype;
  v.data = data;
  v.rank = rank < 0 ? 0 : (rank > kMaxRank ? kMaxRank : rank);
  for (int i = 0; i < v.rank; ++i) v.shape[i] = shape[i];
  set_contiguous_strides(v);
  return v;
}

// Bytes of one quantized row of K elements (q8: K, q4: ceil(K/2); GGUF blocks: whole blocks, K
// must be a multiple of gguf_block_elems); plain types: K * dtype_size.
constexpr size_t quant_row_bytes(DType dtype, int64_t k) {
  if (dtype_is_gguf_block(dtype))
    return static_cast<size_t>(k / gguf_block_elems(dtype)) * gguf_block_bytes(dtype);
  return dtype == DType::q4 ? static_cast<size_t>((k + 1) / 2)
                            : static_cast<size_t>(k) * dtype_size(dtype);
}

// Number of scale groups in a row of K elements.
constexpr int64_t quant_groups(int64_t k, int32_t group_size) {
  return group_size > 0 ? (k + group_size - 1) / group_size : 0;
}

}  // namespace einfer
