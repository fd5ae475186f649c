// Einsum fast paths against the generic loop nest, SIMD kernels against their scalar twins (odd
// sizes, tails, strided operands), plan-time shape errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/einsum/einsum.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/isa/isa.h"
#include "kernels/quant/quant.h"
#include "tests/test_util.h"

using namespace einfer;

namespace {

std::vector<float> random_vec(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

using einfer_test::max_abs;

struct AlignedBuf {
  std::vector<unsigned char> bytes;
  void* get(size_t n) {
    bytes.assign(n + 64, 0);
    return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(bytes.data()) + 63) &
                                   ~uintptr_t{63});
  }
};

// Plans spec over inputs, runs the planned kernel and the reference, compares within
// 1e-4 * max(1, max|ref|), or within `tol` when given (quantized operands).
std::string check_against_reference(const char* spec, std::vector<TensorView> in,
                                    bool strided_out = false, float tol_override = -1.f) {
  EinsumPlan plan;
  const Status st = plan_einsum(spec, in.data(), static_cast<int>(in.size()), &plan);
  REQUIRE_MESSAGE(st.ok(), (std::string(spec) + ": " + st.message));
  TensorView out;
  out.rank = plan.out_rank;
  for (int i = 0; i < plan.out_rank; ++i) out.shape[i] = plan.out_shape[i];
  int64_t n = out.numel();
  // Strided output: reversed axis order in memory (a transposed destination).
  std::vector<float> got(static_cast<size_t>(n) + 1, 7.f), ref(static_cast<size_t>(n) + 1, 5.f);
  TensorView ro = out;
  set_contiguous_strides(ro);
  if (strided_out) {
    int64_t s = 1;
    for (int i = 0; i < out.rank; ++i) {
      out.strides[i] = s;
      s *= out.shape[i];
    }
  } else {
    set_contiguous_strides(out);
  }
  out.data = got.data();
  ro.data = ref.data();
  AlignedBuf sb;
  void* scratch = sb.get(plan.scratch_bytes);
  const Status ex = execute_einsum(plan, in.data(), static_cast<int>(in.size()), out, scratch,
                                   plan.scratch_bytes);
  REQUIRE_MESSAGE(ex.ok(), (std::string(spec) + ": " + ex.message));
  REQUIRE(execute_einsum_reference(plan, in.data(), static_cast<int>(in.size()), ro).ok());
  // Compare element by element through both layouts.
  const float tol = tol_override >= 0.f ? tol_override : 1e-4f * std::fmax(1.f, max_abs(ref));
  int64_t idx[kMaxRank] = {};
  for (int64_t e = 0; e < n; ++e) {
    int64_t rem = e, go = 0, rf = 0;
    for (int i = out.rank - 1; i >= 0; --i) {
      idx[i] = rem % out.shape[i];
      rem /= out.shape[i];
      go += idx[i] * out.strides[i];
      rf += idx[i] * ro.strides[i];
    }
    if (std::fabs(got[go] - ref[rf]) > tol) {
      FAIL_CHECK((std::string(spec) + " strided_out " + std::to_string(strided_out) + " element " +
                  std::to_string(e) + " got " + std::to_string(got[go]) + " want " +
                  std::to_string(ref[rf]) + " kernel " + einsum_plan_kernel_name(plan)));
      break;
    }
  }
  return einsum_plan_kind_name(plan);
}

}  // namespace

