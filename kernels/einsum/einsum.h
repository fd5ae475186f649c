// Einsum: the one kernel entry point models use for contractions, products, reductions and copies.
//
// Spec language (numpy.einsum / ONNX Einsum): labels a-z A-Z, optional spaces, optional "->"
// (implicit output: labels seen exactly once, ASCII order, i.e. A-Z before a-z, with "..." first),
// "..." broadcasts leading dimensions, a label repeated in one operand takes the diagonal, labels
// absent from the output are summed. One or two operands.
//
// Two forms, neither allocates:
//   compile time  einsum<"bnd,dhk->bhnk">(x, w, y, scratch, bytes): the spec is parsed and checked
//                 by the compiler (an invalid spec does not compile); the plan lives on the stack.
//   run time      plan_einsum(spec, inputs, n, &plan) once, then execute_einsum(...) any number of
//                 times with plan.scratch_bytes of caller scratch (64-byte aligned).
//
// Planning classifies labels (batch, contracted, left-free, right-free) and picks a kernel: batched
// GEMM (packed, register-blocked microkernel), GEMV, dot, outer product, elementwise, reduction,
// copy/transpose, the quantized matmul (kernels/gemm_quant/gemm_quant.h) when the second operand is
// q8/q4, or the half-precision matmul (kernels/half/half.h) when it is f16/bf16 weights contracted
// along their trailing axes. Everything else runs the generic loop nest, which is also the test
// reference (other f16/bf16 operands take it, widened on load; the plan says so).
//
// Three stages, three files: einsum_parse.h (constexpr spec parsing), einsum_plan.cpp (binding
// labels to shapes, choosing the kernel and its layout once), einsum_execute.cpp (running a plan).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/einsum/einsum_parse.h"
#include "runtime/status.h"
#include "runtime/tensor.h"
#include "runtime/threads.h"

