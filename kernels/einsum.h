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
// copy/transpose, or the quantized matmul (kernels/matmul_quant.h) when the second operand is
// q8/q4. Everything else runs the generic loop nest, which is also the test reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "runtime/status.h"
#include "runtime/tensor.h"

namespace einfer {

// ---------------------------------------------------------------------------------------------
// Spec parsing (constexpr).

inline constexpr int kEinsumMaxInputs = 2;

// One operand or the output: its labels in order; the ellipsis (if any) sits before
// labels[ellipsis].
struct EinsumTerm {
  int32_t n = 0;               // named labels
  char labels[kMaxRank] = {};  // 'a'..'z', 'A'..'Z'
  int32_t ellipsis = -1;       // insertion position of "...", -1: none
};

struct EinsumSpec {
  int32_t n_inputs = 0;
  EinsumTerm in[kEinsumMaxInputs] = {};
  EinsumTerm out = {};
  bool explicit_output = false;
  Status status = {};  // ok, or why the spec is invalid (index: character position)
};

namespace einsum_detail {
constexpr bool is_label(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
constexpr Status spec_error(const char* msg, int pos) {
  return make_status(StatusCode::invalid_argument, msg, -1, -1, pos);
}
}  // namespace einsum_detail

// Parses and validates `spec` (syntax, labels, output rules; shapes are checked by the planner).
constexpr Status parse_einsum(const char* spec, EinsumSpec* out) {
  using namespace einsum_detail;
  EinsumSpec s{};
  // (No null test during constant evaluation: GCC's sanitizers reject it there, and a literal is
  // never null.)
  if (!std::is_constant_evaluated() && spec == nullptr) {
    s.status = spec_error("einsum: spec is null", -1);
    *out = s;
    return s.status;
  }
  int term = 0;  // 0, 1: inputs; 2: output
  bool any_ellipsis = false;
  int i = 0;
  auto fail = [&](const char* msg, int pos) {
    s.status = spec_error(msg, pos);
    *out = s;
    return s.status;
  };
  for (; spec[i] != '\0'; ++i) {
    const char c = spec[i];
    EinsumTerm& t = term == 2 ? s.out : s.in[term];
    if (c == ' ') continue;
    if (is_label(c)) {
      if (t.n == kMaxRank) return fail("einsum: too many dimensions in one operand (max 8)", i);
      if (term == 2) {
        for (int j = 0; j < t.n; ++j)
          if (t.labels[j] == c) return fail("einsum: output label repeated", i);
      }
      t.labels[t.n++] = c;
    } else if (c == '.') {
      if (spec[i + 1] != '.' || spec[i + 2] != '.')
        return fail("einsum: '.' must be part of '...'", i);
      if (t.ellipsis >= 0) return fail("einsum: more than one '...' in an operand", i);
      t.ellipsis = t.n;
      if (term < 2) any_ellipsis = true;
      i += 2;
    } else if (c == ',') {
      if (term != 0) {
        return fail(term == 2 ? "einsum: ',' after '->'" : "einsum: more than two operands", i);
      }
      term = 1;
    } else if (c == '-') {
      if (spec[i + 1] != '>') return fail("einsum: '-' must be part of '->'", i);
      if (term == 2) return fail("einsum: more than one '->'", i);
      s.n_inputs = term + 1;
      s.explicit_output = true;
      term = 2;
      ++i;
    } else {
      return fail("einsum: unknown character in spec (allowed: a-z A-Z , -> ... space)", i);
    }
  }
  if (!s.explicit_output) s.n_inputs = term + 1;

  // Label occurrence counts over the inputs (repeats within an operand count).
  int count[128] = {};
  for (int t = 0; t < s.n_inputs; ++t)
    for (int j = 0; j < s.in[t].n; ++j) ++count[static_cast<unsigned char>(s.in[t].labels[j])];

  if (s.explicit_output) {
    for (int j = 0; j < s.out.n; ++j) {
      if (count[static_cast<unsigned char>(s.out.labels[j])] == 0) {
        return fail("einsum: output label does not appear in any input", -1);
      }
    }
    if (s.out.ellipsis >= 0 && !any_ellipsis) {
      return fail("einsum: '...' in the output but in no input", -1);
    }
  } else {
    // Implicit output: "..." first (when an input has one), then single-use labels in ASCII order.
    s.out.ellipsis = any_ellipsis ? 0 : -1;
    for (int c = 0; c < 128; ++c) {
      if (count[c] != 1) continue;
      if (s.out.n == kMaxRank) return fail("einsum: too many dimensions in the output (max 8)", -1);
      s.out.labels[s.out.n++] = static_cast<char>(c);
    }
  }
  s.status = ok_status();
  *out = s;
  return s.status;
}

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

struct EinsumPlan {
  EinsumKernel kind = EinsumKernel::generic;
  int32_t n_inputs = 0;
  // What the plan was made for (execute checks these).
  DType in_dtype[kEinsumMaxInputs] = {};
  int32_t in_rank[kEinsumMaxInputs] = {};
  int64_t in_shape[kEinsumMaxInputs][kMaxRank] = {};
  int64_t in_strides[kEinsumMaxInputs][kMaxRank] = {};
  int32_t in_group[kEinsumMaxInputs] = {};
  int8_t axis_label[kEinsumMaxInputs][kMaxRank] = {};  // index into labels of each input axis
  // Bound labels (letters, then ellipsis dimensions).
  int32_t n_labels = 0;
  EinsumLabel labels[kEinsumMaxLabels] = {};
  // Quantized second operand: its trailing contracted axes [k_axis0, rank) form K.
  int32_t quant_k_axis0 = -1;
  int32_t out_rank = 0;
  int64_t out_shape[kMaxRank] = {};
  size_t scratch_bytes = 0;
};

Status plan_einsum(const char* spec, const TensorView* inputs, int n_inputs, EinsumPlan* plan);
Status plan_einsum(const EinsumSpec& spec, const TensorView* inputs, int n_inputs,
                   EinsumPlan* plan);

// Overwrites `out` (shape must equal plan.out_shape; out may be strided, f32). Inputs must have the
// shapes/strides/dtypes the plan was made for. scratch may be null if plan.scratch_bytes == 0.
Status execute_einsum(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                      const TensorView& out, void* scratch, size_t scratch_bytes);

// The generic loop nest (free labels, then summed labels), whatever the plan's kind: the reference
// the tests compare the fast kernels with. Needs no scratch.
Status execute_einsum_reference(const EinsumPlan& plan, const TensorView* inputs, int n_inputs,
                                const TensorView& out);

// "gemm", "gemv", "dot", "outer", "elementwise", "reduction", "copy", "quant_matmul", "generic".
const char* einsum_kernel_name(const EinsumPlan& plan);

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