TEST_CASE("gemm_f32: SIMD microkernel path equals the scalar twin on odd sizes and strides") {
  // The last three take the AVX-512 build's transposed path where both operands run along K
  // (M of 32-96 rows, N > M): weight tiles ending off the 8-row grid, activation panels ending
  // off the 32-row grid, K in several blocks.
  const int64_t sizes[][3] = {{1, 1, 1},      {5, 7, 3},    {6, 16, 1},   {13, 33, 17},
                              {37, 19, 300},  {150, 40, 9}, {7, 1030, 5}, {10, 24, 700},
                              {64, 203, 700}, {60, 96, 33}, {90, 1030, 9}};
  for (auto& s : sizes) {
    for (int layout = 0; layout < 4; ++layout) {
      const int64_t m = s[0], n = s[1], k = s[2];
      std::vector<float> a = random_vec(m * k, 1), b = random_vec(k * n, 2);
      std::vector<float> c1(m * n, 3.f), c2(m * n, 3.f);
      GemmF32Args g;
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = a.data();
      g.b = b.data();
      g.a_m = (layout & 1) ? 1 : k;
      g.a_k = (layout & 1) ? m : 1;
      g.b_k = (layout & 2) ? 1 : n;
      g.b_n = (layout & 2) ? k : 1;
      g.c_m = n;
      g.c_n = 1;
      g.accumulate = layout == 3;
      AlignedBuf sb;
      void* scratch = sb.get(gemm_f32_scratch_bytes(m, n, k));
      g.c = c1.data();
      gemm_f32(g, scratch);
      g.c = c2.data();
      scalar::gemm_f32(g, scratch);
      for (int64_t i = 0; i < m * n; ++i) {
        // Independent check on a few entries with double accumulation.
        REQUIRE(std::fabs(c1[i] - c2[i]) <= 1e-4f * (1.f + std::sqrt(static_cast<float>(k))));
      }
      double want = g.accumulate ? 3.0 : 0.0;
      for (int64_t p = 0; p < k; ++p)
        want += double(a[0 * g.a_m + p * g.a_k]) * b[p * g.b_k + (n - 1) * g.b_n];
      CHECK(std::fabs(c1[n - 1] - want) <= 1e-4 * (1 + k));
    }
  }
}

// The AVX-512 GEMM computes x W^T products as their transpose (weights read in place, activations
// packed) for 32-96 rows, and promises the bits of the AVX2 tiles: same FMA chain per element,
// same K blocks, C + block sum. Checked on head-split outputs (n_inner) and with accumulation.
TEST_CASE("gemm_f32: AVX-512 tiles, transposed or not, give the AVX2 tiles' bits") {
  const std::string before = isa_name();
  if (!isa_select("avx2").ok() || !isa_select("avx2+avx512vnni").ok()) {
    MESSAGE("skipped: this CPU or build has no AVX2 + AVX-512 selections");
    REQUIRE(isa_select(before.c_str()).ok());
    return;
  }
  const int64_t sizes[][4] = {// m, n, k, n_inner
                              {64, 288, 288, 0}, {64, 768, 768, 64}, {45, 200, 700, 0},
                              {96, 130, 40, 0},  {33, 96, 17, 48},   {128, 300, 64, 0}};
  for (auto& s : sizes) {
    const int64_t m = s[0], n = s[1], k = s[2], n_inner = s[3];
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(k);
    std::vector<float> a = random_vec(m * k, 5), b = random_vec(k * n, 6);
    for (int accumulate = 0; accumulate < 2; ++accumulate) {
      const std::vector<float> c_before = random_vec(m * n, 7);
      std::vector<float> c[2] = {c_before, c_before};
      GemmF32Args g;
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = a.data();
      g.a_m = k;
      g.a_k = 1;
      g.b = b.data();
      g.b_k = 1;  // weights stored [N, K]
      g.b_n = k;
      g.c_m = n_inner > 0 ? n_inner : n;  // head-major output when split: [n / n_inner][m][n_inner]
      g.c_n = 1;
      g.n_inner = n_inner;
      g.c_n_outer = n_inner > 0 ? m * n_inner : 0;
      g.accumulate = accumulate == 1;
      AlignedBuf sb;
      void* scratch = sb.get(gemm_f32_scratch_bytes(m, n, k));
      for (int i = 0; i < 2; ++i) {
        REQUIRE(isa_select(i == 0 ? "avx2" : "avx2+avx512vnni").ok());
        g.c = c[i].data();
        gemm_f32(g, scratch);
      }
      CHECK(std::memcmp(c[0].data(), c[1].data(), c[0].size() * sizeof(float)) == 0);
      double want = accumulate ? c_before[0] : 0.0;  // element (0, 0) by double accumulation
      for (int64_t p = 0; p < k; ++p) want += double(a[p]) * b[p];
      CHECK(std::fabs(c[1][0] - want) <= 1e-4 * (1 + k));
    }
  }
  REQUIRE(isa_select(before.c_str()).ok());
}