namespace einfer {

// ---------------------------------------------------------------------------------------------
// Plans.

enum class EinsumKernel : int32_t {
  generic = 0,       // plain loop nest (reference)
  gemm = 1,          // (batched) packed GEMM
  gemv = 2,          // matrix-vector, one free side empty
  dot = 3,           // both free sides empty
  outer = 4,         // no contraction: outer product
  elementwise = 5,   // all labels shared by inputs and output
  reduction = 6,     // one operand, some labels summed
  copy = 7,          // one operand, copy / transpose / diagonal
  quant_matmul = 8,  // contraction against a q8/q4 second operand
};

// Everything the executor needs about one label after binding to shapes.
struct EinsumLabel {
  int64_t size = 1;
  int64_t stride[kEinsumMaxInputs] = {};  // element stride in each input (0: absent / broadcast)
  int32_t out_axis = -1;                  // axis in the output, -1: summed
  uint8_t in_input[kEinsumMaxInputs] = {};
};

// Every label appears in an input, and two inputs have at most 2 * kMaxRank axes.
inline constexpr int kEinsumMaxLabels = 2 * kMaxRank;

// One loop dimension of a plan's layout after label grouping: size and element stride in A, B and
// the output.
struct EinsumDim {
  int64_t size = 1;
  int64_t sa = 0, sb = 0, so = 0;
  bool is_k = false;  // summed: the first iteration overwrites, later ones accumulate
};

// How a plan executes: the chosen kernel and the extents/strides it runs with (which labels became
// the GEMM's M, N, K and which are looped outside). Derived once at planning time for a contiguous
// output; execute_einsum uses it as stored and derives a fresh one only for an output whose strides
// differ from the contiguous ones the plan was made for.
struct EinsumLayout {
  EinsumKernel kind = EinsumKernel::generic;
  int32_t n_outer = 0;
  EinsumDim outer[kEinsumMaxLabels];
  EinsumDim m, n, k;     // GEMM family; elementwise/copy/reduction use `k` as the inner dimension
  EinsumDim n_split;     // GEMM: N split in the output (size 1: none), contiguous with n in B
  bool swapped = false;  // A and B exchanged (so the output's unit stride lands on N)
  // quant_matmul
  bool pack_a = false, pack_c = false;
  int64_t mt = 1, nt = 1, kt = 1;
  size_t scratch = 0;
};

// Why a plan runs the generic loop nest (kind == generic).
enum class EinsumGenericReason : int32_t {
  none = 0,            // the plan has a fast kernel
  empty = 1,           // a label has size 0
  f16_operand = 2,     // f16 operands are widened element by element (no f16 fast path yet)
  no_fast_kernel = 3,  // the label pattern / strides match no fast kernel
};

struct EinsumPlan {
  EinsumKernel kind = EinsumKernel::generic;  // == layout.kind
  EinsumGenericReason generic_reason = EinsumGenericReason::none;
  int32_t n_inputs = 0;
  // What the plan was made for (execute checks these).
  DType in_dtype[kEinsumMaxInputs] = {};
  int32_t in_rank[kEinsumMaxInputs] = {};
  int64_t in_shape[kEinsumMaxInputs][kMaxRank] = {};
  int64_t in_strides[kEinsumMaxInputs][kMaxRank] = {};
  int32_t in_group[kEinsumMaxInputs] = {};
  WeightLayout in_layout[kEinsumMaxInputs] = {};       // q8/q4 operands (runtime/layout.h)
  int8_t axis_label[kEinsumMaxInputs][kMaxRank] = {};  // index into labels of each input axis
  // Bound labels (letters, then ellipsis dimensions).
  int32_t n_labels = 0;
  EinsumLabel labels[kEinsumMaxLabels] = {};
  // Quantized second operand: its trailing contracted axes [k_axis0, rank) form K.
  int32_t quant_k_axis0 = -1;
  int32_t out_rank = 0;
  int64_t out_shape[kMaxRank] = {};
  size_t scratch_bytes = 0;
  // The layout for a contiguous output, chosen once by plan_einsum (see EinsumLayout).
  EinsumLayout layout = {};
};

Status plan_einsum(const char* spec, const TensorView* inputs, int n_inputs, EinsumPlan* plan);
Status plan_einsum(const EinsumSpec& spec, const TensorView* inputs, int n_inputs,
                   EinsumPlan* plan);

// Overwrites `out` (shape must equal plan.out_shape; out may be strided, f32). Inputs must have the
// shapes/strides/dtypes the plan was made for. scratch may be null if plan.scratch_bytes == 0.
// With threads (runtime/threads.h), a single GEMM/GEMV is cut into output column blocks, one
// scratch slot of plan.scratch_bytes (rounded up to 64) per task, as many tasks as the scratch
// holds slots (size it threads.n slots + 64); the quantized product shares one slot. Results are
// bit-identical for any thread count.
Status execute_einsum(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                      const TensorView& out, void* scratch, size_t scratch_bytes,
                      const Threads* threads = nullptr);

// The column-block form of execute_einsum, for callers that run several products in one parallel
// region of their own. einsum_split_columns: the output columns (GEMV: rows of its matrix) a
// single GEMM/GEMV plan can be cut into, 0 when it cannot be cut (quantized products, outer
// loops, strided outputs: run execute_einsum whole). execute_einsum_columns computes columns
// [j0, j1) (j0 and j1 multiples of 16, or j1 the end) with `slot` (64-byte aligned,
// plan.layout.scratch bytes) as its scratch, bit-identical to the whole product.
int64_t einsum_split_columns(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                             const TensorView& out);
Status execute_einsum_columns(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                              const TensorView& out, int64_t j0, int64_t j1, void* slot,
                              size_t slot_bytes);

// The generic loop nest (free labels, then summed labels), whatever the plan's kind: the reference
// the tests compare the fast kernels with. Needs no scratch.
Status execute_einsum_reference(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                                const TensorView& out);

// The plan's kernel family: "gemm", "gemv", "dot", "outer", "elementwise", "reduction", "copy",
// "quant_matmul" or "generic".
const char* einsum_plan_kind_name(const EinsumPlan& plan);

// The microkernel the plan runs, e.g. "gemm_f32_6x16_avx2" (this build's GEMM microkernel),
// "gemv_f32", "dot_f32", "mul_f32", "sum_f32", "copy_strided", "matmul_quant", or for the generic
// loop nest "generic_loop" / "generic_loop_f16" (f16 operands are widened on load; there is no f16
// fast path yet) / "generic_loop_empty".
const char* einsum_plan_kernel_name(const EinsumPlan& plan);

// ---------------------------------------------------------------------------------------------
// Compile-time form.

// A string literal usable as a template argument: einsum<"ij,jk->ik">(...).
template <size_t N>
struct FixedString {
  char data[N] = {};
  constexpr FixedString(const char (&s)[N]) {
    for (size_t i = 0; i < N; ++i) data[i] = s[i];
  }
};

namespace einsum_detail {
template <FixedString S>
struct CheckedSpec {
  static constexpr EinsumSpec parse() {
    EinsumSpec spec{};
    parse_einsum(S.data, &spec);
    return spec;
  }
  static constexpr EinsumSpec value = parse();
  static_assert(value.status.code == StatusCode::ok,
                "invalid einsum spec (see value.status.message in the note above)");
};
}  // namespace einsum_detail

template <FixedString S>
inline constexpr EinsumSpec einsum_spec = einsum_detail::CheckedSpec<S>::value;

template <FixedString S>
Status plan(const TensorView& a, const TensorView& b, EinsumPlan* p) {
  static_assert(einsum_spec<S>.n_inputs == 2, "this einsum spec takes one operand");
  const TensorView in[2] = {a, b};
  return plan_einsum(einsum_spec<S>, in, 2, p);
}

template <FixedString S>
Status plan(const TensorView& a, EinsumPlan* p) {
  static_assert(einsum_spec<S>.n_inputs == 1, "this einsum spec takes two operands");
  return plan_einsum(einsum_spec<S>, &a, 1, p);
}

template <FixedString S>
Status einsum(const TensorView& a, const TensorView& b, const TensorView& out, void* scratch,
              size_t scratch_bytes) {
  static_assert(einsum_spec<S>.n_inputs == 2, "this einsum spec takes one operand");
  const TensorView in[2] = {a, b};  // one copy serves planning and execution (stack on MCUs)
  EinsumPlan p;
  EINFER_TRY(plan_einsum(einsum_spec<S>, in, 2, &p));
  return execute_einsum(p, in, 2, out, scratch, scratch_bytes);
}

template <FixedString S>
Status einsum(const TensorView& a, const TensorView& out, void* scratch, size_t scratch_bytes) {
  EinsumPlan p;
  EINFER_TRY(plan<S>(a, &p));
  return execute_einsum(p, &a, 1, out, scratch, scratch_bytes);
}

}  // namespace einfer
