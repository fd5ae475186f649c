// Embedding lookup: one row of a token (or position) table of any weight dtype, as f32.
#pragma once

#include <cstdint>

#include "runtime/tensor.h"

namespace einfer {

// out[d] = row `row` of table [rows, d] (f32, f16, bf16, q8, q4 or a GGUF block type), widened to
// f32; only that row is decoded. The caller checks row < rows.
void embedding_row(const TensorView& table, int64_t row, float* out);

}  // namespace einfer