TEST_CASE("gemv_f32: rows and columns kernels equal the scalar twin, tails included") {
  for (int64_t n : {1, 3, 4, 5, 31, 64, 67}) {
    for (int64_t k : {1, 7, 16, 33, 100}) {
      std::vector<float> w = random_vec(n * k, 4), x = random_vec(k, 5);
      for (int cols = 0; cols < 2; ++cols) {
        std::vector<float> y1(2 * n, 1.f), y2(2 * n, 1.f);
        const int64_t wj = cols ? 1 : k, wp = cols ? n : 1;
        gemv_f32(n, k, w.data(), wj, wp, x.data(), y1.data(), 2, cols == 1);
        scalar::gemv_f32(n, k, w.data(), wj, wp, x.data(), y2.data(), 2, cols == 1);
        for (int64_t i = 0; i < 2 * n; ++i) REQUIRE(std::fabs(y1[i] - y2[i]) <= 1e-5f * (1 + k));
      }
    }
  }
}

TEST_CASE("einsum: every fast path agrees with the generic loop nest") {
  std::vector<float> a = random_vec(4096, 11), b = random_vec(4096, 12);
  struct Case {
    const char* spec;
    std::vector<int64_t> sa, sb;
    const char* kernel;
  };
  const Case cases[] = {
      {"ij,jk->ik", {13, 17}, {17, 19}, "gemm"},
      {"ij,kj->ik", {13, 17}, {19, 17}, "gemm"},
      {"ji,jk->ik", {17, 13}, {17, 19}, "gemm"},
      {"ji,kj->ik", {17, 13}, {19, 17}, "gemm"},
      {"ij,jk->ki", {13, 17}, {17, 19}, "gemm"},
      {"bnd,dhk->bhnk", {2, 5, 12}, {12, 3, 4}, "gemm"},
      {"bnd,dhk->bhnk", {2, 7, 12}, {12, 3, 32}, "gemm"},  // heads folded into N (split columns)
      {"nd,dhk->hnk", {13, 12}, {12, 2, 16}, "gemm"},
      {"bhnk,bhmk->bhnm", {2, 3, 5, 8}, {2, 3, 7, 8}, "gemm"},
      {"bhnm,bhmv->bhnv", {2, 3, 5, 7}, {2, 3, 7, 8}, "gemm"},
      {"bhnv,hvd->bnd", {2, 3, 5, 8}, {3, 8, 12}, "gemm"},
      {"bgrnk,bgmk->bgrnm", {1, 2, 3, 4, 8}, {1, 2, 6, 8}, "gemm"},
      {"nd,ed->ne", {1, 40}, {30, 40}, "gemv"},
      {"nd,ed->ne", {9, 40}, {30, 40}, "gemm"},
      {"ij,j->i", {21, 33}, {33}, "gemv"},
      {"ij,i->j", {21, 33}, {21}, "gemv"},
      {"j,ij->i", {33}, {21, 33}, "gemv"},
      {"i,i->", {100}, {100}, "dot"},
      {"i,j->ij", {9}, {13}, "outer"},
      {"ij,ij->ij", {9, 13}, {9, 13}, "elementwise"},
      {"ij,ji->ij", {9, 13}, {13, 9}, "elementwise"},
      {"ij,jk", {3, 1}, {1, 5}, "outer"},
      {"...ij,...jk->...ik", {2, 3, 4, 5}, {3, 5, 6}, "gemm"},
      {"ij,jk->", {5, 6}, {6, 7}, "generic"},
  };
  for (const Case& c : cases) {
    const std::string spec_name = c.spec;
    CAPTURE(spec_name);
    std::vector<TensorView> in;
    TensorView va = make_view(DType::f32, a.data(), c.sa.data(), static_cast<int>(c.sa.size()));
    TensorView vb = make_view(DType::f32, b.data(), c.sb.data(), static_cast<int>(c.sb.size()));
    CHECK(check_against_reference(c.spec, {va, vb}) == std::string(c.kernel));
    check_against_reference(c.spec, {va, vb}, true);
  }
  const Case one[] = {
      {"ij->ji", {7, 9}, {}, "copy"},
      {"ii->i", {7, 7}, {}, "copy"},
      {"ii", {7, 7}, {}, "reduction"},
      {"ijk->ik", {3, 4, 5}, {}, "reduction"},
      {"ijk->j", {3, 4, 5}, {}, "reduction"},
      {"ijk->", {3, 4, 5}, {}, "reduction"},
      {"...i->...", {3, 4, 5}, {}, "reduction"},
  };
  for (const Case& c : one) {
    const std::string spec_name = c.spec;
    CAPTURE(spec_name);
    TensorView va = make_view(DType::f32, a.data(), c.sa.data(), static_cast<int>(c.sa.size()));
    CHECK(check_against_reference(c.spec, {va}) == std::string(c.kernel));
    check_against_reference(c.spec, {va}, true);
  }
}

