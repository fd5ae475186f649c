#include "tools/einfer-pack/layouts.h"

#include <cstring>

#include "kernels/gguf/gguf.h"
#include "kernels/quant/quant.h"
#include "runtime/format.h"

namespace einfer::pack {

const std::vector<LayoutTarget>& layout_targets() {
  static const std::vector<LayoutTarget> targets = {
      {"generic", "rows", "any CPU; also loads on runtimes older than format 4"},
      {"arm64", "4x4",
       "AArch64 NEON cores: Cortex-A53/A55/A72/A73 (Raspberry Pi 3/4, i.MX 8M/8QM), "
       "Cortex-A76/A78/X1, Neoverse-N1 (Raspberry Pi 5, sdot)"},
      {"arm64-i8mm", "4x8",
       "AArch64 cores with the int8 matrix multiply (SMMLA): Cortex-A510/A710/A715/X2/X3, "
       "Neoverse-N2/V1/V2, Apple M2+"},
      {"cortex-a53", "4x4", "as arm64"},
      {"cortex-a55", "4x4", "as arm64"},
      {"cortex-a72", "4x4", "as arm64"},
      {"cortex-a76", "4x4", "as arm64"},
      {"neoverse-n1", "4x4", "as arm64"},
      {"cortex-a510", "4x8", "as arm64-i8mm"},
      {"cortex-a710", "4x8", "as arm64-i8mm"},
      {"neoverse-n2", "4x8", "as arm64-i8mm"},
      {"neoverse-v1", "4x8", "as arm64-i8mm"},
      {"armv7", "rows", "32-bit Arm Linux (NEON)"},
      {"cortex-m", "rows", "Cortex-M4/M7/M33/M55/M85 (flash images)"},
      {"x86-64", "8x4", "x86-64 with AVX2 or AVX-512 VNNI"},
  };
  return targets;
}

WeightLayout target_layout(const std::string& target) {
  std::string known;
  for (const LayoutTarget& t : layout_targets()) {
    if (target == t.name) return parse_layout(t.layout);
    known += known.empty() ? "" : ", ";
    known += t.name;
  }
  throw PackError("unknown --target '" + target + "' (" + known + ")");
}

WeightLayout parse_layout(const std::string& name) {
  WeightLayout l;
  if (layout_from_name(name.c_str(), &l)) return l;
  std::string known;
  for (uint32_t i = 0; i < kWeightLayoutCount; ++i) {
    known += i ? ", " : "";
    known += layout_name(static_cast<WeightLayout>(i));
  }
  throw PackError("unknown --layout '" + name + "' (" + known + ")");
}

namespace {

// An untied embedding is only gathered row by row: rows keeps that a plain copy.
bool gathered_by_row_only(const EinImage& image, const PackedTensor& t) {
  return t.role == TensorRole::token_embedding && !image.config.tied_classifier;
}

bool takes_layout(const EinImage& image, const PackedTensor& t) {
  if (!dtype_is_quantized(t.dtype) || t.rank != 2 || !ein_role_is_matrix(t.role)) return false;
  return !gathered_by_row_only(image, t);
}

// GGUF block matrices that have an interleaved layout (q4_k, q6_k, q8_0, q5_0: 4x4).
bool kquant_takes_layout(const EinImage& image, const PackedTensor& t, WeightLayout layout) {
  return dtype_is_gguf_block(t.dtype) && t.rank == 2 && ein_role_is_matrix(t.role) &&
         !gathered_by_row_only(image, t) && layout_fit_error(t.dtype, layout, 0) == nullptr;
}

}  // namespace

// GGUF-native images: the q4_k, q6_k, q8_0 and q5_0 matrices go to 4x4 whenever an interleaved
// layout is asked for (4x4 is their one interleaved layout: a 4x8 target gets it too, its SDOT
// kernels run on every dotprod core); the other block types (q4_1, q5_1, q2_k ...) stay in rows.
void apply_gguf_layout(EinImage* image, WeightLayout layout, std::string* note) {
  if (!layout_interleaved(layout)) return;
  if (layout == WeightLayout::i8x4) {  // x86: its K-quant kernels read rows
    if (note) *note = "GGUF blocks: no 8x4 layout for block weights; they stay in rows";
    return;
  }
  const WeightLayout k = WeightLayout::i4x4;
  int moved = 0, kept = 0;
  for (PackedTensor& t : image->tensors) {
    if (!dtype_is_gguf_block(t.dtype) || t.rank != 2 || !ein_role_is_matrix(t.role)) continue;
    if (!kquant_takes_layout(*image, t, k)) {
      if (!gathered_by_row_only(*image, t)) ++kept;
      continue;
    }
    std::vector<uint8_t> out(layout_data_bytes(t.dtype, k, t.shape[0], t.shape[1], 0));
    const Status s =
        gguf_to_layout(t.dtype, t.data.data(), t.shape[0], t.shape[1], k, out.data(), out.size());
    if (!s.ok()) throw PackError(std::string(tensor_role_name(t.role)) + ": " + status_text(s));
    t.data = std::move(out);
    t.layout = k;
    ++moved;
  }
  if (note && (kept > 0 || layout != k))
    *note = "GGUF blocks: " + std::to_string(moved) +
            " block matrices (q4_k, q6_k, q8_0, q5_0) in layout 4x4, " + std::to_string(kept) +
            " of other block types stay in rows";
}

void apply_layout(EinImage* image, WeightLayout layout, bool required, std::string* note) {
  if (!layout_interleaved(layout)) return;
  for (const PackedTensor& t : image->tensors) {
    if (!takes_layout(*image, t)) continue;
    if (const char* why = layout_fit_error(t.dtype, layout, t.group_size)) {
      const std::string text = std::string("layout ") + layout_name(layout) + " does not fit " +
                               dtype_name(t.dtype) + " weights with group " +
                               std::to_string(t.group_size) + ": " + why;
      if (required) throw PackError(text);
      if (note) *note = text + "; the weights stay in rows";
      return;
    }
  }
  for (PackedTensor& t : image->tensors) {
    if (!takes_layout(*image, t)) continue;
    TensorView rows = make_view(t.dtype, t.data.data(), {t.shape[0], t.shape[1]});
    rows.scales = reinterpret_cast<const float*>(t.scales.data());
    rows.group_size = t.group_size;
    std::vector<uint8_t> out(
        layout_data_bytes(t.dtype, layout, t.shape[0], t.shape[1], t.group_size));
    const Status s = quant_to_layout(rows, layout, out.data(), out.size());
    if (!s.ok()) throw PackError(std::string(tensor_role_name(t.role)) + ": " + status_text(s));
    t.data = std::move(out);
    t.scales.clear();
    t.layout = layout;
  }
}

}  // namespace einfer::pack
