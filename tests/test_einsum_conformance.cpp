// Einsum conformance against numpy (tests/gen/gen_einsum.py -> tests/data/einsum/): every case
// through the library (plan + execute, strided views rebuilt from the committed data) and through
// the einfer-einsum CLI end to end (quantized cases with their derived error bounds).
#include <doctest/doctest.h>

#if defined(EINFER_HAVE_TOOL_COMMON)  // .npy reading lives in tools/common

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "tests/test_util.h"
#include "tools/common/npy.h"

using namespace einfer;

namespace {

const std::string kDir = std::string(EINFER_TEST_DATA_DIR) + "/einsum/";

struct Case {
  std::string name, spec, quant, view[2];
  int n_inputs = 1;
};

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  std::ifstream f(kDir + "cases.txt");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, '\t')) cols.push_back(c);
    REQUIRE(cols.size() == 5);
    Case k;
    k.name = cols[0];
    k.spec = cols[1];
    k.quant = cols[2];
    k.view[0] = cols[3];
    k.view[1] = cols[4];
    k.n_inputs = std::ifstream(kDir + k.name + ".b.npy").good() ? 2 : 1;
    cases.push_back(k);
  }
  return cases;
}

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) v.push_back(std::stoll(x));
  return v;
}

// The operand as the generator's numpy view: contiguous, or "shape;strides;offset" over the data.
TensorView make_operand(tools::NpyArray& a, const std::string& desc) {
  TensorView v =
      make_view(DType::f32, a.data.data(), a.shape.data(), static_cast<int>(a.shape.size()));
  if (desc == "-") return v;
  std::stringstream ss(desc);
  std::string shape, strides, offset;
  std::getline(ss, shape, ';');
  std::getline(ss, strides, ';');
  std::getline(ss, offset, ';');
  const std::vector<int64_t> sh = parse_list(shape), st = parse_list(strides);
  v.rank = static_cast<int32_t>(sh.size());
  for (int i = 0; i < v.rank; ++i) {
    v.shape[i] = sh[i];
    v.strides[i] = st[i];
  }
  v.data = a.data.data() + std::stoll(offset);
  return v;
}

tools::NpyArray load(const std::string& path) {
  tools::NpyArray a;
  std::string err;
  REQUIRE_MESSAGE(tools::read_npy(path, &a, &err), err);
  return a;
}

using einfer_test::max_abs;

}  // namespace

TEST_CASE("einsum conformance: library plans match numpy on every committed case") {
  const std::vector<Case> cases = load_cases();
  REQUIRE(cases.size() >= 40);
  int run = 0;
  for (const Case& c : cases) {
    if (c.quant != "none") continue;
    CAPTURE(c.name);
    tools::NpyArray arrays[2];
    TensorView in[2];
    for (int t = 0; t < c.n_inputs; ++t) {
      arrays[t] = load(kDir + c.name + (t == 0 ? ".a.npy" : ".b.npy"));
      in[t] = make_operand(arrays[t], c.view[t]);
    }
    tools::NpyArray ref = load(kDir + c.name + ".ref.npy");
    EinsumPlan plan;
    const Status st = plan_einsum(c.spec.c_str(), in, c.n_inputs, &plan);
    REQUIRE_MESSAGE(st.ok(), st.message);
    REQUIRE(plan.out_rank == static_cast<int>(ref.shape.size()));
    for (int i = 0; i < plan.out_rank; ++i) REQUIRE(plan.out_shape[i] == ref.shape[i]);
    std::vector<float> out(ref.data.size() + 1, 9.f), gen(ref.data.size() + 1, 9.f);
    std::vector<unsigned char> scratch(plan.scratch_bytes + 64);
    void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) &
                                            ~uintptr_t{63});
    const TensorView ov = make_view(DType::f32, out.data(), plan.out_shape, plan.out_rank);
    REQUIRE(execute_einsum(plan, in, c.n_inputs, ov, aligned, plan.scratch_bytes).ok());
    const TensorView gv = make_view(DType::f32, gen.data(), plan.out_shape, plan.out_rank);
    REQUIRE(execute_einsum_reference(plan, in, c.n_inputs, gv).ok());
    const float tol = 1e-4f * std::fmax(1.f, max_abs(ref.data));
    for (size_t i = 0; i < ref.data.size(); ++i) {
      if (std::fabs(out[i] - ref.data[i]) > tol || std::fabs(gen[i] - ref.data[i]) > tol) {
        FAIL_CHECK((c.name + " (" + einsum_plan_kernel_name(plan) + ") element " +
                    std::to_string(i) + ": got " + std::to_string(out[i]) + " / generic " +
                    std::to_string(gen[i]) + ", numpy " + std::to_string(ref.data[i])));
        break;
      }
    }
    ++run;
  }
  CHECK(run >= 40);
}

#ifdef EINFER_EINSUM_CLI
TEST_CASE("einsum conformance: einfer-einsum CLI end to end, f32 and quantized (q8/q4 bounds)") {
  const std::vector<Case> cases = load_cases();
  int run = 0, quant = 0;
  for (const Case& c : cases) {
    if (c.view[0] != "-" || c.view[1] != "-") continue;  // the CLI reads contiguous files
    CAPTURE(c.name);
    const std::string out_path =
        std::string(EINFER_TEST_OUT_DIR) + "/einsum_cli_" + c.name + ".npy";
    std::string cmd =
        std::string(EINFER_EINSUM_CLI) + " '" + c.spec + "' " + kDir + c.name + ".a.npy";
    if (c.n_inputs == 2) cmd += " " + kDir + c.name + ".b.npy";
    cmd += " -o " + out_path;
    if (c.quant != "none") cmd += " --quantize " + c.quant;
    REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, cmd);
    tools::NpyArray got = load(out_path), ref = load(kDir + c.name + ".ref.npy");
    REQUIRE(got.shape == ref.shape);
    std::vector<float> bound(ref.data.size(), 1e-4f * std::fmax(1.f, max_abs(ref.data)));
    if (c.quant != "none") {
      bound = load(kDir + c.name + ".bound.npy").data;
      ++quant;
    }
    double worst = 0;
    for (size_t i = 0; i < ref.data.size(); ++i) {
      worst = std::fmax(worst, std::fabs(got.data[i] - ref.data[i]) / bound[i]);
      if (std::fabs(got.data[i] - ref.data[i]) > bound[i]) {
        FAIL_CHECK((c.name + " element " + std::to_string(i) + ": got " +
                    std::to_string(got.data[i]) + ", numpy " + std::to_string(ref.data[i]) +
                    ", bound " + std::to_string(bound[i])));
        break;
      }
    }
    if (c.quant != "none") {
      // The bound must not be vacuous: the quantization error is visible at its scale.
      CHECK(worst > 1e-3);
    }
    ++run;
  }
  CHECK(quant >= 5);
  CHECK(run >= 20);
  // Errors: non-zero exit with a message.
  const std::string bad = std::string(EINFER_EINSUM_CLI) + " 'ij,jk->ik' " + kDir + "mm_nn.a.npy " +
                          kDir + "mm_nn.a.npy -o /dev/null 2>/dev/null";
  CHECK(std::system(bad.c_str()) != 0);
  const std::string bad_spec =
      std::string(EINFER_EINSUM_CLI) + " 'i1->i' " + kDir + "inner.a.npy -o /dev/null 2>/dev/null";
  CHECK(std::system(bad_spec.c_str()) != 0);
}
#endif

#endif  // EINFER_HAVE_TOOL_COMMON