TEST_CASE("einsum: non-contiguous inputs (transposed and sliced views)") {
  std::vector<float> a = random_vec(4096, 21), b = random_vec(4096, 22);
  TensorView at = make_view(DType::f32, a.data(), {17, 13});  // a transposed [13 x 17] view
  std::swap(at.shape[0], at.shape[1]);
  std::swap(at.strides[0], at.strides[1]);
  TensorView bs = make_view(DType::f32, b.data() + 3, {17, 19});
  bs.strides[0] = 40;  // rows of a wider matrix
  bs.strides[1] = 2;   // every other column
  check_against_reference("ij,jk->ik", {at, bs});
  check_against_reference("ij,jk->ik", {at, bs}, true);
  check_against_reference("ij,j->i", {at, make_view(DType::f32, b.data(), {17})});
  TensorView x = make_view(DType::f32, b.data(), {17});
  x.strides[0] = 3;
  check_against_reference("ij,j->i", {at, x});
  check_against_reference("ij->", {bs});
  check_against_reference("ij->j", {bs});
}

TEST_CASE("einsum: quantized second operand routes to the quantized matmul") {
  const int64_t n = 3, d = 64, e = 5;
  std::vector<float> x = random_vec(n * d, 31), w = random_vec(e * d, 32);
  std::vector<int8_t> q(e * d);
  std::vector<float> scales(e * 2);
  for (int64_t r = 0; r < e; ++r)
    quantize_row_q8(w.data() + r * d, d, 32, q.data() + r * d, scales.data() + r * 2);
  TensorView wq = make_view(DType::q8, q.data(), {e, d});
  wq.scales = scales.data();
  wq.group_size = 32;
  TensorView xv = make_view(DType::f32, x.data(), {n, d});
  // The reference multiplies by the dequantized weights in float; the quantized matmul also
  // rounds the activations to int8 per group of 32 (scale absmax/127), so each product may move
  // by |w_k| * scale/2. Bound: max over outputs of sum_k |w_k| * absmax_group(x)/254, plus slack.
  float bound = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t r = 0; r < e; ++r) {
      float b = 0.f;
      for (int64_t k = 0; k < d; ++k) {
        float amax = 0.f;
        for (int64_t j = k / 32 * 32; j < k / 32 * 32 + 32; ++j)
          amax = std::fmax(amax, std::fabs(x[i * d + j]));
        b += std::fabs(q[r * d + k] * scales[r * 2 + k / 32]) * amax / 254.f;
      }
      bound = std::fmax(bound, b);
    }
  }
  bound += 1e-5f;
  CHECK(check_against_reference("nd,ed->ne", {xv, wq}, false, bound) ==
        std::string("quant_matmul"));
  check_against_reference("nd,ed->en", {xv, wq}, false, bound);
  EinsumPlan plan;
  const TensorView in[2] = {make_view(DType::f32, x.data(), {d, n}), wq};
  const Status st = plan_einsum("dn,ed->ne", in, 2, &plan);
  CHECK(st.ok());
  const TensorView bad[2] = {make_view(DType::f32, x.data(), {n, e}), wq};
  const Status st2 = plan_einsum("ne,ed->nd", bad, 2, &plan);
  CHECK(std::strcmp(st2.message,
                    "einsum: quantized operand must be contracted along its last axis") == 0);
}

