// einfer-einsum SPEC IN0.npy [IN1.npy] -o OUT.npy [--quantize q8|q4] [--group 32|64]
//
// Evaluates SPEC with the same plan_einsum/execute_einsum the runtime uses and writes float32 .npy.
// With --quantize the second operand is treated as a weight: permuted to [free..., contracted...]
// (contiguous), quantized row by row along its flattened contracted axes, and planned as a q8/q4
// view, so the contraction runs through the quantized matmul.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "kernels/quant/quant.h"
#include "tools/common/cli.h"
#include "tools/common/npy.h"

using namespace einfer;

namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "einfer-einsum: %s\n", msg.c_str());
  return 1;
}

std::string status_text(const Status& s) {
  char buf[256];
  format_status(s, buf, sizeof buf);
  return buf;
}

struct Quantized {
  std::vector<uint8_t> values;
  std::vector<float> scales;
  std::string term;  // the operand's labels in their new order
  TensorView view;
};

// Permutes operand 1 to [free..., contracted...] and quantizes rows along the contracted part.
bool quantize_operand(const EinsumSpec& spec, const tools::NpyArray& b, DType dtype, int group,
                      Quantized* q, std::string* error) {
  const EinsumTerm& tb = spec.in[1];
  if (tb.ellipsis >= 0) {
    *error = "--quantize does not support '...' in the second operand";
    return false;
  }
  auto in_term = [](const EinsumTerm& t, char c) {
    for (int i = 0; i < t.n; ++i)
      if (t.labels[i] == c) return true;
    return false;
  };
  std::vector<int> free_axes, k_axes;
  for (int i = 0; i < tb.n; ++i) {
    for (int j = 0; j < i; ++j)
      if (tb.labels[j] == tb.labels[i]) {
        *error = "--quantize: the second operand repeats a label (diagonal)";
        return false;
      }
    const bool contracted = in_term(spec.in[0], tb.labels[i]) && !in_term(spec.out, tb.labels[i]);
    (contracted ? k_axes : free_axes).push_back(i);
  }
  if (k_axes.empty()) {
    *error = "--quantize: the second operand has no contracted label";
    return false;
  }
  if (static_cast<int>(b.shape.size()) != tb.n) {
    *error = "second operand rank does not match its labels";
    return false;
  }
  std::vector<int> order = free_axes;
  order.insert(order.end(), k_axes.begin(), k_axes.end());
  std::vector<int64_t> shape(order.size()), src_stride(b.shape.size());
  int64_t s = 1;
  for (int i = static_cast<int>(b.shape.size()) - 1; i >= 0; --i) {
    src_stride[i] = s;
    s *= b.shape[i];
  }
  int64_t rows = 1, k = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    shape[i] = b.shape[order[i]];
    q->term += tb.labels[order[i]];
    (i < free_axes.size() ? rows : k) *= shape[i];
  }
  // Permuted copy, then quantize each row of k.
  std::vector<float> perm(static_cast<size_t>(rows * k));
  std::vector<int64_t> idx(order.size(), 0);
  for (int64_t e = 0; e < rows * k; ++e) {
    int64_t off = 0;
    for (size_t i = 0; i < order.size(); ++i) off += idx[i] * src_stride[order[i]];
    perm[e] = b.data[off];
    for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  const int64_t groups = quant_groups(k, group);
  const size_t row_bytes = quant_row_bytes(dtype, k);
  q->values.assign(static_cast<size_t>(rows) * row_bytes, 0);
  q->scales.assign(static_cast<size_t>(rows * groups), 0.f);
  for (int64_t r = 0; r < rows; ++r) {
    if (dtype == DType::q8) {
      quantize_row_q8(perm.data() + r * k, k, group,
                      reinterpret_cast<int8_t*>(q->values.data() + r * row_bytes),
                      q->scales.data() + r * groups);
    } else {
      quantize_row_q4(perm.data() + r * k, k, group, q->values.data() + r * row_bytes,
                      q->scales.data() + r * groups);
    }
  }
  q->view = make_view(dtype, q->values.data(), shape.data(), static_cast<int>(shape.size()));
  q->view.scales = q->scales.data();
  q->view.group_size = group;
  return true;
}

