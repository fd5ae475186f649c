#include "tools/common/layout_report.h"

#include <cstring>

#include "kernels/gemm_quant/gemm_quant.h"
#include "kernels/gguf/gguf.h"
#include "kernels/isa/isa.h"
#include "runtime/format.h"
#include "tools/common/text.h"

namespace einfer::tools {

WeightLayout image_layout(const Model& model, bool* uniform, DType* interleaved_dtype) {
  uint32_t count[kWeightLayoutCount] = {};
  if (interleaved_dtype) *interleaved_dtype = model.config.weight_dtype;
  bool seen = false;
  for (uint32_t i = 0; i < model.tensor_count; ++i) {
    TensorRecord r;
    std::memcpy(&r, static_cast<const unsigned char*>(model.tensor_table) + i * sizeof r, sizeof r);
    // An untied embedding is only looked up by row: einfer-pack keeps it in rows.
    const bool gathered_only = r.role == static_cast<uint32_t>(TensorRole::token_embedding) &&
                               !model.config.tied_classifier;
    // GGUF images: the K-quant matrices that have an interleaved layout (q4_k, q6_k).
    const DType dt = static_cast<DType>(r.dtype);
    const bool kquant =
        dtype_is_gguf_block(dt) && layout_fit_error(dt, WeightLayout::i4x4, 0) == nullptr;
    if ((dtype_is_quantized(dt) || kquant) && r.rank == 2 && !gathered_only &&
        r.layout < kWeightLayoutCount) {
      ++count[r.layout];
      // The first interleaved matrix's dtype names the kernels (a GGUF image mixes block types).
      if (interleaved_dtype && !seen && r.layout != 0) *interleaved_dtype = dt;
      seen = seen || r.layout != 0;
    }
  }
  uint32_t best = 0, kinds = 0;
  for (uint32_t l = 0; l < kWeightLayoutCount; ++l) {
    if (count[l] > 0) ++kinds;
    if (count[l] > count[best]) best = l;
  }
  if (uniform) *uniform = kinds <= 1;
  return static_cast<WeightLayout>(best);
}

std::string describe_layout(const Model& model) {
  bool uniform = true;
  DType dt = DType::f32;
  const WeightLayout l = image_layout(model, &uniform, &dt);
  const ModelConfig& c = model.config;
  bool fast = true;
  const bool gguf = dtype_is_gguf_block(c.weight_dtype);
  const char* kernel =
      gguf ? matmul_gguf_kernel_name(dt, l, 1, &fast)
           : matmul_quant_kernel_name(c.weight_dtype, l, c.dim, c.group_size, 1, &fast);
  const char* prefill =
      gguf ? matmul_gguf_kernel_name(dt, l, 64, nullptr)
           : matmul_quant_kernel_name(c.weight_dtype, l, c.dim, c.group_size, 64, nullptr);
  std::string out = layout_name(l);
  if (gguf && layout_interleaved(l))
    out += fmt(" (its interleaved block matrices; kernel named for %s)", dtype_name(dt));
  if (!uniform) out += " (most matrices; some in another layout)";
  out += fmt("; on this CPU (isa %s): %s, prefill %s", isa_name(), kernel, prefill);
  if (!fast)
    out +=
        fmt(" -- no fast kernel for layout %s here: correct, slower (einfer-pack --target "
            "picks the layout for the device)",
            layout_name(l));
  return out;
}

}  // namespace einfer::tools