TEST_CASE("einsum: shape errors at plan time give their message") {
  std::vector<float> a(64), b(64);
  struct Case {
    const char* spec;
    std::vector<int64_t> sa, sb;
    const char* msg;
  };
  const Case cases[] = {
      {"ij,jk->ik", {2, 3}, {4, 5}, "einsum: a label is bound to two different sizes"},
      {"ii->i", {2, 3}, {}, "einsum: a label is bound to two different sizes"},
      {"ij,jk->ik", {2, 3, 1}, {3, 5}, "einsum: operand rank does not match its labels"},
      {"...ij,jk->ik", {3}, {3, 5}, "einsum: operand has fewer dimensions than its labels"},
      {"...i,...i->...i", {2, 3}, {4, 3}, "einsum: '...' dimensions do not broadcast"},
      {"...i->i", {2, 3}, {}, "einsum: operands have '...' dimensions but the output has no '...'"},
      {"ij,jk->ik", {2, 3}, {}, "einsum: number of operands does not match the spec"},
      {"ij->ji", {2, 3}, {3, 3}, "einsum: number of operands does not match the spec"},
  };
  for (const Case& c : cases) {
    const std::string spec_name = c.spec;
    CAPTURE(spec_name);
    std::vector<TensorView> in;
    in.push_back(make_view(DType::f32, a.data(), c.sa.data(), static_cast<int>(c.sa.size())));
    if (!c.sb.empty())
      in.push_back(make_view(DType::f32, b.data(), c.sb.data(), static_cast<int>(c.sb.size())));
    EinsumPlan plan;
    const Status st = plan_einsum(c.spec, in.data(), static_cast<int>(in.size()), &plan);
    CHECK(!st.ok());
    CHECK(std::string(st.message) == c.msg);
  }
  // Execute-time checks: wrong output shape, too little scratch, operand changed.
  std::vector<float> o(64);
  TensorView in[2] = {make_view(DType::f32, a.data(), {4, 4}),
                      make_view(DType::f32, b.data(), {4, 4})};
  EinsumPlan plan;
  REQUIRE(plan_einsum("ij,jk->ik", in, 2, &plan).ok());
  CHECK(std::string(execute_einsum(plan, in, 2, make_view(DType::f32, o.data(), {4, 5}), nullptr, 0)
                        .message) == "einsum: output shape does not match the plan");
  if (plan.scratch_bytes > 0) {
    CHECK(execute_einsum(plan, in, 2, make_view(DType::f32, o.data(), {4, 4}), nullptr, 0).code ==
          StatusCode::out_of_memory);
  }
  TensorView other[2] = {in[0], make_view(DType::f32, b.data(), {4, 1})};
  CHECK(execute_einsum(plan, other, 2, make_view(DType::f32, o.data(), {4, 4}), nullptr, 0).code ==
        StatusCode::shape_mismatch);
}

