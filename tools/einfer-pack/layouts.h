// Weight layouts per target CPU (docs/format.md, "Weight layouts"): einfer-pack --target and
// --layout. A target names the CPUs an image is packed for; its default layout is the one those
// CPUs' kernels read fastest. Any runtime runs any layout (a generic kernel where it has no fast
// one), so a target only decides speed, never whether the image runs.
#pragma once

#include <string>
#include <vector>

#include "tools/einfer-pack/ein_writer.h"

namespace einfer::pack {

struct LayoutTarget {
  const char* name;    // what --target takes
  const char* layout;  // its default layout (layout_name)
  const char* cpus;    // the CPUs it stands for, for --help and docs
};

// Every target einfer-pack knows, the default ("generic") first.
const std::vector<LayoutTarget>& layout_targets();

// The default layout of `target`; throws PackError naming the known targets otherwise.
WeightLayout target_layout(const std::string& target);

// --layout NAME; throws PackError naming the known layouts otherwise.
WeightLayout parse_layout(const std::string& name);

// Puts every q8/q4 matrix the kernels multiply in `layout` (an untied token embedding, which is
// only looked up by row, stays in rows). A layout that does not fit (layout_fit_error) is an error
// when `required` (--layout given), else the image stays in rows and *note says why.
void apply_layout(EinImage* image, WeightLayout layout, bool required, std::string* note);

// GGUF-native images: puts the q4_k / q6_k matrices and the Q4_K_M fallbacks q8_0 / q5_0 in 4x4
// (their one interleaved layout) when `layout` is an Arm one (4x4, 4x8); the other block types stay
// in rows (*note counts both). x86's 8x4 leaves them all in rows (the x86 GGUF kernels read rows).
void apply_gguf_layout(EinImage* image, WeightLayout layout, std::string* note);

}  // namespace einfer::pack