std::string term_text(const EinsumTerm& t) {
  std::string s;
  for (int i = 0; i <= t.n; ++i) {
    if (i == t.ellipsis) s += "...";
    if (i < t.n) s += t.labels[i];
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec_arg, in0, in1, out_path, quant;
  int64_t group64 = 32;
  tools::cli::Parser p("einfer-einsum", "SPEC IN0.npy [IN1.npy] -o OUT.npy [options]",
                       "Evaluates an einsum with the planner the models use; writes float32 .npy.");
  p.positional("SPEC", &spec_arg, "einsum spec, e.g. nd,ed->ne");
  p.positional("IN0.npy", &in0, "first operand");
  p.positional("IN1.npy", &in1, "second operand (if SPEC takes two)");
  p.option({"-o", "--output"}, &out_path, "OUT.npy", "result file (required)");
  p.option({"--quantize"}, &quant, "q8|q4", "quantize the second operand as a weight")
      .choices({"q8", "q4"});
  p.option({"--group"}, &group64, "32|64", "quantization group (default 32)");
  if (int code; !p.parse(argc, argv, &code)) return code;
  if (spec_arg.empty() || in0.empty()) return p.fail("SPEC and IN0.npy are required");
  if (out_path.empty()) return p.fail("-o OUT.npy is required");
  if (group64 != 32 && group64 != 64)
    return p.fail("--group takes 32 or 64, got " + std::to_string(group64));
  const int group = static_cast<int>(group64);
  std::vector<std::string> positional = {spec_arg, in0};
  if (!in1.empty()) positional.push_back(in1);
  const std::string spec_text = positional[0];
  EinsumSpec spec;
  const Status ps = parse_einsum(spec_text.c_str(), &spec);
  if (!ps.ok()) return fail("invalid spec '" + spec_text + "': " + status_text(ps));
  const int n_inputs = static_cast<int>(positional.size()) - 1;
  if (n_inputs != spec.n_inputs) {
    return fail("spec '" + spec_text + "' takes " + std::to_string(spec.n_inputs) +
                " operand(s), got " + std::to_string(n_inputs));
  }
  std::vector<tools::NpyArray> arrays(n_inputs);
  std::string err;
  for (int t = 0; t < n_inputs; ++t)
    if (!tools::read_npy(positional[1 + t], &arrays[t], &err)) return fail(err);
  for (int t = 0; t < n_inputs; ++t)
    if (arrays[t].shape.size() > static_cast<size_t>(kMaxRank)) {
      return fail(positional[1 + t] + ": too many dimensions (max 8)");
    }

  std::vector<TensorView> views(n_inputs);
  for (int t = 0; t < n_inputs; ++t) {
    views[t] = make_view(DType::f32, arrays[t].data.data(), arrays[t].shape.data(),
                         static_cast<int>(arrays[t].shape.size()));
  }
  Quantized q;
  EinsumSpec planned = spec;
  if (!quant.empty()) {
    if (n_inputs != 2) return fail("--quantize needs two operands");
    if (!quantize_operand(spec, arrays[1], quant == "q8" ? DType::q8 : DType::q4, group, &q, &err))
      return fail(err);
    const std::string s2 = term_text(spec.in[0]) + "," + q.term + "->" + term_text(spec.out);
    const Status st = parse_einsum(s2.c_str(), &planned);
    if (!st.ok()) return fail("internal: re-parsing '" + s2 + "': " + status_text(st));
    views[1] = q.view;
  }
  EinsumPlan plan;
  const Status st = plan_einsum(planned, views.data(), n_inputs, &plan);
  if (!st.ok()) return fail(status_text(st));
  std::vector<int64_t> out_shape(plan.out_shape, plan.out_shape + plan.out_rank);
  // Checked, and bounded: an outer product of two large inputs could ask for terabytes.
  constexpr uint64_t kMaxOutputValues = uint64_t{1} << 28;
  uint64_t count = 1;
  for (int64_t d : out_shape)
    if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count) ||
        count > kMaxOutputValues)
      return fail("the output would exceed " + std::to_string(kMaxOutputValues) +
                  " values (1 GiB); refusing");
  std::vector<float> out(static_cast<size_t>(count));
  std::vector<unsigned char> scratch(plan.scratch_bytes + 64);
  void* aligned =
      reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
  const TensorView ov = make_view(DType::f32, out.data(), out_shape.data(), plan.out_rank);
  const Status ex = execute_einsum(plan, views.data(), n_inputs, ov, aligned, plan.scratch_bytes);
  if (!ex.ok()) return fail(status_text(ex));
  if (!tools::write_npy(out_path, out.data(), out_shape, &err)) return fail(err);
  return 0;
}