TEST_CASE("einsum: compile-time form plans on the stack and runs") {
  std::vector<float> x = random_vec(2 * 8, 41), w = random_vec(3 * 8, 42), y(6), r(6);
  const TensorView xv = make_view(DType::f32, x.data(), {2, 8}),
                   wv = make_view(DType::f32, w.data(), {3, 8});
  EinsumPlan p;
  REQUIRE(plan<"nd,ed->ne">(xv, wv, &p).ok());
  AlignedBuf sb;
  void* scratch = sb.get(p.scratch_bytes);
  REQUIRE(
      einsum<"nd,ed->ne">(xv, wv, make_view(DType::f32, y.data(), {2, 3}), scratch, p.scratch_bytes)
          .ok());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 8; ++k) s += double(x[i * 8 + k]) * w[j * 8 + k];
      CHECK(std::fabs(y[i * 3 + j] - s) < 1e-5);
    }
  REQUIRE(einsum<"ij->ji">(make_view(DType::f32, y.data(), {2, 3}),
                           make_view(DType::f32, r.data(), {3, 2}), nullptr, 0)
              .ok());
  CHECK(r[1] == y[3]);
}

TEST_CASE("einsum: f16 operands are widened (generic path)") {
  std::vector<float> a = random_vec(5 * 6, 51), b = random_vec(6 * 7, 52);
  std::vector<uint16_t> ah(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ah[i] = f32_to_f16(a[i]);
    a[i] = f16_to_f32(ah[i]);  // the exact values the f16 operand holds
  }
  const TensorView in16[2] = {make_view(DType::f16, ah.data(), {5, 6}),
                              make_view(DType::f32, b.data(), {6, 7})};
  EinsumPlan plan;
  REQUIRE(plan_einsum("ij,jk->ik", in16, 2, &plan).ok());
  CHECK(std::string(einsum_plan_kind_name(plan)) == "generic");
  CHECK(plan.generic_reason == EinsumGenericReason::f16_operand);
  CHECK(std::string(einsum_plan_kernel_name(plan)) == "generic_loop_f16");
  std::vector<float> out(35);
  REQUIRE(
      execute_einsum(plan, in16, 2, make_view(DType::f32, out.data(), {5, 7}), nullptr, 0).ok());
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 7; ++k) {
      double s = 0;
      for (int j = 0; j < 6; ++j) s += double(a[i * 6 + j]) * b[j * 7 + k];
      CHECK(std::fabs(out[i * 7 + k] - s) < 1e-5);
    }
}

TEST_CASE("einsum: a plan records its kernel and layout once and names its microkernel") {
  std::vector<float> a = random_vec(20 * 24, 61), b = random_vec(24 * 28, 62), y(20 * 28);
  const TensorView in[2] = {make_view(DType::f32, a.data(), {20, 24}),
                            make_view(DType::f32, b.data(), {24, 28})};
  EinsumPlan plan;
  REQUIRE(plan_einsum("ij,jk->ik", in, 2, &plan).ok());
  CHECK(plan.kind == EinsumKernel::gemm);
  CHECK(plan.layout.kind == plan.kind);
  CHECK(plan.generic_reason == EinsumGenericReason::none);
  CHECK(plan.layout.m.size * plan.layout.n.size == 20 * 28);
  CHECK(plan.layout.k.size == 24);
  CHECK(plan.layout.scratch == plan.scratch_bytes);
  CHECK(std::string(einsum_plan_kind_name(plan)) == "gemm");
  CHECK(std::string(einsum_plan_kernel_name(plan)) == gemm_f32_kernel_name());
  // The stored layout runs as planned and gives what the generic loop nest gives.
  std::vector<unsigned char> scratch(plan.scratch_bytes);
  std::vector<float> ref(y.size());
  REQUIRE(execute_einsum(plan, in, 2, make_view(DType::f32, y.data(), {20, 28}), scratch.data(),
                         scratch.size())
              .ok());
  REQUIRE(execute_einsum_reference(plan, in, 2, make_view(DType::f32, ref.data(), {20, 28})).ok());
  for (size_t i = 0; i < y.size(); ++i) CHECK(std::fabs(y[i] - ref[i]) <= 1e-4f);
}
