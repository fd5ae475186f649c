// What einfer-run -v and einfer-pack --inspect say about an image's q8/q4 weight layout
// (runtime/layout.h): the layout, and the kernels this CPU runs it with, naming the case where
// the layout has no fast kernel here (the generic kernel runs it: correct, slower).
#pragma once

#include <string>

#include "runtime/model.h"

namespace einfer::tools {

// The layout most q8/q4 matrices of a loaded image are in, and whether they all agree.
// interleaved_dtype: the dtype of the first interleaved matrix (else the image's weight dtype).
WeightLayout image_layout(const Model& model, bool* uniform = nullptr,
                          DType* interleaved_dtype = nullptr);

// "4x4; on this CPU (isa dotprod): gemv_q4_4x4_dotprod, prefill gemm_q4_4x4_dotprod", with a
// note when the CPU has no fast kernel for the layout. Only for q8/q4 weights.
std::string describe_layout(const Model& model);

}  // namespace einfer::tools
