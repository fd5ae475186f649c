#include "models/embedding.h"

#include <cstring>

#include "kernels/gguf/gguf.h"
#include "kernels/quant/quant.h"

namespace einfer {

void embedding_row(const TensorView& table, int64_t row, float* out) {
  const int64_t d = table.shape[1];
  const unsigned char* base = static_cast<const unsigned char*>(table.data);
  switch (table.dtype) {
    case DType::f32:
      std::memcpy(out, base + static_cast<size_t>(row) * d * 4, static_cast<size_t>(d) * 4);
      break;
    case DType::f16: {
      const uint16_t* r = reinterpret_cast<const uint16_t*>(base) + static_cast<size_t>(row) * d;
      for (int64_t i = 0; i < d; ++i) out[i] = f16_to_f32(r[i]);
      break;
    }
    case DType::bf16: {
      const uint16_t* r = reinterpret_cast<const uint16_t*>(base) + static_cast<size_t>(row) * d;
      for (int64_t i = 0; i < d; ++i) out[i] = bf16_to_f32(r[i]);
      break;
    }
    case DType::q8:
    case DType::q4:
      dequantize_weight_row(table, row, out);  // any layout (kernels/quant/quant.h)
      break;
    default:
      if (dtype_is_gguf_block(table.dtype)) {    // decode just the one row needed
        if (layout_interleaved(table.layout)) {  // a tied GGUF block table packed in 4x4
          dequantize_row_gguf_view(table, row, out);
          break;
        }
        dequantize_row_gguf(table.dtype, base + row * quant_row_bytes(table.dtype, d), d, out);
        break;
      }
      std::memset(out, 0, static_cast<size_t>(d) * 4);
  }
}

}  // namespace einfer
